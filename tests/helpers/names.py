"""Host names for the test servers, resolved to loopback without any DNS query.

:class:`LoopbackResolver` sends ``*.test`` and ``localhost`` to 127.0.0.1, so one
server can impersonate many sites; :func:`loopback_names` installs it on the running
reactor for one test. Subprocess crawls name it in ``TWISTED_DNS_RESOLVER``
(``"tests.helpers.names.LoopbackResolver"``).
"""

from __future__ import annotations

import contextlib
import ipaddress
from typing import TYPE_CHECKING, Any

from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.interfaces import IHostnameResolver, IHostResolution
from zope.interface import implementer

from tests.helpers.server import normalise_host

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from scrapy.crawler import Crawler
    from twisted.internet.interfaces import IAddress, IResolutionReceiver

__all__ = ["LoopbackResolver", "loopback_names"]


@implementer(IHostResolution)
class _Resolution:
    def __init__(self, name: str) -> None:
        self.name = name

    def cancel(self) -> None:
        pass  # resolution is synchronous: nothing is ever pending


@implementer(IHostnameResolver)
class LoopbackResolver:
    """Resolves ``*.test`` and ``localhost`` to 127.0.0.1 and fails everything else.

    No real DNS query is ever made: unknown names fail at once (Twisted turns the
    empty answer into ``DNSLookupError``). Loopback IP literals resolve to
    themselves, because Twisted hands literals to the resolver as well; other
    literals fail so a test cannot reach the network by accident. :meth:`add`
    points one more name (e.g. ``"v6.test"``) at another loopback address.

    Usable as Scrapy's ``TWISTED_DNS_RESOLVER`` setting, which only
    ``CrawlerProcess.start()`` installs; in tests use :func:`loopback_names`.
    """

    def __init__(
        self, reactor: Any = None, names: Mapping[str, str] | None = None
    ) -> None:
        self.reactor = reactor
        self._names = {normalise_host(k): v for k, v in (names or {}).items()}
        #: every name looked up, in order
        self.lookups: list[str] = []

    @classmethod
    def from_crawler(cls, crawler: Crawler, reactor: Any) -> LoopbackResolver:
        return cls(reactor)

    def install_on_reactor(self) -> None:
        self.reactor.installNameResolver(self)

    def add(self, name: str, address: str) -> None:
        self._names[normalise_host(name)] = address

    def address_for(self, name: str) -> str | None:
        host = normalise_host(name).rstrip(".")
        if host in self._names:
            return self._names[host]
        try:
            literal = ipaddress.ip_address(host)
        except ValueError:
            pass
        else:
            return host if literal.is_loopback else None
        if host == "localhost" or host.endswith((".test", ".localhost")):
            return "127.0.0.1"
        return None

    def resolveHostName(
        self,
        resolutionReceiver: IResolutionReceiver,
        hostName: str,
        portNumber: int = 0,
        addressTypes: Iterable[type[IAddress]] | None = None,
        transportSemantics: str = "TCP",
    ) -> IHostResolution:
        self.lookups.append(hostName)
        resolution = _Resolution(hostName)
        resolutionReceiver.resolutionBegan(resolution)
        address = self.address_for(hostName)
        if address is not None:
            kind = IPv6Address if ":" in address else IPv4Address
            if addressTypes is None or kind in set(addressTypes):
                resolutionReceiver.addressResolved(kind("TCP", address, portNumber))
        resolutionReceiver.resolutionComplete()
        return resolution


@contextlib.contextmanager
def loopback_names(
    reactor: Any = None, names: Mapping[str, str] | None = None
) -> Iterator[LoopbackResolver]:
    """Install a :class:`LoopbackResolver` on the running reactor, then restore.

    ``get_crawler()`` + ``crawl_async()`` never install ``TWISTED_DNS_RESOLVER``
    (only ``CrawlerProcess.start()`` does), so tests install it themselves.
    """
    if reactor is None:
        from twisted.internet import reactor as installed

        reactor = installed
    resolver = LoopbackResolver(reactor, names)
    # installNameResolver also replaces reactor.resolver with a wrapper, so
    # both are put back by hand.
    previous_simple = reactor.resolver
    previous = reactor.installNameResolver(resolver)
    try:
        yield resolver
    finally:
        reactor.installNameResolver(previous)
        reactor.resolver = previous_simple
