"""The robots meta tags of an HTML page's ``<head>``, read with lxml's HTML parser.

lxml (libxml2: the parser Scrapy's selectors use) is fed the body a chunk at a time
and calls back on each start tag; no tree is built. Reading stops where the head
ends (the ``<body>`` the parser opens, written or implied by body content such as
text or a ``<div>``; a meta tag between ``</head>`` and ``<body>`` still counts,
as HTML parsing puts it in the head) or after :data:`HEAD_MAX_BYTES`, so a page
costs what its head costs, whatever its size, and no nesting or broken markup costs
more than that many bytes. Only the names a filter accepts are kept (``robots`` and the
crawler's token: :func:`scrapy_robots_std.pagerules.meta_filter`), at most
:data:`~scrapy_robots_std.pagerules.MAX_METAS` of them; the rest are counted.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from lxml import etree  # type: ignore[import-untyped]

from scrapy_robots_std.pagerules import MAX_METAS

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["HEAD_MAX_BYTES", "Head", "HeadReader", "is_html", "read_head"]

#: The media types whose head is read for meta tags.
_HTML_TYPES: Final = (b"text/html", b"application/xhtml+xml")


def is_html(content_type: bytes) -> bool:
    """Whether a ``Content-Type`` value names an HTML page (its head has meta tags)."""
    return content_type.split(b";", 1)[0].strip().lower() in _HTML_TYPES


#: The most bytes of a body read for its head (a head with more is cut, and noted).
HEAD_MAX_BYTES: Final = 128 * 1024
#: The first chunk fed to the parser; each next one is twice as large, up to
#: :data:`_CHUNK_MAX`. Small first chunks keep a small head's cost small: the parser
#: reads a chunk to its end before the reading can stop.
_CHUNK_FIRST: Final = 1024
_CHUNK_MAX: Final = 16 * 1024
#: Most characters of a parser error kept in a note.
_ERROR_MAX: Final = 200


@dataclass(frozen=True)
class Head:
    """What :func:`read_head` found: the ``(name, content)`` of each meta tag kept,
    in document order; how many more the filter accepted past the cap; and notes
    on what was not read (the head cut at :data:`HEAD_MAX_BYTES`, a parser error)."""

    metas: tuple[tuple[str, str], ...] = ()
    more: int = 0
    notes: tuple[str, ...] = ()


class _Target:
    """lxml's parser target: keeps the wanted meta tags until the head ends."""

    __slots__ = ("done", "metas", "more", "most", "wanted")

    def __init__(self, wanted: Callable[[str], bool], most: int) -> None:
        self.wanted = wanted
        self.most = most
        self.reset()

    def reset(self) -> None:
        self.metas: list[tuple[str, str]] = []
        self.more = 0
        self.done = False

    def start(self, tag: str, attrib: Any) -> None:
        if self.done:
            return
        if tag == "meta":
            name = attrib.get("name")
            if name is None or not self.wanted(name):
                return
            if len(self.metas) < self.most:
                self.metas.append((name, attrib.get("content") or ""))
            else:
                self.more += 1
        elif tag == "body":
            self.done = True

    def close(self) -> None:
        return None


class HeadReader:
    """Reads the heads of many pages for one filter of meta tag names.

    Its parsers are kept between pages (one per declared encoding, a few): a
    libxml2 parser costs about as much to set up as a small head costs to read.
    Not for use from several threads at once (Scrapy calls it from its reactor).
    """

    #: the most parsers kept (one per encoding a response declares)
    KEPT = 8

    def __init__(
        self,
        wanted: Callable[[str], bool],
        *,
        limit: int = HEAD_MAX_BYTES,
        most: int = MAX_METAS,
        label: str = "robots meta tag(s)",
    ) -> None:
        self.limit = limit
        #: what the kept tags are, as a note names them (TDMRep reads its own)
        self.label = label
        self._target = _Target(wanted, most)
        self._parsers: dict[str | None, Any] = {}

    def read(self, body: bytes, encoding: str | None = None) -> Head:
        """The meta tags of ``body``'s head that the filter accepts.

        ``encoding``: the one the response's ``Content-Type`` declares, if any
        (else the parser reads a ``<meta charset>`` or a byte-order mark). Never
        raises on content: a parser error ends the reading, with a note.
        """
        target = self._target
        target.reset()
        notes: list[str] = []
        try:
            parser = self._parser(encoding)
            self._feed(parser, body)
            if not target.done and len(body) > self.limit:
                notes.append(
                    f"HTML head: cut at {self.limit:,} bytes; meta tags after not read"
                )
            _close(parser)
        except Exception as exc:  # noqa: BLE001 -- site content must never raise here
            self._parsers.pop(encoding, None)  # its state is unknown: not reused
            error = f"{type(exc).__name__}: {exc}"[:_ERROR_MAX]
            notes.append(f"HTML head: not read to its end ({error})")
        if target.more:
            notes.insert(
                0,
                f"{target.more} {self.label} past the first {target.most} not read",
            )
        return Head(tuple(target.metas), target.more, tuple(notes))

    def _feed(self, parser: Any, body: bytes) -> None:
        target = self._target
        offset, size = 0, _CHUNK_FIRST
        end = min(len(body), self.limit)
        while offset < end and not target.done:
            parser.feed(body[offset : min(offset + size, end)])
            offset += size
            size = min(size * 2, _CHUNK_MAX)

    def _parser(self, encoding: str | None) -> Any:
        parser = self._parsers.get(encoding)
        if parser is None:
            if len(self._parsers) >= self.KEPT:
                self._parsers.clear()
            parser = self._parsers[encoding] = _parser(self._target, encoding)
        return parser


def _parser(target: _Target, encoding: str | None) -> Any:
    try:
        return etree.HTMLParser(target=target, encoding=encoding, no_network=True)
    except LookupError:  # an encoding libxml2 does not know: let it detect one
        return etree.HTMLParser(target=target, no_network=True)


def read_head(
    body: bytes,
    wanted: Callable[[str], bool],
    *,
    encoding: str | None = None,
    limit: int = HEAD_MAX_BYTES,
    most: int = MAX_METAS,
) -> Head:
    """The meta tags of ``body``'s head whose name ``wanted`` accepts (one page;
    a crawl keeps a :class:`HeadReader`)."""
    return HeadReader(wanted, limit=limit, most=most).read(body, encoding)


def _close(parser: Any) -> None:
    # An empty or tagless document: nothing to read, nothing wrong.
    with contextlib.suppress(etree.XMLSyntaxError):
        parser.close()
