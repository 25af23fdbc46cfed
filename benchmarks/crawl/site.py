"""The benchmark's local site: origins, their robots.txt files and pages, as data.

A :class:`Site` is built once per variant by the runner (from the corpus, with a
seed), written to JSON and read by the server shards and the crawl processes, so
all of them agree on every URL. Origin ``i`` lives on ``127.77.x.y`` (one address
per origin: Scrapy's downloader slots are per host name, so origins on one address
with different ports would share one slot) at a port shared by all origins.

Page HTML and links are computed here too (:func:`page_links`, :func:`render_page`),
deterministically from the origin and page numbers, so the server needs no tables.
"""

from __future__ import annotations

import html
import json
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urldefrag, urljoin, urlsplit

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "corpus"

#: The crawler's User-Agent; its product token ``benchbot`` is what both layers match
#: robots.txt groups with (no corpus file names it, so files' ``*`` groups apply).
USER_AGENT = "benchbot/1.0 (+https://example.invalid/bot)"

#: Same-origin and cross-origin links on every page.
SAME_LINKS = 4
CROSS_LINKS = 2

_FILLER = (
    "<p>"
    + " ".join(
        [
            "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod",
            "tempor incididunt ut labore et dolore magna aliqua.",
        ]
        * 6
    )
    + "</p>"
)


def host_of(index: int) -> str:
    """The loopback address of origin ``index`` (up to 62,500 origins)."""
    return f"127.77.{index // 250}.{index % 250 + 1}"


@dataclass
class Origin:
    index: int
    host: str
    #: corpus file name: the origin serves that file as its robots.txt
    robots: str
    #: page URLs, as Scrapy's Request normalises them (request.url)
    pages: list[str]
    #: "origin" (accepts connections, never answers), "robots" (only /robots.txt
    #: never answers) or "" (healthy)
    dead: str = ""


@dataclass
class Site:
    variant: str
    seed: int
    corpus: str
    port: int
    #: True: the spider starts from each origin's home page and follows links;
    #: False: its start requests enumerate every page (no link is followed).
    follow: bool
    origins: list[Origin] = field(default_factory=list)

    def base(self, origin: Origin) -> str:
        return f"http://{origin.host}:{self.port}"

    def home(self, origin: Origin) -> str:
        return self.base(origin) + "/"

    def seeds(self) -> list[str]:
        if self.follow:
            return [self.home(o) for o in self.origins]
        return [url for o in self.origins for url in o.pages]

    def expected_pages(self, origin: Origin) -> list[str]:
        """Every URL the spider will request for this origin."""
        return [self.home(origin), *origin.pages] if self.follow else list(origin.pages)

    def robots_body(self, origin: Origin) -> bytes:
        return (Path(self.corpus) / "robots" / origin.robots).read_bytes()

    def dump(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self)), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Site:
        data = json.loads(path.read_text(encoding="utf-8"))
        origins = [Origin(**o) for o in data.pop("origins")]
        return cls(**data, origins=origins)


def request_target(url: str) -> bytes:
    """The request target Scrapy's HTTP/1.1 handler sends for ``url`` (Twisted's
    ``URI.originForm``: fragment removed, empty query dropped)."""
    from twisted.web.client import URI

    return URI.fromBytes(urldefrag(url)[0].encode("ascii")).originForm  # type: ignore[no-any-return]


# -- links and HTML (used by the server) ---------------------------------------------


def _mix(*numbers: int) -> int:
    value = 0x9E3779B97F4A7C15
    for n in numbers:
        value = ((value ^ n) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        value ^= value >> 31
    return value


def page_links(site: Site, origin: int, page: int) -> list[str]:
    """The links of page ``page`` (-1: the home page) of origin ``origin``.

    The home page links to every page of its origin, so with ``follow`` the page set
    does not depend on which other links exist. Other pages link to a few pages of
    their own origin and of other origins (pseudo-random, fixed by the seed).
    """
    o = site.origins[origin]
    if page < 0:
        return list(o.pages)
    h = _mix(site.seed, origin, page)
    n = len(o.pages)
    links = [
        o.pages[(page + 1 + (h >> (8 * k)) % (n - 1)) % n]
        for k in range(SAME_LINKS if n > 1 else 0)
    ]
    count = len(site.origins)
    for k in range(CROSS_LINKS if count > 1 else 0):
        hk = _mix(h, k)
        other = site.origins[(origin + 1 + hk % (count - 1)) % count]
        if other.pages:
            links.append(other.pages[(hk >> 20) % len(other.pages)])
    return links


def render_page(site: Site, origin: int, page: int) -> bytes:
    links = page_links(site, origin, page)
    title = f"Origin {origin} page {page}" if page >= 0 else f"Origin {origin} home"
    items = "".join(
        f'<li><a href="{html.escape(url)}">link {i}</a></li>'
        for i, url in enumerate(links)
    )
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title>'
        f"</head><body><h1>{title}</h1>{_FILLER}<ul>{items}</ul></body></html>"
    ).encode()


# -- building a site from the corpus --------------------------------------------------


