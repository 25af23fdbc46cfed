"""Text from a robots.txt, a header or a URL, made safe for a log line or a terminal.

Control characters (C0, DEL, C1: ESC and OSC sequences among them) and the bidi
controls that reorder what a reader sees are written as ``\\xNN`` / ``\\uNNNN``.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["safe", "safe_json"]

_UNSAFE: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: object) -> str:
    """``str(text)`` with every unsafe character escaped."""
    shown = text if isinstance(text, str) else str(text)
    return _UNSAFE.sub(_escape, shown)


#: What json.dumps leaves as it is: C0 controls are escaped already, and a JSON
#: text's own newlines and indentation stand outside strings.
_UNSAFE_IN_JSON: Final = re.compile(
    "[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def safe_json(document: str) -> str:
    """A JSON text (from :func:`json.dumps`) with every unsafe character written as
    a ``\\uNNNN`` escape: the same JSON value, safe to print.

    ``json.dumps(..., ensure_ascii=False)`` escapes C0 controls but writes DEL, C1
    controls and bidi controls as they are; in its output they can only stand
    inside strings, where the escape means the same character.
    """
    return _UNSAFE_IN_JSON.sub(_json_escape, document)
