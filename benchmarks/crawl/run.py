"""Runner: build each variant's site, serve it, crawl it three ways, interleaved.

    .venv/bin/python -m benchmarks.crawl [--variants a,b,c,d] [--reps 3]
        [--markdown benchmarks/RESULTS.md] [--smoke] [--size a=500x50 ...]

Per variant: the site is built from the corpus and served by its own server
process(es); then, for each repetition, one crawl per way (robots.txt off, Scrapy's
built-in middleware, this package's add-on), each in a fresh process. Medians over
the repetitions are printed, with ratios against robots-off. benchmarks/README.md
says what each variant measures and how.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.crawl import report
from benchmarks.crawl.report import Table, fmt, median, ratio
from benchmarks.crawl.site import DEFAULT_CORPUS, REPO_ROOT, Judge, Site, build, host_of

WAYS = ("off", "builtin", "ours")
LABELS = {
    "off": "robots.txt off",
    "builtin": "built-in (Protego)",
    "ours": "scrapy-robots-std",
}
#: origins x pages per origin; (b) takes at most the corpus' 30 URLs per site.
SIZES = {"a": (500, 50), "b": (500, 30), "c": (50, 60), "d": (10_000, 1)}
SMOKE_SIZES = {"a": (4, 5), "b": (6, 30), "c": (4, 5), "d": (20, 1)}
TITLES = {
    "a": "(a) every page allowed: the layer's pure overhead",
    "b": "(b) realistic rules: drops against each parser's own decisions",
    "c": "(c) one black-holed origin among {n}",
    "d": "(d) {n:,} origins x 1 page: first-page latency and cache memory",
}
#: Origins per server process: one listening socket each plus client connections
#: must stay under the 20,000 file descriptors a process may open here.
ORIGINS_PER_SHARD = 2500
SECTION_HEAD = "## Crawl benchmark"
#: Marked blocks of the markdown file, in order.
BLOCKS = ("head", "a", "b", "c", "d", "d-memory")
#: Target (a): a crawl through a layer at most this times robots-off's.
A_TARGET = 1.02


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- server processes -----------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((host_of(0), 0))
        return int(sock.getsockname()[1])


def _proc_cpu(pid: int) -> float:
    """utime + stime of a process, in seconds (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


class Servers:
    """The site's server shards; stopped by PID."""

    def __init__(self, site_path: Path, origins: int) -> None:
        self.site_path = site_path
        self.shards = max(1, math.ceil(origins / ORIGINS_PER_SHARD))
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, timeout: float = 300.0) -> None:
        for shard in range(self.shards):
            self.procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "benchmarks.crawl.server",
                        str(self.site_path),
                        "--shard",
                        str(shard),
                        "--shards",
                        str(self.shards),
                    ],
                    cwd=REPO_ROOT,
                    stdout=subprocess.PIPE,
                    text=True,
                )
            )
        deadline = time.monotonic() + timeout
        for proc in self.procs:
            assert proc.stdout is not None
            # readline() blocks; the shard prints "ready" or dies (EOF).
            line = proc.stdout.readline().strip()
            if line != "ready" or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"server shard {proc.pid} did not start ({line!r})")

    def cpu(self) -> float:
        return sum(_proc_cpu(p.pid) for p in self.procs)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            _wait_or_kill(proc, 30)
            if proc.stdout is not None:
                proc.stdout.close()
        self.procs.clear()


def _wait_or_kill(proc: subprocess.Popen[str], timeout: float) -> None:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


# -- one crawl ------------------------------------------------------------------------


@dataclass
class Run:
    way: str
    rep: int
    result: dict[str, Any]
    server_cpu: float
    exclude_dead: bool = False

    @property
    def wall(self) -> float:
        return float(self.result["wall"])

    @property
    def cpu(self) -> float:
        return float(self.result["cpu"])

    @property
    def pps(self) -> float:
        return self.result["pages"] / self.wall if self.wall else 0.0

    @property
    def parser_s(self) -> float:
        layer = self.result["layer"]
        return float(layer["parse"]["seconds"] + layer["match"]["seconds"])

    @property
    def server_pct(self) -> float:
        return 100 * self.server_cpu / self.wall if self.wall else 0.0

    @property
    def healthy_pps(self) -> float | None:
        t = self.result["t_last_healthy"]
        return self.result["healthy_pages"] / t if t else None


