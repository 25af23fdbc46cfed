"""Hostile robots.txt files cost bounded work and memory (issue 16, parser side).

Timings are the benchmark's job (``python -m benchmarks.hostile``); these tests
check what makes them bounded: the work a check takes against its budget
(``patterns.work_budget``, counted by ``tests/helpers/work.py``), the bytes a
parsed file keeps (``tracemalloc``, with generous margins), that nothing grows
process-wide, and that a token's groups are selected once and remembered in a
bounded memo (nothing is compiled per token).
"""

from __future__ import annotations

import gc
import os
import re
import subprocess
import sys
import tracemalloc
from typing import TYPE_CHECKING, Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy import Request, Spider
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_robots_std import RobotsTxt
from scrapy_robots_std.robotstxt import (
    groups,
    layout,
    matcher,
    patterns,
    reader,
    robots,
)
from tests.helpers.bodies import SHAPES_BY_KEY, ordinary, star_group, url
from tests.helpers.crawl import run_crawl
from tests.helpers.crawl import settings as crawl_settings
from tests.helpers.memory import kept_after_a_check
from tests.helpers.oracle import matches, rules_for, slow_rfc9309
from tests.helpers.processes import ROOT
from tests.helpers.server import Reply
from tests.helpers.work import counted_work

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from tests.helpers.server import HostileServer

MIB = 1 << 20


def _out_of_budget(
    charges: list[int], budget: int, path_length: int, pieces: int
) -> bool:
    """Whether ``charges`` overdrew ``budget``; asserts that the check stopped
    at the charge that did, and that this last one was at most one try of a
    pattern of at most ``pieces`` ``*``."""
    if not charges:
        return False
    spent, last = sum(charges), charges[-1]
    assert spent - last <= max(budget, 0), (spent, last, budget)
    # One try: its TRY_WORK, a unit per piece placed (empty ones too: "**"),
    # and one per 128 bytes of the path, searched at most twice.
    scanned = 2 * path_length // patterns.SCANNED_BYTES_PER_WORK + 1
    assert last <= patterns.TRY_WORK + pieces + scanned, (last, pieces)
    return spent > budget


def _check_answer(body: bytes, parsed: RobotsTxt, path: str, token: str) -> str:
    """Check ``path`` for ``token``, counting its work: past its budget the
    answer is ``too-complex`` (disallowed, no rule), otherwise the brute-force
    oracle's.  The reason given."""
    budget = patterns.work_budget(len(path))
    rules = rules_for(body, token)
    pieces = max((pattern.count("*") for _, pattern, _ in rules), default=0)
    with counted_work() as charges:
        decision = parsed.decide(url(path), token)
    out_of_budget = _out_of_budget(charges, budget, len(path), pieces)
    if decision.reason == robots.REASON_TOO_COMPLEX:
        assert out_of_budget, (sum(charges), budget)
        assert not decision.allowed
        assert decision.rule is None
        assert "disallowed to be safe" in decision.explain()
        assert parsed.allowed(url(path), token) is False
        return decision.reason
    want = slow_rfc9309(rules, path)
    assert (decision.allowed, decision.rule and decision.rule.line) == want
    assert parsed.allowed(url(path), token) is want[0]
    # The try that overdraws the budget may still answer: a wildcard pattern
    # that matches, tried best first, is the best there is.
    assert not out_of_budget or decision.rule is not None, (sum(charges), budget)
    return decision.reason


# (shape, whether a check of its 2 KB path is answered exactly).  The parser
# of 0.4 filed wildcard rules in an index and also answered "wildcards" and
# "short" exactly; with the budget alone, their thousands of rooted wildcard
# rules (``/*...``, ``*...``) are past it (docs/standards.md, "Hostile files").
_BUDGET_CASES = [
    ("wildcards", False),
    ("short", False),
    ("long", True),
    ("groups", True),
    ("agents", True),
    ("shared", False),
    ("ordered", False),
    ("pieces", False),
]


