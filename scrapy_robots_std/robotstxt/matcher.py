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
  matches or none left can win; one whose *needle* (a longest piece) the path
  does not hold is passed over.

Every wildcard pattern tried is charged to one budget of work (``patterns.Budget``).
Up to :data:`HOT_ENTRIES` entries a matcher holds ``bytes`` objects (the search and
the needles run in C); a larger one reads the file's own tables. Compiled matchers
are held within :data:`RING_BYTES` process-wide (:class:`Ring`), so a cached origin
that is not being crawled keeps only what the parse made.  See docs/design.md.
"""

from __future__ import annotations

import sys
import threading
import weakref
from array import array
from bisect import bisect_right
from collections import OrderedDict
from itertools import compress
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from scrapy_robots_std.robotstxt import patterns as _patterns
from scrapy_robots_std.robotstxt.layout import NO_MATCH, TOO_COMPLEX, Indexed

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from scrapy_robots_std.robotstxt.layout import Rules

#: Matchers of more entries keep no ``bytes`` object per pattern.
HOT_ENTRIES = 1_024
#: What the compiled matchers of the whole process may hold (as ``Matcher.size``
#: counts it); the matcher compiled last is kept even when it alone is larger.
RING_BYTES = 4 << 20

_ROOTS = (b"", b"/")
_T_co = TypeVar("_T_co", covariant=True)


class Column(Protocol[_T_co]):
    """A matcher's column: a tuple (hot) or a view of the file's tables (compact)."""

    def __len__(self) -> int: ...
    def __getitem__(self, at: int, /) -> _T_co: ...


class Matcher:
    """The rules of a token's groups, in match order (see the module's text)."""

    __slots__ = (
        "candidates",
        "groups",
        "links",
        "needles",
        "patterns",
        "prefixes",
        "reject",
        "rooted",
        "rooted_candidates",
        "size",
    )

    def __init__(
        self,
        groups: tuple[int, ...],
        chain: tuple[Column[bytes], Column[bytes], Column[int], Column[int]],
        rooted: tuple[Column[bytes], Column[int], Column[bytes]],
        size: int,
    ) -> None:
        self.groups = groups  # the group numbers it was compiled from
        self.prefixes, self.patterns, self.candidates, self.links = chain
        # The rooted run, and each pattern's needle (see _needle).
        self.rooted, self.rooted_candidates, self.needles = rooted
        # The work a quick reject costs per unit of the path it searched: none
        # while the rejects are bounded by HOT_ENTRIES searches in C.
        self.reject = 0 if isinstance(self.needles, tuple) else 1
        self.size = size  # bytes it keeps, an estimate from above


def compile_rules(
    rules: Rules, groups: tuple[int, ...], spans: Iterable[range]
) -> Matcher:
    """Compile the entries of ``spans`` (the token's groups' runs) of ``rules``."""
    entries = [entry for span in spans for entry in span]
    if not entries:
        return Matcher(groups, ((), (), (), ()), ((), (), ()), 0)
    every = rules.patterns()
    found = [every[entry] for entry in entries]
    candidates = rules.candidates(entries, found)
    prefixes, order, rooted = _match_order(rules.rfc9309, found, candidates)
    chained = tuple([prefixes[at] for at in order])
    links = _links(chained)
    if len(entries) > HOT_ENTRIES:
        return _compact(
            Indexed(rules, every),
            groups,
            (array("i", [entries[at] for at in order]), links),
            array("i", [entries[at] for at in rooted]),
        )
    rooted_patterns = tuple([found[at] for at in rooted])
    return Matcher(
        groups,
        (
            chained,
            chained if prefixes is found else tuple([found[at] for at in order]),
            array("q", [candidates[at] for at in order]),
            () if links is None else array("h", links),
        ),
        (
            rooted_patterns,
            array("q", [candidates[at] for at in rooted]) if rooted else (),
            tuple(map(_needle, rooted_patterns)),
        ),
        80 * len(entries) + sum(map(len, found)) + 600,
    )


def _match_order(
    rfc9309: bool, found: list[bytes], candidates: list[int]
) -> tuple[list[bytes], list[int], list[int]]:
    """Each pattern's literal prefix (``found`` itself when the chain holds
    no special pattern); the positions of the chain, sorted by prefix, and of
    the rooted run, best candidate first."""
    rooted: list[int] = []
    prefixes = found  # 1994 has no special characters: every pattern is a prefix
    joined = b"\n".join(found)
    if rfc9309 and (joined.find(b"*") >= 0 or joined.find(b"$") >= 0):
        special = [
            at
            for at, pattern in enumerate(found)
            if pattern.find(b"*") >= 0 or pattern[-1:] == b"$"
        ]
        prefixes = found[:]
        for at in special:
            prefixes[at] = _patterns.literal_prefix(found[at])
        rooted = [at for at in special if prefixes[at] in _ROOTS]
        if len(rooted) == len(special):
            prefixes = found  # the chain's patterns are their own prefixes
    chain: Iterable[int] = range(len(found))
    if rooted:
        chain = sorted(set(chain).difference(rooted))  # in file order
    rooted.sort(key=candidates.__getitem__, reverse=True)
    return prefixes, sorted(chain, key=prefixes.__getitem__), rooted


def _needle(pattern: bytes, pieces: int = 16) -> bytes:
    """The longest of a wildcard pattern's first ``pieces`` pieces after its
    literal prefix and its last piece: a path it matches holds it.  (A compact
    matcher takes it at every test, of 2 pieces; 16 bound a hot one's compile.)"""
    parts = pattern.removesuffix(b"$").split(b"*", pieces)
    return max([*parts[1:-1], parts[-1].rpartition(b"*")[2]], key=len)


def _compact(
    rules: Indexed,
    groups: tuple[int, ...],
    chain: tuple[array[int], list[int] | None],
    rooted: array[int],
) -> Matcher:
    """A hostile file's matcher: its entries in match order (and the chain's
    links), read through the file's tables: a few bytes per rule."""
    order, links = chain
    held = [order, rooted] + ([] if links is None else [array("i", links)])
    prefix = _prefix if rules.rules.rfc9309 else Indexed.pattern
    return Matcher(
        groups,
        (
            _View(rules, order, prefix),
            _View(rules, order, Indexed.pattern),
            _View(rules, order, Indexed.candidate),
            held[2] if links is not None else (),
        ),
        (
            _View(rules, rooted, Indexed.pattern),
            _View(rules, rooted, Indexed.candidate),
            _View(rules, rooted, _needle_of),
        ),
        sum(map(sys.getsizeof, held)) + rules.size() + 600,
    )


def _prefix(rules: Indexed, entry: int) -> bytes:
    return _patterns.literal_prefix(rules.pattern(entry))


def _needle_of(rules: Indexed, entry: int) -> bytes:
    return _needle(rules.pattern(entry), 2)


class _View(Generic[_T_co]):
    """A column of a compact matcher: what ``read`` gives for each entry of
    ``order``, read from the file's tables when asked."""

    __slots__ = ("order", "read", "rules")

    def __init__(
        self, rules: Indexed, order: array[int], read: Callable[[Indexed, int], _T_co]
    ) -> None:
        self.rules = rules
        self.order = order
        self.read = read

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, at: int) -> _T_co:
        return self.read(self.rules, self.order[at])


