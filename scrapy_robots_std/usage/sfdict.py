"""RFC 9651 (Structured Field Values) Dictionaries, parsed strictly from bytes.

Only what usage preferences need: the Dictionary at the top level (section
4.2.2), with every bare item type parsed far enough to tell a valid value from
an invalid one, and parameters parsed and dropped.  Any deviation from the
grammar fails the whole value, as RFC 9651 requires: a half-read dictionary must
not be mistaken for a statement.

Kept here rather than taken from PyPI: ``http-sf`` is as strict, but it keeps no
member's text as written (shown with every source), decodes byte sequences and
turns dates into ``datetime`` (valid dates past its range fail), and would be
a third dependency.  Each step is one compiled regular expression matched at a
position, so a long value costs a handful of C-level matches per member, and
nothing backtracks (the character classes of neighbouring pieces never overlap).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import TYPE_CHECKING, NamedTuple, Union

if TYPE_CHECKING:
    from collections.abc import Callable


class Token(str):
    """An sf-token such as ``y`` or ``reference`` (not a quoted sf-string)."""

    __slots__ = ()


class DisplayString(str):
    """An sf-displaystring (``%"..."``), decoded."""

    __slots__ = ()


class Date(int):
    """An sf-date (``@1659578233``): seconds since the epoch."""

    __slots__ = ()


#: A bare item: Integer or Date (int), Decimal, String, Token or Display String
#: (str), Byte Sequence (bytes), Boolean (bool).
BareItem = Union[int, Decimal, str, bytes, bool]  # noqa: UP007 - a runtime alias
#: An inner list's items, parameters dropped.
InnerList = tuple[BareItem, ...]


class Member(NamedTuple):
    """One dictionary member: its value and the value as written (``""`` for a
    bare key, which means Boolean true)."""

    value: BareItem | InnerList
    text: str


class StructuredFieldError(ValueError):
    """The bytes are not a Dictionary; ``position`` is where reading stopped."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} at offset {position}")
        self.position = position


_KEY = re.compile(r"[a-z*][a-z0-9_.*-]*")
_OWS = re.compile(r"[ \t]*")
_SP = re.compile(r" *")
_NUMBER = re.compile(r"-?([0-9]*)(?:\.([0-9]*))?")
_TOKEN = re.compile(r"([A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*)")
# String content: unescaped characters and the two escapes, up to the quote.
_STRING = re.compile(r'"((?:[ !#-\[\]-~]|\\["\\])*)"')
_BYTES = re.compile(r":([A-Za-z0-9+/=]*):")
_BOOLEAN = re.compile(r"\?([01])")
_DISPLAY = re.compile(r'%"((?:[ !#$&-~]|%[0-9a-f]{2})*)"')
_PERCENT = re.compile(r"%([0-9a-f]{2})")


def _display(raw: str) -> DisplayString:
    octets = _PERCENT.sub(lambda m: chr(int(m.group(1), 16)), raw)
    return DisplayString(octets.encode("latin-1").decode("utf-8"))


# An item's first character (``a`` for a token's letter) -> its pattern, what
# its group 1 reads as, and the error when the pattern does not match.
_ITEMS: dict[str, tuple[re.Pattern[str], Callable[[str], BareItem], str]] = {
    "a": (_TOKEN, Token, ""),
    '"': (
        _STRING,
        lambda raw: re.sub(r"\\(.)", r"\1", raw),
        "invalid or unterminated string",
    ),
    # Only the alphabet is checked: RFC 9651 4.2.7 asks parsers not to insist on
    # padding, and the bytes themselves are never used.
    ":": (_BYTES, lambda raw: raw.encode("ascii"), "invalid byte sequence"),
    "?": (_BOOLEAN, lambda raw: raw == "1", "invalid boolean"),
    "%": (_DISPLAY, _display, "invalid or unterminated display string"),
}
_NO_ITEM = (re.compile("(?!)"), str, "expected an item")


