"""The real robots.txt files the corpus tests read, full or as a committed subset.

* The full corpus: ``../shared/corpus`` beside the repository, 4,231 robots.txt
  bodies (``robots/<site>``) and 30 URLs per site (``urls.txt``, ``site<TAB>url``),
  described in its README.md.  It is optional: the benchmarks want it, the tests do
  not.
* The subset: ``tests/data/corpus_subset.tar.xz``, a few hundred of those files
  chosen by the rules in :func:`select` (the hand-checked sites, the extremes, and a
  few files of every shape below), with their lines of ``urls.txt`` and a
  ``selection.json`` that says why each file is in and holds the subset's checksum.
  ``tar tJf``/``tar xJf`` show it; the bytes are the corpus's, unchanged.

:func:`load` gives the full corpus when ``../shared/corpus`` exists and the subset
otherwise; ``ROBOTS_STD_CORPUS=subset`` (or ``=full``, which then must exist)
chooses.  After changing the rules, or to refresh the subset from the corpus::

    .venv/bin/python -m tests.helpers.corpus --write-subset [--corpus ../shared/corpus]

The selection reads bytes and text only, never this package's parser, so that a
parser change cannot change which files are in: ``tests/test_corpus.py`` checks,
whenever the full corpus is present, that the committed subset is exactly what
:func:`select` picks from it, byte for byte.  The output is deterministic (sorted
members, fixed metadata, a fixed xz preset).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import io
import json
import lzma
import os
import re
import sys
import tarfile
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

ROOT = Path(__file__).resolve().parents[2]
FULL_CORPUS = ROOT.parent / "shared" / "corpus"
SUBSET = ROOT / "tests" / "data" / "corpus_subset.tar.xz"
#: The committed file may not grow past this (issue 17: at most 2 MB).
SUBSET_MAX_BYTES = 2_000_000
FULL_CORPUS_FILES = 4231
URLS_PER_SITE = 30

# -- the selection ------------------------------------------------------------------

#: Sites the tests name (tests/test_corpus.py's hand-checked answers and edge files),
#: and www.audiusa.com, whose URLs include ``/robots.txt?...``.
NAMED = (
    "cdbaby.com",
    "en.wikipedia.org",
    "stackoverflow.com",
    "store.usps.com",
    "twitter.com",
    "www.abr.business.gov.au",
    "www.audiusa.com",
    "www.cma-cgm.com",
    "www.google.com",
    "www.hermes.com",
    "www.keio.ac.jp",
    "www.nytimes.com",
    "www.reddit.com",
)
#: The largest files: the three past the 500 KiB cut and the three just below it.
LARGEST = 6
#: The top files by number of groups, of Allow/Disallow lines, of Sitemap lines, and
#: by longest line.
MOST = {"groups": 6, "rules": 4, "sitemaps": 3, "longest-line": 3}
#: Files of each shape (below) beyond the named and extreme ones, in the salted hash
#: order, each at most SAMPLE_MAX_BYTES long; shapes with fewer files give them all.
PER_SHAPE = 6
#: Shapes rare enough to keep every file of (at most 12 each in the corpus).
EVERY_FILE_OF = ("clean-param", "cr-only", "misspelt-field", "not-utf-8", "utf-16")
#: Then files of any shape, in the same order, up to this many in all.
TOTAL = 400
SAMPLE_MAX_BYTES = 64 * 1024
SALT = b"scrapy-robots-std corpus subset 1\0"

_LINE_END = re.compile(rb"\r\n|\r|\n")
_FIELD = re.compile(rb"^[ \t]*([A-Za-z][A-Za-z _-]*?)[ \t]*:[ \t]*(.*)$")
_NO_COLON = re.compile(rb"^[ \t]*(user-?agent|allow|disallow)[ \t]+/?\S", re.IGNORECASE)
_DIRECTIVES = ("user-agent", "allow", "disallow", "sitemap", "crawl-delay")
_KNOWN = (*_DIRECTIVES, "host", "request-rate", "clean-param", "noindex", "visit-time")
_RULES = ("allow", "disallow")
_USUAL_SPELLINGS = (b"User-agent", b"User-Agent", b"Allow", b"Disallow")


@dataclass(frozen=True)
class _Line:
    field: str  # lower-cased field name; "" for a blank line, "?" for anything else
    value: bytes  # the value, comment and surrounding blanks removed
    raw: bytes


def _lines(body: bytes) -> list[_Line]:
    out = []
    for raw in _LINE_END.split(body):
        text = raw.split(b"#", 1)[0].strip()
        match = _FIELD.match(text)
        if match:
            field = match.group(1).decode("ascii").lower()
            out.append(_Line(field, match.group(2).strip(), raw))
        else:
            out.append(_Line("" if not text else "?", text, raw))
    return out


def _misspelt(field: str) -> bool:
    if field in _KNOWN:
        return False
    return bool(difflib.get_close_matches(field, _DIRECTIVES, n=1, cutoff=0.75))


def _looks_like_html(body: bytes) -> bool:
    head = body[:4096].lower()
    return b"<html" in head or b"<!doctype" in head


def shapes(body: bytes, lines: list[_Line] | None = None) -> set[str]:
    """The shapes one body has (text-level facts, no robots.txt parser involved).

    ``lines`` is ``_lines(body)`` when the caller has it already.
    """
    found: set[str] = set()
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        found.add("not-utf-8")
    if body[:2] in (b"\xff\xfe", b"\xfe\xff"):
        found.add("utf-16")
    if body.startswith(b"\xef\xbb\xbf"):
        found.add("utf-8-bom")
    if not body.strip():
        found.add("empty")
        return found
    if b"\r" in body and b"\n" not in body:
        found.add("cr-only")
    if b"\r\n" in body:
        found.add("crlf")
    if not body.endswith((b"\n", b"\r")):
        found.add("no-final-line-end")
    html = _looks_like_html(body)
    if html:
        found.add("html")
    lines = _lines(body) if lines is None else lines
    fields = {line.field for line in lines}
    if "user-agent" not in fields:
        found.add("no-user-agent")
    for name in ("crawl-delay", "sitemap", "request-rate", "host", "clean-param"):
        if name in fields:
            found.add(name)
    if not html and any(_misspelt(field) for field in fields):
        found.add("misspelt-field")
    if any(_NO_COLON.match(line.raw) for line in lines):
        found.add("rule-without-colon")
    if any(line.field in _RULES and line.raw[:1] in b" \t" for line in lines):
        found.add("indented-rule")
    if any(
        line.field in ("user-agent", "allow", "disallow")
        and line.raw.split(b":", 1)[0].strip() not in _USUAL_SPELLINGS
        for line in lines
    ):
        found.add("unusual-field-spelling")  # "DISALLOW", "user-agent", "User agent"
    found |= _group_shapes(lines)
    return found


def _group_shapes(lines: list[_Line]) -> set[str]:
    """Shapes of the records, where 1994's reading and RFC 9309's differ most."""
    found: set[str] = set()
    seen_agent = False
    previous = ""  # the last non-blank field
    blank_since_rule = False  # a blank line since the group's last rule
    blank_after_agent = False
    agents_in_group: list[bytes] = []
    groups = 0
    star_groups = 0
    group_fields: set[str] = set()
    for line in lines:
        if line.field == "":
            if previous in _RULES:
                blank_since_rule = True
            elif previous == "user-agent":
                blank_after_agent = True
            continue
        if line.field == "user-agent":
            if previous != "user-agent":
                groups += 1
                agents_in_group = []
                group_fields = set()
                blank_after_agent = False
            agents_in_group.append(line.value)
            if len(agents_in_group) == 2:
                found.add("several-agents-one-group")
            agent = line.value.lower()
            if agent == b"*":
                star_groups += 1
                if star_groups == 2:
                    found.add("two-star-groups")
            elif agent.endswith(b"*"):
                found.add("agent-with-star-suffix")
            if b"/" in agent or b" " in agent:
                found.add("agent-with-version-or-space")
            if agent in (b"googlebot", b"googlebot*"):
                found.add("googlebot-group")
            if agent == b"bingbot":
                found.add("bingbot-group")
            seen_agent = True
            blank_since_rule = False
        elif line.field in _RULES:
            if not seen_agent:
                found.add("rule-before-user-agent")
            if blank_since_rule:
                found.add("rule-after-blank-line")
            if blank_after_agent and previous == "user-agent":
                found.add("blank-line-after-user-agent")
            group_fields.add(line.field)
            if len(group_fields) == 2:
                found.add("allow-and-disallow-in-one-group")
            path = line.value
            if line.field == "disallow" and not path:
                found.add("empty-disallow")
            if b"*" in path.rstrip(b"*"):
                found.add("wildcard-inside-pattern")
            if path.endswith(b"$"):
                found.add("dollar-anchor")
            if re.search(rb"%[0-9A-Fa-f]{2}", path):
                found.add("percent-encoded-rule")
            if any(byte > 0x7F for byte in path):
                found.add("non-ascii-rule")
            if path and not path.startswith((b"/", b"*")):
                found.add("rule-not-starting-with-slash")
        previous = line.field
    if seen_agent and star_groups == 0:
        found.add("no-star-group")
    return found


def _counts(lines: list[_Line]) -> dict[str, int]:
    groups = sum(
        1
        for before, line in zip([_Line("", b"", b""), *lines], lines, strict=False)
        if line.field == "user-agent" and before.field != "user-agent"
    )
    return {
        "groups": groups,
        "rules": sum(1 for line in lines if line.field in _RULES),
        "sitemaps": sum(1 for line in lines if line.field == "sitemap"),
        "longest-line": max((len(line.raw) for line in lines), default=0),
    }


def _order(name: str) -> bytes:
    return hashlib.sha256(SALT + name.encode()).digest()


def _survey(
    bodies: Mapping[str, bytes],
) -> tuple[dict[str, set[str]], dict[str, dict[str, int]]]:
    """Each body's shapes and counts, splitting it into lines once (the corpus test
    reads all 4,231 files; this is most of its time)."""
    all_shapes: dict[str, set[str]] = {}
    counts: dict[str, dict[str, int]] = {}
    for name, body in bodies.items():
        lines = _lines(body)
        all_shapes[name] = shapes(body, lines)
        counts[name] = _counts(lines)
    return all_shapes, counts


def select(bodies: Mapping[str, bytes]) -> dict[str, list[str]]:
    """The subset of ``bodies`` (name -> bytes): name -> why it is in, sorted by name."""
    return _select(bodies, *_survey(bodies))


def _select(
    bodies: Mapping[str, bytes],
    all_shapes: Mapping[str, set[str]],
    counts: Mapping[str, dict[str, int]],
) -> dict[str, list[str]]:
    reasons: dict[str, list[str]] = defaultdict(list)
    for name in NAMED:
        if name in bodies:
            reasons[name].append("named")
    by_size = sorted(bodies, key=lambda name: (-len(bodies[name]), name))
    for name in by_size[:LARGEST]:
        reasons[name].append("largest")
    for key, top in MOST.items():
        for name in sorted(bodies, key=lambda n: (-counts[n][key], n))[:top]:
            reasons[name].append(f"most-{key}")
    hashed = sorted(bodies, key=_order)
    sample = [name for name in hashed if len(bodies[name]) <= SAMPLE_MAX_BYTES]
    by_shape: dict[str, list[str]] = defaultdict(list)
    for name in hashed:
        for shape in all_shapes[name]:
            by_shape[shape].append(name)
    for name in hashed:
        if name.endswith("_443"):
            by_shape["port-443-name"].append(name)
    for shape in sorted(by_shape):
        names = by_shape[shape]
        if shape in EVERY_FILE_OF:
            for name in names:
                reasons[name].append(shape)
            continue
        small = [name for name in names if len(bodies[name]) <= SAMPLE_MAX_BYTES]
        # A shape's files already in count towards its quota.
        have = sum(1 for name in names if name in reasons)
        for name in small:
            if have >= PER_SHAPE:
                break
            if name not in reasons:
                have += 1
            reasons[name].append(shape)
    for name in sample:
        if len(reasons) >= TOTAL:
            break
        if name not in reasons:
            reasons[name].append("sample")
    return {name: reasons[name] for name in sorted(reasons)}


# -- reading ------------------------------------------------------------------------


@dataclass(frozen=True)
class Corpus:
    """Bodies (sorted by site name) and each site's URLs."""

    where: str
    full: bool
    bodies: tuple[tuple[str, bytes], ...]
    urls: Mapping[str, tuple[str, ...]]

    def body(self, name: str) -> bytes:
        return self._by_name[name]

    @cached_property
    def _by_name(self) -> dict[str, bytes]:
        return dict(self.bodies)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.bodies)