@dataclass
class Corpus:
    root: Path
    names: list[str]
    #: per site: its URLs from urls.txt (path and query only; /robots.txt left out)
    paths: dict[str, list[str]]

    @classmethod
    def load(cls, root: Path) -> Corpus:
        names = sorted(p.name for p in (root / "robots").iterdir() if p.is_file())
        paths: dict[str, list[str]] = {}
        with (root / "urls.txt").open(encoding="utf-8") as fh:
            for line in fh:
                site, _, url = line.rstrip("\n").partition("\t")
                parts = urlsplit(url)
                if not url or parts.fragment or parts.path == "/robots.txt":
                    continue
                path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
                paths.setdefault(site, []).append(path)
        return cls(root, names, paths)

    def body(self, name: str) -> bytes:
        return (self.root / "robots" / name).read_bytes()


class Judge:
    """Both layers' parsers, as each middleware calls them, for one robots.txt body."""

    def __init__(self, body: bytes) -> None:
        from scrapy.robotstxt import ProtegoRobotParser

        from scrapy_robots_std import RobotsTxt

        self.ours = RobotsTxt.parse(body)
        self.builtin = ProtegoRobotParser(body, None)

    def ours_allows(self, url: str) -> bool:
        return self.ours.allowed(url, ours_token())

    def builtin_allows(self, url: str) -> bool:
        return self.builtin.allowed(url, USER_AGENT)

    def both_allow(self, url: str) -> bool:
        return self.ours_allows(url) and self.builtin_allows(url)


def ours_token() -> str:
    """The token this package's middleware derives from :data:`USER_AGENT`."""
    from scrapy_robots_std.robotstxt.tokens import product_token

    token = product_token(USER_AGENT.encode(), "rfc9309")
    assert token is not None
    return token


def _normalise(url: str) -> str:
    from scrapy import Request

    return Request(url).url


def _follows_back(url: str, base: str) -> bool:
    """A link written with this href comes back as the same request URL."""
    from scrapy import Request

    href = html.unescape(html.escape(url))
    return Request(urljoin(base, href)).url == url


def _generated_paths() -> Iterable[str]:
    k = 0
    while True:
        yield f"/page/{k}.html"
        yield f"/articles/{k}/"
        yield f"/p{k}?ref=home"
        k += 1


def _pick_pages(
    base: str,
    corpus_paths: list[str],
    want: int,
    keep: Callable[[str], bool],
    *,
    corpus_share: float,
    max_tries: int,
) -> list[str]:
    """Up to ``want`` distinct page URLs for one origin that ``keep`` accepts: corpus
    paths first (at most ``corpus_share`` of them), then generated ones."""
    from w3lib.url import canonicalize_url

    chosen: list[str] = []
    seen: set[str] = {canonicalize_url(base + "/")}
    limit = round(want * corpus_share)

    def offer(path: str) -> None:
        url = _normalise(base + path)
        key = canonicalize_url(url)
        if key in seen or not _follows_back(url, base + "/") or not keep(url):
            return
        seen.add(key)
        chosen.append(url)

    for path in corpus_paths:
        if len(chosen) >= limit:
            break
        offer(path)
    for tries, path in enumerate(_generated_paths()):
        if len(chosen) >= want or tries >= max_tries:
            break
        offer(path)
    return chosen


def build(
    variant: str,
    *,
    origins: int,
    pages: int,
    port: int,
    seed: int = 9309,
    corpus_root: Path = DEFAULT_CORPUS,
    dead: str = "origin",
) -> Site:
    """The site for one variant (a, b, c or d); see benchmarks/README.md."""
    corpus = Corpus.load(corpus_root)
    rng = random.Random(f"{seed}:{variant}")
    names = list(corpus.names)
    rng.shuffle(names)
    site = Site(variant, seed, str(corpus_root), port, follow=variant in ("a", "c"))
    judges: dict[str, Judge] = {}

    def judge(name: str) -> Judge:
        if name not in judges:
            judges[name] = Judge(corpus.body(name))
        return judges[name]

    # (d) has more origins than the corpus has files: the shuffled list is cycled.
    candidates = (names[i % len(names)] for i in range(len(names) * 4))
    for name in candidates:
        if len(site.origins) >= origins:
            break
        index = len(site.origins)
        base = f"http://{host_of(index)}:{port}"
        j = judge(name)
        corpus_paths = corpus.paths.get(name, [])
        if variant == "b":
            # Realistic rules: the site's own URLs, some of them disallowed.
            chosen = _pick_pages(
                base,
                corpus_paths,
                pages,
                lambda _u: True,
                corpus_share=1.0,
                max_tries=0,
            )
            if not any(not j.ours_allows(u) or not j.builtin_allows(u) for u in chosen):
                continue
        else:
            # Every page allowed by both parsers: the robots.txt layer costs only
            # its own work.
            if variant != "d" and not j.both_allow(base + "/"):
                continue
            chosen = _pick_pages(
                base,
                corpus_paths,
                pages,
                j.both_allow,
                corpus_share=0.3,
                max_tries=pages * 3 + 30,
            )
            if len(chosen) < pages:
                continue
        site.origins.append(Origin(index, host_of(index), name, chosen))
    if len(site.origins) < origins:
        raise RuntimeError(
            f"variant {variant}: only {len(site.origins)} of {origins} origins could be built"
        )
    if variant == "c":
        site.origins[0].dead = dead
    return site
