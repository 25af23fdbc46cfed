"""A token's rules of one file, compiled for checks, and the one best-match loop.

A parsed file keeps its rules in file order, compactly (``layout.Rules``). The
first check for a token compiles the rules of the token's groups into a
:class:`Matcher`, merged and in match order:

* the **chain**: every pattern that does not start with ``*`` or ``/*``, sorted by
  its literal prefix, each linked to the nearest entry before it whose prefix
  starts its own. The entries whose prefix starts a path all lie on one chain of
  links, from the last entry that sorts before the path: a binary search and a
  short walk;
* the **rooted** run: the wildcard patterns whose literal prefix is ``""`` or
  ``"/"`` (they would start every chain), best candidate first, tried until one
  matches or none left can win.

Every wildcard pattern tried is charged to one budget of work per check
(:func:`scrapy_robots_std.robotstxt.patterns.work_budget`); past it the answer is
:data:`~scrapy_robots_std.robotstxt.layout.TOO_COMPLEX`.

A matcher of up to :data:`HOT_ENTRIES` entries holds its patterns as ``bytes``
objects, so the search runs in C; a larger one (a hostile file) reads them from the
file's own tables, so that it keeps a few bytes per rule. Compiled matchers are
held process-wide within :data:`RING_BYTES` (:class:`Ring`): the oldest is dropped
first and compiled again at its file's next check, so a cached origin that is not
being crawled keeps only what the parse made.
"""

from __future__ import annotations

import sys
import threading
import weakref
from array import array
from bisect import bisect_right
from collections import deque
from typing import TYPE_CHECKING, Protocol

from scrapy_robots_std.robotstxt import patterns as _patterns
from scrapy_robots_std.robotstxt.layout import NO_MATCH, TOO_COMPLEX

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from scrapy_robots_std.robotstxt.layout import Rules

#: Matchers of more entries keep no ``bytes`` object per pattern.
HOT_ENTRIES = 1_024
#: What the compiled matchers of the whole process may hold (as ``Matcher.size``
#: counts it); the matcher compiled last is kept even when it alone is larger.
RING_BYTES = 2 << 20

_ROOTS = (b"", b"/")


class Matcher:
    """The rules of a token's groups, in match order (see the module's text)."""

    __slots__ = (
        "candidates",
        "groups",
        "links",
        "patterns",
        "prefixes",
        "rooted",
        "rooted_candidates",
        "needles",
        "reject",
        "size",
    )

    def __init__(
        self,
        groups: tuple[int, ...],
        chain: tuple[Sequence[bytes], Sequence[bytes], Sequence[int], Sequence[int]],
        rooted: tuple[Sequence[bytes], Sequence[int], Sequence[bytes]],
        size: int,
    ) -> None:
        self.groups = groups  # the group numbers it was compiled from
        self.prefixes, self.patterns, self.candidates, self.links = chain
        # The rooted run, and each pattern's last piece (see _best_first).
        self.rooted, self.rooted_candidates, self.needles = rooted
        # The work a quick reject costs per byte-unit of the path: none while the
        # rejects are bounded by HOT_ENTRIES searches in C.
        self.reject = 0 if isinstance(self.needles, tuple) else 1
        self.size = size  # bytes it keeps, an estimate from above


EMPTY_CHAIN: tuple[Sequence[bytes], Sequence[bytes], Sequence[int], Sequence[int]] = (
    (),
    (),
    (),
    (),
)


def compile_rules(
    rules: Rules, groups: tuple[int, ...], spans: Iterable[range]
) -> Matcher:
    """Compile the entries of ``spans`` (the token's groups' runs) of ``rules``."""
    entries = [entry for span in spans for entry in span]
    if not entries:
        return Matcher(groups, EMPTY_CHAIN, ((), (), ()), 0)
    if len(entries) > HOT_ENTRIES:
        return _compact(rules, groups, entries)
    found = rules.patterns(entries)
    candidates = rules.candidates(entries)
    chain = list(range(len(entries)))
    rooted: list[int] = []
    joined = b"\n".join(found)
    if rules.rfc9309 and (joined.find(b"*") >= 0 or joined.find(b"$") >= 0):
        prefixes = list(map(_patterns.literal_prefix, found))
        chain, rooted = _split(found, prefixes)
    else:  # 1994 has no special characters: every pattern is a prefix
        prefixes = found
    chain.sort(key=prefixes.__getitem__)
    rooted.sort(key=candidates.__getitem__, reverse=True)
    chain_prefixes = tuple([prefixes[at] for at in chain])
    links = _links(chain_prefixes)
    rooted_patterns = tuple([found[at] for at in rooted])
    size = 120 * len(entries) + len(joined) + 400
    return Matcher(
        groups,
        (
            chain_prefixes,
            tuple([found[at] for at in chain]),
            tuple([candidates[at] for at in chain]),
            () if links is None else tuple(links),
        ),
        (
            rooted_patterns,
            tuple([candidates[at] for at in rooted]),
            tuple(map(_needle, rooted_patterns)),
        ),
        size,
    )