def _urls_from(lines: Iterable[str]) -> dict[str, tuple[str, ...]]:
    by_site: dict[str, list[str]] = defaultdict(list)
    for line in lines:
        site, _, url = line.rstrip("\n").partition("\t")
        if url:
            by_site[site].append(url)
    return {site: tuple(urls) for site, urls in by_site.items()}


def read_full(root: Path = FULL_CORPUS) -> Corpus:
    robots = root / "robots"
    bodies = tuple(
        (path.name, path.read_bytes())
        for path in sorted(robots.iterdir())
        if path.is_file()
    )
    with (root / "urls.txt").open(encoding="utf-8") as fh:
        urls = _urls_from(fh)
    return Corpus(str(root), True, bodies, urls)


def read_subset(path: Path = SUBSET) -> tuple[Corpus, dict[str, object]]:
    """The subset and its ``selection.json``."""
    bodies: dict[str, bytes] = {}
    urls_text = ""
    selection: dict[str, object] = {}
    with tarfile.open(path, mode="r:xz") as tar:
        for member in tar.getmembers():
            fh = tar.extractfile(member)
            if fh is None:
                continue
            data = fh.read()
            if member.name.startswith("robots/"):
                bodies[member.name.removeprefix("robots/")] = data
            elif member.name == "urls.txt":
                urls_text = data.decode("utf-8")
            elif member.name == "selection.json":
                selection = json.loads(data)
    corpus = Corpus(
        str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path),
        False,
        tuple(sorted(bodies.items())),
        _urls_from(urls_text.splitlines()),
    )
    return corpus, selection


