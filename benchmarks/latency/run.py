"""Runner: a crawl benchmark with the network in it (issue 23, point 3).

    .venv/bin/python -m benchmarks.latency [--cases a,b,c,d] [--reps 3] [--d-reps 1]
        [--markdown benchmarks/RESULTS.md] [--label TEXT] [--smoke] [--python PATH]

Per case: a server process (server.py) that answers every request after a delay;
then, for each repetition, one crawl per way (robots.txt off, Scrapy's built-in
middleware, this package's add-on), each in a fresh process (crawl.py), the ways
interleaved (their order rotates between repetitions). While a crawl runs, this
process samples its open file descriptors (``/proc/PID/fd``) every 50 ms. Medians
over the repetitions are printed, with ratios and the targets. Case (d) then stops a
JOBDIR crawl with SIGINT and resumes it, for each way, and accounts for every URL
across the two runs. benchmarks/README.md says what each case measures and how.

The crawl processes run ``python -m benchmarks.latency.crawl`` with the working
directory and ``PYTHONPATH`` set to the checkout this file is in, so the package
measured is that checkout's ``scrapy_robots_std`` (printed with the results).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.crawl.report import Table, fmt, machine_lines
from benchmarks.latency.cases import CASES, Case, case_for
from benchmarks.machine import git_describe

REPO_ROOT = Path(__file__).resolve().parents[2]
WAYS = ("off", "builtin", "ours")
LABELS = {
    "off": "robots.txt off",
    "builtin": "built-in (Protego)",
    "ours": "scrapy-robots-std",
}
#: How often the file descriptors of a running crawl are counted.
SAMPLE_EVERY = 0.05
#: A crawl that runs longer than this is killed (and reported as failed).
CRAWL_TIMEOUT = 600.0
SMOKE_CRAWL_TIMEOUT = 60.0
#: Case (d)'s stop: SIGINT after this share of the way's median (d) wall time.
STOP_AT = 1 / 3
SECTION_HEAD = "## Crawl benchmark with network latency (`benchmarks/latency`)"
BLOCKS = ("head", "a", "b", "c", "d")
# The targets of issue 23, point 3.
A_VS_OFF = 1.03
B_VS_OFF = 1.3
B_VS_BUILTIN = 0.5
C_VS_BUILTIN = 1.0
C_FDS_VS_BUILTIN = 1.1
D_FDS_VS_OFF = 1.1


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- processes --------------------------------------------------------------------------


def _proc_cpu(pid: int) -> float:
    """utime + stime of a process, in seconds (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p
    )
    env.setdefault("PYTHONHASHSEED", "0")
    return env


def _wait_or_kill(proc: subprocess.Popen[Any], timeout: float) -> None:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


