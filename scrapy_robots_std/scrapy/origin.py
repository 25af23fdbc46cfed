"""What a request is checked under: its origin (scheme, host, port) with its
robots.txt URL (RFC 9309 2.3), and the crawler's product token (RFC 9309 2.2.1).

An :class:`Origin` is also what the fetch machinery fetches: its ``kind`` says which
of the origin's files (robots.txt, or TDMRep's ``/.well-known/tdmrep.json``:
:func:`tdm_file_of`), under which cache key."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, NamedTuple
from urllib.parse import ParseResult, SplitResult, urlsplit

from scrapy_robots_std.cache.base import ROBOTS_TXT, TDM_FILE, robots_url_of, tdm_key
from scrapy_robots_std.robotstxt.tokens import fallback_token, product_token
from scrapy_robots_std.tdmrep import WELL_KNOWN_PATH

if TYPE_CHECKING:
    from scrapy.http import Request

    from scrapy_robots_std.config import Config

_DEFAULT_PORTS = {"http": 80, "https": 443}


class Origin(NamedTuple):
    """``key`` identifies the origin (``"https://example.com:443"``);
    ``robots_url`` is where its robots.txt lives (default port and userinfo left out).

    ``kind`` is the file the fetch machinery fetches for it: ``"robots.txt"``, or
    ``"tdmrep.json"`` (:func:`tdm_file_of`: then ``key`` is the cache key of that
    file, ``"tdmrep:https://example.com:443"``, and ``robots_url`` its URL).
    """

    key: str
    robots_url: str
    kind: str = ROBOTS_TXT

    @property
    def origin_key(self) -> str:
        """The origin's own key, whatever file this is."""
        return self.key if self.kind == ROBOTS_TXT else self.key.split(":", 1)[1]


def tdm_file_of(origin: Origin) -> Origin:
    """What fetches ``origin``'s ``/.well-known/tdmrep.json``: its own cache key,
    which no origin's robots.txt entry can have."""
    base = origin.robots_url[: -len("/robots.txt")]
    return Origin(tdm_key(origin.key), base + WELL_KNOWN_PATH, TDM_FILE)


def _ascii_host(host: str) -> str | None:
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return None


def origin_of(url: str | SplitResult | ParseResult) -> Origin | None:
    """The origin of an http(s) URL, or ``None`` for anything robots.txt does not cover.

    The host is lower-cased and IDNA-encoded; ``http://a:80`` and ``http://a`` are one
    origin; ``http://a`` and ``https://a`` are two. Userinfo is not part of the origin
    and is not sent with the robots.txt request.
    """
    parts = urlsplit(url) if isinstance(url, str) else url
    scheme = parts.scheme.lower()
    default = _DEFAULT_PORTS.get(scheme)
    if default is None:
        return None
    try:
        host = parts.hostname
        port = parts.port
    except ValueError:  # a port that is not a number, or out of range
        return None
    if not host or port == 0:
        return None
    host = _ascii_host(host.rstrip(".") or host)
    if host is None:
        return None
    port = default if port is None else port
    shown = f"[{host}]" if ":" in host else host
    key = f"{scheme}://{shown}:{port}"
    return Origin(key, robots_url_of(key))


def origin_key_of(url: str) -> str:
    """``url``'s origin key, as the report and the audit file name an origin; the URL
    itself when it names no origin (or a host ``urlsplit`` refuses)."""
    try:
        origin = origin_of(url)
    except ValueError:
        origin = None
    return url if origin is None else origin.key


class TokenOf:
    """The product token a request's robots.txt groups are matched with (RFC 9309 2.2.1):
    ``ROBOTSTXT_USER_AGENT``'s, else the first product token of the request's
    ``User-Agent`` header (``USER_AGENT`` when it has none); memoised per header
    value, a bounded memo (a crawl sends one or a few)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._tokens: dict[bytes, str] = {}

    def __call__(self, request: Request) -> str:
        if self.config.token is not None:
            return self.config.token
        header = request.headers.get(b"User-Agent")
        key = header or self.config.default_user_agent.encode()
        token = self._tokens.get(key)
        if token is None:
            standard = self.config.standard
            token = product_token(key, standard) or fallback_token(standard)
            if len(self._tokens) >= _TOKEN_MEMO_SIZE:
                self._tokens.clear()
            self._tokens[key] = token
        return token


_TOKEN_MEMO_SIZE: Final = 256
