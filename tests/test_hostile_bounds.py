"""Hostile robots.txt files cost bounded work and memory (issue 16, parser side).

Timings are the benchmark's job (``python -m benchmarks.hostile``); these tests
check what makes them bounded: how many patterns a check tries, the bytes a
parsed file keeps (``tracemalloc``, with generous margins), that nothing grows
process-wide, and that tokens compile once.
"""

from __future__ import annotations

import gc
import os
import random
import re
import subprocess
import sys
import tracemalloc
from array import array
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy import Request, Spider
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_robots_std import RobotsTxt
from scrapy_robots_std.robotstxt import matcher, parser, robots, wildcard_keys
from scrapy_robots_std.robotstxt import wildcards as wildcard_index
from tests.helpers import bodies as hostile_shapes
from tests.helpers.bodies import SHAPES_BY_KEY, ordinary, url
from tests.helpers.crawl import run_crawl
from tests.helpers.crawl import settings as crawl_settings
from tests.helpers.memory import kept_after_a_check
from tests.helpers.processes import ROOT
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from tests.helpers.server import HostileServer

MIB = 1 << 20


@contextmanager
def counted_tries() -> Iterator[list[int]]:
    """Count the wildcard patterns a check tries in full."""
    tries = [0]
    real = matcher.wildcard_match

    def counting(path: bytes, pattern: bytes) -> bool:
        tries[0] += 1
        return real(path, pattern)

    with mock.patch.object(matcher, "wildcard_match", counting):
        yield tries


@pytest.fixture(scope="module")
def wildcards() -> RobotsTxt:
    shape = SHAPES_BY_KEY["wildcards"]
    parsed = RobotsTxt.parse(shape.body())
    parsed.allowed(url("/"), shape.token)  # compiled before counting
    return parsed


@pytest.mark.parametrize("size", [2_000, 100_000])
def test_a_check_tries_few_of_18000_wildcard_rules(wildcards, size):
    shape = SHAPES_BY_KEY["wildcards"]
    with counted_tries() as tries:
        wildcards.allowed(url(shape.path(size)), shape.token)
    # Before the index: every one of about 18,000 rules, for any path that
    # matched none.  A 2 KB path holds the keys of a few hundred.
    assert tries[0] < (1_000 if size == 2_000 else 5_000), tries[0]


@contextmanager
def counted_work() -> Iterator[list[int]]:
    """The work a check takes, as the index counts it: keys found, tries
    (with the pieces and bytes each took)."""
    work = [0]
    real_work = matcher.wildcard_work
    real_positions = wildcard_index.present_positions

    def counting(path: bytes, pattern: bytes) -> int:
        done = real_work(path, pattern)
        work[0] += wildcard_index.TRY_WORK + (~done if done < 0 else done)
        return done

    def counting_positions(*args: Any) -> set[int] | None:
        found = real_positions(*args)
        if found is not None:
            work[0] += wildcard_index.KEY_WORK * len(found)
        return found

    with (
        mock.patch.object(matcher, "wildcard_work", counting),
        mock.patch.object(wildcard_index, "present_positions", counting_positions),
    ):
        yield work


# (shape, whether a check of its path is answered exactly)
_BUDGET_CASES = [
    ("wildcards", True),
    ("short", True),
    ("long", True),
    ("groups", True),
    ("agents", True),
    ("shared", False),
    ("ordered", False),
    ("pieces", False),
]


@pytest.mark.parametrize(("key", "exact"), _BUDGET_CASES)
def test_a_check_takes_at_most_its_budget_of_work(key, exact):
    shape = SHAPES_BY_KEY[key]
    parsed = RobotsTxt.parse(shape.body())
    target = url(shape.path(2_000))
    parsed.allowed(url("/"), shape.token)  # compiled before counting
    path_length = len(shape.path(2_000))
    budget = wildcard_index.work_budget(path_length)
    with counted_work() as work:
        decision = parsed.decide(target, shape.token)
    # The last try or key may overdraw the budget; no more.
    assert work[0] <= budget + wildcard_index.TRY_WORK + path_length, work[0]
    if exact:
        assert decision.reason != robots.REASON_TOO_COMPLEX
    else:
        assert decision.reason == robots.REASON_TOO_COMPLEX
        assert not decision.allowed
        assert decision.rule is None
        assert "disallowed to be safe" in decision.explain()
        assert parsed.allowed(target, shape.token) is False