def parse_dictionary(data: bytes) -> dict[str, Member]:
    """The Dictionary in ``data`` (a field value or a robots.txt value).

    Keys keep their last value (RFC 9651: a later duplicate overwrites) and the
    dict keeps the order in which keys first appeared.  Raises
    :class:`StructuredFieldError` for anything the grammar does not allow,
    including bytes outside ASCII, upper-case keys and a trailing comma.
    """
    if not data.isascii():
        position = next(index for index, octet in enumerate(data) if octet > 0x7F)
        raise StructuredFieldError("not ASCII", position)
    return _Reader(data.decode("ascii")).dictionary()


class _Reader:
    __slots__ = ("pos", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.skip(_SP)

    def skip(self, spaces: re.Pattern[str]) -> int:
        """Move past what ``spaces`` matches (maybe nothing); the new position."""
        self.pos = spaces.match(self.text, self.pos).end()  # type: ignore[union-attr]
        return self.pos

    def fail(self, message: str) -> StructuredFieldError:
        return StructuredFieldError(message, self.pos)

    def dictionary(self) -> dict[str, Member]:
        text = self.text
        end = len(text)
        found: dict[str, Member] = {}
        while self.pos < end:
            key = self.key()
            if text.startswith("=", self.pos):
                self.pos += 1
                start = self.pos
                value: BareItem | InnerList = (
                    self.inner_list() if text.startswith("(", start) else self.item()
                )
                member = Member(value, text[start : self.pos])
            else:
                self.parameters()
                member = Member(True, "")
            found[key] = member  # a duplicate overwrites, in the first one's place
            if self.skip(_OWS) >= end:
                break
            if text[self.pos] != ",":
                raise self.fail("expected ',' between members")
            self.pos += 1
            if self.skip(_OWS) >= end:
                raise self.fail("trailing ','")
        return found

    def key(self) -> str:
        match = _KEY.match(self.text, self.pos)
        if match is None:
            raise self.fail("expected a key (a-z or '*' first)")
        self.pos = match.end()
        return match.group()

    def inner_list(self) -> InnerList:
        text = self.text
        self.pos += 1  # "("
        items: list[BareItem] = []
        while True:
            if self.skip(_SP) >= len(text):
                raise self.fail("unterminated inner list")
            if text[self.pos] == ")":
                self.pos += 1
                self.parameters()
                return tuple(items)
            items.append(self.item())
            if self.pos >= len(text) or text[self.pos] not in " )":
                raise self.fail("expected ' ' or ')' in an inner list")

    def item(self) -> BareItem:
        value = self.bare_item()
        self.parameters()
        return value

    def parameters(self) -> None:
        # Parsed for validity only: usage preferences ignore parameters.
        text = self.text
        while text.startswith(";", self.pos):
            self.pos += 1
            self.skip(_SP)
            self.key()
            if text.startswith("=", self.pos):
                self.pos += 1
                self.bare_item()

    def bare_item(self) -> BareItem:
        first = self.text[self.pos : self.pos + 1]
        if first == "-" or first.isdigit():
            return self.number()
        if first == "@":
            self.pos += 1
            seconds = self.number()
            if not isinstance(seconds, int):
                raise self.fail("a date must be an integer")
            return Date(seconds)
        if first == "*" or (first.isascii() and first.isalpha()):
            first = "a"  # a token
        pattern, read, error = _ITEMS.get(first, _NO_ITEM)
        match = pattern.match(self.text, self.pos)
        if match is None:
            raise self.fail(error)
        try:
            value = read(match.group(1))
        except UnicodeDecodeError:
            raise self.fail("display string is not UTF-8") from None
        self.pos = match.end()
        return value

    def number(self) -> int | Decimal:
        match = _NUMBER.match(self.text, self.pos)
        assert match is not None
        whole, fraction = match.groups()
        if not whole:
            raise self.fail("expected a digit")
        if fraction is None:
            if len(whole) > 15:
                raise self.fail("integer longer than 15 digits")
            self.pos = match.end()
            return int(match.group())
        if len(whole) > 12 or not 1 <= len(fraction) <= 3:
            raise self.fail("decimal needs 1-12 digits, '.', then 1-3 digits")
        self.pos = match.end()
        return Decimal(match.group())
