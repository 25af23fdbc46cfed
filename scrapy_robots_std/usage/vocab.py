"""The usage-preference vocabularies and purposes, as data.

Two vocabularies state how content may be used: IETF AIPREF's
``Content-Usage`` and Cloudflare's ``Content-Signal``.  Both are RFC 9651
Dictionaries whose keys are category labels.  A new label (``infer-system``,
say) or a new purpose is one entry here, not new code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from scrapy_robots_std.usage.sfdict import (
    StructuredFieldError,
    Token,
    parse_dictionary,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

ALLOW: Final = "allow"
DISALLOW: Final = "disallow"
UNKNOWN: Final = "unknown"

#: The texts implemented, by what they define.
REVISIONS: Final = {
    "attach": "draft-ietf-aipref-attach-05",
    "vocab": "draft-ietf-aipref-vocab-08",
    "content-signals": "Content Signals Policy (contentsignals.org, 2025-09-24)",
}


@dataclass(frozen=True)
class Vocabulary:
    """One vocabulary: its field name, its categories and its two tokens."""

    name: str
    field: str
    categories: tuple[str, ...]
    allow: str
    disallow: str


#: vocab-08 section 4.  No hierarchy (5: an unstated category is unknown); Search
#: overriding the others (4.3) is about which use a crawl declares as its purpose.
AIPREF: Final = Vocabulary(
    "aipref", "Content-Usage", ("train-ai", "ai-use", "search"), "y", "n"
)
#: contentsignals.org; ``use`` has no allow/deny meaning and stays raw.
CONTENT_SIGNAL: Final = Vocabulary(
    "content-signal", "Content-Signal", ("search", "ai-input", "ai-train"), "yes", "no"
)
VOCABULARIES: Final = (AIPREF, CONTENT_SIGNAL)

#: A declared purpose -> the (vocabulary name, category) pairs that speak to it.
PURPOSES: Final[Mapping[str, tuple[tuple[str, str], ...]]] = {
    "train-ai": (("aipref", "train-ai"), ("content-signal", "ai-train")),
    "search": (("aipref", "search"), ("content-signal", "search")),
    "ai-use": (("aipref", "ai-use"), ("content-signal", "ai-input")),
}
#: Other names accepted for a purpose (Content Signals' name for AI Use).
SYNONYMS: Final = {"ai-input": "ai-use"}

_RANK: Final = {UNKNOWN: 0, ALLOW: 1, DISALLOW: 2}
#: Raw members kept per statement, for display: a hostile 500 KiB value would
#: otherwise keep a Python object per member for as long as the file is cached.
MAX_MEMBERS: Final = 64


def most_restrictive(values: Iterable[str]) -> str:
    """vocab-08 5.1: any disallow wins, then any allow, else unknown."""
    return max(values, key=_RANK.__getitem__, default=UNKNOWN)


def read_statement(
    vocabulary: Vocabulary, data: bytes
) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...], str | None]:
    """``data`` (bytes as sent) read as a preference in ``vocabulary`` (vocab-08
    6.5): the categories it allows or disallows, every key with its value as
    written (unknown and legacy labels included, at most :data:`MAX_MEMBERS`),
    and why it is not a Dictionary (then every category is unknown)."""
    try:
        members = parse_dictionary(data)
    except StructuredFieldError as exc:
        return (), (), str(exc)
    states = {vocabulary.allow: ALLOW, vocabulary.disallow: DISALLOW}
    values = tuple(
        (category, states[member.value])
        for category in vocabulary.categories
        # Only a Token counts: the String "n" or a bare key (true) is unknown.
        if (member := members.get(category)) is not None
        and isinstance(member.value, Token)
        and member.value in states
    )
    raw = tuple((key, member.text) for key, member in members.items())
    return values, raw[:MAX_MEMBERS], None


def check_purpose(purpose: str) -> str:
    """The purpose's own name (``ai-input`` is ``ai-use``), or ``ValueError``."""
    name = SYNONYMS.get(purpose, purpose)
    if name not in PURPOSES:
        known = ", ".join((*PURPOSES, *SYNONYMS))
        raise ValueError(f"unknown usage purpose {purpose!r}: expected one of {known}")
    return name