def crawl(
    site_path: Path,
    way: str,
    servers: Servers,
    workdir: Path,
    *,
    smoke: bool,
    download_timeout: float,
    timeout: float,
    extra: tuple[str, ...] = (),
) -> tuple[dict[str, Any], float]:
    """One crawl in its own process; its result and the servers' CPU seconds
    meanwhile."""
    out = workdir / f"result-{way}-{time.monotonic_ns()}.json"
    errlog = out.with_suffix(".log")
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.crawl.crawl",
        str(site_path),
        "--way",
        way,
        "--out",
        str(out),
        "--download-timeout",
        str(download_timeout),
        *extra,
    ]
    if smoke:
        cmd.append("--smoke")
    cpu0 = servers.cpu()
    with errlog.open("w") as err:
        proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=err, stderr=err)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            code = -9
    server_cpu = servers.cpu() - cpu0
    if code != 0 or not out.exists():
        tail = errlog.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"crawl {way} failed (exit {code}):\n{tail}")
    return json.loads(out.read_text(encoding="utf-8")), server_cpu


# -- a variant ----------------------------------------------------------------------


@dataclass
class VariantResult:
    variant: str
    site: Site
    runs: list[Run] = field(default_factory=list)
    memory: dict[str, dict[str, Any]] = field(default_factory=dict)
    load_before: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    started: str = ""
    seconds: float = 0.0
    tables: list[Table] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    #: (d)'s memory runs: a block of their own in the markdown file
    memory_tables: list[Table] = field(default_factory=list)
    memory_lines: list[str] = field(default_factory=list)


def run_variant(variant: str, args: argparse.Namespace, workdir: Path) -> VariantResult:
    n_origins, n_pages = args.sizes[variant]
    t_start = time.monotonic()
    log(f"[{variant}] building the site: {n_origins:,} origins x {n_pages} pages")
    site = build(
        variant,
        origins=n_origins,
        pages=n_pages,
        port=_free_port(),
        corpus_root=args.corpus,
        dead=args.dead,
    )
    site_path = workdir / f"site-{variant}.json"
    site.dump(site_path)
    res = VariantResult(variant, site)
    res.started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    servers = Servers(site_path, len(site.origins))
    servers.start()
    log(f"[{variant}] {servers.shards} server process(es) ready")
    res.load_before = os.getloadavg()
    timeout = 300.0 if args.smoke else 3600.0
    common = {
        "smoke": args.smoke,
        "download_timeout": args.download_timeout,
        "timeout": timeout,
    }
    extra: tuple[str, ...] = ("--record-urls",) if variant == "b" else ()
    try:
        timing_reps = 0 if variant == "d" and args.memory_only else args.reps
        for rep in range(1, timing_reps + 1):
            for way in WAYS:
                for exclude in (True, False) if variant == "c" else (False,):
                    flags = extra
                    if variant == "c":
                        flags += ("--stop-when-healthy",)
                        flags += ("--exclude-dead",) if exclude else ()
                    result, server_cpu = crawl(
                        site_path, way, servers, workdir, extra=flags, **common
                    )
                    run = Run(way, rep, result, server_cpu, exclude)
                    res.runs.append(run)
                    log(
                        f"[{variant}] rep {rep}/{args.reps} {way:7}"
                        f"{' without dead' if exclude else ''}: "
                        f"{result['pages']:,} pages, {result['dropped']:,} dropped, "
                        f"{result['errors']:,} errors in {run.wall:.1f} s "
                        f"({run.pps:.1f} pages/s), CPU {run.cpu:.1f} s, "
                        f"server {run.server_pct:.1f} % of a core"
                    )
        if variant == "d" and (args.memory_only or not args.no_memory):
            for way in ("builtin", "ours"):
                result, _ = crawl(
                    site_path, way, servers, workdir, extra=("--memory",), **common
                )
                res.memory[way] = result["memprobe"]
                probe = result["memprobe"]
                log(
                    f"[d] memory {way}: {probe.get('origins', 0):,} cached origins, "
                    f"{fmt(probe.get('per_origin'), 0)} bytes each"
                )
    finally:
        servers.stop()
        res.load_after = os.getloadavg()
    res.seconds = time.monotonic() - t_start
    summarize(res, args)
    return res


