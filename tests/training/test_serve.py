"""The web app of ``python -m training serve`` through FastAPI's test client: every endpoint,
bad input answered 400 with the game unchanged, sessions apart, and a round played through the
API that its record replays to."""

from __future__ import annotations

import io
import socket
import warnings
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
with warnings.catch_warnings():  # (starlette's note that httpx has a successor)
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient
from PIL import Image

import domino_env
from training.__main__ import main
from training.apps.serve import create_app

ROUND = {"episode": "round"}
SHIPPED = Path(__file__).resolve().parents[2] / "agents"


@pytest.fixture
def client(tmp_path) -> TestClient:
    return TestClient(create_app(agents_dir=tmp_path))


def new_game(client: TestClient, **fields) -> dict:
    body = {"mode": "play", "variant": "classic", "options": ROUND, "agents": ["random"], "seed": 5, **fields}
    response = client.post("/api/games", json=body)
    assert response.status_code == 200, response.json()
    return response.json()


def play_out(client: TestClient, state: dict) -> dict:
    while not state["finished"]:
        assert state["to_move"] == state["seat"] and state["legal"]
        state = client.post(
            f"/api/games/{state['id']}/move", json={"action": state["legal"][-1]["action"]}
        ).json()
    return state


def test_page_and_catalog(client):
    page = client.get("/")
    assert page.status_code == 200 and "app.js" in page.text
    assert client.get("/static/app.js").status_code == 200
    catalog = client.get("/api/catalog").json()
    assert set(catalog["variants"]) == set(domino_env.SPECS)
    assert {"random", "greedy", "search", "advanced", "expert"} <= set(catalog["agents"])


@pytest.mark.parametrize("variant", ["classic", "domino3d"])
def test_a_round_played_through_the_api_replays_to_the_same_end(client, variant):
    options = {**ROUND, "board_size": 8} if variant == "domino3d" else ROUND
    state = play_out(client, new_game(client, variant=variant, options=options, seat=1))
    assert state["result"] and state["log"]
    record = client.get(f"/api/games/{state['id']}/record").json()
    assert record["agents"] == ["random", "person"] and record["result"] is not None
    replayed = domino_env.replay(record).unwrapped.public_state()
    assert replayed["scores"] == state["public"]["scores"]
    assert replayed["hand_sizes"] == state["public"]["hand_sizes"]


def test_an_illegal_move_is_refused_and_changes_nothing(client):
    state = new_game(client)
    legal = {move["action"] for move in state["legal"]}
    illegal = next(a for a in range(1000) if a not in legal)
    response = client.post(f"/api/games/{state['id']}/move", json={"action": illegal})
    assert response.status_code == 400 and "legal:" in response.json()["detail"]
    assert client.post(f"/api/games/{state['id']}/move", json={"action": "two"}).status_code == 400
    after = client.get(f"/api/games/{state['id']}").json()
    assert after["public"] == state["public"] and after["legal"] == state["legal"]


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"variant": "chess"}, "available: all_fives"),
        ({"agents": ["nobody"]}, "is not random or greedy"),
        ({"options": {"colour": "red"}}, "allowed: num_players"),
        ({"options": {"num_players": 9}}, "not 9"),
        ({"seat": 5}, "seat must be in 0..1"),
        ({"mode": "dance"}, "bad request: mode"),
        ({"mode": "watch", "agents": ["random"] * 3}, "give 1 to 2"),
        ({"seed": -1}, "seed must be a non-negative integer or None, got -1"),
        ({"mode": "watch", "seed": -5}, "seed must be a non-negative integer or None, got -5"),
        ({"seed": "abc"}, "bad request: seed"),
    ],
)
def test_bad_games_are_refused_with_what_is_allowed(client, fields, says):
    body = {"mode": "play", "variant": "classic", "agents": ["random"], **fields}
    response = client.post("/api/games", json=body)
    assert response.status_code == 400 and says in response.json()["detail"]


def test_watch_advances_one_agent_move_at_a_time(client):
    state = new_game(client, mode="watch", agents=["greedy", "random"])
    assert state["legal"] == [] and state["step"] == 0
    after = client.post(f"/api/games/{state['id']}/advance").json()
    assert after["step"] == 1
    assert client.post(f"/api/games/{state['id']}/move", json={"action": 0}).status_code == 400
    while not after["finished"]:
        after = client.post(f"/api/games/{state['id']}/advance").json()
    assert after["result"].startswith("round over")
    assert client.post(f"/api/games/{state['id']}/advance").status_code == 400