def test_the_shared_piece_is_not_the_key_of_crowded_patterns():
    shape = SHAPES_BY_KEY["shared"]
    parsed = RobotsTxt.parse(shape.body())
    # A path that holds the shared piece and nothing else of the rules: with
    # every pattern filed under the shared piece, all 21,000 would be tried.
    target = url("/" + "-" * 1_000 + hostile_shapes.SHARED)
    with counted_tries() as tries:
        assert parsed.decide(target, shape.token).reason == robots.REASON_NO_MATCH
    assert tries[0] == 0


def test_a_crowded_dollar_pattern_is_filed_under_its_end():
    # More than CROWDED patterns share their longest piece; each ending is
    # its own (as a gram it would weigh more: a path holds many grams).
    patterns = [b"/*sharedpiece*%d$" % n for n in range(100, 140)]
    patterns += [b"/*q%dq*x" % n for n in range(10)]  # not crowded: kept as they are
    kinds, keys = wildcard_keys.choose_keys(patterns)
    assert kinds is not None
    assert kinds[:40] == [wildcard_keys.END] * 40
    assert keys[:40] == [b"%d" % n for n in range(100, 140)]
    assert kinds[40:] == [wildcard_keys.GRAM] * 10
    assert keys[40:] == [b"q%dq" % n for n in range(10)]


def test_the_keys_chosen_do_not_depend_on_the_hash_seed():
    # Ties between keys of equal cost are broken by the keys themselves, not
    # by a set's order: a check's work, and whether it fits its budget, is
    # the same in every process.
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from tests.helpers.bodies import SHAPES_BY_KEY as S;"
        "from scrapy_robots_std.robotstxt.wildcard_keys import choose_keys;"
        "pats = [l.split(b': ', 1)[1] for l in S['ordered'].body().splitlines()[1:2000]];"
        "import hashlib; print(hashlib.sha256(repr(choose_keys(pats)).encode()).hexdigest())"
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
    assert matcher.wildcard_match(path, pattern) is False
    assert not calls  # rejected on length alone


def test_pieces_past_the_tail_stop_the_match_early():
    pattern = b"/" + b"*a" * 500 + b"*b"
    path, calls = _counting_finds(b"/b" + b"a" * 5_000)
    # "b" occurs only before the a's: the first "a" placed is past it.
    assert matcher.wildcard_match(path, pattern) is False
    assert len(calls) <= 1


# -- the index answers like the scans (hypothesis) ---------------------------------------

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


def _body(rules: list[tuple[bool, str]]) -> bytes:
    lines = ["User-agent: *"]
    lines += [
        f"{'Allow' if allow else 'Disallow'}: {pattern}" for allow, pattern in rules
    ]
    return ("\n".join(lines) + "\n").encode()


@settings(max_examples=300, deadline=None)
@given(
    rules=RULES,
    paths=st.lists(PATHS, min_size=1, max_size=5),
    crowded=st.sampled_from([0, wildcard_keys.CROWDED]),
)
def test_the_wildcard_index_answers_like_the_scans(rules, paths, crowded):
    body = _body(rules)
    # The scans answer first: a parsed file compiles on its first check, so
    # under the patches below it would build an index too.
    scanned = RobotsTxt.parse(body)
    wants = [scanned.decide(url(path), "FooBot") for path in paths]
    assert scanned._last.rules is not None
    assert scanned._last.rules.index is None
    # Every index, and every key width in it, with its filter of codes; with
    # ``crowded`` 0, every pattern takes its rarest key (start, end or gram).
    with (
        mock.patch.object(matcher, "INDEX_ABOVE", 0),
        mock.patch.object(wildcard_index, "FILTER_ABOVE", 0),
        mock.patch.object(wildcard_keys, "CROWDED", crowded),
    ):
        indexed = RobotsTxt.parse(body)
        for path, want in zip(paths, wants, strict=True):
            got = indexed.decide(url(path), "FooBot")
            assert (got.allowed, got.rule) == (want.allowed, want.rule), path
        if any("*" in pattern or "$" in pattern for _, pattern in rules):
            assert indexed._last.rules is not None
            assert indexed._last.rules.index is not None


@settings(max_examples=200, deadline=None)
@given(
    rules=RULES,
    paths=st.lists(PATHS, min_size=1, max_size=5),
    budget=st.integers(min_value=-4_000, max_value=0),
)
def test_out_of_budget_a_check_disallows_and_otherwise_answers_exactly(
    rules, paths, budget
):
    body = _body(rules)
    scanned = RobotsTxt.parse(body)
    wants = [scanned.decide(url(path), "FooBot") for path in paths]
    with (
        mock.patch.object(matcher, "INDEX_ABOVE", 0),
        mock.patch.object(wildcard_index, "WORK_PER_CHECK", budget),
    ):
        indexed = RobotsTxt.parse(body)
        for path, want in zip(paths, wants, strict=True):
            got = indexed.decide(url(path), "FooBot")
            if got.reason == robots.REASON_TOO_COMPLEX:
                assert not got.allowed
                assert not indexed.allowed(url(path), "FooBot")
            else:
                assert (got.allowed, got.rule) == (want.allowed, want.rule), path