# -- summaries ----------------------------------------------------------------------


def _by_way(runs: list[Run], **match: Any) -> dict[str, list[Run]]:
    out: dict[str, list[Run]] = {w: [] for w in WAYS}
    for r in runs:
        if all(getattr(r, k) == v for k, v in match.items()):
            out[r.way].append(r)
    return out


def _medians_vs_off(runs: dict[str, list[Run]], figure: str) -> dict[str, float]:
    """Ours and the built-in: the median of a Run property over the repetitions,
    against robots-off's (a way without the figure is left out)."""
    off = median([getattr(r, figure) for r in runs["off"]])
    ratios: dict[str, float] = {}
    for way in ("ours", "builtin"):
        value = median([getattr(r, figure) for r in runs[way]])
        if value is not None and off:
            ratios[way] = value / off
    return ratios


def _layer_cpu(runs: dict[str, list[Run]], way: str) -> float | None:
    """Median over repetitions of (crawl CPU of this way - robots-off crawl CPU)."""
    off = {r.rep: r.cpu for r in runs["off"]}
    return median([r.cpu - off[r.rep] for r in runs[way] if r.rep in off])


def _check_complete(res: VariantResult, runs: list[Run]) -> None:
    for r in runs:
        out = r.result
        if out["resolved"] != out["expected"] or out["errors"]:
            res.failures.append(
                f"{r.way} rep {r.rep}: {out['resolved']:,} of {out['expected']:,} URLs "
                f"resolved, {out['errors']} errors {out['error_sample'][:2]}"
            )


def _overhead_table(res: VariantResult, title: str) -> Table:
    runs = _by_way(res.runs)
    table = Table(
        title,
        [
            "way",
            "pages/s",
            "wall s",
            "crawl CPU s",
            "robots-layer CPU s",
            "parser s",
            "peak RSS MB",
            "dropped",
            "pages/s vs off",
            "wall vs off",
            "CPU vs off",
            "RSS vs off",
            "server CPU %",
            "wall (CPU) s, each rep",
        ],
    )
    ref = {
        "pps": median([r.pps for r in runs["off"]]),
        "wall": median([r.wall for r in runs["off"]]),
        "cpu": median([r.cpu for r in runs["off"]]),
        "rss": median([r.result["maxrss_mb"] for r in runs["off"]]),
    }
    for way in WAYS:
        rs = runs[way]
        pps = median([r.pps for r in rs])
        wall = median([r.wall for r in rs])
        cpu = median([r.cpu for r in rs])
        rss = median([r.result["maxrss_mb"] for r in rs])
        table.add(
            LABELS[way],
            fmt(pps, 1),
            fmt(wall),
            fmt(cpu),
            "-" if way == "off" else fmt(_layer_cpu(runs, way)),
            "-" if way == "off" else fmt(median([r.parser_s for r in rs]), 3),
            fmt(rss, 1),
            fmt(median([r.result["dropped"] for r in rs]), 0),
            ratio(pps, ref["pps"]),
            ratio(wall, ref["wall"]),
            ratio(cpu, ref["cpu"]),
            ratio(rss, ref["rss"]),
            fmt(median([r.server_pct for r in rs]), 1),
            " / ".join(
                f"{r.wall:.1f} ({r.cpu:.1f})" for r in sorted(rs, key=lambda r: r.rep)
            ),
        )
    table.notes.append(
        "wall minus CPU is time the crawl process waited: for the network, or for a "
        "core when other processes ran"
    )
    return table