def _links(prefixes: tuple[bytes, ...]) -> list[int] | None:
    """For each sorted prefix, the nearest one before it that starts it (equal
    ones included; it is on the chain of links of the prefix just before), or
    -1; None when no prefix starts its neighbour (no links)."""
    count = len(prefixes)
    if count < 2 or not any(map(bytes.startswith, prefixes[1:], prefixes)):
        return None
    links = [-1] * count
    for index in range(1, count):
        prefix, link = prefixes[index], index - 1
        while link >= 0 and not prefix.startswith(prefixes[link]):
            link = links[link]
        links[index] = link
    return links


# -- the one best-match loop ---------------------------------------------------------


def best_match(matcher: Matcher, path: bytes) -> int:
    """The deciding candidate for ``path``: :data:`NO_MATCH` when no rule
    matches, :data:`TOO_COMPLEX` when the wildcard patterns need more work than
    :func:`~scrapy_robots_std.robotstxt.patterns.work_budget` allows."""
    budget = None
    best = NO_MATCH
    prefixes, links = matcher.prefixes, matcher.links
    at = bisect_right(prefixes, path) - 1
    while at >= 0:
        prefix = prefixes[at]
        if path.startswith(prefix):
            found = matcher.candidates[at]
            if found > best:
                pattern = matcher.patterns[at]
                if pattern is prefix:
                    best = found
                else:
                    budget = budget or _patterns.Budget(len(path))
                    if _matches(path, pattern, budget):
                        best = found
                    if budget.left < 0:
                        return TOO_COMPLEX
        at = links[at] if links else -1
    if matcher.rooted:
        return _best_first(matcher, path, best, budget)
    return best


