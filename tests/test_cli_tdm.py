"""The command line's ``--purpose``: the origin's TDMRep tdmrep.json, per URL."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from scrapy_robots_std.cli import main
from tests.helpers.server import Reply

if TYPE_CHECKING:
    import pytest

    from tests.helpers.server import HostileServer

RULES = [
    {"location": "/private/*", "tdm-reservation": 1},
    {"location": "/", "tdm-reservation": 0},
]


def serve(server: HostileServer, tdm: Reply | None) -> str:
    server.add_route("/robots.txt", Reply(200, {}, b"User-agent: *\nAllow: /\n"))
    if tdm is not None:
        server.add_route("/.well-known/tdmrep.json", tdm)
    return server.url("/robots.txt")


def test_the_statement_of_each_url_is_printed(
    hostile: HostileServer, capsys: pytest.CaptureFixture[str]
) -> None:
    robots = serve(hostile, Reply(200, {}, json.dumps(RULES).encode()))
    urls = [hostile.url("/private/a"), hostile.url("/open")]
    assert main([robots, *urls, "-t", "FooBot", "--purpose", "train-ai"]) == 0
    out = capsys.readouterr()
    assert out.out.splitlines()[:4] == [
        f"ALLOWED {urls[0]}",
        (
            "  TDMRep: tdmrep.json rule 0 (location '/private/*') "
            '"tdm-reservation: 1": disallow for train-ai'
        ),
        f"ALLOWED {urls[1]}",
        (
            "  TDMRep: tdmrep.json rule 1 (location '/') \"tdm-reservation: 0\": "
            "allow for train-ai"
        ),
    ]
    assert "note: TDMRep http" in out.err
    assert main([robots, urls[0], "-t", "FooBot", "--purpose", "search", "--json"]) == 0
    (result,) = json.loads(capsys.readouterr().out)["results"]
    assert result["tdmrep"]["value"] == "unknown"
    assert result["tdmrep"]["statement"]["rule"] == 0


def test_a_missing_file_is_unset_and_no_purpose_fetches_nothing(
    hostile: HostileServer, capsys: pytest.CaptureFixture[str]
) -> None:
    robots = serve(hostile, None)
    url = hostile.url("/a")
    assert main([robots, url, "-t", "FooBot"]) == 0
    assert not hostile.requests_for("/.well-known/tdmrep.json")
    assert main([robots, url, "-t", "FooBot", "--purpose", "ai-use"]) == 0
    out = capsys.readouterr()
    assert "  TDMRep: unset: unknown for ai-use" in out.out
    assert "HTTP 404: unset" in out.err
    assert main([robots, url, "-t", "FooBot", "--purpose", "nope"]) == 2