@pytest.mark.parametrize("width", [1, 2, 3, 4])
def test_the_filter_of_codes_finds_what_the_set_finds(width):
    rng = random.Random(width)
    alphabet = b"abcdefghij/-.%"
    keys = {bytes(rng.choices(alphabet, k=width)) for _ in range(6_000)}
    # Codes as the index reads them (a 3-byte key padded to 4 bytes).
    codes = array(
        {1: "B", 2: "H", 3: "I", 4: "I"}[width],
        sorted(
            int.from_bytes(key + b"\x00" if width == 3 else key, sys.byteorder)
            for key in keys
        ),
    )
    bits = wildcard_keys.code_filter(codes)
    refused: set[int] = set()
    for size in (1, 5, 200, 2_000):
        path = b"/" + bytes(rng.choices(alphabet + b"xyz", k=size))
        want = {
            code for code in codes if code.to_bytes(4, sys.byteorder)[:width] in path
        }
        assert {
            codes[at] for at in wildcard_keys.present_positions(path, width, codes)
        } == want
        found = wildcard_keys.present_positions(path, width, codes, bits)
        assert found is not None
        assert {codes[at] for at in found} == want
        assert all(at == 0 or codes[at - 1] != codes[at] for at in found)
        # More pieces through the filter than the caller may search: no
        # answer (when the filter is read: a path of more pieces than there
        # are codes streams through the codes instead).
        for most in (0, len(want), 10**6):
            capped = wildcard_keys.present_positions(path, width, codes, bits, most)
            assert capped is None or capped == found
            if capped is None:
                refused.add(most)
    assert 10**6 not in refused
    if len(codes) > 2_000:  # every path above reads the filter
        assert 0 in refused


@settings(max_examples=300, deadline=None)
@given(pattern=PATTERNS, path=PATHS)
def test_a_matching_path_holds_every_key_of_the_pattern(pattern, path):
    octets, target = pattern.encode(), path.encode()
    if matcher.wildcard_match(target, octets):
        for key in wildcard_keys.keys_of(octets):
            kind, found = key[0], key[1:]
            if kind == wildcard_keys.START:
                assert target.startswith(found), key
            elif kind == wildcard_keys.END:
                assert target.endswith(found), key
            else:
                assert found in target, key


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
        return b"%2F" if octet == 0x2F else bytes((octet,))

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
    assert matcher.normalize_rfc9309(value) == _reference_rfc9309(value)
    assert matcher.normalize_1994(value) == _reference_1994(value)


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
    assert kept <= estimate <= kept * 1.5 + 4_096, (kept, estimate)


def test_memory_bytes_counts_what_is_built_later():
    parsed = RobotsTxt.parse(SHAPES_BY_KEY["groups"].body())
    before = parsed.memory_bytes()
    assert parsed.memory_bytes() == before
    parsed.allowed(url("/x"), "Botlast")
    after = parsed.memory_bytes()
    assert after > before
    assert parsed.memory_bytes() == after


def test_memory_bytes_is_cheap_once_counted():
    shape = SHAPES_BY_KEY["short"]  # 48,000 patterns
    parsed = RobotsTxt.parse(shape.body())
    parsed.allowed(url("/x"), shape.token)
    first = parsed.memory_bytes()
    with mock.patch("sys.getsizeof", wraps=sys.getsizeof) as getsizeof:
        assert parsed.memory_bytes() == first
    assert getsizeof.call_count < 20  # a few objects, not one per pattern


def test_a_copy_without_diagnostics_counts_no_notes():
    body = b"User-agent: *\nDisallow: /x\n" + b"junk line\n" * 500
    parsed = RobotsTxt.parse(body)
    assert parsed.without_diagnostics().memory_bytes() < parsed.memory_bytes()


def test_crawl_delay_compiles_nothing():
    body = SHAPES_BY_KEY["wildcards"].body() + b"Crawl-delay: 3\n"
    parsed = RobotsTxt.parse(body)
    before = parsed.memory_bytes()
    with mock.patch.object(matcher, "RuleSet", side_effect=AssertionError("compiled")):
        assert parsed.crawl_delay("HostileBot") == 3.0
        assert parsed.request_rate("HostileBot") is None
        assert parsed.groups_for("HostileBot") == (("*",),)
    assert isinstance(parsed._parsed.rule_values, bytes)  # no pattern table either
    assert parsed.memory_bytes() == before