def full_corpus_present(root: Path = FULL_CORPUS) -> bool:
    return (root / "robots").is_dir() and (root / "urls.txt").is_file()


@lru_cache(maxsize=1)
def load() -> Corpus:
    """The full corpus if present (or ROBOTS_STD_CORPUS=full), else the subset."""
    choice = os.environ.get("ROBOTS_STD_CORPUS", "auto")
    if choice not in ("auto", "full", "subset"):
        raise ValueError(f"ROBOTS_STD_CORPUS={choice!r}: use auto, full or subset")
    if choice == "full" or (choice == "auto" and full_corpus_present()):
        if not full_corpus_present():
            raise FileNotFoundError(
                f"ROBOTS_STD_CORPUS=full but no corpus at {FULL_CORPUS}"
            )
        return read_full()
    return read_subset()[0]


def checksum(bodies: Iterable[tuple[str, bytes]]) -> str:
    """SHA-256 over the sorted ``name\\0bytes\\0`` records (the corpus README's)."""
    h = hashlib.sha256()
    for name, body in sorted(bodies):
        h.update(name.encode() + b"\0" + body + b"\0")
    return h.hexdigest()


# -- writing ------------------------------------------------------------------------


def subset_members(full: Corpus) -> dict[str, bytes]:
    """The subset's files (tar member name -> bytes), as --write-subset stores them."""
    bodies = dict(full.bodies)
    all_shapes, counts = _survey(bodies)
    chosen = _select(bodies, all_shapes, counts)
    urls_lines = [
        f"{site}\t{url}\n" for site in chosen for url in full.urls.get(site, ())
    ]
    picked = [(name, bodies[name]) for name in chosen]
    selection = {
        # The label the committed archive holds (the module's name when it was made).
        "about": (
            "tests/corpus_data.py --write-subset: files of ../shared/corpus and their"
            " urls.txt lines; 'files' says why each is in"
        ),
        "files_in_full_corpus": len(bodies),
        "files": chosen,
        "bytes": sum(len(body) for _, body in picked),
        "sha256": checksum(picked),
        "urls": len(urls_lines),
        "shapes": {
            shape: f"{sum(1 for n in chosen if shape in all_shapes[n])}"
            f" of {sum(1 for n in bodies if shape in all_shapes[n])}"
            for shape in sorted(set().union(*all_shapes.values()))
        },
    }
    members = {f"robots/{name}": body for name, body in picked}
    members["urls.txt"] = "".join(urls_lines).encode("utf-8")
    members["selection.json"] = (
        json.dumps(selection, indent=1, sort_keys=True) + "\n"
    ).encode("utf-8")
    return members