EMPTY_CHAIN: tuple[Sequence[bytes], Sequence[bytes], Sequence[int], Sequence[int]] = (
    (),
    (),
    (),
    (),
)


def _split(found: list[bytes], prefixes: list[bytes]) -> tuple[list[int], list[int]]:
    """The positions of the chain's patterns and of the rooted run's."""
    rooted = [
        at
        for at, prefix in enumerate(prefixes)
        if prefix in _ROOTS and prefix is not found[at]
    ]
    if not rooted:
        return list(range(len(found))), rooted
    chain = sorted(set(range(len(found))).difference(rooted))
    return chain, rooted


def _needle(pattern: bytes) -> bytes:
    """A wildcard pattern's longest piece: a path it matches holds it."""
    return max(pattern.removesuffix(b"$").split(b"*"), key=len)


def _compact(rules: Rules, groups: tuple[int, ...], entries: list[int]) -> Matcher:
    """A hostile file's matcher: its entries' order, read through the file's tables."""
    rfc9309 = rules.rfc9309
    rooted = []
    if rfc9309:
        rooted = [
            entry
            for entry in entries
            if _patterns.is_special(pattern := rules.pattern(entry))
            and _patterns.literal_prefix(pattern) in _ROOTS
        ]
    chain = [entry for entry in entries if entry not in set(rooted)] if rooted else entries
    prefix_of = _patterns.literal_prefix if rfc9309 else _whole
    chain.sort(key=lambda entry: prefix_of(rules.pattern(entry)))
    rooted.sort(key=rules.candidate, reverse=True)
    order = array("i", chain)
    links = _links(_Column(rules, order, prefix=rfc9309))
    rooted_order = array("i", rooted)
    held = [order, rooted_order] + ([] if links is None else [array("i", links)])
    return Matcher(
        groups,
        (
            _Column(rules, order, prefix=rfc9309),
            _Column(rules, order, prefix=False),
            _Candidates(rules, order),
            held[2] if links is not None else (),
        ),
        (
            _Column(rules, rooted_order, prefix=False),
            _Candidates(rules, rooted_order),
            _Needles(rules, rooted_order),
        ),
        sum(map(sys.getsizeof, held)) + 600,
    )


def _whole(pattern: bytes) -> bytes:
    return pattern


class _Column:
    """Entries' patterns (or literal prefixes) read from the file's tables."""

    __slots__ = ("order", "prefix", "rules")

    def __init__(self, rules: Rules, order: array[int], prefix: bool) -> None:
        self.rules = rules
        self.order = order
        self.prefix = prefix

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, at: int) -> bytes:
        pattern = self.rules.pattern(self.order[at])
        return _patterns.literal_prefix(pattern) if self.prefix else pattern


class _Needles:
    __slots__ = ("order", "rules")

    def __init__(self, rules: Rules, order: array[int]) -> None:
        self.rules = rules
        self.order = order

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, at: int) -> bytes:
        return _needle(self.rules.pattern(self.order[at]))


class _Candidates:
    __slots__ = ("order", "rules")

    def __init__(self, rules: Rules, order: array[int]) -> None:
        self.rules = rules
        self.order = order

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, at: int) -> int:
        return self.rules.candidate(self.order[at])


class _Indexed(Protocol):
    def __len__(self) -> int: ...
    def __getitem__(self, at: int, /) -> bytes: ...


