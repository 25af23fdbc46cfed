"""Variant (a)'s overhead in instructions, which the machine's speed does not change.

    python -m benchmarks.crawl.instructions [--origins 20] [--pages 50] [--reps 2]
        [--markdown benchmarks/RESULTS.md]

The wall and CPU times of (a) move by up to 25 % between identical crawls on a
machine whose speed drifts, more than the 2 % the target allows. Instructions
executed do not: each crawl here runs under valgrind's callgrind tool, which counts
the instructions the crawl process executes, whatever else the machine does. The
site is (a)'s at a smaller scale (the same 50 pages per origin and links per page,
fewer origins): under callgrind a crawl runs about 50 times slower.

Per way: the whole crawl process, minus the same process opening and closing the
spider without requesting anything (Python, Scrapy and the layer imported and set
up), which leaves the crawl's own instructions. The probes of the timing runs
(sampler, timers) are off (``crawl.py --bare``); ``PYTHONHASHSEED`` is fixed.
Instructions are not time: a cache miss costs more than an add. But the layer adds
Python code to the same interpreter doing the same kind of work, so the ratio of
instructions is a close, repeatable stand-in for the ratio of CPU time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from benchmarks.crawl import report
from benchmarks.crawl.run import (
    A_TARGET,
    LABELS,
    WAYS,
    Servers,
    _free_port,
    _shown,
    crawl,
    log,
    put_block,
    verdict,
)
from benchmarks.crawl.site import REPO_ROOT, build

_TOTALS = re.compile(rb"^(?:totals|summary):\s*(\d+)", re.MULTILINE)


@dataclass
class Figures:
    started: str
    minutes: float
    origins: int
    pages: int
    #: per way: the process without requests
    empty: dict[str, int]
    #: per way, per repetition: the whole crawl process
    whole: dict[str, list[int]]


def instructions(out_file: Path) -> int:
    """The instruction count callgrind wrote (its ``totals:`` line)."""
    found = _TOTALS.findall(out_file.read_bytes())
    if not found:
        raise RuntimeError(f"no instruction total in {out_file}")
    return int(found[-1])


def counted_crawl(
    site_path: Path, way: str, servers: Servers, workdir: Path, *, empty: bool
) -> tuple[int, dict[str, object]]:
    """One crawl (or, with ``empty``, the process without its requests) under
    callgrind: its instruction count and crawl.py's result."""
    out_file = workdir / f"callgrind-{way}-{time.monotonic_ns()}.out"
    wrapper = (
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out_file}",
        "--dump-line=no",
        "--compress-strings=no",
    )
    extra = ("--bare", "--no-requests") if empty else ("--bare",)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    result, _ = crawl(
        site_path,
        way,
        servers,
        workdir,
        smoke=False,
        # Under callgrind the crawler works slowly; the server answers at once.
        download_timeout=600.0,
        timeout=4 * 3600.0,
        extra=extra,
        wrapper=wrapper,
        env=env,
    )
    count = instructions(out_file)
    out_file.unlink()
    return count, result


def _check(way: str, result: dict[str, object], expected: int) -> None:
    if result["pages"] != expected or result["dropped"] or result["errors"]:
        raise RuntimeError(
            f"{way}: {result['pages']} pages of {expected}, "
            f"{result['dropped']} dropped, {result['errors']} errors"
        )


def measure(args: argparse.Namespace, workdir: Path) -> Figures:
    site = build("a", origins=args.origins, pages=args.pages, port=_free_port())
    expected = sum(len(site.expected_pages(o)) for o in site.origins)
    site_path = workdir / "site-a.json"
    site.dump(site_path)
    servers = Servers(site_path, len(site.origins))
    servers.start()
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    t0 = time.monotonic()
    empty: dict[str, int] = {}
    whole: dict[str, list[int]] = {way: [] for way in WAYS}

    def one(rep: int, way: str) -> None:
        count, result = counted_crawl(site_path, way, servers, workdir, empty=rep == 0)
        if rep == 0:
            empty[way] = count
            log(f"[a-instr] {way:7} without requests: {count / 1e9:.3f} G")
            return
        _check(way, result, expected)
        whole[way].append(count)
        log(
            f"[a-instr] rep {rep}/{args.reps} {way:7}: {expected:,} pages, "
            f"{count / 1e9:.3f} G instructions"
        )

    # Counts do not depend on what else runs, so crawls run side by side (--jobs).
    runs = [(rep, way) for rep in range(args.reps + 1) for way in WAYS]
    try:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for future in [pool.submit(one, rep, way) for rep, way in runs]:
                future.result()
    finally:
        servers.stop()
    return Figures(
        started=started,
        minutes=(time.monotonic() - t0) / 60,
        origins=len(site.origins),
        pages=expected,
        empty=empty,
        whole=whole,
    )


