"""End-to-end crawl benchmark: robots.txt off, Scrapy's built-in middleware, this add-on.

``python -m benchmarks.crawl --help`` from the repository root; see benchmarks/README.md.
"""
