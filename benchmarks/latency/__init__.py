"""A crawl benchmark with the network in it: robots.txt off, the built-in middleware
and this add-on crawl a local server that answers every request after a delay.

``python -m benchmarks.latency --help`` from the repository root; see
benchmarks/README.md.
"""
