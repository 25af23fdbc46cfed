"""The crawler's product token: as each standard reads a ``User-Agent`` value, and as
each checks a token a caller gives."""

from __future__ import annotations

import re

from scrapy_robots_std.robotstxt.reader import RFC9309, STD1994


def as_text(value: str | bytes | bytearray) -> str:
    """A header or URL value as text (UTF-8, undecodable bytes replaced)."""
    if isinstance(value, str):
        return value
    return bytes(value).decode("utf-8", errors="replace")


#: RFC 9309 2.2.1: a product token is letters, "_" and "-".
_PRODUCT_TOKEN = re.compile(r"[A-Za-z_-]+")


def product_token(user_agent: str | bytes, standard: str = RFC9309) -> str | None:
    """The crawler's product token from a ``User-Agent`` value, or ``None`` when
    nothing usable is left (an empty header, ``"2bot"`` in rfc9309 mode).

    The first product without its version: ``"Scrapy/2.19 (+https://scrapy.org)"``
    gives ``"Scrapy"``; in rfc9309 mode only its leading ``[A-Za-z_-]+``, the shape
    RFC 9309 allows (``"Foo.Bot/1"`` gives ``"Foo"``).
    """
    words = as_text(user_agent).split(None, 1)
    if not words:
        return None
    product = words[0].split("/", 1)[0]
    if standard == STD1994:
        return product or None
    match = _PRODUCT_TOKEN.match(product)
    return match.group(0) if match else None


def fallback_token(standard: str) -> str:
    """The token for a crawler with no usable product token: it names no group,
    so only ``*`` groups apply (RFC 9309 compares tokens for equality; in 1994 a
    record applies when its agent is a substring of the robot's name, and ``*``
    holds no name but ``*``)."""
    return "*" if standard == STD1994 else "scrapy-robots-std-unnamed-crawler"


def check_token(token: object, standard: str) -> str:
    """``token`` lower-cased, or ``ValueError`` when the standard cannot read it."""
    if not isinstance(token, str):
        raise ValueError(f"token must be a str, not {type(token).__name__}")  # noqa: TRY004
    if standard == RFC9309 and _PRODUCT_TOKEN.fullmatch(token):
        return token.lower()
    if not token:
        raise ValueError("token must not be empty")
    if any(char.isspace() for char in token) or "/" in token:
        raise ValueError(
            f"invalid token {token!r}: give the product token only"
            " (no spaces, no '/version')"
        )
    if standard == RFC9309:
        raise ValueError(
            f"invalid product token {token!r}: RFC 9309 tokens may contain only"
            " letters, '_' and '-'"
        )
    return token.lower()
