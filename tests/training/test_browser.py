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

from training.apps.serve import create_app  # noqa: E402

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
def browser(base_url):
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def page(browser):
    return browser.new_page(viewport={"width": 1400, "height": 950})


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


# Every line of an element's text inside its box (not cut at the right edge): the box scrolls no
# wider than it is, and each line's rectangle ends within it.
OVERFLOW = """id => {
  const box = document.getElementById(id);
  const edge = box.getBoundingClientRect().right;
  const range = document.createRange();
  range.selectNodeContents(box);
  const past = [...range.getClientRects()].filter((line) => line.right > edge + 0.5).length;
  const page = document.documentElement.scrollWidth - innerWidth;
  return {scrolls: box.scrollWidth - box.clientWidth, past, page};
}"""


def twelve_steps(tab, button: str, mode: str) -> None:
    """Click ``button`` twelve times, each time waiting for the step it makes (then a picture of
    the page for the docs, when asked for)."""
    for step in range(1, 13):
        tab.click(button)
        tab.wait_for_function(f"game.step === {step}")
    if SCREENSHOT:
        tab.screenshot(path=SCREENSHOT.replace(".png", f"-{mode}.png"), full_page=True)


def test_the_table_in_words_stays_inside_its_box_in_watch_and_replay(browser, base_url, tmp_path):
    """At 1280 px, a table of four with long names: the last events' line (and every other) wraps
    inside the box in watch mode and in replay mode, and the page gets no horizontal scroll; the
    words say what Classic's numbers are (penalties, the lower winning)."""
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    tab.goto(base_url)
    tab.check("input[name='mode'][value='watch']")
    tab.select_option("#variant", "classic")
    tab.fill("#options", json.dumps({"episode": "round", "num_players": 4, "teams": True}))
    tab.fill("#agents", "greedy random")
    tab.fill("#seed", "3")
    tab.click("#start")
    tab.wait_for_selector("#game[data-mode='watch']")
    twelve_steps(tab, "#step-once", "watch")
    board = tab.inner_text("#board")
    assert "last: " in board and "penalty points, lower wins" in board
    assert max(map(len, board.splitlines())) > 80  # long enough to have run past a 1280 px page's box
    assert tab.evaluate(OVERFLOW, "board") == {"scrolls": 0, "past": 0, "page": 0}
    while tab.get_attribute("#game", "data-finished") != "true":
        step = tab.evaluate("game.step")
        tab.click("#step-once")
        tab.wait_for_function(f"game.step === {step + 1}")
    assert "penalty points, lower wins" in tab.inner_text("#status")
    with urllib.request.urlopen(f"{base_url}/api/games/{tab.evaluate('game.id')}/record") as answer:
        record = answer.read()
    path = tmp_path / "game.json"
    path.write_bytes(record)
    tab.check("input[name='mode'][value='replay']")
    tab.set_input_files("#record-file", str(path))
    tab.wait_for_selector("#game[data-mode='replay']")
    twelve_steps(tab, "#forward", "replay")
    assert "last: " in tab.inner_text("#board")
    assert tab.evaluate(OVERFLOW, "board") == {"scrolls": 0, "past": 0, "page": 0}
    assert tab.evaluate(OVERFLOW, "log")["past"] == 0
    tab.close()