@pytest.mark.parametrize("key", [key for key, _ in _BUDGET_CASES])
def test_a_check_takes_at_most_its_budget_of_work(key):
    shape = SHAPES_BY_KEY[key]
    body = shape.body()
    parsed = RobotsTxt.parse(body)
    path = shape.path(2_000)
    parsed.allowed(url("/"), shape.token)  # the token's groups selected before
    _check_answer(body, parsed, path, shape.token)


@pytest.mark.parametrize(("key", "exact"), _BUDGET_CASES)
def test_which_shapes_a_check_answers_exactly(key, exact):
    shape = SHAPES_BY_KEY[key]
    parsed = RobotsTxt.parse(shape.body())
    decision = parsed.decide(url(shape.path(2_000)), shape.token)
    assert (decision.reason != robots.REASON_TOO_COMPLEX) is exact, decision.reason


def test_the_work_of_a_check_does_not_depend_on_the_hash_seed():
    # The order of a file's entries comes from sorts by the patterns
    # themselves, not from a set's order: a check's work, and whether it fits
    # its budget, is the same in every process.
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from scrapy_robots_std import RobotsTxt;"
        "from tests.helpers.bodies import SHAPES_BY_KEY as S, url;"
        "from tests.helpers.work import work_of;"
        "shapes = [S[key] for key in ('wildcards', 'groups', 'shared')];"
        "print([work_of(RobotsTxt.parse(s.body()), url(s.path(2_000)), s.token)"
        " for s in shapes])"
    )
    seen = {
        subprocess.run(
            [sys.executable, "-c", script, str(ROOT)],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("0", "1", "2")
    }
    assert len(seen) == 1, seen


def _counting_finds(path: bytes) -> tuple[bytes, list[tuple[object, ...]]]:
    """``path`` as bytes that record each ``find`` call, and that record."""
    calls: list[tuple[object, ...]] = []
    real_find = bytes.find

    class Path(bytes):
        def find(self, *args):  # type: ignore[override]
            calls.append(args)
            return real_find(self, *args)

    return Path(path), calls


def test_a_long_pattern_longer_than_the_path_is_not_tried_piece_by_piece():
    pattern = b"/" + b"*a" * 8_000 + b"*b"
    path, calls = _counting_finds(b"/b" + b"a" * 1_998)
    assert patterns.wildcard_work(path, pattern) == 0  # no work, no match
    assert not calls  # rejected on length alone


def test_pieces_past_the_tail_stop_the_match_early():
    pattern = b"/" + b"*a" * 500 + b"*b"
    path, calls = _counting_finds(b"/b" + b"a" * 5_000)
    # "b" occurs only before the a's: the first "a" placed is past it.
    work = patterns.wildcard_work(path, pattern)
    assert 0 <= work <= 1 + 2 * len(path) // patterns.SCANNED_BYTES_PER_WORK
    assert len(calls) <= 1


# -- out of budget, too complex; in budget, exact (hypothesis) ------------------------------

PIECES = st.sampled_from(["a", "b", "ab", "ba", "abc", "bca", "abcd", "dcba", "/", "."])
PATTERNS = st.lists(st.one_of(PIECES, st.just("*")), min_size=1, max_size=6).map(
    lambda parts: "/" + "".join(parts)
)
PATTERNS = st.one_of(
    PATTERNS,
    PATTERNS.map(lambda p: p + "$"),
    PATTERNS.map(lambda p: p + "/index.html"),
)
RULES = st.lists(st.tuples(st.booleans(), PATTERNS), min_size=1, max_size=30)
PATHS = st.lists(PIECES, max_size=8).map(lambda parts: "/" + "".join(parts))


@settings(max_examples=300, deadline=None)
@given(
    rules=RULES,
    paths=st.lists(PATHS, min_size=1, max_size=5),
    # Up to 30 rules of up to 6 pieces on paths of up to 33 bytes: every try
    # of every rule takes less than 300 units.
    budget=st.integers(min_value=0, max_value=300),
)
def test_out_of_budget_a_check_disallows_and_otherwise_answers_exactly(
    rules, paths, budget
):
    body = star_group(rules)
    with mock.patch.object(patterns, "work_budget", return_value=budget):
        parsed = RobotsTxt.parse(body)
        for path in paths:
            _check_answer(body, parsed, path, "FooBot")


@settings(max_examples=300, deadline=None)
@given(pattern=PATTERNS, path=PATHS)
def test_a_matching_path_passes_the_quick_rejects(pattern, path):
    # The chain's binary search skips a pattern whose literal prefix does not
    # start the path, the best-first run one whose longest piece it does not
    # hold: neither may refuse a path that matches.
    octets, target = pattern.encode(), path.encode()
    matched = patterns.wildcard_work(target, octets) < 0
    assert matched is matches(pattern, path)
    if matched:
        assert target.startswith(patterns.literal_prefix(octets))
        assert matcher._needle(octets) in target


# -- percent-normalisation without a regex callback ---------------------------------------

_UNRESERVED = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)