def test_two_sessions_are_separate_games(client):
    first, second = new_game(client, seed=1), new_game(client, seed=1)
    assert first["id"] != second["id"] and first["public"] == second["public"]
    client.post(f"/api/games/{first['id']}/move", json={"action": first["legal"][0]["action"]})
    assert client.get(f"/api/games/{second['id']}").json()["public"] == second["public"]
    assert client.get("/api/games/nope").status_code == 404


def test_the_picture_hides_the_others_hands_in_play(client):
    state = new_game(client)
    png = client.get(f"/api/games/{state['id']}/image.png")
    assert png.headers["content-type"] == "image/png"
    picture = Image.open(io.BytesIO(png.content))
    env = domino_env.replay(client.get(f"/api/games/{state['id']}/record").json()).unwrapped
    assert picture.size == env.table_image().shape[1::-1]
    assert Image.fromarray(env.table_image(state["names"], seat=0)).tobytes() == picture.tobytes()
    assert env.table_image(state["names"]).tobytes() != picture.tobytes()  # every hand: not what P0 sees
    assert "board" in state and "P1" in state["board"]


def test_replay_steps_back_and_forth_and_refuses_bad_records(client):
    state = play_out(client, new_game(client))
    record = client.get(f"/api/games/{state['id']}/record").json()
    opened = client.post("/api/replays", json=record).json()
    assert opened["step"] == 0 and opened["steps"] == len(record["actions"])
    at_two = client.post(f"/api/games/{opened['id']}/step", json={"step": 2}).json()
    assert at_two["public"]["table"] == [
        list(t) for t in domino_env.replay(record, 2).unwrapped.public_state()["table"]
    ]
    assert len(at_two["log"]) == 2
    assert client.post(f"/api/games/{opened['id']}/step", json={"step": 999}).status_code == 400
    assert client.post(f"/api/games/{opened['id']}/step?seat=7", json={"step": 1}).status_code == 400
    assert client.get(f"/api/games/{opened['id']}").json()["step"] == 2  # unchanged by the refusals
    seat_view = client.get(f"/api/games/{opened['id']}/image.png?seat=0").content
    every_hand = client.get(f"/api/games/{opened['id']}/image.png?reveal=true").content
    assert seat_view != every_hand
    assert client.get(f"/api/games/{opened['id']}/record").json() == record
    broken = {**record, "actions": [[0, 99999, "nonsense"]]}
    response = client.post("/api/replays", json=broken)
    assert response.status_code == 400 and "not legal" in response.json()["detail"]
    response = client.post("/api/replays", json={**record, "seed": -1})
    assert response.status_code == 400 and "'seed' must be a non-negative int" in response.json()["detail"]
    assert "not JSON" in client.post("/api/replays", content=b"{oops").json()["detail"]
    assert "format" in client.post("/api/replays", json={"hello": 1}).json()["detail"]


@pytest.mark.parametrize(
    ("variant", "options", "says"),
    [
        ("osel", ROUND, "plays only Classic (2 players); choose variant Classic, or another agent"),
        (
            "classic",
            {**ROUND, "num_players": 3},
            'plays only Classic (2 players), not Classic (3 players); set options {"num_players": 2}',
        ),
        (
            "classic",
            {**ROUND, "draw": False},
            'plays only Classic (2 players), not Classic (2 players, "draw": false); '
            'set options {"draw": true}',
        ),
        (
            "classic",
            {**ROUND, "max_pip": 5},
            'plays only Classic (2 players), not Classic (2 players, "max_pip": 5); '
            'leave "max_pip" out of the options',
        ),
    ],
    ids=["variant", "players", "draw", "unset"],
)
def test_an_agent_of_another_table_is_refused_in_the_pages_own_words(variant, options, says):
    """The page has fields, not flags: the message names the variant to choose or the options to
    set, never ``--variant/--option/--config``, and no unset option shows as None."""
    client = TestClient(create_app(agents_dir=SHIPPED))
    agent = str(SHIPPED / "classic.pt")
    response = client.post(
        "/api/games", json={"mode": "play", "variant": variant, "options": options, "agents": [agent]}
    )
    detail = response.json()["detail"]
    assert response.status_code == 400 and detail.startswith(f"the agent {agent} {says}")
    assert "--" not in detail and "None" not in detail and "null" not in detail
    fits = {"mode": "watch", "variant": "classic", "options": ROUND, "agents": [agent, "random"], "seed": 1}
    assert client.post("/api/games", json=fits).status_code == 200  # its own table plays


