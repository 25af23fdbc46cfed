"""Files and headers that state only vocab-07 labels, and what ``usage()`` answers
for them, in a form both the vocab-07 and the vocab-08 code give alike.

``tests/data/usage_vocab07.txt`` holds the digests of these records as the vocab-07
code (commit c8d0a49) gave them; ``test_usage_vocab08.py`` checks that vocab-08
reads them the same.  To record them again from a tree (only ever a vocab-07 one)::

    PYTHONPATH=TREE python -c "import tests.helpers.usage_vocab07 as c; c.write()"

No line stands before the first group: those became file-wide with vocab-08.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy_robots_std import RobotsTxt

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy_robots_std import UsagePreferences

GOLDEN = Path(__file__).parent.parent / "data" / "usage_vocab07.txt"

BODIES = (
    ("rfc9309", (b"User-Agent: *\nAllow: /\nDisallow: /never/\n"
     b"Content-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n")),
    ("rfc9309", (b"User-agent: *\nContent-Signal: search=yes,ai-train=no,use=reference\n"
     b"Allow: /\n")),
    ("rfc9309", (b"User-agent: *\nContent-Signal: search=yes, ai-train=no, ai-input=yes\n"
     b"Content-Usage: train-ai=y, search=n\nContent-Usage: /a* search=y\n"
     b"Content-Usage: /ab train-ai=n\n")),
    ("rfc9309", (b"User-agent: FooBot\nContent-Usage: train-ai=n\nUser-agent: BarBot\n"
     b"Disallow: /private\n\nUser-agent: *\nContent-Signal: ai-input=no\n")),
    ("rfc9309", (b"User-agent: *\nContent-Usage: bots=n, train-genai=n, all=n\n"
     b"Content-Usage: /x Train-AI=n\nContent-Usage: /y train-ai\n"
     b'Content-Usage: /z train-ai="n", search=maybe\n'
     b"Content-Signal: ai-train=disallow\n")),
    ("rfc9309", b"User-agent: other\nContent-Usage: train-ai=n\n"),
    ("rfc9309", (b"User-agent: *\nDisallow: /\nAllow: /open/\n"
     b"Content-Usage: /open/ search=n\nContent-Usage: /*.pdf$ train-ai=n\n")),
    ("1994", (b"User-agent: foo\nDisallow: /x\nContent-Usage: train-ai=n\n\n"
     b"User-agent: *\nContent-Signal: search=no\nContent-Usage: /caf%C3%A9 search=y\n")),
    ("1994", b"User-agent: *\nContent-Usage: train-ai=y;q=1, search=n\n"),
    ("rfc9309", b"User-agent: *\nAllow: /\n"),
)  # fmt: skip
PATHS = ("/", "/ai-ok/x", "/never/x", "/ab", "/a", "/x", "/y", "/z", "/open/a.pdf",
         "/caf\u00e9", "/private")  # fmt: skip
TOKENS = ("FooBot", "BarBot", "Other")
HEADERS = (
    ((), ()),
    ((b"train-ai=n",), ()),
    ((b"search=y", b"train-ai=y, search=n"), (b"ai-input=no",)),
    ((b"Train=n",), (b"ai-train=yes, search=no",)),
)


def record(prefs: UsagePreferences) -> dict[str, Any]:
    """What vocab-07 and vocab-08 answer alike: without vocab-08's ``ai-use``
    (unknown, since no vocab-07 label speaks to it), and with the purpose
    ``ai-input`` named as vocab-07 named it (vocab-08 calls it ``ai-use``)."""
    document = prefs.to_dict()
    ai_use = document["aipref"].pop("ai-use", None)
    assert ai_use in (None, {"value": "unknown", "sources": []})
    decisions = {}
    for purpose in ("train-ai", "search", "ai-input"):
        decision = prefs.decide(purpose)
        decisions[purpose] = [
            decision.value,
            decision.conflict,
            [str(source) for source in decision.sources],
            str(decision).replace(" for ai-use", " for ai-input"),
        ]
    explain = [line.replace(", ai-use=unknown", "") for line in prefs.explain_lines()]
    return {"usage": document, "explain": explain, "decisions": decisions}


def records() -> Iterator[tuple[str, dict[str, Any]]]:
    """Each case's name and record."""
    for number, (standard, body) in enumerate(BODIES):
        robots = RobotsTxt.parse(body, standard)
        for token in TOKENS:
            for path in PATHS:
                base = robots.usage("http://example.com" + path, token)
                for headers, (usage, signal) in enumerate(HEADERS):
                    name = f"body {number} {token} {path} headers {headers}"
                    yield name, record(base.with_headers(usage, signal))


def digest(found: dict[str, Any]) -> str:
    text = json.dumps(found, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def write() -> None:
    """The digests of :func:`records`, in their order, eight to a line."""
    digests = [digest(found) for _, found in records()]
    rows = [" ".join(digests[i : i + 8]) for i in range(0, len(digests), 8)]
    GOLDEN.write_text("\n".join(rows) + "\n")