def _reference_rfc9309(value: bytes) -> bytes:
    def escape(match: re.Match[bytes]) -> bytes:
        if match.group(1) is None:
            return b"%%%02X" % match.group(2)[0]
        octet = int(match.group(1), 16)
        return (
            bytes((octet,)) if octet in _UNRESERVED else b"%" + match.group(1).upper()
        )

    return re.sub(rb"%([0-9A-Fa-f]{2})|([\x80-\xff])", escape, value)


def _reference_1994(value: bytes) -> bytes:
    def decode(match: re.Match[bytes]) -> bytes:
        octet = int(match.group(1), 16)
        return b"%%%02X" % octet if octet in (0x2F, 0x0A) else bytes((octet,))

    return re.sub(rb"%([0-9A-Fa-f]{2})", decode, value)


OCTETS = st.binary(max_size=40) | st.lists(
    st.sampled_from(
        [b"%", b"%2f", b"%7E", b"%e9", b"%%", b"%g1", b"\xc3\xa9", b"a", b"/"]
    ),
    max_size=12,
).map(b"".join)


@settings(max_examples=500, deadline=None)
@given(value=OCTETS)
def test_normalisation_agrees_with_the_regex_it_replaced(value):
    assert patterns.normalize_rfc9309(value) == _reference_rfc9309(value)
    assert patterns.normalize_1994(value) == _reference_1994(value)
    if value.isascii():
        # A URL's path, short (a regex callback per changed escape) and long
        # (a split and a lookup per escape).
        long = value * (300 // (len(value) or 1) + 1)
        for octets in (value, long):
            assert patterns.path_rfc9309(octets.decode()) == _reference_rfc9309(octets)
            assert patterns.path_1994(octets.decode()) == _reference_1994(octets)


# -- memory ---------------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(SHAPES_BY_KEY))
def test_a_hostile_500_kib_file_keeps_at_most_1_mib(key):
    shape = SHAPES_BY_KEY[key]
    kept, _ = kept_after_a_check(shape.body(), shape.token)
    assert kept <= MIB, f"{key}: {kept:,} bytes"


@pytest.mark.parametrize(
    ("key", "token"),
    [
        ("wildcards", "HostileBot"),
        ("short", "HostileBot"),
        ("long", "HostileBot"),
        ("groups", "Botlast"),
        ("agents", "zzzlast"),
        ("ordinary", "Googlebot"),
        ("ordinary", "HostileBot"),
    ],
)
def test_memory_bytes_is_an_upper_bound_close_to_tracemalloc(key, token):
    body = ordinary() if key == "ordinary" else SHAPES_BY_KEY[key].body()
    kept, parsed = kept_after_a_check(body, token)
    estimate = parsed.memory_bytes()
    assert kept <= estimate <= kept * 1.25 + 4_096, (kept, estimate)


def test_memory_bytes_counts_the_matcher_and_the_selections_a_check_remembers():
    parsed = RobotsTxt.parse(SHAPES_BY_KEY["groups"].body())
    before = parsed.memory_bytes()
    assert parsed.memory_bytes() == before
    parsed.allowed(url("/x"), "Botlast")  # the last token's selection and matcher
    after = parsed.memory_bytes()
    assert after > before
    assert parsed.memory_bytes() == after
    parsed.allowed(url("/x"), "Otherbot")  # a second token: the memo
    with_memo = parsed.memory_bytes()
    assert parsed.memory_bytes() == with_memo
    alone = RobotsTxt.parse(SHAPES_BY_KEY["groups"].body())
    alone.allowed(url("/x"), "Otherbot")
    assert with_memo > alone.memory_bytes()  # Botlast's selection, in the memo
    # A remembered selection is a few group numbers; only the last token's
    # rules are compiled.
    assert with_memo - alone.memory_bytes() < 4_096


def test_memory_bytes_is_cheap():
    shape = SHAPES_BY_KEY["short"]  # 48,000 patterns
    parsed = RobotsTxt.parse(shape.body())
    for number in range(robots.TOKEN_MEMO_SIZE + 1):  # and a full memo
        parsed.allowed(url("/x"), f"Bot{chr(97 + number // 26)}{chr(97 + number % 26)}")
    first = parsed.memory_bytes()
    with mock.patch("sys.getsizeof", wraps=sys.getsizeof) as getsizeof:
        assert parsed.memory_bytes() == first
    # A few objects, not one per pattern or per token.
    assert getsizeof.call_count < 20, getsizeof.call_count


def test_a_copy_without_diagnostics_counts_no_notes():
    body = b"User-agent: *\nDisallow: /x\n" + b"junk line\n" * 500
    parsed = RobotsTxt.parse(body)
    assert parsed.without_diagnostics().memory_bytes() < parsed.memory_bytes()


def test_crawl_delay_selects_groups_only():
    body = SHAPES_BY_KEY["wildcards"].body() + b"Crawl-delay: 3\n"
    parsed = RobotsTxt.parse(body)
    before = parsed.memory_bytes()
    with (
        mock.patch.object(
            matcher, "compile_rules", side_effect=AssertionError("compiled")
        ),
        mock.patch.object(matcher, "best_match", side_effect=AssertionError("matched")),
    ):
        assert parsed.crawl_delay("HostileBot") == 3.0
        assert parsed.request_rate("HostileBot") is None
        assert parsed.groups_for("HostileBot") == (("*",),)
    # Nothing remembered either: the selection is made again when asked.
    assert parsed._last_token is None
    assert parsed._memo is None
    assert parsed.memory_bytes() == before


# -- rotating tokens --------------------------------------------------------------------------


def _named_groups(count: int) -> bytes:
    lines = []
    for number in range(count):
        lines += [f"User-agent: Bot{chr(97 + number // 26)}{chr(97 + number % 26)}"]
        lines += [f"Disallow: /only-{number}/", "Disallow: /*.pdf$"]
    lines += ["User-agent: *", "Disallow: /star/"]
    return ("\n".join(lines) + "\n").encode()


def test_rotating_tokens_select_their_groups_once_each():
    count = robots.TOKEN_MEMO_SIZE
    parsed = RobotsTxt.parse(_named_groups(count))
    tokens = [f"Bot{chr(97 + n // 26)}{chr(97 + n % 26)}" for n in range(count)]
    with mock.patch.object(groups, "select", wraps=groups.select) as select:
        for _ in range(3):
            for number, token in enumerate(tokens):
                assert not parsed.allowed(url(f"/only-{number}/x"), token)
                assert parsed.allowed(url("/star/x"), token)
    assert select.call_count == count


def test_tokens_that_select_the_same_groups_share_one_compiled_matcher():
    parsed = RobotsTxt.parse(_named_groups(3))
    sizes = []
    with mock.patch.object(
        matcher, "compile_rules", wraps=matcher.compile_rules
    ) as compile_rules:
        for round_number in range(3):
            for number in range(200):  # far more than the memo holds
                token = re.sub(
                    r"[^A-Za-z_-]",
                    "q",
                    f"Rotating{chr(97 + number % 26)}{round_number}",
                ) + "x" * (number + 1)
                assert not parsed.allowed(url("/star/x"), token)
            sizes.append(parsed.memory_bytes())
    # Every token selected the "*" group (the last): compiled once.
    assert compile_rules.call_count == 1
    assert parsed._matcher is not None
    assert parsed._matcher.groups == (3,)
    # 600 tokens keep what a full memo keeps, no more.
    assert parsed._memo is not None
    assert len(parsed._memo) == robots.TOKEN_MEMO_SIZE
    assert sizes[0] == sizes[1] == sizes[2], sizes


def test_the_token_memo_is_bounded():
    parsed = RobotsTxt.parse(_named_groups(100))
    for number in range(100):
        parsed.allowed(url("/x"), f"Bot{chr(97 + number // 26)}{chr(97 + number % 26)}")
    assert parsed._memo is not None
    assert len(parsed._memo) <= robots.TOKEN_MEMO_SIZE


# -- nothing grows process-wide -------------------------------------------------------------


def _distinct(number: int) -> bytes:
    junk = f"{number:08d}" * 500  # 4 KB, its own for every file
    return (
        f"User-agent: Bot{junk}\n"
        f"Disallow{junk}: /a\n"
        f"Allow-{junk}: /b\n"
        f"X-{junk}: value\n"
        f"User-agent: {junk}\nDisallow: /*{number}$\n"
    ).encode()


def test_distinct_hostile_files_leave_nothing_behind():
    # Warm up whatever is allocated once (regexes, caches of short keys).
    for number in range(50):
        RobotsTxt.parse(_distinct(number)).decide(url("/a"), "Bot")
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for number in range(50, 2_050):
            parsed = RobotsTxt.parse(_distinct(number))
            parsed.decide(url("/a"), "Bot")
            parsed.diagnostics  # noqa: B018
            del parsed
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    # 2,000 files of 16 KB of keys each: 32 MB went through the parser.
    assert grown < 256 * 1024, grown
    assert len(reader._KEY_CACHE) <= reader._KEY_CACHE_LIMIT


def test_spellings_are_exact_after_many_files():
    for number in range(layout.MAX_SPELLINGS + 10):
        RobotsTxt.parse(f"User-agent: *\nDisallow{number:06d}: /x\n".encode())
    parsed = RobotsTxt.parse(b"User-agent: *\nDISALLOW : /x\nDisallowed: /y\n")
    assert parsed.decide(url("/x"), "Bot").rule.directive == "DISALLOW"
    assert parsed.decide(url("/y"), "Bot").rule.directive == "Disallowed"


def test_a_file_with_more_spellings_than_codes_reports_the_canonical_one():
    count = layout.MAX_SPELLINGS + 5
    lines = ["User-agent: *"] + [f"Disallow-{n}: /p{n}/" for n in range(count)]
    parsed = RobotsTxt.parse(("\n".join(lines) + "\n").encode())
    assert parsed.decide(url("/p1/"), "Bot").rule.directive == "Disallow-1"
    last = count - 1
    assert parsed.decide(url(f"/p{last}/"), "Bot").rule.directive == "Disallow"


# -- rotating tokens in a real crawl -----------------------------------------------------


class _RotatingSpider(Spider):
    """One request per token, each with its own User-Agent (a rotating crawler)."""

    name = "rotating"
    tokens: tuple[str, ...] = ()
    base = ""

    async def start(self) -> AsyncIterator[Request]:
        for round_number in range(2):
            for number, token in enumerate(self.tokens):
                for path in (f"/only-{number}/x", f"/page-{round_number}-{number}"):
                    yield Request(
                        self.base + path,
                        headers={"User-Agent": f"{token}/1.0"},
                        callback=self.parse,
                        errback=self.failed,
                        dont_filter=True,  # each token comes back for a second round
                    )

    def parse(self, response: Any) -> None:
        self.crawler.stats.inc_value("test/fetched")

    def failed(self, failure: Any) -> None:
        self.crawler.stats.inc_value("test/refused")


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_crawl_with_rotating_tokens_selects_each_once(
    hostile: HostileServer,
) -> None:
    count = 40
    hostile.add_route("/robots.txt", Reply(200, {}, _named_groups(count)))
    for number in range(count):
        for round_number in range(2):
            hostile.add_route(f"/page-{round_number}-{number}", Reply(200, {}, b"ok"))
    tokens = tuple(f"Bot{chr(97 + n // 26)}{chr(97 + n % 26)}" for n in range(count))
    with (
        mock.patch.object(groups, "select", wraps=groups.select) as select,
        mock.patch.object(
            RobotsTxt, "crawl_delay", autospec=True, side_effect=RobotsTxt.crawl_delay
        ) as delays,
        mock.patch.object(
            RobotsTxt, "request_rate", autospec=True, side_effect=RobotsTxt.request_rate
        ) as rates,
    ):
        crawler = get_crawler(
            _RotatingSpider,
            {**crawl_settings(), "CONCURRENT_REQUESTS": 4, "LOG_LEVEL": "INFO"},
        )
        await crawler.crawl_async(tokens=tokens, base=hostile.url("").rstrip("/"))
    stats = crawler.stats.get_stats()
    # Each token's own group decided: its /only-N/ refused, its pages fetched.
    assert stats["test/fetched"] == 2 * count
    assert stats["test/refused"] == 2 * count
    assert stats["robots_std/dropped/rule"] == 2 * count
    assert len(hostile.requests_for("/robots.txt")) == 1
    # One selection per token for its checks, though each token came back for a
    # second round.  The delay the origin asks is read without remembering a
    # selection (test_crawl_delay_selects_groups_only): one each, per origin.
    assert {call.args[1] for call in select.call_args_list} == {
        token.lower() for token in tokens
    }
    assert delays.call_count == rates.call_count == 1
    assert select.call_count == count + delays.call_count + rates.call_count


# -- a check past its budget of work, in a real crawl -------------------------------------


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_crawl_drops_a_check_past_its_budget_with_its_own_reason(
    hostile: HostileServer,
) -> None:
    from scrapy_robots_std.scrapy.middleware import RobotsTxtDisallowed

    shape = SHAPES_BY_KEY["ordered"]
    hostile.add_route("/robots.txt", Reply(200, {}, shape.body()))
    # Every letter in decreasing order: each of the ~25,000 rules is a try
    # that fails, past the budget.  "/abcd" matches the first rule tried
    # ("/*a*b*c*d", best first): answered exactly, by that rule.
    complex_path, ruled_path = shape.path(200), "/abcd"
    for path in (complex_path, ruled_path):
        hostile.add_route(path, Reply(200, {}, b"ok"))
    result = await run_crawl(
        [hostile.url(complex_path), hostile.url(ruled_path)], crawl_settings()
    )
    assert result.responses == []
    assert hostile.requests_for(complex_path) == []
    assert result.stats["robots_std/dropped/too-complex"] == 1
    assert result.stats["robots_std/dropped/rule"] == 1
    assert result.stats["robotstxt/forbidden"] == 2
    reasons = {failure.decision.reason: failure for failure in result.failures}
    assert set(reasons) == {robots.REASON_TOO_COMPLEX, robots.REASON_RULE}
    failure = reasons[robots.REASON_TOO_COMPLEX]
    assert isinstance(failure, RobotsTxtDisallowed)
    assert failure.robots_url == hostile.url("/robots.txt")
    [line] = [
        m
        for m in result.messages()
        if m.startswith("Forbidden by robots.txt") and "disallowed to be safe" in m
    ]
    assert hostile.url("/robots.txt") in line
