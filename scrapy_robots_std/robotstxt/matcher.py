"""A token's rules of one file compiled into match order (a hot or a compact
:class:`Matcher`), the one best-match loop, and the process-wide bound on
compiled matchers (:class:`Ring`): docs/design.md, "Compile" and "Match"."""

from __future__ import annotations

import sys
import threading
import weakref
from array import array
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass
from itertools import accumulate, compress, repeat
from itertools import chain as _chain
from operator import contains, itemgetter, not_
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from scrapy_robots_std.robotstxt import patterns as _patterns
from scrapy_robots_std.robotstxt.layout import NO_MATCH, TOO_COMPLEX, Indexed
from scrapy_robots_std.robotstxt.patterns import Budget

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from scrapy_robots_std.robotstxt.layout import Rules
    from scrapy_robots_std.robotstxt.robots import RobotsTxt

#: Matchers of more entries, or that would hold more bytes, keep no ``bytes``
#: object per pattern: a hostile 500 KiB file keeps at most 1 MiB.
HOT_ENTRIES = 2_048
HOT_BYTES = 256 << 10
#: What the compiled matchers of the process may hold (``Matcher.size``), the last
#: always kept: a crawl's busy origins, ~600 corpus files (docs/design.md).
RING_BYTES = 2 << 20

_T_co = TypeVar("_T_co", covariant=True)
# Needles are text: ``in`` on bytes raises (and clears) an exception on CPython
# 3.11, and bytes.find and bytes.count parse their arguments as a tuple.
_TEXT = "latin-1"
_UNMARKED = bytes(sorted(set(range(256)).difference(b"*$\n")))


class Column(Protocol[_T_co]):
    """A matcher's column: a tuple (hot) or a view of the file's tables (compact)."""

    def __len__(self) -> int: ...
    def __getitem__(self, at: int, /) -> _T_co: ...


@dataclass(slots=True, eq=False, repr=False)  # a repr would print every rule
class Matcher:
    """The rules of a token's groups, in match order (see the module's text).

    The chain: each node's prefix, best candidate, link, and where its run
    starts (node ``at``'s run is ``starts[at]:starts[at + 1]``, empty for a plain
    pattern; ``starts`` is empty when no pattern is a wildcard).  Then the runs'
    patterns, candidates and needles (see _needle), run after run.
    """

    groups: tuple[int, ...]  # the group numbers it was compiled from
    prefixes: Column[bytes]
    candidates: Column[int]
    links: Column[int]
    starts: Column[int]
    patterns: Column[bytes]
    run_candidates: Column[int]
    needles: Column[str]
    size: int  # bytes it keeps, an estimate from above


def compile_rules(
    rules: Rules, groups: tuple[int, ...], spans: Iterable[range]
) -> Matcher:
    """Compile the entries of ``spans`` (the token's groups' runs) of ``rules``."""
    entries = list(_chain.from_iterable(spans))
    if not entries:
        return Matcher(groups, (), (), (), (), (), (), (), 0)
    patterns = rules.patterns()
    found = list(map(patterns.__getitem__, entries))
    candidates = rules.candidates(entries, found)
    if len(found) > HOT_ENTRIES and len(set(found)) < len(found):
        # Thousands of rules, some written again: only each pattern's best-ranked
        # copy, as the others match the same paths and never decide (a hostile file
        # repeats one rule 60,000 times). Ranked from the worst, a dict keeps the best.
        ranked = sorted(range(len(found)), key=candidates.__getitem__)
        entries = sorted({found[at]: entries[at] for at in ranked}.values())
        found = list(map(patterns.__getitem__, entries))
        candidates = rules.candidates(entries, found)
    prefixes, heads, nodes, runs = _match_order(rules.rfc9309, found, candidates)
    wild = list(_chain.from_iterable(runs))
    link_at = _links(prefixes)
    run_at = array("i", [0, *accumulate(map(len, runs))]) if wild else ()
    run_patterns = tuple([found[at] for at in wild])
    # Its bytes objects, slots and ints (measured with tracemalloc): each
    # pattern, node, and wildcard's needle and run prefix (together at most as
    # long as its pattern).
    size = 8 * len(entries) + 88 * len(wild) + 56 * len(nodes) + 800
    size += sum(map(len, found)) + sum(map(len, run_patterns))
    if len(entries) > HOT_ENTRIES or size > HOT_BYTES:
        node_entries = array("i", [entries[at] for at in nodes])
        wild_entries = array("i", [entries[at] for at in wild])
        return _compact(
            Indexed(rules), groups, (node_entries, link_at, run_at), wild_entries
        )
    needles = tuple([_needle(pattern).decode(_TEXT) for pattern in run_patterns])
    chain = (prefixes, array("q", heads), link_at, run_at)
    columns = (run_patterns, array("q", [candidates[at] for at in wild]), needles)
    return Matcher(groups, *chain, *columns, size)


