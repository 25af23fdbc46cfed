"""The tests' one body builder: robots.txt bodies, ordinary and hostile.

* :func:`body_for`: an ordinary file of its own for origin number N (the cache
  tests and workers, the cache benchmarks).
* :func:`ordinary` and :func:`ordinary_usage`: a typical file, without and with
  usage lines.
* The hostile shapes (:data:`SHAPES`, :data:`USAGE_SHAPES`): bodies of (nearly)
  512,000 bytes, each with a path that makes a check try all its rules. Shared by
  ``benchmarks/hostile.py`` and the tests that bound matching work and memory: one
  home for what "hostile" means.

Every body is deterministic (seeded), so figures compare across runs.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

LIMIT = 512_000
_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789"


def _fill(head: str, make_line: Callable[[int], str], limit: int = LIMIT) -> bytes:
    """``head`` then lines from ``make_line(0, 1, ...)`` while they fit in ``limit``."""
    parts = [head]
    size = len(head)
    number = 0
    while True:
        line = make_line(number) + "\n"
        if size + len(line) > limit:
            break
        parts.append(line)
        size += len(line)
        number += 1
    return "".join(parts).encode()


def _word(rng: random.Random, low: int, high: int) -> str:
    return "".join(rng.choices(_LETTERS, k=rng.randint(low, high)))


def many_wildcards(limit: int = LIMIT) -> bytes:
    """About 18,000 distinct wildcard rules (the issue's shape)."""
    rng = random.Random(16)

    def line(n: int) -> str:
        kind = "Allow" if n % 3 == 0 else "Disallow"
        a, b = _word(rng, 3, 7), _word(rng, 2, 6)
        shape = n % 4
        if shape == 0:
            return f"{kind}: /*{a}*{b}"
        if shape == 1:
            return f"{kind}: /{a}/*{b}$"
        if shape == 2:
            return f"{kind}: *{a}*{b}*.x$"
        return f"{kind}: /*{a}*{b}*{_word(rng, 1, 3)}"

    return _fill("User-agent: *\n", line, limit)


def short_wildcards(limit: int = LIMIT) -> bytes:
    """The most rules a body can hold: ``Allow:*ab`` with every distinct piece."""
    pieces = [a + b + c for a in _LETTERS for b in _LETTERS for c in _LETTERS]
    random.Random(17).shuffle(pieces)

    def line(n: int) -> str:
        return f"{'Allow' if n % 2 else 'Disallow'}:*{pieces[n % len(pieces)]}"

    return _fill("User-agent:*\n", line, limit)


def long_patterns(limit: int = LIMIT) -> bytes:
    """Rules near the 16,663-byte line cap, each ``/*a*a*...*a*b`` (one ``*`` in two)."""

    def line(n: int) -> str:
        count = 8_000 - 7 * n
        return "Disallow: /" + "*a" * count + "*b"

    return _fill("User-agent: *\n", line, limit)


def many_groups(limit: int = LIMIT) -> bytes:
    """2,000+ groups, each named for its own agent, with a few wildcard rules."""
    rng = random.Random(18)

    def line(n: int) -> str:
        agent = "Bot" + _word(rng, 6, 12) if n % 500 else "Botlast"
        rules = [f"Disallow: /*{_word(rng, 3, 6)}*{_word(rng, 2, 4)}" for _ in range(6)]
        return "\n".join([f"User-agent: {agent}", *rules, "Allow: /public/"])

    return _fill("", line, limit)


def many_agents(limit: int = LIMIT) -> bytes:
    """Tens of thousands of distinct user-agent lines, a rule after every tenth."""
    rng = random.Random(19)

    def line(n: int) -> str:
        name = _word(rng, 8, 14) if n % 1000 else "zzzlast"
        agent = f"User-agent: {name}/{n}.0"
        if n % 10 == 9:
            return f"{agent}\nDisallow: /*{_word(rng, 3, 6)}"
        return agent

    return _fill("", line, limit)


def shared_piece(limit: int = LIMIT) -> bytes:
    """Rules that all share their longest piece, the key an index of longest
    pieces would file every one of them under."""
    pieces = [a + b + c for a in _LETTERS for b in _LETTERS for c in _LETTERS]
    random.Random(20).shuffle(pieces)

    def line(n: int) -> str:
        return f"Disallow: /*{SHARED}*{pieces[n % len(pieces)]}"

    return _fill("User-agent: *\n", line, limit)


SHARED = "robotsrobots"


def ordered_letters(limit: int = LIMIT) -> bytes:
    """``/*a*b*c*d`` for letters in increasing order: every piece is common, so
    no key is rare, and a path holding them in decreasing order matches none."""
    combos = itertools.combinations(_LETTERS, 4)

    def line(n: int) -> str:
        return "Disallow: /*" + "*".join(next(combos))

    return _fill("User-agent: *\n", line, limit)


def many_pieces(limit: int = LIMIT) -> bytes:
    """Rules of 1,000 pieces and more, each placed one by one before it fails."""

    def line(n: int) -> str:
        return "Disallow: /" + "*a" * (1_000 + n) + "*b"

    return _fill("User-agent: *\n", line, limit)


def repeated_rule(limit: int = LIMIT) -> bytes:
    """The shortest rule whose value normalises (an octet outside ASCII), written
    again and again: a copy of the pattern and of the value as written each."""
    head, line = b"User-agent: HostileBot\n", b"allow:\xff\n"
    return head + line * ((limit - len(head)) // len(line))


def body_for(index: int, rules: int = 20) -> bytes:
    """A robots.txt body of its own for origin number ``index``."""
    lines = ["User-agent: *"]
    lines += [f"Disallow: /private-{index}/{n}/" for n in range(rules)]
    lines += ["", "User-agent: TestBot", f"Disallow: /only-testbot-{index}/"]
    return ("\n".join(lines) + "\n").encode()


def ordinary() -> bytes:
    """A typical file: a few groups, prefixes, a handful of wildcards."""
    lines = ["User-agent: *"]
    lines += [f"Disallow: /section{n}/private/" for n in range(40)]
    lines += [
        "Disallow: /*?sort=",
        "Disallow: /*.pdf$",
        "Allow: /*/public/*",
        "Disallow: /search",
    ]
    lines += ["", "User-agent: Googlebot", "Disallow: /nogoogle/", "Allow: /"]
    return ("\n".join(lines) + "\n").encode()


#: Content-Usage and Content-Signal lines a file may hold (``MAX_USAGE_LINES``).
USAGE_LINES = 64
#: The fewest ``*a`` pieces of a line of :func:`usage_wildcards`.
USAGE_PIECES = 870


def _usage_lines() -> str:
    return "".join(
        "Content-Usage: /" + "*a" * (USAGE_PIECES + n) + "*b train-ai=n\n"
        for n in range(USAGE_LINES)
    )


def usage_wildcards() -> bytes:
    """As many ``Content-Usage`` lines as a file may hold, each a path of 870
    and more ``*a`` pieces and a ``*b`` (117 KB in all): a path with 869 a's
    before its b places 869 pieces of every line before the line fails."""
    return ("User-agent: *\nDisallow: /private/\n" + _usage_lines()).encode()


def usage_and_wildcards() -> bytes:
    """:func:`many_wildcards` cut to leave room for the lines of
    :func:`usage_wildcards`, in the same group: a usage query checks access
    first, so both parts cost it."""
    usage = _usage_lines().encode()
    return many_wildcards(LIMIT - len(usage)) + usage


def ordinary_usage() -> bytes:
    """:func:`ordinary` with the usage lines real files hold: attach-05's
    example and a Content Signals line."""
    return ordinary() + (
        b"\nUser-agent: *\n"
        b"Content-Usage: train-ai=n\n"
        b"Content-Usage: /ai-ok/ train-ai=y\n"
        b"Content-Signal: search=yes, ai-train=no, use=reference\n"
    )


@dataclass(frozen=True)
class Shape:
    key: str
    description: str
    body: Callable[[], bytes]
    #: A path of about ``size`` bytes that the shape's rules must all be tried
    #: against (it matches none, or only a low-priority one).
    path: Callable[[int], str]
    #: The product token asked with: one that some group names, so rules apply.
    token: str = "HostileBot"


def _letters_path(size: int) -> str:
    rng = random.Random(size)
    return "/" + "".join(rng.choices(_LETTERS + "/-_.", k=size - 1))


def _upper_path(size: int) -> str:
    rng = random.Random(size)
    return "/" + "".join(rng.choices("ABCDEFGHIJKLMNOPQRSTUVWXYZ/", k=size - 1))


def _b_then_a(size: int) -> str:
    return "/b" + "a" * (size - 2)


def _letters_then_shared(size: int) -> str:
    """Thousands of 3-letter pieces, then the shared piece: every piece found
    is found before it."""
    return _letters_path(size - len(SHARED)) + SHARED


def _letters_decreasing(size: int) -> str:
    head = "/" + _LETTERS[::-1]
    return head + "-" * (size - len(head))


def _a_then_b(size: int) -> str:
    return "/" + "a" * 999 + "b" + "a" * (size - 1_001)


SHAPES = (
    Shape("wildcards", "~18,000 wildcard rules", many_wildcards, _letters_path),
    Shape("short", "~48,000 tiny wildcard rules", short_wildcards, _upper_path),
    Shape("long", "31 rules of 8,000 '*' each", long_patterns, _b_then_a),
    Shape("groups", "2,000+ groups", many_groups, _letters_path, "Botlast"),
    Shape("agents", "~40,000 user-agent lines", many_agents, _letters_path, "zzzlast"),
    Shape(
        "shared", "~21,000 rules, one shared piece", shared_piece, _letters_then_shared
    ),
    Shape(
        "ordered",
        "~25,000 rules of ordered letters",
        ordered_letters,
        _letters_decreasing,
    ),
    Shape("pieces", "~230 rules of 1,000+ pieces", many_pieces, _a_then_b),
    Shape("repeated", "~64,000 copies of one rule", repeated_rule, _letters_path),
)
SHAPES_BY_KEY = {shape.key: shape for shape in SHAPES}


def _a_then_b_usage(size: int) -> str:
    """One ``a`` fewer than the shortest line of :func:`usage_wildcards` has
    pieces, its ``b``, then more a's."""
    head = "/" + "a" * (USAGE_PIECES - 1) + "b"
    return head + "a" * (size - len(head))


#: Files whose usage lines are the hostile part (``RobotsTxt.usage``).
USAGE_SHAPES = (
    Shape(
        "usage",
        "64 Content-Usage lines of 870+ '*'",
        usage_wildcards,
        _a_then_b_usage,
    ),
    Shape(
        "usage+wildcards",
        "the same, after ~16,600 wildcard rules",
        usage_and_wildcards,
        _letters_path,
    ),
)


def star_group(rules: list[tuple[bool, str]]) -> bytes:
    """A body of one ``*`` group: an Allow (True) or Disallow line per rule."""
    lines = ["User-agent: *"]
    lines += [
        f"{'Allow' if allow else 'Disallow'}: {pattern}" for allow, pattern in rules
    ]
    return ("\n".join(lines) + "\n").encode()


def url(path: str) -> str:
    return "https://example.com" + path
