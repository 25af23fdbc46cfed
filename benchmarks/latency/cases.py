"""The cases of the latency benchmark, as data shared by the runner and the crawls.

Every URL is computed from the case and the server's port, so the runner (which
accounts for every URL) and the crawl process (whose spider requests them) agree
without a file between them. Origin ``i`` is the host ``s{i:04d}.bench.test`` (the
benchmark's resolver maps ``*.bench.test`` to 127.0.0.1), all on one port: one host
name per origin gives each origin its own download slot.

Every 20th URL of a case, counted across sites in request order, is under
``/private/``, which every robots.txt of the server disallows; the others are under
``/p/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

#: The server's robots.txt, the same for every host.
ROBOTS_BODY = b"User-agent: *\nDisallow: /private/\n"
HOST_SUFFIX = ".bench.test"
#: The crawler's User-Agent; its product token is ``benchbot``.
USER_AGENT = "benchbot/1.0 (+https://example.invalid/bot)"
PRIVATE_EVERY = 20


def host(index: int) -> str:
    return f"s{index:04d}{HOST_SUFFIX}"


@dataclass(frozen=True)
class Case:
    name: str
    title: str
    #: (number of origins, pages per origin), in the order the spider requests them
    groups: tuple[tuple[int, int], ...]
    page_delay: float
    robots_delay: float
    concurrency: int
    per_domain: int = 2
    jobdir: bool = False

    @property
    def origins(self) -> int:
        return sum(count for count, _ in self.groups)

    @property
    def pages(self) -> int:
        return sum(count * pages for count, pages in self.groups)

    def urls(self, port: int) -> list[str]:
        """Every page URL, site by site (the groups in order), pages in order."""
        urls: list[str] = []
        origin = 0
        for count, pages in self.groups:
            for _ in range(count):
                base = f"http://{host(origin)}:{port}"
                for page in range(pages):
                    k = len(urls)
                    kind = "private" if k % PRIVATE_EVERY == PRIVATE_EVERY - 1 else "p"
                    urls.append(f"{base}/{kind}/{page}.html")
                origin += 1
        return urls

    def lower_bound(self, *, robots: bool) -> float:
        """The shortest possible crawl (seconds) under the case's concurrency limits.

        Each request holds one of ``concurrency`` global slots for its delay, and an
        origin's requests at most ``per_domain`` at a time. With ``robots``, each
        origin also makes one robots.txt request before its pages (a slot held for
        ``robots_delay``), which is what happens when the robots.txt request goes
        through the downloader like any other.
        """
        work = self.pages * self.page_delay
        first = 0.0
        if robots:
            work += self.origins * self.robots_delay
            first = self.robots_delay
        longest = max(
            first + ceil(pages / self.per_domain) * self.page_delay
            for _, pages in self.groups
        )
        return max(work / self.concurrency, longest)

    def describe(self) -> str:
        groups = " + ".join(
            f"{count:,} x {pages:,} page{'s' if pages > 1 else ''}"
            for count, pages in self.groups
        )
        delays = f"pages after {self.page_delay * 1000:g} ms"
        if self.robots_delay == self.page_delay:
            delays = f"every response (pages and robots.txt) after {self.page_delay * 1000:g} ms"
        else:
            delays += f", robots.txt after {self.robots_delay * 1000:g} ms"
        return (
            f"{self.origins:,} origins ({groups}), {self.pages:,} pages, "
            f"{self.pages // PRIVATE_EVERY:,} of them under /private/ (disallowed); "
            f"{delays}; CONCURRENT_REQUESTS {self.concurrency}, per domain "
            f"{self.per_domain}" + ("; JOBDIR" if self.jobdir else "")
        )


_SKEWED = ((10, 100), (100, 5))
_MANY = ((3000, 2),)

CASES: dict[str, Case] = {
    "a": Case("a", "(a) skewed site, 100 ms per response", _SKEWED, 0.1, 0.1, 16),
    "b": Case("b", "(b) skewed site, robots.txt after 1.5 s", _SKEWED, 0.1, 1.5, 16),
    "c": Case("c", "(c) 3,000 origins x 2 pages, 50 ms", _MANY, 0.05, 0.05, 64),
    "d": Case(
        "d", "(d) case (c) under JOBDIR, and a stop and resume", _MANY, 0.05, 0.05, 64,
        jobdir=True,
    ),
}  # fmt: skip

#: --smoke: the same shapes, tiny.
SMOKE_CASES: dict[str, Case] = {
    "a": Case("a", "(a) skewed site (smoke)", ((2, 10), (6, 3)), 0.02, 0.02, 16),
    "b": Case("b", "(b) skewed site, slow robots.txt (smoke)", ((2, 10), (6, 3)), 0.02, 0.3, 16),
    "c": Case("c", "(c) many origins x 2 pages (smoke)", ((60, 2),), 0.02, 0.02, 64),
    "d": Case(
        "d", "(d) many origins under JOBDIR, stop and resume (smoke)", ((100, 2),),
        0.05, 0.05, 64, jobdir=True,
    ),
}  # fmt: skip


def case_for(name: str, *, smoke: bool) -> Case:
    return (SMOKE_CASES if smoke else CASES)[name]
