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
  ``noai`` does not speak to, so nothing is dropped.

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
    "nofollow drops their links, noindex their items"
)
_HTML: Final = {"Content-Type": "text/html; charset=utf-8"}


def _page(title: str, links: tuple[str, ...] = (), head: str = "") -> str:
    items = "".join(f'<li><a href="{link}">{link}</a></li>' for link in links)
    return (
        f"<html><head><title>{title}</title>{head}</head>"
        f"<body><h1>{title}</h1><ul>{items}</ul></body></html>"
    )


#: path -> (status, response headers, body)
ROUTES: Final[dict[str, tuple[int, dict[str, str], str]]] = {
    "/robots.txt": (
        200,
        {"Content-Type": "text/plain; charset=utf-8"},
        "User-agent: *\nAllow: /\n",
    ),
    "/": (200, _HTML, _page("Press", ("/archive/", "/drafts/", "/team.html"))),
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

#: pages only linked from nofollow pages: never requested
NEVER_REQUESTED: Final = frozenset({"/archive/2019.html", "/drafts/next.html"})
#: what the crawl's stats must say
EXPECTED_STATS: Final = {
    "robots_std/dropped/nofollow-header": 1,
    "robots_std/dropped/nofollow-meta": 1,
    "robots_std/page/items_dropped/noindex-header": 1,
    "robots_std/page/items_dropped/noindex-meta": 1,
}


def check(base: str, requested: Iterable[str], stats: Mapping[str, Any]) -> list[str]:
    """What differs from the intended crawl of this origin (empty: as intended).
    ``requested``: the paths the origin was asked for."""
    asked = set(requested)
    problems = [
        f"{base}{path} is linked only from nofollow pages, but was requested"
        for path in sorted(NEVER_REQUESTED & asked)
    ]
    problems += [
        f"{base}{path} was not requested"
        for path in sorted(set(ROUTES) - NEVER_REQUESTED - asked)
    ]
    problems += [
        f"stat {key} is {stats.get(key)}, expected {value}"
        for key, value in EXPECTED_STATS.items()
        if stats.get(key) != value
    ]
    return problems
