"""The demo's "press" origin: page-level robots directives (issue 25).

Its robots.txt allows everything; its pages say, each for itself, what a crawler may
do with them, with the ``X-Robots-Tag`` header or a robots meta tag. The project
obeys them (``ROBOTS_STD_PAGE_DIRECTIVES = "obey"`` and ``PageNoindexPipeline`` in
``settings.py``):

- ``/archive/`` answers ``X-Robots-Tag: nofollow``: its link is never requested
  (``nofollow-header``);
- ``/drafts/`` has ``<meta name="robots" content="noindex, nofollow">``: its link is
  never requested (``nofollow-meta``) and its item is dropped (``noindex-meta``);
- ``/team.html`` answers ``X-Robots-Tag: DemoBot: noindex`` (for this crawler
  only): its item is dropped (``noindex-header``), its link is followed;
- ``/contact.html`` has ``<meta name="DemoBot" content="noai, nosnippet">``: exposed
  in ``response.meta["robots_std_page"]``; the demo's purpose is ``search``, which
  ``noai`` does not speak to, so nothing is dropped there.

The links of ``/ai/`` carry ``data-purpose``: the demo spider declares that purpose
in the request's meta (``robots_std_usage_purpose``), so each of the newer sources
decides a drop for the AI purposes (``ROBOTS_STD_USAGE_ENFORCE = "drop"``):

- ``/licensed/photo.html`` (``ai-use``): robots.txt's ``Content-Usage: /licensed/
  ai-use=n``, a vocab-08 line before the first group, applying to every group: never
  sent (``usage``);
- ``/reserved/essay.html`` (``train-ai``): the origin's ``/.well-known/tdmrep.json``
  reserves ``/reserved/``: never sent (``usage-tdm-file``);
- ``/noai-header.html``, ``/noai-meta.html`` (``train-ai``): ``X-Robots-Tag: noai``,
  ``<meta name="robots" content="noai">``: dropped with their response
  (``usage-page-header``, ``usage-page-meta``);
- ``/tdm-header.html``, ``/tdm-meta.html`` (``train-ai``): a ``tdm-reservation: 1``
  header, ``<meta name="tdm-reservation" content="1">``: dropped with their response
  (``usage-tdm-header``, ``usage-tdm-meta``).

Plain data and one check, so ``run_demo.py`` serves and checks it without sharing its
classes: ``ROUTES`` (path -> status, headers, body) and :func:`check`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

NAME: Final = "press"
NOTE: Final = (
    "pages say what a crawler may do with them (X-Robots-Tag, meta robots): "
    "nofollow drops their links, noindex their items; /ai/ links declare an AI "
    "purpose, which robots.txt, tdmrep.json, noai and TDMRep tags each refuse"
)
_HTML: Final = {"Content-Type": "text/html; charset=utf-8"}


def _page(title: str, links: tuple[str, ...] = (), head: str = "") -> str:
    """A page; a link "train-ai:/path" declares that purpose (``data-purpose``)."""
    items = ""
    for link in links:
        purpose, _, path = link.rpartition(":")
        declared = f' data-purpose="{purpose}"' if purpose else ""
        items += f'<li><a href="{path}"{declared}>{path}</a></li>'

    return (
        f"<html><head><title>{title}</title>{head}</head>"
        f"<body><h1>{title}</h1><ul>{items}</ul></body></html>"
    )


#: the links of /ai/, each with the purpose its request declares
AI_LINKS: Final = (
    "ai-use:/licensed/photo.html",
    "train-ai:/reserved/essay.html",
    "train-ai:/noai-header.html",
    "train-ai:/noai-meta.html",
    "train-ai:/tdm-header.html",
    "train-ai:/tdm-meta.html",
)
#: path -> (status, response headers, body)
ROUTES: Final[dict[str, tuple[int, dict[str, str], str]]] = {
    "/robots.txt": (
        200,
        {"Content-Type": "text/plain; charset=utf-8"},
        (
            "# No AI use of /licensed/, for every group (before the first one).\n"
            "Content-Usage: /licensed/ ai-use=n\n"
            "User-agent: *\n"
            "Allow: /\n"
        ),
    ),
    # TDMRep: text and data mining reserved for /reserved/ only.
    "/.well-known/tdmrep.json": (
        200,
        {"Content-Type": "application/json"},
        '[{"location": "/reserved/", "tdm-reservation": 1}]\n',
    ),
    "/": (
        200,
        _HTML,
        _page("Press", ("/archive/", "/drafts/", "/team.html", "/ai/")),
    ),
    "/ai/": (200, _HTML, _page("For AI", AI_LINKS)),
    "/noai-header.html": (200, {**_HTML, "X-Robots-Tag": "noai"}, _page("No AI")),
    "/noai-meta.html": (
        200,
        _HTML,
        _page("No AI", head='<meta name="robots" content="noai">'),
    ),
    "/licensed/photo.html": (200, _HTML, _page("Photo")),
    "/reserved/essay.html": (200, _HTML, _page("Essay")),
    "/tdm-header.html": (200, {**_HTML, "tdm-reservation": "1"}, _page("TDM")),
    "/tdm-meta.html": (
        200,
        _HTML,
        _page("TDM", head='<meta name="tdm-reservation" content="1">'),
    ),
    "/archive/": (
        200,
        {**_HTML, "X-Robots-Tag": "nofollow"},
        _page("Archive", ("/archive/2019.html",)),
    ),
    "/archive/2019.html": (200, _HTML, _page("2019")),
    "/drafts/": (
        200,
        _HTML,
        _page(
            "Drafts",
            ("/drafts/next.html",),
            head='<meta name="robots" content="noindex, nofollow">',
        ),
    ),
    "/drafts/next.html": (200, _HTML, _page("Next")),
    "/team.html": (
        200,
        {**_HTML, "X-Robots-Tag": "DemoBot: noindex"},
        _page("Team", ("/contact.html",)),
    ),
    "/contact.html": (
        200,
        _HTML,
        _page("Contact", head='<meta name="DemoBot" content="noai, nosnippet">'),
    ),
}

#: pages only linked from nofollow pages, or refused before sending: never requested
NEVER_REQUESTED: Final = frozenset(
    {"/archive/2019.html", "/drafts/next.html", "/licensed/photo.html"}
    | {"/reserved/essay.html"}
)
#: what the spider is kept away from (a usage drop: its errback is called)
KEPT_AWAY: Final = frozenset(link.rpartition(":")[2] for link in AI_LINKS)
#: what the crawl's stats must say
EXPECTED_STATS: Final = {
    "robots_std/dropped/nofollow-header": 1,
    "robots_std/dropped/nofollow-meta": 1,
    "robots_std/page/items_dropped/noindex-header": 1,
    "robots_std/page/items_dropped/noindex-meta": 1,
    "robots_std/dropped/usage-tdm-file": 1,
    "robots_std/dropped/usage-page-header": 1,
    "robots_std/dropped/usage-page-meta": 1,
    "robots_std/dropped/usage-tdm-header": 1,
    "robots_std/dropped/usage-tdm-meta": 1,
}


def check(
    base: str,
    requested: Iterable[str],
    stats: Mapping[str, Any],
    kept_away: Iterable[str] = KEPT_AWAY,
) -> list[str]:
    """What differs from the intended crawl of this origin (empty: as intended).
    ``requested``: the paths the origin was asked for; ``kept_away``: the paths of
    the requests the spider was kept away from."""
    asked = set(requested)
    problems = [
        f"{base}{path} is linked only from nofollow pages or refused before "
        "sending, but was requested"
        for path in sorted(NEVER_REQUESTED & asked)
    ]
    problems += [
        f"{base}{path} was not requested"
        for path in sorted(set(ROUTES) - NEVER_REQUESTED - asked)
    ]
    if set(kept_away) != KEPT_AWAY:
        problems.append(
            f"the spider was kept away from {sorted(kept_away)}, expected "
            f"{sorted(KEPT_AWAY)}"
        )
    problems += [
        f"stat {key} is {stats.get(key)}, expected {value}"
        for key, value in EXPECTED_STATS.items()
        if stats.get(key) != value
    ]
    return problems
