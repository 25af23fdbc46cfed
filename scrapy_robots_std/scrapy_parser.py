"""``StdRobotParser``: this package's parser as a Scrapy ``RobotParser`` backend.

For users who keep Scrapy's built-in ``RobotsTxtMiddleware``::

    ROBOTSTXT_OBEY = True
    ROBOTSTXT_PARSER = "scrapy_robots_std.StdRobotParser"
    ROBOTS_STD_STANDARD = "rfc9309"  # or "1994"

Scrapy calls :meth:`StdRobotParser.allowed` for every request, inside the crawl, with
whatever it has as the user agent (``ROBOTSTXT_USER_AGENT`` or the request's full
``User-Agent`` header, as ``str`` or ``bytes``). This adapter therefore never raises
there: it derives a product token from the header and falls back to a safe answer
when the arguments are outside what :class:`~scrapy_robots_std.RobotsTxt` accepts.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy.robotstxt import RobotParser

from scrapy_robots_std._robots import RobotsTxt

if TYPE_CHECKING:
    # typing.Self requires Python 3.11
    from scrapy.crawler import Crawler
    from typing_extensions import Self

__all__ = ["SETTING", "StdRobotParser", "product_token"]

logger = logging.getLogger(__name__)

#: The setting that chooses the standard.
SETTING = "ROBOTS_STD_STANDARD"
_DEFAULT_STANDARD = "rfc9309"

#: Token used in rfc9309 mode when no usable product token can be derived from the
#: user agent. RFC 9309 compares tokens for equality, so this names no real group and
#: only the ``*`` groups apply.
UNNAMED_TOKEN_RFC9309 = "scrapy-robots-std-unnamed-crawler"
#: Token used in 1994 mode in the same situation. The 1994 rule is "the record's
#: agent is a substring of the robot's name"; ``*`` contains no agent name except
#: ``*`` itself, so again only the ``*`` record applies.
UNNAMED_TOKEN_1994 = "*"

_PRODUCT_TOKEN = re.compile(r"[A-Za-z_-]+")
_TOKEN_CACHE_SIZE = 256


def _text(value: str | bytes | bytearray) -> str:
    if isinstance(value, str):
        return value
    return bytes(value).decode("utf-8", errors="replace")


def product_token(
    user_agent: str | bytes, standard: str = _DEFAULT_STANDARD
) -> str | None:
    """Return the crawler's product token from a ``User-Agent`` value, or ``None``.

    The first whitespace-separated product is taken and its version (from ``/``) is
    dropped: ``"Scrapy/2.19 (+https://scrapy.org)"`` gives ``"Scrapy"``. In rfc9309
    mode the result is further cut to its leading ``[A-Za-z_-]+``, which is the only
    shape RFC 9309 allows for a product token (``"Foo.Bot/1"`` gives ``"Foo"``).
    ``None`` means nothing usable was left (an empty header, ``"2bot"`` in rfc9309
    mode, ...).
    """
    words = _text(user_agent).split(None, 1)
    if not words:
        return None
    product = words[0].split("/", 1)[0]
    if standard == "1994":
        return product or None
    match = _PRODUCT_TOKEN.match(product)
    return match.group(0) if match else None


def fallback_token(standard: str) -> str:
    """The token for a crawler with no usable product token: only ``*`` groups apply."""
    return UNNAMED_TOKEN_1994 if standard == "1994" else UNNAMED_TOKEN_RFC9309


def _is_http_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() in {"http", "https"} and bool(parts.netloc)


def _standard_from_value(value: Any) -> str:
    """Normalise a ``ROBOTS_STD_STANDARD`` value; raise ``ValueError`` naming the setting."""
    if value is None or value == "":
        return _DEFAULT_STANDARD
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, str):
        standard = value.strip().lower()
        if standard in {"rfc9309", "1994"}:
            return standard
    raise ValueError(
        f"{SETTING}: unknown standard {value!r}; expected 'rfc9309' (the default) or '1994'"
    )


class StdRobotParser(RobotParser):
    """A :class:`scrapy.robotstxt.RobotParser` backed by :class:`RobotsTxt`.

    Behaviour inside a crawl (the methods never raise):

    * The user agent may be a product token (``"MyBot"``) or a whole ``User-Agent``
      header (``"MyBot/1.0 (+https://example.com/bot)"``); see :func:`product_token`.
    * If no usable token can be derived from it, the crawler is treated as a robot
      that no group names: only the ``*`` groups (records) apply. Refusing every
      request, or ignoring robots.txt altogether, would both be worse guesses.
    * A URL that is not an absolute ``http``/``https`` URL with a host (``ftp:``,
      ``data:``, a relative URL, ...) is outside robots.txt's scope, so it is allowed
      (``True``). Scrapy's middleware already skips ``data:`` and ``file:`` URLs.
    * If :class:`RobotsTxt` still rejects the arguments, the token falls back as
      above and, failing that, the URL is allowed. Each fallback is logged at DEBUG.
    """

    def __init__(
        self, robotstxt_body: bytes, standard: str = _DEFAULT_STANDARD
    ) -> None:
        #: The parsed robots.txt (a :class:`scrapy_robots_std.RobotsTxt`).
        self.robots: RobotsTxt = RobotsTxt.parse(robotstxt_body, standard=standard)
        self._tokens: dict[str | bytes, str] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler, robotstxt_body: bytes) -> Self:
        """Parse *robotstxt_body* with the standard chosen by ``ROBOTS_STD_STANDARD``.

        An invalid setting raises ``ValueError`` naming the setting. Scrapy's middleware
        builds a parser from an empty body when it starts, so a bad value stops the
        crawl before its first request instead of failing on every robots.txt.
        """
        settings = getattr(crawler, "settings", None)
        value = settings.get(SETTING) if settings is not None else None
        return cls(robotstxt_body, standard=_standard_from_value(value))

    @classmethod
    def from_robots(cls, robots: RobotsTxt) -> Self:
        """Wrap an already parsed :class:`RobotsTxt` (no second parse)."""
        parser = cls.__new__(cls)
        parser.robots = robots
        parser._tokens = {}
        return parser

    @property
    def standard(self) -> str:
        """``"rfc9309"`` or ``"1994"``."""
        return self.robots.standard

    @property
    def sitemaps(self) -> tuple[str, ...]:
        """The ``Sitemap:`` URLs of the file, in file order."""
        return self.robots.sitemaps

    def _fallback_token(self) -> str:
        return fallback_token(self.standard)

    def _token(self, user_agent: str | bytes) -> str:
        token = self._tokens.get(user_agent)
        if token is None:
            token = product_token(user_agent, self.standard)
            if token is None:
                token = self._fallback_token()
                logger.debug(
                    "No product token in user agent %(user_agent)r; only the '*' "
                    "groups of robots.txt apply to it",
                    {"user_agent": user_agent},
                )
            if len(self._tokens) >= _TOKEN_CACHE_SIZE:
                self._tokens.clear()
            self._tokens[user_agent] = token
        return token

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        """Return whether *user_agent* may fetch *url* (``str`` or ``bytes`` each)."""
        url_text = _text(url)
        token = self._token(user_agent)
        try:
            return self.robots.allowed(url_text, token)
        except ValueError as exc:
            error = exc
        # Off the hot path: work out why, and fall back.
        if not _is_http_url(url_text):
            return True
        fallback = self._fallback_token()
        if token != fallback:
            try:
                return self.robots.allowed(url_text, fallback)
            except ValueError:
                pass
        logger.debug(
            "Cannot check %(url)r against robots.txt (%(error)s); allowing it",
            {"url": url_text, "error": error},
        )
        return True

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        """Return the ``Crawl-delay`` for *user_agent* in seconds, or ``None``.

        Always ``None`` in 1994 mode, which has no ``Crawl-delay``.
        """
        token = self._token(user_agent)
        try:
            return self.robots.crawl_delay(token)
        except ValueError:
            return None