def _links(prefixes: _Indexed) -> list[int] | None:
    """For each sorted prefix, the nearest one before it that starts it (equal
    ones included), or -1; None when no prefix starts its neighbour (no links).

    That one is on the chain of links of the prefix just before.
    """
    count = len(prefixes)
    if count < 2 or (
        isinstance(prefixes, tuple)
        and not any(map(bytes.startswith, prefixes[1:], prefixes))
    ):
        return None
    links = [-1] * count
    for index in range(1, count):
        prefix = prefixes[index]
        link = index - 1
        while link >= 0 and not prefix.startswith(prefixes[link]):
            link = links[link]
        links[index] = link
    return links if links.count(-1) < count else None


# -- the one best-match loop ---------------------------------------------------------


def best_match(matcher: Matcher, path: bytes, budget: list[int] | None = None) -> int:
    """The deciding candidate for ``path``: :data:`NO_MATCH` when no rule
    matches, :data:`TOO_COMPLEX` when the wildcard patterns need more work than
    :func:`~scrapy_robots_std.robotstxt.patterns.work_budget` allows (or than
    ``budget[0]``, which is left with what remains)."""
    if budget is None:
        budget = [_patterns.work_budget(len(path))]
    best = _on_chain(matcher, path, budget) if matcher.prefixes else NO_MATCH
    if matcher.rooted and best != TOO_COMPLEX:
        best = _best_first(matcher, path, best, budget)
    return best


def _on_chain(matcher: Matcher, path: bytes, budget: list[int]) -> int:
    prefixes, links = matcher.prefixes, matcher.links
    best = NO_MATCH
    at = bisect_right(prefixes, path) - 1
    while at >= 0:
        prefix = prefixes[at]
        if path.startswith(prefix):
            found = matcher.candidates[at]
            if found > best:
                pattern = matcher.patterns[at]
                if pattern is prefix or _matches(path, pattern, budget):
                    best = found
                if budget[0] < 0:
                    return TOO_COMPLEX
        at = links[at] if links else -1
    return best


def _best_first(matcher: Matcher, path: bytes, best: int, budget: list[int]) -> int:
    """The rooted run, best candidate first: the first pattern that matches
    decides; one that cannot beat ``best`` ends the run.  A pattern whose last
    piece is not in the path is passed over (a quick reject, charged only in a
    matcher past HOT_ENTRIES, as the search of the path it is)."""
    rooted, candidates, needles = (
        matcher.rooted,
        matcher.rooted_candidates,
        matcher.needles,
    )
    reject = matcher.reject * (1 + len(path) // _patterns.SCANNED_BYTES_PER_WORK)
    for at in range(len(rooted)):
        found = candidates[at]
        if found <= best:
            break
        if needles[at] in path:
            if _matches(path, rooted[at], budget):
                return found
            if budget[0] < 0:
                return TOO_COMPLEX
        elif reject:
            budget[0] -= reject
            if budget[0] < 0:
                return TOO_COMPLEX
    return best


def _matches(path: bytes, pattern: bytes, budget: list[int]) -> bool:
    """Whether ``pattern`` (known to start like ``path``) matches it; a wildcard
    pattern's work is taken from ``budget``."""
    if pattern.find(b"*") < 0:
        return not pattern.endswith(b"$") or len(path) == len(pattern) - 1
    work = _patterns.wildcard_work(path, pattern)
    budget[0] -= _patterns.TRY_WORK + (~work if work < 0 else work)
    return work < 0


# -- the process-wide bound ----------------------------------------------------------


class _Owner(Protocol):
    def drop_matcher(self, matcher: Matcher) -> None: ...


class Ring:
    """The matchers compiled last, within a byte bound; older ones are dropped from
    their owners (which compile them again when next asked)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.total = 0
        self._held: deque[tuple[weakref.ref[_Owner], Matcher]] = deque()
        self._lock = threading.Lock()

    def hold(self, owner: _Owner, matcher: Matcher) -> None:
        with self._lock:
            self._held.append((weakref.ref(owner), matcher))
            self.total += matcher.size
            while self.total > self.max_bytes and len(self._held) > 1:
                ref, dropped = self._held.popleft()
                self.total -= dropped.size
                owner_now = ref()
                if owner_now is not None:
                    owner_now.drop_matcher(dropped)

    def __len__(self) -> int:
        return len(self._held)


RING = Ring(RING_BYTES)