def _match_order(
    rfc9309: bool, found: list[bytes], candidates: list[int]
) -> tuple[
    tuple[bytes, ...], tuple[int, ...], tuple[int, ...], tuple[Sequence[int], ...]
]:
    """The chain's nodes, sorted by prefix: each one's prefix, best candidate,
    position in ``found`` (a plain pattern's, or its run's best) and run (the
    positions of its wildcard patterns, best first; none for a plain one)."""
    chain: list[tuple[bytes, int, int, Sequence[int]]]
    chain = list(zip(found, candidates, range(len(found)), repeat(())))
    joined = b"\n".join(found)
    # 1994 has no special characters: every pattern is a plain one.
    if rfc9309 and (joined.find(b"*") >= 0 or joined.find(b"$") >= 0):
        chain = _with_runs(chain, candidates, joined)
    chain.sort(key=itemgetter(0))
    prefixes, heads, nodes, runs = zip(*chain, strict=True)
    return prefixes, heads, nodes, runs


def _with_runs(
    chain: Sequence[tuple[bytes, int, int, Sequence[int]]],
    candidates: list[int],
    joined: bytes,
) -> list[tuple[bytes, int, int, Sequence[int]]]:
    """The nodes of a file with wildcard patterns (``joined``: its patterns,
    one per line; ``chain``: a plain node each): a plain pattern each, and a
    run of every wildcard pattern with the same literal prefix."""
    # Each pattern's "*" and "$", picked out in C: most patterns have none.
    marks = joined.translate(None, _UNMARKED).split(b"\n")
    runs: dict[bytes, list[int]] = {}
    nodes: list[tuple[bytes, int, int, Sequence[int]] | None] = list(chain)
    for at in compress(range(len(marks)), marks):
        pattern = chain[at][0]
        literal = _patterns.literal_prefix(pattern)
        # A path starts with "/" (RFC 9309 2.2.2): "*.pdf" joins the run of "/*.pdf".
        prefix = literal or b"/"
        if pattern.rstrip(b"*") == literal:  # "/a/*" is the plain "/a/"
            nodes[at] = (prefix, candidates[at], at, ())
        else:
            nodes[at] = None
            runs.setdefault(prefix, []).append(at)
    for prefix, run in runs.items():
        run.sort(key=candidates.__getitem__, reverse=True)
        nodes.append((prefix, candidates[run[0]], run[0], run))
    return list(filter(None, nodes))


def _needle(pattern: bytes, pieces: int = 16) -> bytes:
    """The longest of a wildcard pattern's first ``pieces`` pieces after its
    literal prefix and its last piece: a path it matches holds it.  (A compact
    matcher takes it at every test, of 2 pieces; 16 bound a hot one's compile.)"""
    parts = pattern.removesuffix(b"$").split(b"*", pieces)
    if len(parts) == 2:  # one "*" (most): no list to build, no key to call
        return parts[1]
    return max([*parts[1:-1], parts[-1].rpartition(b"*")[2]], key=len)


def _compact(
    rules: Indexed,
    groups: tuple[int, ...],
    chain: tuple[array[int], Column[int], Column[int]],
    wild: array[int],
) -> Matcher:
    """A hostile file's matcher: its entries in match order (and the chain's
    links and runs), read through the file's tables: a few bytes per rule."""
    nodes, link_at, run_at = chain
    prefix = _prefix if rules.rfc9309 else Indexed.pattern
    size = sum(map(sys.getsizeof, (nodes, wild, link_at, run_at))) + rules.size() + 600
    return Matcher(
        groups,
        _View(rules, nodes, prefix),
        _View(rules, nodes, Indexed.candidate),
        link_at,
        run_at,
        _View(rules, wild, Indexed.pattern),
        _View(rules, wild, Indexed.candidate),
        _View(rules, wild, _needle_of),
        size,
    )


def _prefix(rules: Indexed, entry: int) -> bytes:
    return _patterns.literal_prefix(rules.pattern(entry)) or b"/"


def _needle_of(rules: Indexed, entry: int) -> str:
    return _needle(rules.pattern(entry), 2).decode(_TEXT)


@dataclass(slots=True)
class _View(Generic[_T_co]):
    """A column of a compact matcher: what ``read`` gives for each entry of
    ``order``, read from the file's tables when asked."""

    rules: Indexed
    order: array[int]
    read: Callable[[Indexed, int], _T_co]

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, at: int) -> _T_co:
        return self.read(self.rules, self.order[at])