def _best_first(
    matcher: Matcher, path: bytes, best: int, budget: _patterns.Budget | None
) -> int:
    """The rooted run, best candidate first: the first pattern that matches
    decides; one that cannot beat ``best`` ends the run.  A pattern whose
    needle is not in the path is passed over: a quick reject, in C in a matcher
    of at most HOT_ENTRIES, else charged as the search of the path it is."""
    needles = matcher.needles
    reject = matcher.reject * (1 + len(path) // _patterns.SCANNED_BYTES_PER_WORK)
    tried: Iterable[int] = range(len(needles))
    if isinstance(needles, tuple):  # only those whose needle the path holds, in C
        tried = compress(tried, map(path.count, needles))
    for at in tried:
        found = matcher.rooted_candidates[at]
        if found <= best:
            break
        budget = budget or _patterns.Budget(len(path))
        # bytes.find: ``in`` on bytes raises (and clears) an exception.
        if not reject or path.find(needles[at]) >= 0:
            if _matches(path, matcher.rooted[at], budget):
                return found
            if budget.left < 0:
                return TOO_COMPLEX
        elif budget.take(reject):
            return TOO_COMPLEX
    return best


def _matches(path: bytes, pattern: bytes, budget: _patterns.Budget) -> bool:
    """Whether ``pattern`` (known to start like ``path``) matches it; a wildcard
    pattern's work is taken from ``budget``."""
    if pattern.find(b"*") < 0:
        return not pattern.endswith(b"$") or len(path) == len(pattern) - 1
    work = _patterns.wildcard_work(path, pattern)
    budget.take(_patterns.TRY_WORK + (~work if work < 0 else work))
    return work < 0


# -- the process-wide bound ----------------------------------------------------------


class _Owner(Protocol):
    def drop_matcher(self, ident: int) -> None: ...


class Ring:
    """Which owners hold a compiled matcher, oldest first: past the byte bound the
    oldest let theirs go (an owner that dies takes its matcher and leaves)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.total = 0
        # owner -> (id of its matcher, the matcher's size)
        self._held: OrderedDict[weakref.ref[_Owner], tuple[int, int]] = OrderedDict()
        self._lock = threading.RLock()  # the weakref callback may run inside hold()

    def hold(self, owner: _Owner, matcher: Matcher) -> None:
        with self._lock:
            ref = weakref.ref(owner, self._forget)
            self._forget(ref)  # the owner's earlier matcher, if counted
            self._held[ref] = (id(matcher), matcher.size)
            self.total += matcher.size
            while self.total > self.max_bytes and len(self._held) > 1:
                oldest, (ident, size) = self._held.popitem(last=False)
                self.total -= size
                found = oldest()
                if found is not None:
                    found.drop_matcher(ident)

    def _forget(self, ref: weakref.ref[_Owner]) -> None:
        with self._lock:
            entry = self._held.pop(ref, None)
            if entry is not None:
                self.total -= entry[1]


RING = Ring(RING_BYTES)
