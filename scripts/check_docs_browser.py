"""Open every page of the built docs in headless Chromium and check what a reader sees.

Run by ``scripts/check_docs_browser.sh`` after a strict build; usable alone:

    .venv/bin/python scripts/check_docs_browser.py docs/_build/html \
        --screenshots docs/_build/screenshots

For each HTML page, at each window width (1280 and 390 px by default), it fails when

* the page is wider than the window (``document.documentElement.scrollWidth``
  greater than the window's width: the page scrolls sideways);
* the main content is wider than its column: text, an image, a table or a code
  block's box past the right edge of the main element (``[role=main]``), or that
  edge past the window's;
* a table is wider than the column it sits in (even inside a wrapper that scrolls:
  a reference table that must be scrolled sideways is what the check is for; code
  blocks may scroll inside themselves), or fits only by cutting a name in code
  (a setting, a stat key) mid-word;
* a page, stylesheet, script or image of the site answers 4xx/5xx.

Then every internal link is followed on paper: the page it names must exist, and its
``#anchor`` must be an ``id`` (or ``<a name>``) on that page. Screenshots of the first
screen of chosen pages are written at each width.

Chromium is driven through the Chrome DevTools Protocol over a pipe
(``--remote-debugging-pipe``: NUL-separated JSON on the child's fds 3 and 4), so only
the standard library is needed. The site is served by ``http.server`` on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import functools
import http.server
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

WINDOW_HEIGHTS = {1280: 900, 390: 844}
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--mute-audio",
    "--remote-debugging-pipe",
]

# Measured in the page once it has loaded (fonts included). The main element is the
# theme's: Furo's <article role="main">, Sphinx's basic themes' <div role="main">.
# "Content" is what a reader reads: text, and the boxes of images, tables and code
# blocks. A box's padding or negative margin (Furo's headings reach 0.5 rem past the
# column, for their hover background) is not content. Text inside an element that
# scrolls sideways (a code block) is that element's business: only its box counts.
MEASURE_JS = r"""
(async () => {
  await document.fonts.ready;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const doc = document.documentElement;
  const main = document.querySelector('[role="main"]') || document.querySelector('main')
      || document.querySelector('article') || document.body;
  const mrect = main.getBoundingClientRect();
  const scrollers = new Set();
  for (const el of main.querySelectorAll('*')) {
    const ox = getComputedStyle(el).overflowX;
    if (ox !== 'visible' && ox !== 'clip') scrollers.add(el);
  }
  const inScroller = (node) => {
    for (let p = node.parentElement; p && p !== main; p = p.parentElement) {
      if (scrollers.has(p)) return true;
    }
    return false;
  };
  const label = (node) => {
    const el = node.nodeType === 1 ? node : node.parentElement;
    return el.tagName.toLowerCase() + ': ' + (node.textContent || '').trim().slice(0, 70);
  };
  let right = 0;
  const over = [];
  const edge = Math.min(mrect.right, window.innerWidth);
  const note = (r, node) => {
    if (r.width <= 0) return;
    right = Math.max(right, r.right);
    if (r.right > edge + 1 && over.length < 50) over.push({right: Math.round(r.right), what: label(node)});
  };
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    if (!t.textContent.trim() || inScroller(t)) continue;
    const el = t.parentElement;
    if (el && el.closest('.headerlink')) continue;  // hidden until hovered
    range.selectNodeContents(t);
    for (const r of range.getClientRects()) note(r, t);
  }
  for (const el of main.querySelectorAll('img, svg, video, iframe, canvas, table, pre, input')) {
    if (!inScroller(el)) note(el.getBoundingClientRect(), el);
  }
  for (const el of scrollers) {
    if (!inScroller(el)) note(el.getBoundingClientRect(), el);
  }
  const tables = [];
  for (const t of main.querySelectorAll('table')) {
    const box = t.parentElement;
    const limit = Math.min(box.clientWidth || box.getBoundingClientRect().width,
                           main.clientWidth);
    const width = Math.max(t.scrollWidth, t.getBoundingClientRect().width);
    if (width > limit + 1) {
      const head = (t.querySelector('th') || t.querySelector('td') || t).textContent;
      tables.push({width: Math.round(width), limit: Math.round(limit),
                   head: head.trim().slice(0, 60)});
    }
  }
  // A table that fits only by cutting a name in code mid-word (a setting, a stat
  // key: ROBOTS_ / STD_STAND / ARD) is too wide all the same. A line break after a
  // hyphen, a slash, a space or other punctuation is ordinary wrapping.
  const midWord = (code) => {
    const walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    let prevTop = null, prevChar = ' ';
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      for (let i = 0; i < n.length; i++) {
        const ch = n.data[i];
        if (/\s/.test(ch)) { prevChar = ch; continue; }
        range.setStart(n, i); range.setEnd(n, i + 1);
        const rects = range.getClientRects();
        if (!rects.length) continue;
        const top = Math.round(rects[0].top);
        if (prevTop !== null && top > prevTop + 2 && /\w/.test(prevChar) && /\w/.test(ch)) return true;
        prevTop = top; prevChar = ch;
      }
    }
    return false;
  };
  for (const t of main.querySelectorAll('table')) {
    for (const code of t.querySelectorAll('code')) {
      range.selectNodeContents(code);
      const lines = new Set(Array.from(range.getClientRects(), r => Math.round(r.top)));
      if (lines.size > 1 && midWord(code)) {
        const head = (t.querySelector('th') || t.querySelector('td') || t).textContent;
        tables.push({broken: code.textContent.trim().slice(0, 60), head: head.trim().slice(0, 60)});
        break;
      }
    }
  }
  over.sort((a, b) => b.right - a.right);
  const ids = Array.from(document.querySelectorAll('[id]'), e => e.id)
      .concat(Array.from(document.querySelectorAll('a[name]'), e => e.getAttribute('name')));
  const links = Array.from(document.querySelectorAll('a[href]'), a => a.href);
  let scrolling = 0;
  for (const pre of main.querySelectorAll('pre')) {
    if (pre.scrollWidth > pre.clientWidth + 1) scrolling++;
  }
  return {
    innerWidth: window.innerWidth,
    docScrollWidth: doc.scrollWidth,
    mainSelector: main.tagName.toLowerCase() + (main.getAttribute('role') ? '[role=' + main.getAttribute('role') + ']' : ''),
    mainLeft: Math.round(mrect.left),
    mainRight: Math.round(mrect.right),
    mainScrollWidth: main.scrollWidth,
    mainClientWidth: main.clientWidth,
    contentRight: Math.round(right),
    tables: tables,
    over: over.slice(0, 5),
    ids: ids,
    links: links,
    scrollingCodeBlocks: scrolling,
    title: document.title,
  };
})()
"""


class CDPError(RuntimeError):
    pass


class Chromium:
    """A headless Chromium driven over --remote-debugging-pipe."""

    def __init__(self, binary: str, timeout: float) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="docs-browser-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # Keep the child's ends clear of 3 and 4, which the shell below assigns.
        to_child_r, from_child_w = (self._high(fd) for fd in (to_child_r, from_child_w))
        # The child gets the pipe ends as fds 3 (commands in) and 4 (replies out):
        # bash moves them there (dash takes only one-digit fds) and execs Chromium.
        script = f'exec "$0" "$@" 3<&{to_child_r} 4>&{from_child_w} {to_child_r}<&- {from_child_w}>&-'
        self.proc = subprocess.Popen(
            [
                "bash",
                "-c",
                script,
                binary,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            pass_fds=(to_child_r, from_child_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    @staticmethod
    def _high(fd: int) -> int:
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
        os.close(fd)
        return moved

    def close(self) -> None:
        with contextlib.suppress(CDPError, OSError):
            self.send("Browser.close", timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # our own child, by its handle
            self.proc.wait(timeout=10)
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError("timed out waiting for Chromium")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                err = (
                    self.proc.stderr.read().decode(errors="replace")
                    if self.proc.stderr
                    else ""
                )
                raise CDPError(
                    f"Chromium closed its pipe (exit {self.proc.poll()}): {err[-2000:]}"
                )
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {
            "id": self._next_id,
            "method": method,
            "params": params or {},
        }
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            written = os.write(self._to_child, data)
            data = data[written:]
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self.events.append(reply)

    def wait_event(
        self, method: str, session: str, timeout: float | None = None
    ) -> dict[str, Any]:
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for i, event in enumerate(self.events):
                if event["method"] == method and event.get("sessionId") == session:
                    del self.events[i]
                    return event
            message = self._read_message(deadline)
            if "method" in message:
                self.events.append(message)


class Tab:
    def __init__(self, browser: Chromium) -> None:
        self.browser = browser
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.send(
            "Target.attachToTarget", {"targetId": target, "flatten": True}
        )["sessionId"]
        for domain in ("Page.enable", "Runtime.enable", "Network.enable"):
            self.send(domain)

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, session=self.session)

    def resize(self, width: int) -> None:
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {
                "width": width,
                "height": WINDOW_HEIGHTS.get(width, 900),
                "deviceScaleFactor": 1,
                "mobile": False,
            },
        )

    def load(self, url: str) -> list[str]:
        """Load url; return the failed requests (status >= 400) of the site's own host."""
        self.browser.events = [
            e for e in self.browser.events if e.get("sessionId") != self.session
        ]
        self.send("Page.navigate", {"url": url})
        self.browser.wait_event("Page.loadEventFired", self.session)
        host = urlsplit(url).netloc
        failed = []
        requested: dict[str, str] = {}
        for event in self.browser.events:
            if event.get("sessionId") != self.session:
                continue
            if event["method"] == "Network.requestWillBeSent":
                requested[event["params"]["requestId"]] = event["params"]["request"][
                    "url"
                ]
            elif event["method"] == "Network.responseReceived":
                response = event["params"]["response"]
                # The browser asks for /favicon.ico by itself; the site names none.
                if (
                    urlsplit(response["url"]).netloc == host
                    and response["status"] >= 400
                    and urlsplit(response["url"]).path != "/favicon.ico"
                ):
                    failed.append(f"{response['status']} {response['url']}")
            elif event["method"] == "Network.loadingFailed" and not event["params"].get(
                "canceled"
            ):
                where = requested.get(event["params"]["requestId"], "?")
                if urlsplit(where).netloc == host:
                    failed.append(f"{event['params'].get('errorText')} {where}")
        return failed

    def measure(self) -> dict[str, Any]:
        reply = self.send(
            "Runtime.evaluate",
            {
                "expression": MEASURE_JS,
                "awaitPromise": True,
                "returnByValue": True,
            },
        )
        if "exceptionDetails" in reply:
            raise CDPError(f"measuring failed: {reply['exceptionDetails']}")
        value: dict[str, Any] = reply["result"]["value"]
        return value

    def screenshot(self, path: Path, scroll_to_main: bool = False) -> None:
        """The window as a reader sees it: the first screen, or scrolled to the main
        content's top (where a theme puts the navigation first on a narrow window)."""
        y = 0
        if scroll_to_main:
            y = self.send(
                "Runtime.evaluate",
                {
                    "returnByValue": True,
                    "expression": (
                        "Math.max(0, Math.round((document.querySelector('[role=\"main\"]')"
                        " || document.body).getBoundingClientRect().top + window.scrollY))"
                    ),
                },
            )["result"]["value"]
        self.send(
            "Runtime.evaluate",
            {"expression": f"window.scrollTo(0, {y})", "awaitPromise": False},
        )
        self.send(
            "Runtime.evaluate",
            {
                "awaitPromise": True,
                "expression": (
                    "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
                ),
            },
        )
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))


def serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    return server, f"http://127.0.0.1:{port}/"


def page_problems(m: dict[str, Any], width: int) -> list[str]:
    problems = []
    if m["innerWidth"] != width:
        problems.append(f"window is {m['innerWidth']} px, not {width}")
    if m["docScrollWidth"] > m["innerWidth"] + 1:
        problems.append(
            f"page is {m['docScrollWidth']} px wide in a {m['innerWidth']} px window "
            "(it scrolls sideways)"
        )
    if m["mainRight"] > m["innerWidth"] + 1:
        problems.append(
            f"main content column ({m['mainSelector']}) ends at {m['mainRight']} px, "
            f"past the window's {m['innerWidth']} px"
        )
    if m["contentRight"] > min(m["mainRight"], m["innerWidth"]) + 1:
        problems.append(
            f"main content reaches {m['contentRight']} px, past its column "
            f"({m['mainLeft']}-{m['mainRight']} px) or the window"
        )
    for t in m["tables"]:
        if "broken" in t:
            problems.append(
                f"table {t['head']!r}... fits only by cutting {t['broken']!r} mid-word"
            )
        else:
            problems.append(
                f"table {t['head']!r}... is {t['width']} px wide in a {t['limit']} px column"
            )
    if problems:
        problems += [
            f"  past the edge, to {o['right']} px: {o['what']!r}" for o in m["over"]
        ]
    return problems