def _links(prefixes: Sequence[bytes]) -> array[int] | tuple[()]:
    """For each sorted prefix, the nearest one before it that starts it (equal
    ones included; it is on the chain of links of the prefix just before), or
    -1; none when no prefix starts its neighbour (no links)."""
    follows = list(map(bytes.startswith, prefixes[1:], prefixes))
    if not any(follows):
        return ()
    links = list(range(-1, len(prefixes) - 1))  # the one before, at first
    for index in compress(range(1, len(prefixes)), map(not_, follows)):
        prefix, link = prefixes[index], links[index - 1]
        while link >= 0 and not prefix.startswith(prefixes[link]):
            link = links[link]
        links[index] = link
    return array("i", links)


def best_match(matcher: Matcher, path: bytes) -> int:
    """The deciding candidate for ``path``: :data:`NO_MATCH` when no rule
    matches, :data:`TOO_COMPLEX` when the wildcard patterns need more work than
    :func:`~scrapy_robots_std.robotstxt.patterns.work_budget` allows."""
    budget = None
    best = NO_MATCH
    prefixes, candidates = matcher.prefixes, matcher.candidates
    links, starts = matcher.links, matcher.starts
    at = bisect_right(prefixes, path) - 1
    while at >= 0:
        found = candidates[at]
        if found > best and path.startswith(prefixes[at]):
            if not starts or starts[at] == starts[at + 1]:
                best = found  # a plain pattern: its prefix
            else:
                run = range(starts[at], starts[at + 1])
                best, budget = _run(matcher, path, run, best, budget)
                if best == TOO_COMPLEX:
                    return best
        at = links[at] if links else -1
    return best


def _run(
    matcher: Matcher, path: bytes, run: range, best: int, budget: Budget | None
) -> tuple[int, Budget | None]:
    """The candidate of the first pattern of ``run`` (best first) that matches
    ``path``, or ``best`` when none that can beat it does, and the check's
    budget, made at its first charge.  A pattern whose needle the path does
    not hold is passed over: in C and free in a hot matcher on a path of at
    most SCANNED_BYTES_PER_WORK bytes (at most HOT_ENTRIES short searches),
    else charged as the search of the path it is."""
    needles, candidates = matcher.needles, matcher.run_candidates
    text = path.decode(_TEXT)
    reject = 1 + len(path) // _patterns.SCANNED_BYTES_PER_WORK
    tried: Iterable[int] = run
    if isinstance(needles, tuple) and reject == 1:
        reject = 0
        if len(run) > 1:
            held = map(contains, repeat(text), needles[run.start : run.stop])
            tried = compress(run, held)
    for at in tried:
        found = candidates[at]
        if found <= best:
            break
        if needles[at] in text:
            budget = budget or Budget(len(path))
            if _matches(path, matcher.patterns[at], budget):
                return found, budget
            if budget.left < 0:
                return TOO_COMPLEX, budget
        elif reject:
            budget = budget or Budget(len(path))
            if budget.take(reject):
                return TOO_COMPLEX, budget
    return best, budget


def _matches(path: bytes, pattern: bytes, budget: Budget) -> bool:
    """Whether ``pattern`` (known to start like ``path``) matches it; a wildcard
    pattern's work is taken from ``budget``."""
    if pattern.find(b"*") < 0:
        return not pattern.endswith(b"$") or len(path) == len(pattern) - 1
    work = _patterns.wildcard_work(path, pattern)
    budget.take(_patterns.TRY_WORK + (~work if work < 0 else work))
    return work < 0


class Ring:
    """Which owners hold a compiled matcher, oldest first: past the byte bound the
    oldest let theirs go (an owner that dies takes its matcher and leaves)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.total = 0
        # owner -> (id of its matcher, the matcher's size)
        self._held: OrderedDict[weakref.ref[RobotsTxt], tuple[int, int]] = OrderedDict()
        self._lock = threading.RLock()  # the weakref callback may run inside hold()

    def hold(self, owner: RobotsTxt, matcher: Matcher) -> None:
        with self._lock:
            ref = weakref.ref(owner, self._forget)
            earlier = self._held.pop(ref, None)  # the owner's earlier matcher
            self._held[ref] = (id(matcher), matcher.size)
            self.total += matcher.size - (earlier[1] if earlier else 0)
            while self.total > self.max_bytes and len(self._held) > 1:
                oldest, (ident, size) = self._held.popitem(False)  # the oldest
                self.total -= size
                found = oldest()
                if found is not None:
                    found.drop_matcher(ident)

    def _forget(self, ref: weakref.ref[RobotsTxt]) -> None:
        with self._lock:
            entry = self._held.pop(ref, None)
            if entry is not None:
                self.total -= entry[1]


RING = Ring(RING_BYTES)