def summarize(res: VariantResult, args: argparse.Namespace) -> None:
    v, site = res.variant, res.site
    pages = sum(len(site.expected_pages(o)) for o in site.origins)
    reps = len({r.rep for r in res.runs})
    runs = (
        f"{reps} repetition(s), medians"
        if reps
        else "memory runs only (one crawl each: built-in, ours)"
    )
    res.lines.append(
        f"site: {len(site.origins):,} origins, {pages:,} page URLs, robots.txt files "
        f"drawn from the corpus (seed {site.seed}); {runs}; "
        f"DOWNLOAD_TIMEOUT {args.download_timeout:g} s"
    )
    if v in ("a", "b", "d") and res.runs:
        _check_complete(res, res.runs)
        title = f"({v}) the crawl, three ways: medians of {args.reps} repetition(s)"
        res.tables.append(_overhead_table(res, title))
    if v == "a":
        for r in res.runs:
            if r.result["dropped"]:
                res.failures.append(f"(a) {r.way} rep {r.rep} dropped pages")
        runs = _by_way(res.runs)
        for way, wall in _medians_vs_off(runs, "wall").items():
            label = "target" if way == "ours" else "(info)"
            res.lines.append(
                f"{label} (a) wall <= {A_TARGET}x robots-off, {LABELS[way]}: "
                f"{verdict(wall)} {wall:.3f}x"
            )
        for way, cpu in _medians_vs_off(runs, "cpu").items():
            res.lines.append(
                f"(info) (a) crawl CPU <= {A_TARGET}x robots-off, {LABELS[way]}: "
                f"{verdict(cpu)} {cpu:.3f}x"
            )
    if v == "b":
        _agreement(res)
    if v == "c":
        _blackhole(res, args)
    if v == "d":
        _latency_and_memory(res)


def _agreement(res: VariantResult) -> None:
    """Each way's outcome for every URL against its own parser's decision.

    A *leak* is a URL fetched although the layer's parser disallows it; an
    *overblock* one dropped although the parser allows it. Scrapy's built-in
    middleware leaks by design flaw (see benchmarks/README.md): requests that wait
    for an origin's robots.txt share one Deferred, and awaiting a Deferred consumes
    its result, so every waiter after the first gets ``None`` ("no parser") and is
    allowed. Its leaks are reported; anything else is a check failure.
    """
    from urllib.parse import urlsplit

    site = res.site
    judges: dict[str, Judge] = {}
    origin_of = {f"{o.host}:{site.port}": o for o in site.origins}
    table = Table(
        "(b) each way's outcome for every requested URL against its own parser",
        [
            "way",
            "rep",
            "URLs",
            "fetched",
            "dropped",
            "parser disallows",
            "disagreements",
            "leaks (fetched, parser disallows)",
            "overblocks (dropped, parser allows)",
        ],
    )
    for r in res.runs:
        if r.way == "off":
            continue
        pages, dropped = r.result["page_urls"], set(r.result["dropped_urls"])
        disallowed = 0
        leaks: list[str] = []
        overblocks: list[str] = []
        for url in [*pages, *dropped]:
            origin = origin_of[urlsplit(url).netloc]
            judge = judges.get(origin.robots)
            if judge is None:
                judge = judges[origin.robots] = Judge(site.robots_body(origin))
            allowed = (judge.ours_allows if r.way == "ours" else judge.builtin_allows)(
                url
            )
            disallowed += not allowed
            if allowed and url in dropped:
                overblocks.append(url)
            elif not allowed and url not in dropped:
                leaks.append(url)
        r.result["leaks"] = len(leaks)
        r.result["overblocks"] = len(overblocks)
        table.add(
            LABELS[r.way],
            r.rep,
            f"{len(pages) + len(dropped):,}",
            f"{len(pages):,}",
            f"{len(dropped):,}",
            f"{disallowed:,}",
            len(leaks) + len(overblocks),
            len(leaks),
            len(overblocks),
        )
        if overblocks or (leaks and r.way == "ours"):
            res.failures.append(
                f"(b) {r.way} rep {r.rep}: {len(leaks)} leaks, {len(overblocks)} "
                f"overblocks, e.g. {(leaks + overblocks)[:3]}"
            )
        if not dropped:
            res.failures.append(f"(b) {r.way} rep {r.rep}: nothing dropped")
    table.notes.append(
        "the built-in's leaks are requests that waited for their origin's robots.txt: "
        "they share one Deferred and only the first waiter receives the parser (the "
        "others get None and are allowed); see benchmarks/README.md"
    )
    res.tables.append(table)