def _tar_xz(members: Mapping[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name in sorted(members):
            info = tarfile.TarInfo(name)
            info.size = len(members[name])
            info.mode = 0o644
            info.mtime = 0
            tar.addfile(info, io.BytesIO(members[name]))
    return lzma.compress(raw.getvalue(), preset=9 | lzma.PRESET_EXTREME)


def write_subset(corpus_root: Path, out: Path = SUBSET) -> None:
    if not full_corpus_present(corpus_root):
        sys.exit(f"no corpus at {corpus_root} (robots/ and urls.txt)")
    members = subset_members(read_full(corpus_root))
    data = _tar_xz(members)
    if len(data) > SUBSET_MAX_BYTES:
        sys.exit(f"the subset would be {len(data):,} bytes, over {SUBSET_MAX_BYTES:,}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    files = sum(1 for name in members if name.startswith("robots/"))
    raw = sum(len(body) for name, body in members.items() if name.startswith("robots/"))
    print(f"wrote {out}: {files} files ({raw:,} bytes), {len(data):,} bytes compressed")


def _main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write-subset", action="store_true", required=True)
    parser.add_argument("--corpus", type=Path, default=FULL_CORPUS)
    parser.add_argument("--out", type=Path, default=SUBSET)
    args = parser.parse_args(argv)
    write_subset(args.corpus, args.out)


if __name__ == "__main__":
    _main(sys.argv[1:])
