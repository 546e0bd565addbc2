"""The built documentation site in a real headless browser (Debian's chromium driven by
Playwright; nothing is downloaded): at 1280 px no code block needs a sideways scroll bar.
Skipped without chromium, unless DOMINO_REQUIRE_BROWSER=1 (CI) makes that a failure."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    if os.environ.get("DOMINO_REQUIRE_BROWSER") == "1":
        pytest.fail("DOMINO_REQUIRE_BROWSER=1 but no chromium: apt-get install -y chromium", pytrace=False)
    pytest.skip("no chromium on PATH (apt-get install -y chromium)", allow_module_level=True)
pytest.importorskip("mkdocs")
sync_api = pytest.importorskip("playwright.sync_api")

# The code blocks whose content is wider than the block itself (a scroll bar), each as its
# longest line.
OVERFLOWING_CODE = """() => [...document.querySelectorAll("pre > code")]
    .filter(code => code.scrollWidth > code.clientWidth + 1)
    .map(code => code.textContent.split("\\n").reduce((a, b) => (b.length > a.length ? b : a), ""))"""


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    """The site built strict into a temporary folder, served on a free local port."""
    folder = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(folder)],
        cwd=ROOT,
        check=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    pages = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("index.html"))
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(folder))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", pages
    server.shutdown()
    thread.join(timeout=10)


def test_no_code_block_scrolls_sideways_at_1280_px(site: tuple[str, list[str]]) -> None:
    base_url, pages = site
    assert len(pages) > 30  # every rules, guide and API page
    overflowing: dict[str, list[str]] = {}
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        tab = browser.new_page(viewport={"width": 1280, "height": 900})
        for page in pages:
            tab.goto(f"{base_url}/{page}")
            lines = tab.evaluate(OVERFLOWING_CODE)
            if lines:
                overflowing[page] = lines
        browser.close()
    assert overflowing == {}
