"""The benchmark's DNS: ``*.bench.test`` is 127.0.0.1, and nothing asks real DNS.

Set as ``TWISTED_DNS_RESOLVER`` (Scrapy 2.19's name for the deprecated
``DNS_RESOLVER``) in every crawl of the latency benchmark. Scrapy installs it on the
reactor (``install_on_reactor``); Twisted's ``HostnameEndpoint``, which Scrapy's
HTTP/1.1 download handler connects through, resolves every host name with it. A name
outside ``.bench.test`` fails with ``DNSLookupError`` at once, so a stray URL shows up
as an error in the crawl's accounting instead of a query to the network.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from twisted.internet import defer
from twisted.internet.error import DNSLookupError
from twisted.internet.interfaces import IResolverSimple
from zope.interface import implementer  # type: ignore[import-untyped]

from benchmarks.latency.cases import HOST_SUFFIX

if TYPE_CHECKING:
    from collections.abc import Sequence

LOOPBACK = "127.0.0.1"


@implementer(IResolverSimple)
class BenchResolver:
    def __init__(self, reactor: Any) -> None:
        self.reactor = reactor

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> BenchResolver:
        return cls(reactor)

    def install_on_reactor(self) -> None:
        self.reactor.installResolver(self)

    def getHostByName(  # Twisted's IResolverSimple
        self, name: str, timeout: Sequence[int] = ()
    ) -> defer.Deferred[str]:
        name = name.lower().rstrip(".")
        if name.endswith(HOST_SUFFIX) or name in ("localhost", LOOPBACK):
            return defer.succeed(LOOPBACK)
        return defer.fail(DNSLookupError(f"{name}: not a benchmark host (no real DNS)"))