def test_a_page_names_only_the_checkpoints_the_server_was_started_with(tmp_path):
    """A path on the server that it was not given - a file that exists, one that does not, the
    shipped agent under another spelling of another folder - is refused in the same words, before
    the file is read; the ones it was given (a run folder too) play, alone or guiding a search."""
    foreign = tmp_path / "foreign.pt"
    foreign.write_bytes((SHIPPED / "classic.pt").read_bytes())
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "latest.pt").write_bytes((SHIPPED / "classic.pt").read_bytes())
    client = TestClient(create_app(agents_dir=tmp_path / "none", checkpoints=[str(run)]))
    assert str(run) in client.get("/api/catalog").json()["agents"]
    body = {"mode": "watch", "variant": "classic", "options": ROUND, "seed": 1}
    for name in (str(foreign), str(tmp_path / "missing.pt"), f"search:{foreign}", "/etc/passwd", "a\x00b"):
        response = client.post("/api/games", json={**body, "agents": [name, "random"]})
        detail = response.json()["detail"]
        assert response.status_code == 400 and detail.startswith(f"agent {name!r} is not random or greedy")
        assert f"this server plays ({run}, " in detail and detail.endswith("started with --agent PATH")
    for name in (str(run), str(run / "checkpoints" / "latest.pt"), f"search:2:{run}"):
        response = client.post("/api/games", json={**body, "agents": [name, "random"]})
        assert response.status_code == 200, response.json()
    (run / "checkpoints" / "latest.pt").rename(run / "checkpoints" / "iter_00001.pt")  # (being rewritten)
    response = client.post("/api/games", json={**body, "agents": [str(foreign), "random"]})
    assert response.status_code == 400 and "is not random or greedy" in response.json()["detail"]
    (tmp_path / "link").symlink_to(run)  # (the same folder under another name: listed once)
    again = TestClient(
        create_app(agents_dir=tmp_path / "none", checkpoints=[str(run), str(tmp_path / "link")])
    )
    assert str(run) in again.get("/api/catalog").json()["agents"]
    assert str(tmp_path / "link") not in again.get("/api/catalog").json()["agents"]


def test_serve_refuses_an_agent_that_is_no_checkpoint_in_one_line(monkeypatch, capsys, tmp_path):
    err = serve_fails(
        monkeypatch, capsys, "--agent", str(tmp_path / "nothing.pt"), "--agents-dir", str(tmp_path)
    )
    assert f"checkpoint {tmp_path / 'nothing.pt'} does not exist" in err


@pytest.mark.parametrize(
    ("variant", "word"), [("classic", "penalty points, lower wins"), ("all_fives", "scores")]
)
def test_the_state_says_what_the_numbers_are(client, variant, word):
    """Classic's totals are penalties (the lower wins), in the result of a game played, of a game
    watched, and in the table in words; All Fives' stay scores."""
    played = play_out(client, new_game(client, variant=variant))
    assert f"({word}: P0 (you) " in played["result"]
    watched = new_game(client, variant=variant, mode="watch", agents=["greedy"])
    while not watched["finished"]:
        watched = client.post(f"/api/games/{watched['id']}/advance").json()
    assert watched["result"].startswith(f"round over ({word}: P0 (greedy) ")
    assert ("penalty" in played["board"] + watched["board"] + watched["result"]) == (variant == "classic")
    if variant == "classic":
        assert " - scores (penalty points, lower wins): " in watched["board"]


def serve_fails(monkeypatch, capsys, *args: str) -> str:
    """``serve`` refused before it announced anything or started a server: exit status 2, one
    line on stderr."""
    import uvicorn

    def started(*_: object, **__: object) -> None:
        raise AssertionError("the server was started")

    monkeypatch.setattr(uvicorn, "run", started)
    monkeypatch.setattr(uvicorn.Server, "run", started)
    assert main(["serve", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err and err.startswith("error: ")
    assert len(err.strip().splitlines()) == 1
    return err


@pytest.mark.parametrize("port", ["99999", "0", "-1", "65536"])
def test_serve_refuses_a_port_out_of_range_in_one_line(monkeypatch, capsys, port):
    err = serve_fails(monkeypatch, capsys, "--port", port)
    assert f"the port must be a number from 1 to 65535, got {port}" in err


def test_serve_refuses_a_port_in_use_in_one_line(monkeypatch, capsys, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        err = serve_fails(monkeypatch, capsys, "--port", str(port), "--agents-dir", str(tmp_path))
    assert f"cannot serve on 127.0.0.1:{port}: address already in use" in err