def _blackhole(res: VariantResult, args: argparse.Namespace) -> None:
    site = res.site
    dead = next(o for o in site.origins if o.dead)
    healthy = sum(len(site.expected_pages(o)) for o in site.origins if not o.dead)
    table = Table(
        TITLES["c"].format(n=len(site.origins))
        + f" (dead: {'whole origin' if dead.dead == 'origin' else 'robots.txt only'})",
        [
            "way",
            "healthy pages/s, dead origin present",
            "without it",
            "ratio",
            "last healthy page s (present)",
            "(without)",
            "server CPU %",
        ],
    )
    for way in WAYS:
        with_dead = [r for r in res.runs if r.way == way and not r.exclude_dead]
        without = [r for r in res.runs if r.way == way and r.exclude_dead]
        for r in with_dead + without:
            if r.result["healthy_pages"] != healthy:
                res.failures.append(
                    f"(c) {way} rep {r.rep}: {r.result['healthy_pages']} of "
                    f"{healthy} healthy pages"
                )
        a = median([r.healthy_pps for r in with_dead])
        b = median([r.healthy_pps for r in without])
        table.add(
            LABELS[way],
            fmt(a, 1),
            fmt(b, 1),
            ratio(a, b),
            fmt(median([r.result["t_last_healthy"] for r in with_dead])),
            fmt(median([r.result["t_last_healthy"] for r in without])),
            fmt(median([r.server_pct for r in with_dead + without]), 1),
        )
        if way == "ours" and a is not None and b:
            verdict = "PASS" if a / b >= 0.9 else "MISS"
            res.lines.append(
                f"target (c) healthy-origin pages/s >= 0.9x the run without the dead "
                f"origin, {LABELS[way]}: {verdict} {a / b:.3f}x"
            )
    table.notes.append(
        f"healthy pages/s = {healthy:,} healthy pages / time from spider_opened to "
        "the last healthy page; each crawl is closed once every healthy page is in"
    )
    table.notes.append(
        f"timeouts: DOWNLOAD_TIMEOUT {args.download_timeout:g} s for every way (the "
        "built-in's robots.txt request also goes through RetryMiddleware: 3 attempts); "
        "scrapy-robots-std defaults: ROBOTS_STD_FETCH_TIMEOUT 15 s, 2 retries, "
        "ROBOTS_STD_MAX_WAIT 60 s"
    )
    res.tables.append(table)


def _latency_and_memory(res: VariantResult) -> None:
    if res.runs:
        _latency(res)
    if res.memory:
        _memory(res)


def _latency(res: VariantResult) -> None:
    runs = _by_way(res.runs)
    table = Table(
        "(d) per origin: time to its first page",
        [
            "way",
            "from first scheduled: median s",
            "p95 s",
            "max s",
            "from first contact: median s",
            "p95 s",
            "max s",
            "origins",
        ],
    )
    for way in WAYS:
        lat = [r.result["latency"] for r in runs[way]]
        contact = [r.result["latency_contact"] for r in runs[way]]
        table.add(
            LABELS[way],
            *[fmt(median([x[k] for x in lat]), 3) for k in ("median", "p95", "max")],
            *[
                fmt(median([x[k] for x in contact]), 3)
                for k in ("median", "p95", "max")
            ],
            fmt(median([x["n"] for x in lat]), 0),
        )
    table.notes.append(
        "first scheduled: the origin's first request as the spider yields it "
        "(request_scheduled); first contact: the origin's first request, robots.txt "
        "or page, reaching its downloader slot (request_reached_downloader); medians "
        "over repetitions of each crawl's median, p95 and max over origins"
    )
    res.tables.append(table)