def text(figures: Figures, markdown: bool) -> str:
    empty, whole = figures.empty, figures.whole
    crawl_only = {
        way: [count - empty[way] for count in counts] for way, counts in whole.items()
    }
    medians = {way: statistics.median(c) for way, c in crawl_only.items()}
    base = medians["off"]
    table = report.Table(
        "(a) instructions executed by the crawl process (callgrind), medians",
        [
            "way",
            "crawl G instr",
            "vs off",
            "each rep, G",
            "spread %",
            "without requests, G",
            "per page, M instr",
        ],
    )
    for way in WAYS:
        counts = crawl_only[way]
        spread = 100 * (max(counts) - min(counts)) / medians[way]
        table.add(
            LABELS[way],
            f"{medians[way] / 1e9:.3f}",
            f"{medians[way] / base:.4f}x",
            " / ".join(f"{c / 1e9:.3f}" for c in counts),
            f"{spread:.2f}",
            f"{empty[way] / 1e9:.3f}",
            f"{medians[way] / figures.pages / 1e6:.2f}",
        )
    table.notes.append(
        "crawl: the whole process minus the same process without requests (start-up, "
        "imports, spider open and close); spread: (max - min) / median over the "
        "repetitions of one way"
    )
    per_origin = figures.pages // figures.origins - 1
    lines = [
        f"date: {figures.started}; took {figures.minutes:.1f} min",
        (
            f"site: variant (a) at {figures.origins} origins x (/ + {per_origin} "
            f"pages) = {figures.pages:,} pages; {len(whole['off'])} repetition(s); "
            "PYTHONHASHSEED=0; probes off"
        ),
    ]
    for way in ("ours", "builtin"):
        ratio = medians[way] / base
        lines.append(
            f"(a) instructions, {LABELS[way]}: {ratio:.4f}x robots-off's "
            f"({verdict(ratio)} against {A_TARGET}x; info: the target is judged on "
            "wall time)"
        )
    if markdown:
        body = "\n".join(f"* {line}" for line in lines)
        return f"### (a) in instructions\n\n{body}\n\n{table.markdown()}"
    return "== (a) in instructions ==\n\n" + "\n".join(lines) + "\n\n" + table.text()


def write_markdown(path: Path, command: str, block: str) -> None:
    """Put the block between its markers in ``path`` (after variant (a)'s)."""
    text = put_block(
        path.read_text(encoding="utf-8"),
        "a-instructions",
        f"Command: `{command}`\n\n{block}",
    )
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--origins", type=int, default=20)
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument(
        "--jobs", type=int, default=min(2, os.cpu_count() or 1), help="crawls at once"
    )
    args = parser.parse_args(argv)
    if args.origins < 2 or args.pages < 2 or args.reps < 1 or args.jobs < 1:
        parser.error("need at least 2 origins, 2 pages, 1 repetition and 1 job")
    if shutil.which("valgrind") is None:
        print(
            "valgrind is not installed (Debian: apt-get install valgrind); "
            "it counts the instructions",
            file=sys.stderr,
        )
        return 2
    for line in report.machine_lines():
        log(line)
    if args.workdir is None:
        with tempfile.TemporaryDirectory(prefix="robots-instr-") as tmp:
            figures = measure(args, Path(tmp))
    else:
        args.workdir.mkdir(parents=True, exist_ok=True)
        figures = measure(args, args.workdir)
    print(text(figures, markdown=False), flush=True)
    if args.markdown is not None:
        shown = _shown(argv if argv is not None else sys.argv[1:])
        command = " ".join(
            [".venv/bin/python -m benchmarks.crawl.instructions", *shown]
        )
        write_markdown(args.markdown, command, text(figures, markdown=True))
        log(f"wrote {args.markdown}")
    return 0


if __name__ == "__main__":
    os.chdir(REPO_ROOT)
    sys.exit(main())
