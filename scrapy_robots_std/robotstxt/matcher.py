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

Every wildcard pattern tried is charged to one budget of work (``patterns.Budget``).
Up to :data:`HOT_ENTRIES` entries a matcher holds ``bytes`` objects (the search runs
in C); a larger one reads the file's own tables. Compiled matchers are held within
:data:`RING_BYTES` process-wide (:class:`Ring`), so a cached origin that is not
being crawled keeps only what the parse made.  See docs/design.md.
"""

from __future__ import annotations

import sys
import threading
import weakref
from array import array
from bisect import bisect_right
from collections import OrderedDict
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
        # The rooted run, and each pattern's longest piece (see _best_first).
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
    prefixes, chain, rooted = _match_order(rules.rfc9309, found, candidates)
    chain_prefixes = [prefixes[at] for at in chain]
    links = _links(chain_prefixes)
    if len(entries) > HOT_ENTRIES:
        return _compact(
            Indexed(rules, every),
            groups,
            (array("i", [entries[at] for at in chain]), links),
            array("i", [entries[at] for at in rooted]),
        )
    rooted_patterns = tuple([found[at] for at in rooted])
    chain_links: Column[int] = () if links is None else array("h", links)
    return Matcher(
        groups,
        (
            tuple(chain_prefixes),
            tuple([found[at] for at in chain]),
            array("q", [candidates[at] for at in chain]),
            chain_links,
        ),
        (
            rooted_patterns,
            array("q", [candidates[at] for at in rooted]),
            tuple(map(_needle, rooted_patterns)),
        ),
        80 * len(entries) + sum(map(len, found)) + 600,
    )


def _match_order(
    rfc9309: bool, found: list[bytes], candidates: list[int]
) -> tuple[list[bytes], list[int], list[int]]:
    """Each pattern's literal prefix; the positions of the chain, sorted by
    prefix, and of the rooted run, best candidate first."""
    chain = list(range(len(found)))
    rooted: list[int] = []
    prefixes = found  # 1994 has no special characters: every pattern is a prefix
    joined = b"\n".join(found)
    if rfc9309 and (joined.find(b"*") >= 0 or joined.find(b"$") >= 0):
        special = [
            at
            for at, pattern in enumerate(found)
            if b"*" in pattern or pattern[-1:] == b"$"
        ]
        prefixes = found[:]
        for at in special:
            prefixes[at] = _patterns.literal_prefix(found[at])
        rooted = [at for at in special if prefixes[at] in _ROOTS]
        if rooted:
            chain = sorted(set(chain).difference(rooted))
    chain.sort(key=prefixes.__getitem__)
    rooted.sort(key=candidates.__getitem__, reverse=True)
    return prefixes, chain, rooted


def _needle(pattern: bytes) -> bytes:
    """The longer of a wildcard pattern's first and last pieces after its literal
    prefix: a path it matches holds it (a compact matcher takes it at every test)."""
    pieces = pattern.removesuffix(b"$").split(b"*", 2)
    last = pieces[-1].rpartition(b"*")[2]
    return max(pieces[min(1, len(pieces) - 1)], last, key=len)


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
    return _needle(rules.pattern(entry))


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


def _links(prefixes: list[bytes]) -> list[int] | None:
    """For each sorted prefix, the nearest one before it that starts it (equal
    ones included), or -1; None when no prefix starts its neighbour (no links).

    That one is on the chain of links of the prefix just before.
    """
    count = len(prefixes)
    if count < 2 or not any(map(bytes.startswith, prefixes[1:], prefixes)):
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


def best_match(matcher: Matcher, path: bytes) -> int:
    """The deciding candidate for ``path``: :data:`NO_MATCH` when no rule
    matches, :data:`TOO_COMPLEX` when the wildcard patterns need more work than
    :func:`~scrapy_robots_std.robotstxt.patterns.work_budget` allows."""
    budget = _patterns.Budget(len(path))
    best = _on_chain(matcher, path, budget) if matcher.prefixes else NO_MATCH
    if matcher.rooted and best != TOO_COMPLEX:
        best = _best_first(matcher, path, best, budget)
    return best


def _on_chain(matcher: Matcher, path: bytes, budget: _patterns.Budget) -> int:
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
                if budget.left < 0:
                    return TOO_COMPLEX
        at = links[at] if links else -1
    return best


def _best_first(
    matcher: Matcher, path: bytes, best: int, budget: _patterns.Budget
) -> int:
    """The rooted run, best candidate first: the first pattern that matches
    decides; one that cannot beat ``best`` ends the run.  A pattern whose
    longest piece is not in the path is passed over: a quick reject, charged as
    the search of the path it is in a matcher past HOT_ENTRIES only."""
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
            if budget.left < 0:
                return TOO_COMPLEX
        elif reject and budget.take(reject):
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
