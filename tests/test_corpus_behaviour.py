"""Every answer on the real corpus stays what it was when the expectations were stored.

For each corpus body (the 4,231 of ../shared/corpus, or the 400 of the committed
subset where that is absent: tests/helpers/corpus.py), in both standards, a
transcript of everything the public API says is hashed: sitemaps, truncated,
diagnostics, and for several tokens (a named bot, Googlebot, tokens that only
``*`` groups match) ``groups_for``, ``crawl_delay``, ``request_rate``, then for
the site's 30 URLs (plus ``/`` and ``/robots.txt``) ``allowed()`` and ``decide()``
with the deciding rule (line, directive, pattern, agents) and ``explain()``.
Tokens are interleaved per URL so the per-token index is built, evicted and
rebuilt as a crawl with several user agents would; the diagnostics are asked for
again after all queries, and through the ``StdRobotParser`` the ``robots_parsed``
signal carries.  ``RobotsTxt.without_diagnostics()`` must answer the same, notes aside.

The digests in ``tests/data/corpus_behaviour.json`` were written by the code
before the memory work (git 4c8e289). A deliberate behaviour change rewrites
them with::

    .venv/bin/python -m tests.test_corpus_behaviour --write
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from scrapy_robots_std import RobotsTxt
from tests.helpers.corpus import FULL_CORPUS_FILES, load

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = ROOT / "tests" / "data" / "corpus_behaviour.json"

TOKENS = {
    # Googlebot and bingbot have their own groups in many files; the others are
    # named by (almost) none, so the "*" group answers.
    "rfc9309": ("Googlebot", "bingbot", "ScrapyBench", "scrapy-robots-std-unnamed"),
    "1994": ("Googlebot", "bingbot", "ScrapyBench", "*"),
}


def _decision(robots: RobotsTxt, url: str, token: str) -> str:
    try:
        decision = robots.decide(url, token)
    except ValueError as exc:
        return f"ValueError {exc}"
    rule = decision.rule
    if rule is None:
        rule_text = "-"
    else:
        fields = (rule.line, rule.directive, rule.pattern, rule.allow, rule.agents)
        rule_text = f"{fields!r} {rule} {rule.group}"
    return f"{decision.allowed} {decision.reason} {rule_text} {decision.explain()}"


def _allowed(robots: RobotsTxt, url: str, token: str) -> str:
    try:
        return repr(robots.allowed(url, token))
    except ValueError as exc:
        return f"ValueError {exc}"


def _per_token(robots: RobotsTxt, token: str) -> str:
    return (
        f"{token} groups={robots.groups_for(token)!r}"
        f" delay={robots.crawl_delay(token)!r} rate={robots.request_rate(token)!r}"
    )


def transcript(name: str, body: bytes, standard: str) -> list[str]:
    """Everything the API answers for one body, one line per answer."""
    return _answers(name, RobotsTxt.parse(body, standard))


def _answers(name: str, robots: RobotsTxt, *, notes: bool = True) -> list[str]:
    from scrapy_robots_std.scrapy.robotparser import StdRobotParser

    tokens = TOKENS[robots.standard]
    diagnostics = robots.diagnostics if notes else ()
    out = [
        repr(robots),
        f"truncated={robots.truncated} sitemaps={robots.sitemaps!r}",
        *(f"{d.line} {d.kind} {d.message} | {d}" for d in diagnostics),
    ]
    out += [_per_token(robots, token) for token in tokens]
    host = name.replace("_443", ":443")
    urls = (
        *load().urls.get(name, ()),
        f"https://{host}/",
        f"http://{host}/robots.txt",
    )
    for url in urls:
        for token in tokens:
            out.append(f"{url} {token} {_allowed(robots, url, token)}")
            out.append(f"{url} {token} {_decision(robots, url, token)}")
    out += [_per_token(robots, token) for token in reversed(tokens)]
    # Diagnostics again, after the per-token indexes were built, and through the
    # object the robots_parsed signal sends.
    out += (
        [f"{d.line} {d.kind} {d.message}" for d in robots.diagnostics] if notes else []
    )
    adapter = StdRobotParser.from_robots(robots)
    out.append(f"adapter sitemaps={adapter.sitemaps!r} standard={adapter.standard}")
    if notes:
        out += [f"{d.line} {d.kind}" for d in adapter.robots.diagnostics]
    return out


def digest(name: str, body: bytes) -> str:
    h = hashlib.blake2b(digest_size=8)
    for standard in ("rfc9309", "1994"):
        for line in transcript(name, body, standard):
            h.update(line.encode("utf-8", "surrogatepass"))
            h.update(b"\n")
    return h.hexdigest()


def _bodies() -> list[tuple[str, bytes]]:
    return list(load().bodies)


def test_every_corpus_answer_is_unchanged() -> None:
    # Digests are stored for the full corpus; the subset's files are checked the same.
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))["digests"]
    bodies = _bodies()
    assert len(expected) == FULL_CORPUS_FILES
    if load().full:
        assert len(bodies) == len(expected)
    unknown = [name for name, _ in bodies if name not in expected]
    assert not unknown, f"files without a stored digest: {unknown[:20]}"
    changed = [name for name, body in bodies if digest(name, body) != expected[name]]
    assert not changed, f"{len(changed)} files answer differently: {changed[:20]}"


@pytest.mark.parametrize("standard", ["rfc9309", "1994"])
def test_copy_without_diagnostics_answers_the_same(standard: str) -> None:
    # What a long-lived cache may keep: the copy made before and after the original
    # answered (tables shared or not yet built).  Every 5th file of the full corpus,
    # every file of the subset.
    corpus = load()
    for name, body in corpus.bodies[:: 5 if corpus.full else 1]:
        robots = RobotsTxt.parse(body, standard)
        before = robots.without_diagnostics()
        expected = _answers(name, robots)
        after = robots.without_diagnostics()
        quiet = _answers(name, robots, notes=False)
        assert _answers(name, before, notes=False) == quiet, name
        assert _answers(name, after, notes=False) == quiet, name
        assert before.diagnostics == after.diagnostics == ()
        assert _answers(name, robots) == expected, name  # the original keeps its notes


def _write() -> None:
    if not load().full:
        sys.exit("--write needs the full corpus (../shared/corpus)")
    digests = {name: digest(name, body) for name, body in _bodies()}
    EXPECTED.parent.mkdir(exist_ok=True)
    document = {
        "about": "tests/test_corpus_behaviour.py: blake2b-64 of each file's transcript",
        "digests": digests,
    }
    EXPECTED.write_text(json.dumps(document, indent=0, sort_keys=True) + "\n")
    print(f"wrote {len(digests)} digests to {EXPECTED}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(f"usage: {sys.argv[0]} --write")
    sys.path.insert(0, str(ROOT))
    _write()
