"""A stand-in for VerdictBook, for the scheduler queues' unit tests."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
