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
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy.robotstxt import RobotParser

from scrapy_robots_std.config import STANDARD_SETTING, standard_from_value
from scrapy_robots_std.robotstxt.reader import RFC9309
from scrapy_robots_std.robotstxt.robots import RobotsTxt
from scrapy_robots_std.robotstxt.tokens import as_text, fallback_token, product_token

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

    from scrapy_robots_std.robotstxt.usage_query import UsageSummary

__all__ = ["StdRobotParser"]

logger = logging.getLogger(__name__)
_TOKEN_CACHE_SIZE = 256


def _is_http_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() in {"http", "https"} and bool(parts.netloc)


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

    def __init__(self, robotstxt_body: bytes, standard: str = RFC9309) -> None:
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
        value = settings.get(STANDARD_SETTING) if settings is not None else None
        return cls(robotstxt_body, standard=standard_from_value(value))

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

    def usage_summary(self) -> UsageSummary:
        """How many ``Content-Usage`` / ``Content-Signal`` lines the file holds
        (``.stated``: whether it states usage preferences at all)."""
        return self.robots.usage_summary()

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
        url_text = as_text(url)
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
