"""The page of ``python -m training serve`` in a real headless browser (Debian's chromium driven
by Playwright's Python package; no browser is downloaded): a whole round of Classic and of 3D
dominoes played by clicking the legal moves, checked against the game's record. Skipped without
chromium, unless DOMINO_REQUIRE_BROWSER=1 (CI) makes that a failure."""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
import urllib.request
from pathlib import Path

import pytest

import domino_env

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists() or not shutil.which("chromium"):
    if os.environ.get("DOMINO_REQUIRE_BROWSER") == "1":
        pytest.fail("DOMINO_REQUIRE_BROWSER=1 but no chromium: apt-get install -y chromium", pytrace=False)
    pytest.skip("no chromium on PATH (apt-get install -y chromium)", allow_module_level=True)
uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")

from training.serve import create_app  # noqa: E402

SCREENSHOT = os.environ.get("DOMINO_SERVE_SCREENSHOT")  # where to save the play page's picture


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(tmp_path_factory.mktemp("agents")), port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def page(base_url):
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        tab = browser.new_page(viewport={"width": 1400, "height": 950})
        yield tab
        browser.close()


@pytest.mark.parametrize(
    ("variant", "options"),
    [("classic", {"episode": "round"}), ("domino3d", {"episode": "round", "board_size": 8})],
)
def test_a_round_played_by_clicking_matches_its_record(page, base_url, variant, options):
    page.goto(base_url)
    page.select_option("#variant", variant)
    page.fill("#options", json.dumps(options))
    page.fill("#agents", "random")
    page.fill("#seed", "3")
    page.click("#start")
    page.wait_for_selector("#game[data-mode='play']")
    clicks = 0
    while page.get_attribute("#game", "data-finished") != "true":
        page.wait_for_selector("#moves button.move")
        if clicks == 1 and SCREENSHOT and variant == "classic":
            page.screenshot(path=SCREENSHOT, full_page=True)
        before = page.inner_text("#log")
        page.locator("#moves button.move").first.click()
        page.wait_for_function("before => document.getElementById('log').innerText !== before", arg=before)
        clicks += 1
    assert clicks > 0 and "over" in page.inner_text("#status")
    game_id = page.evaluate("game.id")
    with urllib.request.urlopen(f"{base_url}/api/games/{game_id}/record") as answer:
        record = json.load(answer)
    assert sum(seat == 0 for seat, _, _ in record["actions"]) == clicks
    with urllib.request.urlopen(f"{base_url}/api/games/{game_id}") as answer:
        shown = json.load(answer)["public"]
    replayed = json.loads(json.dumps(domino_env.replay(record).unwrapped.public_state()))
    assert replayed == shown
