"""The test suite (a package, so that ``tests.helpers`` imports from the repository root)."""
