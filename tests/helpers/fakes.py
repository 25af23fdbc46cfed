"""Stand-ins for what the scheduler queues ask of: a VerdictBook and a downloader."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.utils.httpobj import urlparse_cached

from scrapy_robots_std.scrapy.origin import Origin, origin_of

if TYPE_CHECKING:
    from scrapy import Request


class FakeBook:
    """What the queue asks of a VerdictBook: verdicts are decided by the test."""

    def __init__(self) -> None:
        self.verdicts: set[str] = set()
        self.needed: list[str] = []
        self.queues: list[Any] = []
        self.wakes = 0

    def attach(self, queue: Any) -> None:
        self.queues.append(queue)

    def detach(self, queue: Any) -> None:
        self.queues.remove(queue)

    def fresh(self, origin_key: str, *, waited: bool = False) -> object | None:
        return object() if origin_key in self.verdicts else None

    def origin_to_check(self, request: Request) -> Origin | None:
        if request.meta.get("dont_obey_robotstxt"):
            return None
        return origin_of(request.url)

    def need(self, origin: Origin, trigger: Request | None) -> None:
        self.needed.append(origin.key)

    def wake_engine(self) -> None:
        self.wakes += 1

    def decide(self, url: str) -> None:
        origin = origin_of(url)
        assert origin is not None
        self.verdicts.add(origin.key)
        for queue in self.queues:
            queue.verdict_arrived(origin.key)


class _Slot:
    def __init__(self, active: int) -> None:
        self.active = set(range(active))


class FakeDownloader:
    """The slot key is the host name (Scrapy's default); ``busy`` sets how many
    downloads each slot has in progress."""

    def __init__(self) -> None:
        self.slots: dict[str, _Slot] = {}

    def busy(self, slot: str, active: int) -> None:
        self.slots[slot] = _Slot(active)

    def get_slot_key(self, request: Request) -> str:
        return urlparse_cached(request).hostname or ""