def _memory(res: VariantResult) -> None:
    mem = Table(
        "(d) memory retained by the robots.txt cache (tracemalloc, separate run)",
        ["way", "cached origins", "freed bytes", "bytes per origin", "vs built-in"],
    )
    ref = res.memory.get("builtin", {}).get("per_origin")
    for way in ("builtin", "ours"):
        probe = res.memory.get(way, {})
        per = probe.get("per_origin")
        mem.add(
            LABELS[way],
            f"{probe.get('origins', 0):,}",
            f"{probe.get('freed', 0):,}",
            fmt(per, 0),
            ratio(per, ref),
        )
        top = ", ".join(
            f"{Path(x['file']).name} {x['freed']:,}"
            for x in probe.get("by_file", [])[:4]
        )
        if top:
            mem.notes.append(f"{LABELS[way]}, freed by file: {top}")
        if probe.get("origins") != len(res.site.origins):
            res.failures.append(
                f"(d) memory {way}: {probe.get('origins')} cached origins, expected "
                f"{len(res.site.origins)}"
            )
    ours = res.memory.get("ours", {}).get("per_origin")
    if ours is not None and ref:
        verdict = "PASS" if ours / ref <= 0.3 else "MISS"
        res.memory_lines.append(
            f"target (d) memory per cached origin <= 0.3x the built-in's: "
            f"{verdict} {ours / ref:.3f}x"
        )
    res.memory_tables.append(mem)


# -- output -------------------------------------------------------------------------


def variant_text(res: VariantResult, markdown: bool, part: str = "all") -> str:
    """The variant's report; ``part``: "all", "main" or "memory" ((d)'s memory runs)."""
    site = res.site
    title = TITLES[res.variant].format(n=len(site.origins))
    if part == "memory":
        title = f"(d) {len(site.origins):,} origins: memory per cached origin"
    lines = [f"### {title}" if markdown else f"== {title} =="]
    info = [
        f"date: {res.started}; this variant took {res.seconds / 60:.1f} min",
        "load average (1/5/15 min): before "
        + report.load_text(res.load_before)
        + ", after "
        + report.load_text(res.load_after),
    ]
    tables: list[Table] = []
    failures = res.failures
    if part in ("all", "main"):
        info += res.lines
        tables += res.tables
    if part == "memory":
        info += res.lines[:1]  # the site line
    if part in ("all", "memory"):
        info += res.memory_lines
        tables += res.memory_tables
    if part != "all":
        memory_failure = [f.startswith("(d) memory") for f in failures]
        failures = [
            f
            for f, is_mem in zip(failures, memory_failure, strict=True)
            if is_mem == (part == "memory")
        ]
    lines.append("")
    lines += [f"* {x}" for x in info] if markdown else info
    for table in tables:
        lines.append("")
        lines.append(table.markdown() if markdown else table.text())
    if failures:
        lines.append("")
        lines += [f"* CHECK FAILED: {f}" for f in failures]
    return "\n".join(lines)


_RUN_KEYS = (
    "expected",
    "resolved",
    "pages",
    "dropped",
    "errors",
    "leaks",
    "overblocks",
    "healthy_pages",
    "healthy_expected",
    "wall",
    "cpu",
    "maxrss_mb",
)


def json_summary(results: list[VariantResult]) -> dict[str, Any]:
    """What each run produced, for scripts and tests (without the URL lists)."""
    return {
        res.variant: {
            "failures": res.failures,
            "runs": [
                {
                    "way": r.way,
                    "rep": r.rep,
                    "exclude_dead": r.exclude_dead,
                    "server_cpu": r.server_cpu,
                    **{k: r.result[k] for k in _RUN_KEYS if k in r.result},
                }
                for r in res.runs
            ],
            "memory": {
                way: {k: v for k, v in probe.items() if k != "by_file"}
                for way, probe in res.memory.items()
            },
        }
        for res in results
    }


def _marker(name: str) -> tuple[str, str]:
    return f"<!-- crawl:{name} -->", f"<!-- /crawl:{name} -->"