# -- rotating tokens --------------------------------------------------------------------------


def _named_groups(count: int) -> bytes:
    lines = []
    for number in range(count):
        lines += [f"User-agent: Bot{chr(97 + number // 26)}{chr(97 + number % 26)}"]
        lines += [f"Disallow: /only-{number}/", "Disallow: /*.pdf$"]
    lines += ["User-agent: *", "Disallow: /star/"]
    return ("\n".join(lines) + "\n").encode()


def test_rotating_tokens_compile_once_each():
    count = robots.TOKEN_MEMO_SIZE
    parsed = RobotsTxt.parse(_named_groups(count))
    tokens = [f"Bot{chr(97 + n // 26)}{chr(97 + n % 26)}" for n in range(count)]
    with mock.patch.object(
        RobotsTxt,
        "_compile_rfc9309",
        autospec=True,
        side_effect=RobotsTxt._compile_rfc9309,
    ) as compile_rules:
        for _ in range(3):
            for number, token in enumerate(tokens):
                assert not parsed.allowed(url(f"/only-{number}/x"), token)
                assert parsed.allowed(url("/star/x"), token)
    assert compile_rules.call_count == count


def test_tokens_that_choose_the_same_groups_share_their_rules():
    parsed = RobotsTxt.parse(_named_groups(3))
    with mock.patch.object(
        RobotsTxt,
        "_compile_rfc9309",
        autospec=True,
        side_effect=RobotsTxt._compile_rfc9309,
    ) as compile_rules:
        for round_number in range(3):
            for number in range(200):  # far more than the memo holds
                token = (
                    f"Rotating{chr(97 + number % 26)}{round_number}x{number}".replace(
                        "0", "o"
                    )
                )
                token = re.sub(r"[^A-Za-z_-]", "q", token)
                assert not parsed.allowed(url("/star/x"), token)
    assert compile_rules.call_count == 1


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
    assert len(parser._KEY_CACHE) <= parser._KEY_CACHE_LIMIT


def test_spellings_are_exact_after_many_files():
    for number in range(parser._SPELLING_LIMIT + 10):
        RobotsTxt.parse(f"User-agent: *\nDisallow{number:06d}: /x\n".encode())
    parsed = RobotsTxt.parse(b"User-agent: *\nDISALLOW : /x\nDisallowed: /y\n")
    assert parsed.decide(url("/x"), "Bot").rule.directive == "DISALLOW"
    assert parsed.decide(url("/y"), "Bot").rule.directive == "Disallowed"


def test_a_file_with_more_spellings_than_codes_reports_the_canonical_one():
    count = parser._SPELLING_LIMIT + 5
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
async def test_a_crawl_with_rotating_tokens_compiles_each_once(
    hostile: HostileServer,
) -> None:
    count = 40
    hostile.add_route("/robots.txt", Reply(200, {}, _named_groups(count)))
    for number in range(count):
        for round_number in range(2):
            hostile.add_route(f"/page-{round_number}-{number}", Reply(200, {}, b"ok"))
    tokens = tuple(f"Bot{chr(97 + n // 26)}{chr(97 + n % 26)}" for n in range(count))
    with mock.patch.object(
        RobotsTxt,
        "_compile_rfc9309",
        autospec=True,
        side_effect=RobotsTxt._compile_rfc9309,
    ) as compile_rules:
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
    # One compile per token, though each token came back for a second round.
    assert compile_rules.call_count == count


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
    # that fails.  "/-" holds no key of any rule: answered at once.
    complex_path, plain_path = shape.path(200), "/-"
    for path in (complex_path, plain_path):
        hostile.add_route(path, Reply(200, {}, b"ok"))
    result = await run_crawl(
        [hostile.url(complex_path), hostile.url(plain_path)], crawl_settings()
    )
    assert result.responses == [hostile.url(plain_path)]
    assert hostile.requests_for(complex_path) == []
    assert result.stats["robots_std/dropped/too-complex"] == 1
    assert result.stats["robotstxt/forbidden"] == 1
    [failure] = result.failures
    assert isinstance(failure, RobotsTxtDisallowed)
    assert failure.decision.reason == robots.REASON_TOO_COMPLEX
    assert failure.robots_url == hostile.url("/robots.txt")
    [line] = [m for m in result.messages() if m.startswith("Forbidden by robots.txt")]
    assert "disallowed to be safe" in line
    assert hostile.url("/robots.txt") in line
