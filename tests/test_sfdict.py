"""The RFC 9651 Dictionary parser: valid and invalid values, most from the RFC's
grammar and the structured-field test suite's dictionary cases."""

from __future__ import annotations

from decimal import Decimal

import pytest

from scrapy_robots_std.usage.sfdict import (
    Date,
    DisplayString,
    StructuredFieldError,
    Token,
    parse_dictionary,
)


def values(data: bytes) -> dict[str, object]:
    return {key: member.value for key, member in parse_dictionary(data).items()}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", {}),
        (b"train-ai=y, search=n", {"train-ai": "y", "search": "n"}),
        (
            b"search=yes,ai-train=no,use=reference",
            {"search": "yes", "ai-train": "no", "use": "reference"},
        ),
        (
            b'en="Applepie", da=:w4ZibGV0w6ZydGUK:',
            {"en": "Applepie", "da": b"w4ZibGV0w6ZydGUK"},
        ),
        (b"a=?0, b, c; foo=bar", {"a": False, "b": True, "c": True}),
        (
            b"a=(1 2), b=3, c=4;aa=bb, d=(5 6);valid",
            {"a": (1, 2), "b": 3, "c": 4, "d": (5, 6)},
        ),
        (b"a=1 , b=2", {"a": 1, "b": 2}),
        (b"a=1\t,\tb=2", {"a": 1, "b": 2}),
        (b"   a=1", {"a": 1}),
        (b"a=1   ", {"a": 1}),
        (b"a=()", {"a": ()}),
        (b"a=(  1  2  )", {"a": (1, 2)}),
        (b'a=("x";p "y")', {"a": ("x", "y")}),
        (b"*a=1, a*b.c_d-e=2", {"*a": 1, "a*b.c_d-e": 2}),
        (b"a=@1659578233", {"a": 1659578233}),
        (b'a=%"f%c3%bc%22"', {"a": 'f\u00fc"'}),
        (
            b"a=-1.5, b=999999999999999, c=-999999999999.999",
            {
                "a": Decimal("-1.5"),
                "b": 999999999999999,
                "c": Decimal("-999999999999.999"),
            },
        ),
        (b'a="q\\"s\\\\"', {"a": 'q"s\\'}),
        (b"a=*tok/x:y", {"a": "*tok/x:y"}),
        (b"a=:YWJj:", {"a": b"YWJj"}),
        (b"a=::", {"a": b""}),
    ],
)
def test_valid(data: bytes, expected: dict[str, object]) -> None:
    assert values(data) == expected


def test_types_tell_tokens_from_strings() -> None:
    found = values(b'a=n, b="n", c=@1, d=%"x"')
    assert type(found["a"]) is Token
    assert type(found["b"]) is str
    assert type(found["c"]) is Date
    assert type(found["d"]) is DisplayString


def test_duplicate_key_takes_the_last_value_in_the_first_place() -> None:
    found = parse_dictionary(b"a=1, b=2, a=3")
    assert list(found) == ["a", "b"]
    assert found["a"].value == 3


def test_members_keep_their_text_as_written() -> None:
    found = parse_dictionary(b"use=reference, x=(1 2);p, flag;q=1")
    assert [(k, m.text) for k, m in found.items()] == [
        ("use", "reference"),
        ("x", "(1 2);p"),
        ("flag", ""),
    ]


@pytest.mark.parametrize(
    "data",
    [
        b"a=1,",  # trailing comma
        b",a=1",
        b"a=1,,b=2",
        b"A=1",  # upper-case key
        b"Train-AI=n",
        b"1a=1",
        b"-a=1",
        b"a=1 b=2",  # missing comma
        b"a=1;",  # parameter without a key
        b"a=1; B=2",
        b"a=",
        b"a=-",
        b"a=?2",
        b"a=?",
        b"a=1.1234",
        b"a=1.",
        b"a=1234567890123456",  # 16 digits
        b"a=1234567890123.1",  # 13 integer digits in a decimal
        b'a="\\x"',  # invalid escape
        b'a="abc',
        b'a="\x7f"',
        b"a=:YW*:",
        b"a=:YWJj",
        b"a=(1,2)",
        b"a=(1 2",
        b"a=(1 2)x",
        b'a=%"%C3%BC"',  # upper-case hex
        b'a=%"%ff"',  # not UTF-8
        b"a=%x",
        b"a=@1.5",
        b"\ta=1",  # only SP may lead
        b"a=1\n",
        b"a=\xc3\xa9",
        b"a=y@x",  # "@" is no tchar ("#" is one)
        b"a=y, b=(",
        b"a=$",
    ],
)
def test_invalid(data: bytes) -> None:
    with pytest.raises(StructuredFieldError):
        parse_dictionary(data)


def test_error_names_the_offset() -> None:
    with pytest.raises(StructuredFieldError, match="offset 4"):
        parse_dictionary(b"a=1,")


def test_long_value_is_linear() -> None:
    # 50,000 members: a handful of regex matches each, nothing retried.
    data = b", ".join(b"k%d=tok" % i for i in range(50_000))
    assert len(parse_dictionary(data)) == 50_000
    with pytest.raises(StructuredFieldError):
        parse_dictionary(data + b",")