def github_slug(heading: str) -> str:
    """The anchor GitHub (and MyST, with ``myst_heading_anchors``) gives a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # [text](url) -> text
    text = text.replace("`", "").strip().lower().replace(" ", "-")
    return re.sub(r"[^\w\- ]", "", text)


def markdown_anchors(path: Path) -> set[str]:
    """The heading anchors of a Markdown file, as GitHub renders it."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    fence = None
    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            mark = stripped[:3]
            fence = None if fence == mark else (fence or mark)
            continue
        match = re.match(r"(#{1,6})\s+(.*?)\s*#*\s*$", line) if fence is None else None
        if match:
            slug = github_slug(match.group(2))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def readme_problems(readme: Path) -> tuple[int, list[str]]:
    """Links from README.md to ``docs/*.md#anchor``: the file exists and has the anchor."""
    text = readme.read_text(encoding="utf-8")
    problems = []
    checked = 0
    for target, fragment in re.findall(
        r"\]\(((?!https?://)[^)#\s]+\.md)#([^)\s]+)\)", text
    ):
        checked += 1
        path = readme.parent / target
        if not path.is_file():
            problems.append(f"{readme.name}: link to missing {target}")
        elif fragment not in markdown_anchors(path):
            problems.append(
                f"{readme.name}: link to {target}#{fragment}: no such heading"
            )
    return checked, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", type=Path, help="the built site (docs/_build/html)")
    parser.add_argument(
        "--widths", default="1280,390", help="window widths in px (default 1280,390)"
    )
    parser.add_argument("--screenshots", type=Path, help="folder for the screenshots")
    parser.add_argument(
        "--screenshot-pages",
        default="index.html,settings.html,stats.html",
        help="pages to screenshot (default index, settings, stats)",
    )
    parser.add_argument(
        "--pages", help="only these pages (comma-separated); default every page"
    )
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "chromium"))
    parser.add_argument(
        "--timeout", type=float, default=60, help="seconds per browser step"
    )
    parser.add_argument(
        "--readme",
        type=Path,
        help="also check this file's links to docs/*.md#anchor (README.md)",
    )
    args = parser.parse_args(argv)

    root = args.html.resolve()
    binary = shutil.which(args.chromium)
    if binary is None:
        print(f"error: {args.chromium} not found", file=sys.stderr)
        return 2
    if not (root / "index.html").is_file():
        print(f"error: {root} has no index.html: build the docs first", file=sys.stderr)
        return 2
    widths = [int(w) for w in args.widths.split(",")]
    if args.pages:
        pages = [p.strip() for p in args.pages.split(",")]
    else:
        pages = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html"))
    shots = {p.strip() for p in args.screenshot_pages.split(",") if p.strip()}
    if args.screenshots:
        args.screenshots.mkdir(parents=True, exist_ok=True)

    server, base = serve(root)
    try:
        browser = Chromium(binary, args.timeout)
    except OSError as exc:
        server.shutdown()
        print(f"error: cannot start {binary}: {exc}", file=sys.stderr)
        return 2
    failures: list[str] = []
    ids: dict[str, set[str]] = {}
    links: dict[str, list[str]] = {}
    started = time.monotonic()
    return_code: int | None = None
    try:
        tab = Tab(browser)
        for width in widths:
            tab.resize(width)
            passed = 0
            for page in pages:
                url = urljoin(base, page)
                failed = tab.load(url)
                m = tab.measure()
                problems = page_problems(m, width) + [
                    f"failed to load: {f}" for f in failed
                ]
                if page not in ids:
                    ids[page] = set(m["ids"])
                    links[page] = m["links"]
                if problems:
                    failures.append(
                        f"{page} at {width} px:\n    " + "\n    ".join(problems)
                    )
                    print(f"FAIL {width:4d} px  {page}", flush=True)
                    for problem in problems:
                        print(f"       {problem}", flush=True)
                else:
                    passed += 1
                    print(f"ok   {width:4d} px  {page}", flush=True)
                if page in shots and args.screenshots:
                    name = page.removesuffix(".html").replace("/", "-")
                    tab.screenshot(args.screenshots / f"{name}-{width}.png")
                    tab.screenshot(
                        args.screenshots / f"{name}-{width}-content.png",
                        scroll_to_main=True,
                    )
            print(
                f"{width} px: {passed} of {len(pages)} pages fit "
                f"(page and main content no wider than the window, tables within the column)",
                flush=True,
            )
    except CDPError as exc:
        print(f"error: the browser failed: {exc}", file=sys.stderr)
        return_code = 2
    finally:
        browser.close()
        server.shutdown()
    if return_code is not None:
        return return_code

    # Links: every internal link's page exists, and its #anchor is an id on that page.
    checked = anchors = 0
    broken = []
    for page in pages:
        for href in links.get(page, []):
            if not href.startswith(base):
                continue
            target, fragment = urldefrag(href)
            path = unquote(urlsplit(target).path)[1:]
            if path == "" or path.endswith("/"):
                path += "index.html"
            checked += 1
            if not (root / path).is_file():
                broken.append(f"{page}: link to missing {path}")
                continue
            if fragment and path.endswith(".html"):
                anchors += 1
                if path not in ids:
                    # A page outside the checked set (--pages): read its ids from the file.
                    text = (root / path).read_text(encoding="utf-8", errors="replace")
                    ids[path] = set(re.findall(r'\s(?:id|name)="([^"]+)"', text))
                if unquote(fragment) not in ids[path]:
                    broken.append(f"{page}: link to {path}#{fragment}: no such anchor")
    if args.readme:
        readme_links, readme_broken = readme_problems(args.readme)
        broken += readme_broken
        print(
            f"{args.readme.name}: {readme_links} links to an anchor in docs/*.md checked, "
            f"{len(readme_broken)} broken"
        )
    for b in sorted(set(broken)):
        print(f"BROKEN {b}")
    print(
        f"links: {checked} internal links checked, {anchors} with an #anchor; "
        f"{len(set(broken))} broken"
    )
    total = len(pages) * len(widths)
    print(
        f"checked {len(pages)} pages at {', '.join(f'{w} px' for w in widths)} "
        f"in {time.monotonic() - started:.0f} s: {total - len(failures)} passed, "
        f"{len(failures)} failed; {len(set(broken))} broken links"
    )
    if args.screenshots:
        saved = sorted(p.name for p in args.screenshots.glob("*.png"))
        print(f"screenshots in {args.screenshots}: {', '.join(saved)}")
    return 1 if failures or broken else 0


if __name__ == "__main__":
    sys.exit(main())