class Server:
    """The case's server process; stopped by PID."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.proc: subprocess.Popen[str] | None = None
        self.port = 0

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "benchmarks.latency.server",
                "--page-delay",
                str(self.case.page_delay),
                "--robots-delay",
                str(self.case.robots_delay),
            ],
            cwd=REPO_ROOT,
            env=_child_env(),
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().split()  # "ready PORT", or EOF if it died
        if len(line) != 2 or line[0] != "ready":
            self.stop()
            raise RuntimeError(f"the server did not start ({line!r})")
        self.port = int(line[1])

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def counts(self) -> dict[str, int]:
        """The server's counts since the last call (and reset them)."""
        url = f"http://127.0.0.1:{self.port}/__stats"
        with urllib.request.urlopen(url, timeout=10) as response:
            return dict(json.loads(response.read()))

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
        _wait_or_kill(self.proc, 30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.proc = None


# -- one crawl --------------------------------------------------------------------------


@dataclass
class Crawl:
    """One crawl process: what it wrote, and what was measured from outside."""

    way: str
    rep: int
    result: dict[str, Any]
    peak_fds: int
    vm_hwm_mb: float
    process_wall: float
    server_cpu: float
    server: dict[str, int]
    returncode: int
    timed_out: bool = False
    sigint_at: float | None = None  # seconds after spider_opened
    log_path: Path | None = None
    # filled by account()
    fetched: set[str] = field(default_factory=set)
    dropped: set[str] = field(default_factory=set)
    missing: int = 0
    unexpected: int = 0
    repeated: int = 0
    leaked: int = 0
    overblocked: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def wall(self) -> float | None:
        return self.result.get("wall")


def _read_status_hwm(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def run_crawl(
    args: argparse.Namespace,
    case: Case,
    way: str,
    server: Server,
    workdir: Path,
    tag: str,
    *,
    rep: int = 0,
    jobdir: Path | None = None,
    sigint_after: float | None = None,
) -> Crawl:
    """Start one crawl process, sample it until it exits (or the timeout kills it)."""
    out = workdir / f"{tag}.json"
    flag = Path(str(out) + ".opened")
    for stale in (out, flag):
        stale.unlink(missing_ok=True)
    log_path = workdir / f"{tag}.log"
    cmd = [
        args.python,
        "-m",
        "benchmarks.latency.crawl",
        "--case",
        case.name,
        "--way",
        way,
        "--port",
        str(server.port),
        "--out",
        str(out),
    ]
    if args.smoke:
        cmd.append("--smoke")
    if jobdir is not None:
        cmd += ["--jobdir", str(jobdir)]
    if not server.alive():
        raise RuntimeError("the server died")
    server_cpu0 = _proc_cpu(server.pid)
    timeout = SMOKE_CRAWL_TIMEOUT if args.smoke else CRAWL_TIMEOUT
    with log_path.open("w", encoding="utf-8") as log_file:
        start = time.monotonic()
        proc = subprocess.Popen(
            cmd, cwd=REPO_ROOT, env=_child_env(), stdout=log_file, stderr=log_file
        )
        fd_dir = f"/proc/{proc.pid}/fd"
        peak_fds, hwm, timed_out = 0, 0.0, False
        opened_at: float | None = None
        sigint_at: float | None = None
        while proc.poll() is None:
            now = time.monotonic()
            if now - start > timeout:
                timed_out = True
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                break
            with contextlib.suppress(OSError):  # it may just have exited
                peak_fds = max(peak_fds, len(os.listdir(fd_dir)))
            hwm = max(hwm, _read_status_hwm(proc.pid) or 0.0)
            if sigint_after is not None and sigint_at is None:
                if opened_at is None and flag.exists():
                    opened_at = now
                if opened_at is not None and now - opened_at >= sigint_after:
                    os.kill(proc.pid, signal.SIGINT)
                    sigint_at = now - opened_at
            time.sleep(SAMPLE_EVERY)
        process_wall = time.monotonic() - start
    server_cpu = _proc_cpu(server.pid) - server_cpu0
    try:
        result = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        result = {}
    crawl = Crawl(
        way=way,
        rep=rep,
        result=result,
        peak_fds=peak_fds,
        vm_hwm_mb=hwm,
        process_wall=process_wall,
        server_cpu=server_cpu,
        server=server.counts(),
        returncode=proc.returncode,
        timed_out=timed_out,
        sigint_at=sigint_at,
        log_path=log_path,
    )
    if timed_out:
        crawl.problems.append(f"killed after {timeout:.0f} s")
    elif not result:
        crawl.problems.append(f"no result (exit code {proc.returncode})")
    return crawl


def account(crawl: Crawl, expected: list[str], *, partial: bool = False) -> None:
    """Compare the crawl's fetched and dropped URLs with the case's URLs.

    With ``partial`` (a run stopped by SIGINT), URLs neither fetched nor dropped
    are expected and not a problem; the resume check counts them across two runs.
    """
    res = crawl.result
    if not res:
        return
    fetched_list, dropped_list = res.get("fetched", []), res.get("dropped", [])
    crawl.fetched, crawl.dropped = set(fetched_list), set(dropped_list)
    every = set(expected)
    private = {u for u in every if "/private/" in u}
    seen = crawl.fetched | crawl.dropped
    crawl.repeated = (
        len(fetched_list) + len(dropped_list) - len(seen)
        + len(crawl.fetched & crawl.dropped)
    )  # fmt: skip
    crawl.missing = len(every - seen)
    crawl.unexpected = len(seen - every)
    obey = crawl.way != "off"
    crawl.leaked = len(crawl.fetched & private) if obey else 0
    crawl.overblocked = len(crawl.dropped - private)
    problems = crawl.problems
    if res.get("errors"):
        sample = "; ".join(f"{u}: {e}" for u, e in res.get("error_sample", [])[:2])
        problems.append(f"{res['errors']} errors ({sample})")
    if crawl.missing and not partial:
        problems.append(f"{crawl.missing} URLs neither fetched nor dropped")
    if crawl.unexpected:
        problems.append(f"{crawl.unexpected} URLs not of the case")
    if crawl.repeated:
        problems.append(f"{crawl.repeated} URLs answered more than once")
    if not obey and crawl.dropped:
        problems.append(f"{len(crawl.dropped)} dropped with robots.txt off")
    if crawl.overblocked:
        problems.append(f"{crawl.overblocked} allowed URLs dropped")
    if crawl.way == "ours" and crawl.leaked:
        problems.append(f"{crawl.leaked} disallowed URLs fetched")


# -- a case -----------------------------------------------------------------------------


@dataclass
class Resume:
    way: str
    first: Crawl
    second: Crawl
    missing: int
    duplicates: int
    errors: int
    interrupted: bool

    @property
    def accounted(self) -> bool:
        return self.interrupted and self.missing == 0 and self.errors == 0


@dataclass
class CaseResult:
    case: Case
    date: str
    load: list[tuple[float, float, float]] = field(default_factory=list)
    runs: list[Crawl] = field(default_factory=list)
    resumes: list[Resume] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # verdicts
    failures: list[str] = field(default_factory=list)

    def of(self, way: str) -> list[Crawl]:
        return [c for c in self.runs if c.way == way]

    def median(self, way: str, value: str) -> float | None:
        values = []
        for crawl in self.of(way):
            v = getattr(crawl, value, None)
            if v is None:
                v = crawl.result.get(value)
            if isinstance(v, (int, float)):
                values.append(float(v))
        return statistics.median(values) if values else None


def run_case(args: argparse.Namespace, name: str, workdir: Path) -> CaseResult:
    case = case_for(name, smoke=args.smoke)
    reps = args.d_reps if case.jobdir else args.reps
    res = CaseResult(case, dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"))
    res.load.append(os.getloadavg())
    server = Server(case)
    server.start()
    try:
        expected = case.urls(server.port)
        for rep in range(reps):
            order = WAYS[rep % 3 :] + WAYS[: rep % 3]
            for way in order:
                jobdir = None
                if case.jobdir:
                    jobdir = Path(tempfile.mkdtemp(prefix=f"job-{way}-", dir=workdir))
                tag = f"{name}-{way}-{rep}"
                crawl = run_crawl(
                    args, case, way, server, workdir, tag, rep=rep, jobdir=jobdir
                )
                account(crawl, expected)
                res.runs.append(crawl)
                log(_progress(case, crawl))
                for problem in crawl.problems:
                    res.failures.append(f"({name}) {way} rep {rep + 1}: {problem}")
        if case.jobdir:
            for way in args.resume_ways:
                resume = run_resume(args, case, way, server, workdir, expected, res)
                res.resumes.append(resume)
    finally:
        server.stop()
    res.load.append(os.getloadavg())
    judge(res)
    return res


def run_resume(
    args: argparse.Namespace,
    case: Case,
    way: str,
    server: Server,
    workdir: Path,
    expected: list[str],
    res: CaseResult,
) -> Resume:
    """SIGINT a JOBDIR crawl after a third of the way's time, then resume it."""
    wall = res.median(way, "wall") or case.lower_bound(robots=way != "off") * 3
    jobdir = Path(tempfile.mkdtemp(prefix=f"resume-{way}-", dir=workdir))
    tag = f"{case.name}-{way}-resume"
    first = run_crawl(
        args, case, way, server, workdir, tag + "1", jobdir=jobdir,
        sigint_after=wall * STOP_AT,
    )  # fmt: skip
    account(first, expected, partial=True)
    second = run_crawl(args, case, way, server, workdir, tag + "2", jobdir=jobdir)
    account(second, expected, partial=True)
    every = set(expected)
    seen = first.fetched | first.dropped | second.fetched | second.dropped
    duplicates = len(
        (first.fetched | first.dropped) & (second.fetched | second.dropped)
    )
    duplicates += first.repeated + second.repeated
    errors = first.result.get("errors", 0) + second.result.get("errors", 0)
    resume = Resume(
        way=way,
        first=first,
        second=second,
        missing=len(every - seen),
        duplicates=duplicates,
        errors=errors,
        interrupted=first.result.get("finish_reason") == "shutdown",
    )
    log(
        f"  ({case.name}) resume {way}: SIGINT at {fmt(first.sigint_at)} s, run 1 "
        f"{first.result.get('finish_reason')} ({len(first.fetched)} fetched, "
        f"{len(first.dropped)} dropped), run 2 {second.result.get('finish_reason')} "
        f"({len(second.fetched)} fetched, {len(second.dropped)} dropped): missing "
        f"{resume.missing}, duplicates {duplicates}, errors {errors}"
    )
    # Errors and lost URLs are the check's verdict (above); a crawl that did not
    # finish at all is a failure of the benchmark.
    for crawl in (first, second):
        if crawl.timed_out or not crawl.result:
            res.failures.append(f"({case.name}) resume {way}: {crawl.problems[0]}")
    return resume


def _progress(case: Case, crawl: Crawl) -> str:
    r = crawl.result
    return (
        f"  ({case.name}) {crawl.way:<7} rep {crawl.rep + 1}: wall {fmt(r.get('wall'))} s, "
        f"{len(crawl.fetched)} fetched, {len(crawl.dropped)} dropped, "
        f"peak fds {crawl.peak_fds}, server cpu {crawl.server_cpu:.1f} s"
        + (f"; PROBLEM: {'; '.join(crawl.problems)}" if crawl.problems else "")
    )


# -- targets and tables -----------------------------------------------------------------


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _verdict(label: str, value: float | None, target: float) -> str:
    if value is None:
        return f"{label} <= {target:g}x: n/a"
    mark = "PASS" if value <= target else "MISS"
    return f"{label} <= {target:g}x: **{mark}** {value:.3f}x"


def judge(res: CaseResult) -> None:
    wall = {w: res.median(w, "wall") for w in WAYS}
    fds = {w: res.median(w, "peak_fds") for w in WAYS}
    ours_off = _ratio(wall["ours"], wall["off"])
    ours_builtin = _ratio(wall["ours"], wall["builtin"])
    name = res.case.name
    lines = res.lines
    if name == "a":
        lines.append(_verdict("ours wall vs off", ours_off, A_VS_OFF))
    elif name == "b":
        lines.append(_verdict("ours wall vs off", ours_off, B_VS_OFF))
        lines.append(_verdict("ours wall vs built-in", ours_builtin, B_VS_BUILTIN))
    elif name == "c":
        lines.append(_verdict("ours wall vs built-in", ours_builtin, C_VS_BUILTIN))
        fds_ratio = _ratio(fds["ours"], fds["builtin"])
        lines.append(
            _verdict("ours peak open files vs built-in", fds_ratio, C_FDS_VS_BUILTIN)
        )
    elif name == "d":
        fds_ratio = _ratio(fds["ours"], fds["off"])
        lines.append(_verdict("ours peak open files vs off", fds_ratio, D_FDS_VS_OFF))
        for resume in res.resumes:
            mark = "PASS" if resume.accounted else "MISS"
            what = (
                f"missing {resume.missing}, duplicates {resume.duplicates}, "
                f"errors {resume.errors}"
            )
            if not resume.interrupted:
                what += "; run 1 was not stopped by the SIGINT"
            target = " (target)" if resume.way == "ours" else ""
            lines.append(
                f"{LABELS[resume.way]}: every request accounted for after SIGINT + "
                f"resume{target}: **{mark}** ({what})"
            )


def _reps_text(crawls: list[Crawl]) -> str:
    return " / ".join(fmt(c.wall, 1) for c in sorted(crawls, key=lambda c: c.rep))


def _same_or_each(values: list[int]) -> str:
    if not values:
        return "-"
    if len(set(values)) == 1:
        return f"{values[0]:,}"
    return "/".join(f"{v:,}" for v in values)


def case_tables(res: CaseResult) -> list[Table]:
    case = res.case
    title = (
        f"{case.title}: medians of {max(len(res.of(w)) for w in WAYS)} repetition(s)"
    )
    table = Table(
        title,
        [
            "way",
            "wall s",
            "vs off",
            "vs built-in",
            "pages/s",
            "peak open fds",
            "peak RSS MB",
            "crawl CPU s",
            "pages in flight",
            "page latency ms",
            "connections",
            "max per host",
            "fetched",
            "dropped",
            "missing",
            "server CPU s",
            "wall s, each rep",
        ],
    )
    off_wall = res.median("off", "wall")
    builtin_wall = res.median("builtin", "wall")
    for way in WAYS:
        crawls = res.of(way)
        if not crawls:
            continue
        wall = res.median(way, "wall")
        fetched = [len(c.fetched) for c in crawls]
        latency = res.median(way, "page_latency")
        table.add(
            LABELS[way],
            fmt(wall),
            fmt(_ratio(wall, off_wall), 3) + "x" if off_wall else "-",
            fmt(_ratio(wall, builtin_wall), 3) + "x" if builtin_wall else "-",
            fmt(statistics.median(fetched) / wall if wall else None, 1),
            fmt(res.median(way, "peak_fds"), 0),
            fmt(res.median(way, "maxrss_mb"), 1),
            fmt(res.median(way, "cpu")),
            fmt(res.median(way, "in_flight"), 1),
            fmt(latency * 1000 if latency is not None else None, 0),
            fmt(statistics.median(c.server.get("connections", 0) for c in crawls), 0),
            str(max(c.server.get("peak_in_flight_per_host", 0) for c in crawls)),
            _same_or_each(fetched),
            _same_or_each([len(c.dropped) for c in crawls]),
            _same_or_each([c.missing for c in crawls]),
            fmt(res.median(way, "server_cpu")),
            _reps_text(crawls),
        )
    bound_off = case.lower_bound(robots=False)
    bound_robots = case.lower_bound(robots=True)
    notes = [
        case.describe(),
        (
            f"lower bound of the wall time: {bound_off:.2f} s with robots.txt off, "
            f"{bound_robots:.2f} s with a robots.txt request per origin holding a "
            "download slot for its delay"
        ),
    ]
    leaks = [c.leaked for c in sorted(res.of("builtin"), key=lambda c: c.rep)]
    if any(leaks):
        # Scrapy's shared-Deferred bug (benchmarks/README.md, the crawl benchmark's (b))
        notes.append(
            "the built-in fetched disallowed pages: "
            + ", ".join(map(str, leaks))
            + " per repetition (Scrapy's shared-Deferred bug, see README.md)"
        )
    table.notes = notes
    tables = [table]
    if res.resumes:
        resume = Table(
            f"{case.title}: SIGINT after {STOP_AT:.0%} of the way's median wall time, "
            "then a second run on the same JOBDIR",
            [
                "way",
                "SIGINT at s",
                "run 1 end",
                "run 1 wall s",
                "run 1 fetched",
                "run 1 dropped",
                "run 2 wall s",
                "run 2 fetched",
                "run 2 dropped",
                "missing",
                "duplicates",
                "errors",
                "peak open fds (1/2)",
                "accounted",
            ],
        )
        for r in res.resumes:
            resume.add(
                LABELS[r.way],
                fmt(r.first.sigint_at),
                r.first.result.get("finish_reason", "-"),
                fmt(r.first.wall),
                f"{len(r.first.fetched):,}",
                f"{len(r.first.dropped):,}",
                fmt(r.second.wall),
                f"{len(r.second.fetched):,}",
                f"{len(r.second.dropped):,}",
                f"{r.missing:,}",
                f"{r.duplicates:,}",
                f"{r.errors:,}",
                f"{r.first.peak_fds:,} / {r.second.peak_fds:,}",
                "yes" if r.accounted else "NO",
            )
        tables.append(resume)
    return tables


def case_text(res: CaseResult, *, markdown: bool, command: str, package: str) -> str:
    tables = case_tables(res)
    lines = [f"### {res.case.title}\n" if markdown else f"== {res.case.title} =="]
    info = [
        f"command: `{command}`" if markdown else f"command: {command}",
        f"{res.date}; package measured: {package}",
        "load average (1/5/15 min) at the start and the end of the case: "
        + " and ".join("/".join(f"{x:.2f}" for x in load) for load in res.load),
    ]
    lines += [f"* {x}" for x in info] if markdown else info
    verdicts = [f"target: {line}" for line in res.lines]
    if not markdown:
        verdicts = [v.replace("**", "") for v in verdicts]
    lines += [f"* {v}" for v in verdicts] if markdown else verdicts
    for failure in res.failures:
        lines.append(("* " if markdown else "") + f"WRONG CRAWL: {failure}")
    for table in tables:
        lines.append("")
        lines.append(table.markdown() if markdown else table.text())
    return "\n".join(lines)


# -- markdown ---------------------------------------------------------------------------


def _slug(label: str) -> str:
    words = "".join(c if c.isalnum() else " " for c in label.lower()).split()
    return "-".join(words)


def _marker(name: str, label: str) -> tuple[str, str]:
    key = f"latency[{_slug(label)}]" if label else "latency"
    return f"<!-- {key}:{name} -->", f"<!-- /{key}:{name} -->"


def write_markdown(path: Path, label: str, blocks: dict[str, str]) -> None:
    """Put each block between its markers in ``path`` (other text kept); a label's
    section (its heading and empty markers) is appended when it is not there yet."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if _marker("head", label)[0] not in text:
        head = SECTION_HEAD + (f": {label}" if label else "")
        section = (
            f"{head}\n\nRobots.txt off, the built-in `RobotsTxtMiddleware` and this "
            "add-on crawl a local server that answers every request after a delay; "
            "a fresh process per crawl, interleaved; medians "
            "([how](README.md#crawl-benchmark-with-network-latency-latency)).\n\n"
        )
        for name in BLOCKS:
            begin, end = _marker(name, label)
            section += f"{begin}\n{end}\n\n"
        text = text.rstrip("\n") + "\n\n" + section
    for name, block in blocks.items():
        begin, end = _marker(name, label)
        start, stop = text.find(begin), text.find(end)
        if start < 0 or stop < 0:
            text = text.rstrip("\n") + f"\n\n{begin}\n{block}\n{end}\n"
        else:
            text = text[: start + len(begin)] + f"\n{block}\n" + text[stop:]
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")


# -- main -------------------------------------------------------------------------------


def _shown(argv: list[str]) -> list[str]:
    """The command line without options that do not change the figures."""
    shown: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in ("--workdir", "--json", "--markdown", "--label"):
            skip = True
        elif not arg.startswith(("--workdir=", "--json=", "--markdown=", "--label=")):
            shown.append(arg)
    return shown


def json_summary(results: list[CaseResult]) -> dict[str, Any]:
    def crawl_dict(c: Crawl) -> dict[str, Any]:
        r = c.result
        return {
            "way": c.way,
            "rep": c.rep,
            "wall": r.get("wall"),
            "cpu": r.get("cpu"),
            "maxrss_mb": r.get("maxrss_mb"),
            "peak_fds": c.peak_fds,
            "fetched": len(c.fetched),
            "dropped": len(c.dropped),
            "missing": c.missing,
            "leaked": c.leaked,
            "errors": r.get("errors"),
            "finish_reason": r.get("finish_reason"),
            "package": r.get("package"),
            "server": c.server,
            "problems": c.problems,
        }

    return {
        res.case.name: {
            "expected": res.case.pages,
            "runs": [crawl_dict(c) for c in res.runs],
            "resumes": [
                {
                    "way": r.way,
                    "first": crawl_dict(r.first),
                    "second": crawl_dict(r.second),
                    "sigint_at": r.first.sigint_at,
                    "missing": r.missing,
                    "duplicates": r.duplicates,
                    "errors": r.errors,
                    "interrupted": r.interrupted,
                    "accounted": r.accounted,
                }
                for r in res.resumes
            ],
            "verdicts": [line.replace("**", "") for line in res.lines],
            "failures": res.failures,
        }
        for res in results
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.latency", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--cases", default="a,b,c,d", help="default a,b,c,d")
    parser.add_argument("--reps", type=int, default=None, help="default 3 (smoke: 1)")
    parser.add_argument(
        "--d-reps",
        type=int,
        default=1,
        help="repetitions of (d)'s JOBDIR crawls (peak open files); default 1",
    )
    parser.add_argument(
        "--resume-ways",
        default=None,
        help="ways of (d)'s stop-and-resume check; default off,ours,builtin "
        "(smoke: off,ours)",
    )
    parser.add_argument("--smoke", action="store_true", help="tiny cases, 1 rep")
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="the interpreter of the crawl processes (default: this one)",
    )
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument(
        "--label", default="", help="a markdown section of its own, e.g. 'before'"
    )
    parser.add_argument("--workdir", type=Path, default=None, help="keep files here")
    parser.add_argument("--json", type=Path, default=None, help="a summary as JSON")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    cases = args.cases.split(",")
    if any(c not in CASES for c in cases):
        parser.error(f"--cases: choose from {','.join(CASES)}")
    args.reps = max(1, min(args.reps or (1 if args.smoke else 3), 10))
    args.d_reps = max(1, min(args.d_reps, 10))
    if args.resume_ways is None:
        args.resume_ways = "off,ours" if args.smoke else "off,ours,builtin"
    args.resume_ways = [w for w in args.resume_ways.split(",") if w]
    if any(w not in WAYS for w in args.resume_ways):
        parser.error(f"--resume-ways: choose from {','.join(WAYS)}")
    command = shlex.join(
        [".venv/bin/python", "-m", "benchmarks.latency", *_shown(argv)]
    )
    machine = machine_lines()
    for line in machine:
        log(line)
    started = time.monotonic()
    results: list[CaseResult] = []
    with tempfile.TemporaryDirectory(prefix="latency-bench-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for name in cases:
            log(f"case ({name}): {case_for(name, smoke=args.smoke).describe()}")
            res = run_case(args, name, workdir)
            results.append(res)
            package = _package(results)
            print(case_text(res, markdown=False, command=command, package=package))
            print(flush=True)
    elapsed = time.monotonic() - started
    package = _package(results)
    log(f"total {elapsed / 60:.1f} min")
    if args.markdown is not None:
        blocks = {
            "head": "\n".join(
                [
                    f"Last run took {elapsed / 60:.1f} min, on:",
                    "",
                    *[f"* {x}" for x in machine],
                    f"* package measured: {package}",
                    f"* crawl interpreter: `{args.python}`",
                ]
            )
        }
        for res in results:
            blocks[res.case.name] = case_text(
                res, markdown=True, command=command, package=package
            )
        write_markdown(args.markdown, args.label, blocks)
        log(f"wrote {args.markdown}")
    if args.json is not None:
        args.json.write_text(
            json.dumps(json_summary(results), indent=1), encoding="utf-8"
        )
    failures = [f for r in results for f in r.failures]
    if failures:
        print(f"{len(failures)} wrong crawl(s): see WRONG CRAWL above", flush=True)
        return 1
    return 0


def _package(results: list[CaseResult]) -> str:
    """Where the crawls imported scrapy_robots_std from, and that checkout's commit."""
    paths = {
        c.result.get("package")
        for r in results
        for c in r.runs
        if c.result.get("package")
    }
    if not paths:
        return "unknown"
    described = []
    for path in sorted(p for p in paths if p):
        checkout = Path(path).parent
        described.append(
            f"`{path}` (git {git_describe(checkout, 'scrapy_robots_std', 'package code modified')})"
        )
    return ", ".join(described)
