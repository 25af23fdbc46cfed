"""Compare robots.txt parsers on a corpus of real robots.txt files.

Parsers: scrapy-robots-std (``RobotsTxt.parse``, rfc9309 and 1994 modes), Protego,
``urllib.robotparser`` and robotspy.  Measured in one run:

a) parse time for every file of the corpus (best of N), files/s and MB/s;
b) match calls per second: each site's parsed object answers that site's URLs from
   ``urls.txt`` for the token ``Googlebot`` (parse excluded, best of N);
c) retained memory per parsed file (tracemalloc, separate pass);
d) pathological inputs (SPEC section 5), per-call median, each parser in a worker
   subprocess with a 1 s limit per call so that nothing can hang the run.

Usage (from the repository root)::

    .venv/bin/python benchmarks/parsers.py [--corpus ../shared/corpus] [--quick]
        [--repeats N] [--markdown benchmarks/RESULTS.md] [--profile]

See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import gc
import io
import json
import os
import platform
import pstats
import random
import selectors
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

# Run as a script: this folder is sys.path[0].
from machine import cpu_model, git_describe

TOKEN = "Googlebot"
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "corpus"

#: A single call slower than this is reported as "timeout" (and the parser is
#: skipped for the rest of that case).
CALL_LIMIT_S = 1.0

# Targets (ours compared with Protego), issue 24's.
TARGET_PARSE_RATIO = 2.5  # parse throughput, ours / Protego, at least
TARGET_WORKLOAD_SHARE = 0.5  # parse + cold match time, ours / Protego, at most
TARGET_MEM_RATIO = 0.3  # retained bytes per file, ours / Protego, at most
TARGET_PATHO_S = 1e-3  # every pathological call, at most
#: In the markdown file, everything from this line on is kept across runs.
ANALYSIS_MARKER = "<!-- analysis: kept by parsers.py across runs -->"

#: URLs per site answered in the memory pass (tracemalloc makes matching slow).
MEM_URLS_PER_SITE = 5

QUICK_STEP = 14  # --quick keeps every 14th file: 303 of 4,231

ParseFn = Callable[[bytes], Any]
AnswerFn = Callable[[Any, Sequence[str]], list[bool]]


# --------------------------------------------------------------------------
# Parsers under test
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Adapter:
    key: str
    label: str
    parse: ParseFn  # bytes as served -> parsed object (decoding included)
    answer: AnswerFn  # (parsed object, urls of one site) -> allowed flags
    ours: bool = False


def _decode(body: bytes) -> str:
    # What Scrapy's decode_robotstxt does for the text-based backends.
    return body.decode("utf-8-sig", errors="ignore")


def _ours_adapter(standard: str) -> Adapter:
    from scrapy_robots_std import RobotsTxt

    parse_body = RobotsTxt.parse
    if standard == "rfc9309":

        def parse(body: bytes) -> Any:
            return parse_body(body)

    else:

        def parse(body: bytes) -> Any:
            return parse_body(body, standard=standard)

    def answer(obj: Any, urls: Sequence[str]) -> list[bool]:
        allowed = obj.allowed
        return [allowed(url, TOKEN) for url in urls]

    return Adapter(
        f"ours-{standard}", f"scrapy-robots-std {standard}", parse, answer, ours=True
    )


def _protego_adapter() -> Adapter:
    from protego import Protego

    protego_parse = Protego.parse

    def parse(body: bytes) -> Any:
        return protego_parse(_decode(body))

    def answer(obj: Any, urls: Sequence[str]) -> list[bool]:
        can_fetch = obj.can_fetch
        return [can_fetch(url, TOKEN) for url in urls]

    return Adapter("protego", "Protego", parse, answer)


def _urllib_adapter() -> Adapter:
    from urllib.robotparser import RobotFileParser

    def parse(body: bytes) -> Any:
        rp = RobotFileParser()
        rp.parse(_decode(body).splitlines())  # as Scrapy's PythonRobotParser
        return rp

    def answer(obj: Any, urls: Sequence[str]) -> list[bool]:
        can_fetch = obj.can_fetch
        return [can_fetch(TOKEN, url) for url in urls]

    return Adapter("urllib", "urllib.robotparser", parse, answer)


def _robotspy_adapter() -> Adapter:
    from robots import RobotsParser

    from_string = RobotsParser.from_string

    def parse(body: bytes) -> Any:
        return from_string(_decode(body))

    def answer(obj: Any, urls: Sequence[str]) -> list[bool]:
        can_fetch = obj.can_fetch
        return [can_fetch(TOKEN, url) for url in urls]

    return Adapter("robotspy", "robotspy", parse, answer)


def _fast_robotstxt_adapter() -> Adapter:
    """Google's C++ parser behind ctypes (the ``fast-robotstxt`` package).

    It has no parsed object: every call parses the body again, so "parse" only
    keeps the bytes and "match" does all the work, which is how a crawler would
    use it.  The library is called with the bytes as they are (no decode and
    encode round trip, which its ``is_allowed`` does for every call).
    """
    from robotstxt import RobotsMatcher  # the fast-robotstxt package
    from robotstxt import robots as fast

    matcher = RobotsMatcher()
    allowed_by = fast._lib.robots_allowed_by_robots
    pointer = matcher._ptr
    agent = TOKEN.encode()

    def parse(body: bytes) -> Any:
        return body

    def answer(obj: Any, urls: Sequence[str], matcher: Any = matcher) -> list[bool]:
        # ``matcher`` stays referenced here: its __del__ frees ``pointer``.
        size = len(obj)
        return [
            bool(allowed_by(pointer, obj, size, agent, len(agent), u, len(u)))
            for u in [url.encode() for url in urls]
        ]

    return Adapter("fast-robotstxt", "fast-robotstxt (C++)", parse, answer)


ADAPTER_FACTORIES: dict[str, Callable[[], Adapter]] = {
    "ours-rfc9309": lambda: _ours_adapter("rfc9309"),
    "ours-1994": lambda: _ours_adapter("1994"),
    "protego": _protego_adapter,
    "urllib": _urllib_adapter,
    "robotspy": _robotspy_adapter,
    "fast-robotstxt": _fast_robotstxt_adapter,
}
#: Measured only when installed (the ``bench`` extra): never required.
OPTIONAL_PARSERS = frozenset({"fast-robotstxt"})


def import_ours() -> tuple[str | None, str]:
    """Import scrapy_robots_std; returns (directory to put on sys.path, message)."""
    for attempt in range(2):
        try:
            import scrapy_robots_std

            scrapy_robots_std.RobotsTxt  # noqa: B018 - fail here if missing
        except (ImportError, AttributeError) as exc:
            if attempt == 0 and str(REPO_ROOT) not in sys.path:
                sys.path.insert(0, str(REPO_ROOT))
                for name in [m for m in sys.modules if m.startswith("scrapy_robots_")]:
                    del sys.modules[name]
                continue
            return None, f"cannot import scrapy_robots_std.RobotsTxt: {exc!r}"
        where = Path(scrapy_robots_std.__file__ or ".").resolve().parent
        return str(where.parent), f"scrapy_robots_std from {where}"
    raise AssertionError("unreachable")


# --------------------------------------------------------------------------
# Corpus
# --------------------------------------------------------------------------


@dataclass
class Corpus:
    names: list[str]
    bodies: list[bytes]
    urls: list[list[str]]  # per site, same order as names

    @property
    def n_bytes(self) -> int:
        return sum(len(b) for b in self.bodies)

    @property
    def n_urls(self) -> int:
        return sum(len(u) for u in self.urls)


def load_corpus(root: Path, quick: bool) -> Corpus:
    robots_dir = root / "robots"
    names = sorted(p.name for p in robots_dir.iterdir() if p.is_file())
    if quick:
        names = names[::QUICK_STEP]
    by_site: dict[str, list[str]] = {}
    with (root / "urls.txt").open(encoding="utf-8") as fh:
        for line in fh:
            site, _, url = line.rstrip("\n").partition("\t")
            if url:
                by_site.setdefault(site, []).append(url)
    bodies = [(robots_dir / n).read_bytes() for n in names]
    return Corpus(names, bodies, [by_site.get(n, []) for n in names])


# --------------------------------------------------------------------------
# Corpus measurements
# --------------------------------------------------------------------------


@dataclass
class CorpusResult:
    adapter: Adapter
    parse_times: list[float] = field(default_factory=list)
    match_times: list[float] = field(default_factory=list)  # first pass (cold)
    warm_times: list[float] = field(default_factory=list)  # the same calls again
    parse_errors: int = 0
    match_errors: int = 0
    answers: list[bool | None] = field(default_factory=list)
    mem_per_file: float | None = None  # after parsing
    mem_used_per_file: float | None = None  # after parsing and matching
    calls: int = 0


def time_parse(
    adapter: Adapter, bodies: Sequence[bytes]
) -> tuple[float, list[Any], int]:
    parse = adapter.parse
    objs: list[Any] = []
    append = objs.append
    errors = 0
    gc.collect()
    t0 = time.perf_counter()
    for body in bodies:
        try:
            append(parse(body))
        except Exception:  # noqa: BLE001 - counted, not fatal
            append(None)
            errors += 1
    return time.perf_counter() - t0, objs, errors


def _answer_slow(adapter: Adapter, obj: Any, urls: Sequence[str]) -> list[bool | None]:
    out: list[bool | None] = []
    for url in urls:
        try:
            out.append(adapter.answer(obj, [url])[0])
        except Exception:  # noqa: BLE001 - counted, not fatal
            out.append(None)
    return out


def time_match(
    adapter: Adapter, objs: Sequence[Any], url_lists: Sequence[Sequence[str]]
) -> tuple[float, list[bool | None], int]:
    answer = adapter.answer
    answers: list[bool | None] = []
    extend = answers.extend
    gc.collect()
    t0 = time.perf_counter()
    for obj, urls in zip(objs, url_lists, strict=True):
        if obj is None:
            extend([None] * len(urls))
            continue
        try:
            extend(answer(obj, urls))
        except Exception:  # noqa: BLE001 - counted, not fatal
            extend(_answer_slow(adapter, obj, urls))
    elapsed = time.perf_counter() - t0
    return elapsed, answers, sum(a is None for a in answers)


def measure_memory(
    adapter: Adapter, bodies: Sequence[bytes], url_lists: Sequence[Sequence[str]]
) -> tuple[float, float]:
    """Bytes still allocated per file while every parsed object is kept alive.

    Returns (after parsing, after each object also answered the first
    MEM_URLS_PER_SITE URLs of its site); the second figure includes whatever a
    parser builds lazily on first use.
    """
    parse = adapter.parse
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    objs: list[Any] = []
    for original in bodies:
        # A fresh copy, so that a parser which keeps its input is charged for it
        # (the text parsers get a fresh str from decoding anyway).
        body = bytes(bytearray(original))
        try:
            objs.append(parse(body))
        except Exception:  # noqa: BLE001 - counted, not fatal
            objs.append(None)
    del body
    gc.collect()
    after_parse = tracemalloc.get_traced_memory()[0] - base
    time_match(adapter, objs, [urls[:MEM_URLS_PER_SITE] for urls in url_lists])
    gc.collect()
    after_match = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del objs
    gc.collect()
    n = max(1, len(bodies))
    return after_parse / n, after_match / n


def run_corpus(
    adapters: Sequence[Adapter],
    corpus: Corpus,
    repeats: int,
    log: Callable[[str], None],
) -> dict[str, CorpusResult]:
    results = {a.key: CorpusResult(a) for a in adapters}
    # Round robin over the parsers, so slow drift of the machine hits all of them.
    for rep in range(repeats):
        for adapter in adapters:
            res = results[adapter.key]
            t_parse, objs, p_err = time_parse(adapter, corpus.bodies)
            t_match, answers, m_err = time_match(adapter, objs, corpus.urls)
            # The same calls again: what a crawl pays per request once the
            # parser has built whatever it builds on first use.
            t_warm, _, _ = time_match(adapter, objs, corpus.urls)
            res.warm_times.append(t_warm)
            del objs
            res.parse_times.append(t_parse)
            res.match_times.append(t_match)
            if rep == 0:
                res.parse_errors, res.match_errors = p_err, m_err
                res.answers = answers
                res.calls = len(answers)
            log(
                f"  repeat {rep + 1}/{repeats} {adapter.key:13} "
                f"parse {t_parse:7.3f} s  match {t_match:7.3f} s  warm {t_warm:7.3f} s"
            )
    for adapter in adapters:
        res = results[adapter.key]
        t0 = time.perf_counter()
        res.mem_per_file, res.mem_used_per_file = measure_memory(
            adapter, corpus.bodies, corpus.urls
        )
        t_mem = time.perf_counter() - t0
        log(
            f"  memory {adapter.key:13} {res.mem_per_file:,.0f} B/file after parse, "
            f"{res.mem_used_per_file:,.0f} after match ({t_mem:.1f} s)"
        )
    return results


# --------------------------------------------------------------------------
# Pathological cases (run in a worker subprocess per parser)
# --------------------------------------------------------------------------

LONG_URL = "https://example.com/" + "a" * 10_000
STAR30 = "/" + "*a" * 29 + "*b"  # 30 '*'


def _body_wild8() -> bytes:
    return b"User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*b\n"


def _body_wild30() -> bytes:
    return f"User-agent: *\nDisallow: {STAR30}\n".encode()


def _body_wild30x100() -> bytes:
    lines = ["User-agent: *"]
    lines += [f"{'Allow' if i % 2 else 'Disallow'}: {STAR30}{i}" for i in range(100)]
    return ("\n".join(lines) + "\n").encode()


def _body_line1mb() -> bytes:
    return b"User-agent: *\nDisallow: /" + b"a" * (1 << 20) + b"\n"


def _body_rules100k() -> bytes:
    lines = ["User-agent: *"]
    for i in range(100_000):
        if i % 10 == 0:
            lines.append(f"Disallow: /*/item{i}*.html$")
        elif i % 7 == 0:
            lines.append(f"Allow: /dir{i}/public")
        else:
            lines.append(f"Disallow: /dir{i}/")
    return ("\n".join(lines) + "\n").encode()


def _body_binary() -> bytes:
    return random.Random(9309).randbytes(256 * 1024)


def _body_nul() -> bytes:
    return (
        b"User-agent: *\x00junk\nDisallow: /private\x00/tail\n"
        + b"\x00" * 200_000
        + b"\nAllow: /\x00\nDisallow: /a\x00\n" * 1000
    )


@dataclass(frozen=True)
class Case:
    key: str
    description: str
    body: Callable[[], bytes]
    url: str


CASES: list[Case] = [
    Case("wild8", "/*a*a*a*a*a*a*a*a*b vs 10,000 x 'a'", _body_wild8, LONG_URL),
    Case("wild30", "/*a...*b (30 '*') vs 10,000 x 'a'", _body_wild30, LONG_URL),
    Case(
        "wild30x100", "100 rules of 30 '*' vs 10,000 x 'a'", _body_wild30x100, LONG_URL
    ),
    Case("line1mb", "1 MiB single Disallow line", _body_line1mb, LONG_URL),
    Case(
        "rules100k",
        "100,000 rules (2 MB)",
        _body_rules100k,
        "https://example.com/zzz/page.html",
    ),
    Case(
        "binary", "256 KiB random bytes", _body_binary, "https://example.com/some/path"
    ),
    Case(
        "nul",
        "NUL bytes in lines, 200 KB of NULs",
        _body_nul,
        "https://example.com/private/x",
    ),
]
CASES_BY_KEY = {c.key: c for c in CASES}


class CallTimeout(BaseException):
    """Raised by SIGALRM inside a call that exceeded CALL_LIMIT_S."""


def _on_alarm(signum: int, frame: object) -> None:
    raise CallTimeout


def _guarded(fn: Callable[[], Any]) -> tuple[float, Any]:
    signal.setitimer(signal.ITIMER_REAL, CALL_LIMIT_S)
    try:
        t0 = time.perf_counter()
        value = fn()
        elapsed = time.perf_counter() - t0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return elapsed, value


def _measure_call(fn: Callable[[], Any], max_rep: int, cap_s: float) -> dict[str, Any]:
    """First call guarded by the time limit, then repeats bounded by count and time."""
    try:
        first, value = _guarded(fn)
    except CallTimeout:
        return {"status": "timeout"}
    except Exception as exc:  # noqa: BLE001 - reported
        return {"status": "error", "error": f"{type(exc).__name__}: {exc}"[:200]}
    times = [first]
    total = first
    while len(times) < max_rep and total < cap_s:
        t0 = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - t0
        times.append(elapsed)
        total += elapsed
    return {
        "status": "ok",
        "median": statistics.median(times),
        "first": first,
        "n": len(times),
        "value": value,
    }


def _patho_limits(quick: bool) -> tuple[int, float, int, float]:
    """(parse repeats, parse time cap, match repeats, match time cap)."""
    return (5, 0.05, 30, 0.03) if quick else (15, 0.4, 200, 0.25)


def worker_main(adapter_key: str, case_keys: Sequence[str], quick: bool) -> int:
    """Subprocess entry: measure the cases for one parser, one JSON line per case."""
    signal.signal(signal.SIGALRM, _on_alarm)
    adapter = ADAPTER_FACTORIES[adapter_key]()
    p_rep, p_cap, m_rep, m_cap = _patho_limits(quick)
    out = sys.stdout
    for key in case_keys:
        case = CASES_BY_KEY[key]
        out.write(f"BEGIN {key}\n")
        out.flush()
        body = case.body()
        parsed: list[Any] = []

        def do_parse(body: bytes = body, parsed: list[Any] = parsed) -> Any:
            obj = adapter.parse(body)
            parsed[:] = [obj]
            return None

        record: dict[str, Any] = {"case": key}
        record["parse"] = _measure_call(do_parse, p_rep, p_cap)
        if record["parse"]["status"] == "ok":
            obj = parsed[0]
            urls = [case.url]

            def do_match(obj: Any = obj, urls: list[str] = urls) -> bool:
                return adapter.answer(obj, urls)[0]

            out.write(f"MATCH {json.dumps(record['parse'])}\n")
            out.flush()
            record["match"] = _measure_call(do_match, m_rep, m_cap)
        else:
            record["match"] = {"status": "skipped"}
        out.write("RESULT " + json.dumps(record) + "\n")
        out.flush()
    return 0


def _case_deadline_s(quick: bool) -> float:
    _, p_cap, _, m_cap = _patho_limits(quick)
    # building the body + two guarded first calls + the capped repeats + slack
    return 3.0 + 2 * CALL_LIMIT_S + 2 * (p_cap + CALL_LIMIT_S) + m_cap


def run_pathological(
    adapter_key: str,
    case_keys: Sequence[str],
    quick: bool,
    ours_root: str | None,
    log: Callable[[str], None],
) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    remaining = list(case_keys)
    per_case = _case_deadline_s(quick)
    while remaining:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--_worker", adapter_key]
        cmd += ["--_cases", ",".join(remaining)]
        if quick:
            cmd.append("--quick")
        env = dict(os.environ)
        if ours_root:
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (ours_root, env.get("PYTHONPATH", "")) if p
            )
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env)
            assert proc.stdout is not None
            fd = proc.stdout.fileno()
            sel = selectors.DefaultSelector()
            sel.register(fd, selectors.EVENT_READ)
            buf = b""
            current = remaining[0]
            phase = "parse"
            parse_record: dict[str, Any] = {}
            # the first case also pays for interpreter start and imports
            deadline = time.monotonic() + per_case + 10.0
            failure: str | None = None
            while failure is None and remaining:
                left = deadline - time.monotonic()
                if left <= 0:
                    failure = "timeout"
                    break
                if not sel.select(left):
                    continue
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    failure = "crashed"
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    text = line.decode("utf-8", "replace")
                    if text.startswith("BEGIN "):
                        current, phase = text[6:], "parse"
                        deadline = time.monotonic() + per_case
                    elif text.startswith("MATCH "):
                        phase, parse_record = "match", json.loads(text[6:])
                    elif text.startswith("RESULT "):
                        record = json.loads(text[7:])
                        results[record["case"]] = record
                        remaining.remove(record["case"])
            sel.close()
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            proc.stdout.close()
            if failure is not None and current in remaining:
                err.seek(0)
                tail = err.read().decode("utf-8", "replace").strip().splitlines()[-1:]
                status = "timeout" if failure == "timeout" else "error"
                detail = {"status": status, "error": " ".join(tail)[:200]}
                record = {
                    "case": current,
                    "parse": detail,
                    "match": {"status": "skipped"},
                }
                if phase == "match":
                    record["parse"] = parse_record
                    record["match"] = detail
                results[current] = record
                log(f"  {adapter_key}: case {current} {failure} {' '.join(tail)[:120]}")
                remaining.remove(current)
    return results


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    align: str = ""  # per column "l" or "r"; default: first left, others right

    def _align(self, i: int) -> str:
        if i < len(self.align):
            return self.align[i]
        return "l" if i == 0 else "r"

    def text(self) -> str:
        widths = [
            max(len(r[i]) for r in [self.header, *self.rows])
            for i in range(len(self.header))
        ]

        def fmt(row: list[str]) -> str:
            cells = [
                c.ljust(w) if self._align(i) == "l" else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            ]
            return "  ".join(cells).rstrip()

        rule = "  ".join("-" * w for w in widths)
        lines = [self.title, fmt(self.header), rule] + [fmt(r) for r in self.rows]
        return "\n".join(lines)

    def markdown(self) -> str:
        def fmt(row: list[str]) -> str:
            return "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"

        seps = [
            "---:" if self._align(i) == "r" else ":---" for i in range(len(self.header))
        ]
        lines = [
            f"### {self.title}",
            "",
            fmt(self.header),
            "| " + " | ".join(seps) + " |",
        ]
        lines += [fmt(r) for r in self.rows]
        return "\n".join(lines)


def fmt_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e9:.0f} ns"


def fmt_rate(per_s: float) -> str:
    return f"{per_s:,.0f}"


def fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def _pkg_version(dist: str, module: str | None = None) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        pass
    if module is not None and module in sys.modules:
        version = getattr(sys.modules[module], "__version__", None)
        if version:
            return f"{version} (not installed; source tree)"
    return "not installed"


def machine_info(load_start: tuple[float, float, float], ours_msg: str) -> list[str]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    load_end = os.getloadavg()
    return [
        (
            f"machine: {platform.platform()}; CPU {cpu_model()}; "
            f"cpu_count {os.cpu_count()} (usable {usable})"
        ),
        f"python: {platform.python_implementation()} {platform.python_version()}",
        "load average (1/5/15 min): start "
        + "/".join(f"{x:.2f}" for x in load_start)
        + ", end "
        + "/".join(f"{x:.2f}" for x in load_end),
        "versions: scrapy-robots-std "
        + _pkg_version("scrapy-robots-std", "scrapy_robots_std")
        + f" (git {git_describe(REPO_ROOT, None, 'with uncommitted changes')}), protego {_pkg_version('protego')}, "
        f"robotspy {_pkg_version('robotspy')}, scrapy {_pkg_version('scrapy')}, "
        f"fast-robotstxt {_pkg_version('fast-robotstxt')}, "
        f"urllib.robotparser (stdlib {platform.python_version()})",
        ours_msg,
    ]


@dataclass
class Report:
    info: list[str]
    tables: list[Table]
    targets: Table | None
    notes: list[str]

    def text(self) -> str:
        parts = ["\n".join(self.info)]
        parts += [t.text() for t in self.tables]
        if self.targets is not None:
            parts.append(self.targets.text())
        parts.append("\n".join(self.notes))
        return "\n\n".join(parts) + "\n"

    def markdown(self, command: str) -> str:
        now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        parts = [
            "# Benchmark results",
            f"Date: {now}",
            f"Command (run from the repository root):\n\n    {command}",
            "\n".join(f"* {line}" for line in self.info),
        ]
        parts += [t.markdown() for t in self.tables]
        if self.targets is not None:
            parts.append(self.targets.markdown())
        parts.append(
            "\n".join(
                f"  * {n.strip()}" if n.startswith("  ") else f"* {n}"
                for n in self.notes
            )
        )
        return "\n\n".join(parts) + "\n"


def _patho_cell(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return "-"
    status = entry.get("status")
    if status == "ok":
        return fmt_time(float(entry["median"]))
    if status == "timeout":
        return f"timeout >{CALL_LIMIT_S:g} s"
    return str(status)


def build_report(
    corpus: Corpus,
    corpus_res: dict[str, CorpusResult],
    patho: dict[str, dict[str, dict[str, Any]]],
    info: list[str],
    repeats: int,
    quick: bool,
) -> Report:
    keys = list(corpus_res)
    mb = corpus.n_bytes / 1e6
    ref = corpus_res.get("protego")

    def best(xs: list[float]) -> float:
        return min(xs)

    def parse_rate(r: CorpusResult) -> float:
        return len(corpus.bodies) / best(r.parse_times)

    def match_rate(r: CorpusResult) -> float:
        return r.calls / best(r.match_times)

    def warm_rate(r: CorpusResult) -> float:
        return r.calls / best(r.warm_times)

    def total(r: CorpusResult) -> float:
        return best(r.parse_times) + best(r.match_times)

    def ratio(x: float | None, y: float | None) -> str:
        return fmt_ratio(x / y if x is not None and y else None)

    table = Table(
        f"Corpus: {len(corpus.bodies):,} files, {mb:.2f} MB, {corpus.n_urls:,} URLs "
        f"(token {TOKEN}); best of {repeats}; 'vs Protego' >1 = faster",
        [
            "parser",
            "parse",
            "files/s",
            "MB/s",
            "vs Protego",
            "match cold",
            "calls/s",
            "vs Protego",
            "match warm",
            "calls/s",
            "vs Protego",
            "parse+match",
            "vs Protego",
        ],
    )
    mtable = Table(
        "Memory: bytes retained per parsed file (tracemalloc); 'vs Protego' <1 = smaller",
        [
            "parser",
            "after parse",
            "vs Protego",
            "after parse+match",
            "vs Protego",
            "parse errors",
            "match errors",
        ],
    )
    for r in corpus_res.values():
        pr = parse_rate(r)
        mr = match_rate(r)
        table.rows.append(
            [
                r.adapter.label,
                fmt_time(best(r.parse_times)),
                fmt_rate(pr),
                f"{mb / best(r.parse_times):.2f}",
                ratio(pr, parse_rate(ref) if ref else None),
                fmt_time(best(r.match_times)),
                fmt_rate(mr),
                ratio(mr, match_rate(ref) if ref else None),
                fmt_time(best(r.warm_times)),
                fmt_rate(warm_rate(r)),
                ratio(warm_rate(r), warm_rate(ref) if ref else None),
                fmt_time(total(r)),
                ratio(total(ref) if ref else None, total(r)),
            ]
        )
        mem, used = r.mem_per_file, r.mem_used_per_file
        mtable.rows.append(
            [
                r.adapter.label,
                "-" if mem is None else f"{mem:,.0f}",
                ratio(mem, ref.mem_per_file if ref else None),
                "-" if used is None else f"{used:,.0f}",
                ratio(used, ref.mem_used_per_file if ref else None),
                f"{r.parse_errors:,}",
                f"{r.match_errors:,}",
            ]
        )

    ptable: Table | None = None
    if patho:
        ptable = Table(
            "Pathological inputs: median time per call (1 s limit per call)",
            ["case", "op", *[corpus_res[k].adapter.label for k in keys]],
            align="ll",
        )
        for case in CASES:
            for op in ("parse", "match"):
                row = [case.description if op == "parse" else "", op]
                for k in keys:
                    rec = patho.get(k, {}).get(case.key)
                    row.append(_patho_cell(None if rec is None else rec.get(op)))
                ptable.rows.append(row)

    notes: list[str] = [
        (
            "parse = RobotsTxt.parse(body) for scrapy-robots-std; for the others it "
            "includes decoding the body with utf-8-sig, errors='ignore' (what Scrapy "
            "does). match excludes parsing; 'cold' is the first pass over freshly "
            "parsed objects (it includes anything a parser builds on first use, e.g. "
            "our per-token rule index), 'warm' repeats the same calls. Memory: "
            "tracemalloc bytes retained per "
            "file with all parsed objects alive, after parsing and again after every "
            f"object answered the first {MEM_URLS_PER_SITE} URLs of its site (includes "
            "anything built lazily on first use)."
        ),
    ]
    if quick:
        notes.append(
            f"--quick: every {QUICK_STEP}th file only, figures are indicative."
        )
    ours_main = corpus_res.get("ours-rfc9309")
    if ours_main and ref:
        diff = [
            (i, a, b)
            for i, (a, b) in enumerate(zip(ours_main.answers, ref.answers, strict=True))
            if a is not None and b is not None and a != b
        ]
        notes.append(
            f"informational: scrapy-robots-std rfc9309 and Protego disagree on "
            f"{len(diff):,} of {len(ref.answers):,} URLs "
            f"({100 * len(diff) / max(1, len(ref.answers)):.2f} %)."
        )
        flat: list[tuple[str, str]] = [
            (name, url)
            for name, urls in zip(corpus.names, corpus.urls, strict=True)
            for url in urls
        ]
        for i, a, b in diff[:5]:
            site, url = flat[i]
            url_short = url if len(url) <= 100 else url[:97] + "..."
            notes.append(f"  e.g. {site}: {url_short} ours={a} protego={b}")
    fast_res = corpus_res.get("fast-robotstxt")
    if ours_main is not None:
        # Issue 16, point 8: the crawler's workload, each site's file parsed once
        # and all its URLs checked (cold: the first pass pays for the index).
        shares = []
        for other in (ref, fast_res):
            if other is not None:
                share = total(ours_main) / total(other)
                shares.append(f"{share:.2f}x {other.adapter.label}'s")
        if shares:
            notes.append(
                "workload (each file parsed once, all its URLs checked): "
                f"scrapy-robots-std rfc9309 takes {fmt_time(total(ours_main))}, "
                + " and ".join(shares)
                + " time."
            )
    ours_1994 = corpus_res.get("ours-1994")
    urllib_res = corpus_res.get("urllib")
    if ours_1994 and urllib_res:
        n = sum(
            a is not None and b is not None and a != b
            for a, b in zip(ours_1994.answers, urllib_res.answers, strict=True)
        )
        notes.append(
            f"informational: scrapy-robots-std 1994 and urllib.robotparser disagree on "
            f"{n:,} URLs."
        )

    for k in keys:
        if not corpus_res[k].adapter.ours:
            continue
        cold = [
            f"{case.key} {fmt_time(float(entry['first']))}"
            for case in CASES
            if (entry := patho.get(k, {}).get(case.key, {}).get("match"))
            and entry.get("status") == "ok"
            and float(entry["first"]) >= TARGET_PATHO_S
        ]
        if cold:
            notes.append(
                f"{corpus_res[k].adapter.label}: first (cold) match call >= 1 ms in: "
                + ", ".join(cold)
            )
    targets: Table | None = None
    ours_keys = [k for k in keys if corpus_res[k].adapter.ours]
    if ours_keys and ref:
        targets = Table(
            "Targets (scrapy-robots-std vs Protego)",
            ["target", *[corpus_res[k].adapter.label for k in ours_keys]],
        )
        rows: dict[str, list[str]] = {
            "parse": [f"parse throughput >= {TARGET_PARSE_RATIO:g}x Protego"],
            "match": [
                (
                    "(info) match throughput vs Protego (warm: calls on parsed"
                    " objects that answered before)"
                )
            ],
            "cold": [
                "(info) match throughput vs Protego, cold (first pass per object)"
            ],
            "total": [f"workload <= {TARGET_WORKLOAD_SHARE:g}x Protego's time"],
            "mem": [f"memory per file <= {TARGET_MEM_RATIO:g}x Protego (after parse)"],
            "mem_used": [
                f"memory per file <= {TARGET_MEM_RATIO:g}x Protego (after parse+match)"
            ],
            "pmatch": ["pathological match < 1 ms per call"],
            "pparse": ["pathological parse < 1 ms per call"],
        }
        for k in ours_keys:
            r = corpus_res[k]
            pr = parse_rate(r) / parse_rate(ref)
            mr = warm_rate(r) / warm_rate(ref)
            rows["cold"].append(f"{match_rate(r) / match_rate(ref):.2f}x")
            rows["parse"].append(
                f"{'PASS' if pr >= TARGET_PARSE_RATIO else 'MISS'} {pr:.2f}x"
            )
            rows["match"].append(f"{mr:.2f}x")
            share = total(r) / total(ref)
            rows["total"].append(
                f"{'PASS' if share <= TARGET_WORKLOAD_SHARE else 'MISS'} {share:.2f}x"
            )
            for row_key, mine, theirs in (
                ("mem", r.mem_per_file, ref.mem_per_file),
                ("mem_used", r.mem_used_per_file, ref.mem_used_per_file),
            ):
                if mine is None or not theirs:
                    rows[row_key].append("n/a")
                    continue
                m = mine / theirs
                verdict = "PASS" if m <= TARGET_MEM_RATIO else "MISS"
                rows[row_key].append(f"{verdict} {m:.2f}x")
            for op, row_key in (("match", "pmatch"), ("parse", "pparse")):
                if not patho:
                    rows[row_key].append("not run")
                    continue
                worst_case, worst = "", 0.0
                ok = True
                for case in CASES:
                    entry = patho.get(k, {}).get(case.key, {}).get(op)
                    if entry is None or entry.get("status") != "ok":
                        ok = False
                        worst_case, worst = case.key, float("inf")
                        continue
                    t = float(entry["median"])
                    if t >= TARGET_PATHO_S:
                        ok = False
                    if t > worst:
                        worst_case, worst = case.key, t
                verdict = "PASS" if ok else "MISS"
                worst_txt = "failed" if worst == float("inf") else fmt_time(worst)
                rows[row_key].append(f"{verdict} worst {worst_txt} ({worst_case})")
        targets.rows = list(rows.values())
    tables = [table, mtable] if ptable is None else [table, mtable, ptable]
    return Report(info, tables, targets, notes)


# --------------------------------------------------------------------------
# Profile mode
# --------------------------------------------------------------------------


def run_profile(corpus: Corpus, top: int) -> None:
    adapter = _ours_adapter("rfc9309")

    # Without the profiler: how match time splits between the first query of
    # each object (which pays for any lazy per-token compilation) and the rest.
    t_parse, objs, _ = time_parse(adapter, corpus.bodies)
    t_first, _, _ = time_match(adapter, objs, [urls[:1] for urls in corpus.urls])
    t_rest, _, _ = time_match(adapter, objs, [urls[1:] for urls in corpus.urls])
    n_first = sum(min(1, len(urls)) for urls in corpus.urls)
    n_rest = corpus.n_urls - n_first
    print(f"===== timings without profiler ({len(corpus.bodies):,} files) =====")
    print(f"parse all files:               {fmt_time(t_parse)}")
    print(
        f"first URL of each site:        {fmt_time(t_first)} "
        f"({fmt_time(t_first / max(1, n_first))} per call, {n_first:,} calls)"
    )
    print(
        f"other URLs (already compiled): {fmt_time(t_rest)} "
        f"({fmt_time(t_rest / max(1, n_rest))} per call, {n_rest:,} calls)"
    )
    print()
    objs = []

    def parse_all() -> None:
        objs.extend(adapter.parse(b) for b in corpus.bodies)

    def match_all() -> None:
        for obj, urls in zip(objs, corpus.urls, strict=True):
            adapter.answer(obj, urls)

    for title, fn in (("parse", parse_all), ("match", match_all)):
        prof = cProfile.Profile()
        prof.runcall(fn)
        for order in ("tottime", "cumulative"):
            stream = io.StringIO()
            stats = pstats.Stats(prof, stream=stream)
            stats.sort_stats(order).print_stats(top)
            print(
                f"===== {title}: {len(corpus.bodies):,} files, sorted by {order} ====="
            )
            print(stream.getvalue().strip())
            print()


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def _command_line() -> str:
    exe = sys.executable
    rel = os.path.relpath(exe)
    if not rel.startswith(".."):
        exe = rel
    script = os.path.relpath(Path(__file__).resolve())
    return " ".join(shlex.quote(a) for a in [exe, script, *sys.argv[1:]])


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else ""
    )
    ap.add_argument(
        "--corpus", type=Path, default=DEFAULT_CORPUS, help="corpus directory"
    )
    ap.add_argument("--quick", action="store_true", help="~300 files, 1 repeat")
    ap.add_argument("--repeats", type=int, default=None, help="best of N (default 3)")
    ap.add_argument(
        "--markdown", type=Path, default=None, help="also write markdown here"
    )
    ap.add_argument(
        "--parsers",
        default=",".join(ADAPTER_FACTORIES),
        help="comma-separated subset of: " + ", ".join(ADAPTER_FACTORIES),
    )
    ap.add_argument("--no-patho", action="store_true", help="skip pathological cases")
    ap.add_argument(
        "--profile",
        nargs="?",
        const=30,
        type=int,
        metavar="TOP",
        help="only cProfile scrapy-robots-std parse and match; print TOP functions",
    )
    ap.add_argument("--_worker", help=argparse.SUPPRESS)
    ap.add_argument("--_cases", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args._worker:
        return worker_main(args._worker, args._cases.split(","), args.quick)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    load_start = os.getloadavg()
    ours_root, ours_msg = import_ours()
    corpus = load_corpus(args.corpus, args.quick)
    log(
        f"corpus: {len(corpus.bodies):,} files, {corpus.n_urls:,} URLs from {args.corpus}"
    )

    if args.profile is not None:
        if ours_root is None:
            log(ours_msg)
            return 1
        run_profile(corpus, args.profile)
        return 0

    repeats = args.repeats or (1 if args.quick else 3)
    adapters: list[Adapter] = []
    for key in args.parsers.split(","):
        if key not in ADAPTER_FACTORIES:
            ap.error(f"unknown parser {key!r}")
        if key.startswith("ours-") and ours_root is None:
            log(f"skipping {key}: {ours_msg}")
            continue
        try:
            adapters.append(ADAPTER_FACTORIES[key]())
        except ImportError as exc:
            if key not in OPTIONAL_PARSERS:
                raise
            log(f"skipping {key}: {exc}")
    log(ours_msg)

    t0 = time.perf_counter()
    corpus_res = run_corpus(adapters, corpus, repeats, log)
    log(f"corpus measurements took {time.perf_counter() - t0:.1f} s")

    patho: dict[str, dict[str, dict[str, Any]]] = {}
    if not args.no_patho:
        t0 = time.perf_counter()
        for adapter in adapters:
            log(f"  pathological cases: {adapter.key}")
            patho[adapter.key] = run_pathological(
                adapter.key, [c.key for c in CASES], args.quick, ours_root, log
            )
        log(f"pathological cases took {time.perf_counter() - t0:.1f} s")

    report = build_report(
        corpus,
        corpus_res,
        patho,
        machine_info(load_start, ours_msg),
        repeats,
        args.quick,
    )
    print(report.text(), end="")
    if args.markdown is not None:
        # Hand-written analysis below the marker survives a new run.
        kept = ""
        if args.markdown.exists():
            old = args.markdown.read_text(encoding="utf-8")
            if ANALYSIS_MARKER in old:
                kept = "\n" + ANALYSIS_MARKER + old.split(ANALYSIS_MARKER, 1)[1]
        text = report.markdown(_command_line()) + kept
        args.markdown.write_text(text, encoding="utf-8")
        log(f"wrote {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