def write_markdown(path: Path, command: str, results: list[VariantResult]) -> None:
    """Put each variant's block between its markers in ``path`` (other text kept)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if SECTION_HEAD not in text:
        text = text.rstrip("\n") + f"\n\n{SECTION_HEAD}\n\n"
        for name in BLOCKS:
            begin, end = _marker(name)
            text += f"{begin}\n{end}\n\n"
    blocks = {
        "head": "\n".join(
            [
                (
                    "Each variant's block below names the command that wrote it "
                    "(run from the repository root); a block is rewritten only when "
                    "its variant runs. Last run on:"
                ),
                "",
                *[f"* {x}" for x in report.machine_lines()],
            ]
        )
    }
    for res in results:
        parts = {res.variant: "all"}
        if res.variant == "d":
            parts = {}
            if res.runs:
                parts["d"] = "main"
            if res.memory:
                parts["d-memory"] = "memory"
        for name, part in parts.items():
            text_of = variant_text(res, True, part)
            blocks[name] = f"Command: `{command}`\n\n" + text_of
    for name, block in blocks.items():
        text = put_block(text, name, block)
    path.write_text(text, encoding="utf-8")


def put_block(text: str, name: str, block: str) -> str:
    """``text`` with ``block`` between the markers of ``name`` (one of BLOCKS); a
    block not there yet goes after the block before it, or at the end."""
    begin, end = _marker(name)
    start, stop = text.find(begin), text.find(end)
    if start >= 0 and stop >= 0:
        return text[: start + len(begin)] + f"\n{block}\n" + text[stop:]
    previous = BLOCKS[: BLOCKS.index(name)]
    after = max((text.find(_marker(p)[1]) for p in previous), default=-1)
    new = f"{begin}\n{block}\n{end}\n"
    if after < 0:
        return text.rstrip("\n") + f"\n\n{new}"
    cut = text.index("\n", after) + 1
    return text[:cut] + "\n" + new + text[cut:]


def verdict(ratio: float) -> str:
    return "PASS" if ratio <= A_TARGET else "MISS"


def _sizes(values: list[str], smoke: bool) -> dict[str, tuple[int, int]]:
    sizes = dict(SMOKE_SIZES if smoke else SIZES)
    for value in values:
        name, _, dims = value.partition("=")
        origins, _, pages = dims.partition("x")
        if name not in SIZES or not origins.isdigit() or not pages.isdigit():
            raise SystemExit(f"--size: expected e.g. a=500x50, got {value!r}")
        sizes[name] = (int(origins), int(pages))
    return sizes


def _shown(argv: list[str]) -> list[str]:
    """The command line without options that do not change the figures."""
    shown: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in ("--workdir", "--json"):
            skip = True
        elif not arg.startswith(("--workdir=", "--json=")):
            shown.append(arg)
    return shown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.crawl", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--variants", default=None, help="e.g. a,b,c,d (default all)")
    parser.add_argument("--reps", type=int, default=None, help="default 3 (smoke: 1)")
    parser.add_argument("--smoke", action="store_true", help="a few origins, 1 rep")
    parser.add_argument("--size", action="append", default=[], metavar="V=NxP")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument(
        "--download-timeout", type=float, default=None, help="default 10 (smoke: 2)"
    )
    parser.add_argument("--dead", choices=("origin", "robots"), default="origin")
    parser.add_argument(
        "--no-memory", action="store_true", help="(d) without the memory runs"
    )
    parser.add_argument(
        "--memory-only", action="store_true", help="(d): only the memory runs"
    )
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument("--workdir", type=Path, default=None, help="keep files here")
    parser.add_argument(
        "--json", type=Path, default=None, help="also write a summary of every run"
    )
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    default_variants = "a,b,d" if args.smoke else "a,b,c,d"
    if args.download_timeout is None:
        args.download_timeout = 2.0 if args.smoke else 10.0
    variants = (args.variants or default_variants).split(",")
    if any(v not in SIZES for v in variants):
        parser.error(f"--variants: choose from {','.join(SIZES)}")
    args.reps = args.reps or (1 if args.smoke else 3)
    args.sizes = _sizes(args.size, args.smoke)
    command = shlex.join([".venv/bin/python", "-m", "benchmarks.crawl", *_shown(argv)])
    for line in report.machine_lines():
        log(line)
    results: list[VariantResult] = []
    with tempfile.TemporaryDirectory(prefix="crawl-bench-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for variant in variants:
            res = run_variant(variant, args, workdir)
            results.append(res)
            print(variant_text(res, markdown=False), flush=True)
            print(flush=True)
    if args.markdown is not None:
        write_markdown(args.markdown, command, results)
        log(f"wrote {args.markdown}")
    if args.json is not None:
        args.json.write_text(
            json.dumps(json_summary(results), indent=1), encoding="utf-8"
        )
    failures = [f for r in results for f in r.failures]
    if failures:
        print(f"{len(failures)} check(s) failed", flush=True)
        return 1
    print("all checks passed" + (" (smoke)" if args.smoke else ""), flush=True)
    return 0
