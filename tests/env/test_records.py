"""Game records: every variant replays exactly at any step, bad records are refused with a clear
error, and ``evaluate``, ``benchmark`` and ``play`` write them (``--record DIR``)."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import domino_env
from domino_env import GameRecorder, load_record, replay, write_record
from domino_env.agents import make_agent
from domino_env.records import FORMAT, FORMAT_VERSION, package_version
from training.__main__ import main
from training.eval import benchmark

# Every variant at its first standard table (whole matches, the default episode), and what else
# changes a deal: partners, Blind blitz's dealt rows, 3D dominoes' copies of a tile with open
# hands, and a single round.
TABLES: list[tuple[str, dict[str, Any]]] = [
    *((name, dict(spec.benchmark_tables[0])) for name, spec in domino_env.SPECS.items()),
    ("all_fives", {"num_players": 4, "teams": True}),
    ("blind_blitz", {"arrange": "dealt"}),
    ("domino3d", {"num_players": 3, "sets": 2, "open_hands": True}),
    ("classic", {"num_players": 3, "episode": "round"}),
]
TABLE_IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in options.items())}" for name, options in TABLES]


def snapshot(env: Any) -> dict[str, Any]:
    """What the test compares at a step: every agent's observation and mask, the public state,
    who is to move, rewards and flags."""
    raw = env.unwrapped
    return {
        "observations": {a: {k: v.copy() for k, v in raw.observe(a).items()} for a in raw.possible_agents},
        "public": raw.public_state(),
        "agent_selection": raw.agent_selection,
        "rewards": dict(raw._cumulative_rewards),
        "terminations": dict(raw.terminations),
    }


def assert_same(replayed: dict[str, Any], original: dict[str, Any], where: str) -> None:
    for agent, observation in original["observations"].items():
        for key in ("observation", "action_mask"):
            assert np.array_equal(replayed["observations"][agent][key], observation[key]), (where, agent, key)
    for key in ("public", "agent_selection", "rewards", "terminations"):
        assert replayed[key] == original[key], (where, key)


def play_recorded(
    name: str, options: dict[str, Any], seed: int, moves: int | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A seeded game of random and greedy seats, recorded (stopped after ``moves`` moves if given),
    and a snapshot after the deal and after every move."""
    env = domino_env.make(name, **options)
    seats = env.unwrapped.rules.num_players
    agents = [make_agent("greedy" if seat % 2 else "random", seed=seed + seat) for seat in range(seats)]
    recorder = GameRecorder(env, options, ["greedy" if seat % 2 else "random" for seat in range(seats)])
    recorder.reset(seed=seed)
    snapshots = [snapshot(env)]
    raw = env.unwrapped
    while not all(raw.terminations.values()) and (moves is None or len(snapshots) <= moves):
        agent = raw.agent_selection
        recorder.step(agents[raw.possible_agents.index(agent)](raw, env.observe(agent)))
        snapshots.append(snapshot(env))
    return recorder.record(), snapshots


@pytest.fixture(scope="module")
def classic_record() -> dict[str, Any]:
    record, _ = play_recorded("classic", {"num_players": 2}, seed=4)
    assert record["result"]["rounds"] > 1
    return record


@pytest.mark.parametrize(("name", "options"), TABLES, ids=TABLE_IDS)
def test_a_replay_is_the_game_at_every_step_asked(name: str, options: dict[str, Any]) -> None:
    record, snapshots = play_recorded(name, options, seed=11)
    moves = len(record["actions"])
    assert len(snapshots) == moves + 1 and record["result"] is not None
    assert record["result"]["rounds"] == len(record["deals"])
    if options.get("episode") != "round" and domino_env.spec(name).table == "chain":
        assert len(record["deals"]) > 1, "a match of one round: no new deal replayed"
    # the start, the middle, the end, and the first decision of every later round
    round_starts = [
        k + 1 for k in range(moves) if snapshots[k + 1]["public"]["round"] != snapshots[k]["public"]["round"]
    ]
    for step in sorted({0, moves // 2, moves, *round_starts[:3]}):
        assert_same(snapshot(replay(record, step)), snapshots[step], f"step {step} of {moves}")
    assert_same(snapshot(replay(record)), snapshots[-1], "step None")
    assert json.loads(json.dumps(record)) == record  # plain JSON types only


def test_the_record_holds_the_table_the_deals_and_the_moves(classic_record: dict[str, Any]) -> None:
    record = classic_record
    assert (record["format"], record["format_version"]) == (FORMAT, FORMAT_VERSION)
    assert (record["package_version"], record["variant"], record["version"]) == (
        package_version(),
        "classic",
        0,
    )
    assert (record["options"], record["seed"], record["agents"]) == (
        {"num_players": 2},
        4,
        ["random", "greedy"],
    )
    deal = record["deals"][0]
    assert sorted(deal) == ["boneyard", "hands", "leader", "opening"]  # Classic's first round: a double
    assert sum(map(len, deal["hands"])) + len(deal["boneyard"]) == 28
    seat, _, words = record["actions"][0]
    assert seat == deal["leader"] and words == f"{deal['opening']} lead"
    env = replay(record)
    assert record["result"] == {
        "scores": env.unwrapped.public_state()["scores"],
        "outcomes": env.unwrapped.outcomes(),
        "rounds": env.unwrapped.round_index + 1,
    }


def test_a_record_file_reads_back_as_written(classic_record: dict[str, Any], tmp_path: Path) -> None:
    path = write_record(classic_record, tmp_path / "game.json")
    assert load_record(path) == classic_record
    lines = path.read_text().splitlines()
    assert f"    {json.dumps(classic_record['actions'][0])}," in lines  # a move a line
    assert f'      "boneyard": {json.dumps(classic_record["deals"][0]["boneyard"])},' in lines


def test_an_unfinished_game_replays_without_a_result() -> None:
    record, snapshots = play_recorded("blitz", {"num_players": 2}, seed=2, moves=9)
    assert record["result"] is None and len(record["actions"]) == 9
    env = replay(record)
    assert not any(env.unwrapped.terminations.values())
    assert_same(snapshot(env), snapshots[9], "the last move")


def test_the_recorder_refuses_an_illegal_move_and_plays_nothing() -> None:
    env = domino_env.make("classic", illegal_action="penalize")
    recorder = GameRecorder(env, {"illegal_action": "penalize"}, ["a", "b"])
    with pytest.raises(ValueError, match="reset"):
        recorder.step(0)
    recorder.reset(seed=1)
    legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
    illegal = next(a for a in range(env.unwrapped.rules.num_actions) if a not in legal)
    before = snapshot(env)
    with pytest.raises(ValueError, match="legal moves only"):
        recorder.step(illegal)
    assert_same(snapshot(env), before, "after the illegal move")
    assert recorder.record()["actions"] == []
    with pytest.raises(ValueError, match="a string"):
        GameRecorder(env, {}, ["only one"])


def changed(record: dict[str, Any], change: Any) -> dict[str, Any]:
    bad = copy.deepcopy(record)
    change(bad)
    return bad


def swap_tiles(record: dict[str, Any]) -> None:
    """Swap a tile of the first hand with one of the second, neither the opening: still a deal,
    not the game's."""
    deal = record["deals"][0]
    first, second = ([t for t in hand if t != deal["opening"]] for hand in deal["hands"][:2])
    hands = deal["hands"]
    a, b = hands[0].index(first[-1]), hands[1].index(second[-1])
    hands[0][a], hands[1][b] = hands[1][b], hands[0][a]


def set_action(k: int, index: int, value: Any) -> Any:
    def change(record: dict[str, Any]) -> None:
        record["actions"][k][index] = value

    return change


BAD_RECORDS = {
    "another package version": (
        lambda r: r.update(package_version="0.0.1"),
        r"domino-env 0\.0\.1 .*version that wrote it",
    ),
    "another variant version": (
        lambda r: r.update(version=7),
        r"classic_v7; this is domino-env .* classic_v0",
    ),
    "another format version": (
        lambda r: r.update(format_version=2),
        "format_version 2; .* reads format_version 1",
    ),
    "another format": (lambda r: r.update(format="something"), "not a domino-env game record"),
    "a missing field": (lambda r: r.pop("deals"), r"lacks the field\(s\) \['deals'\]"),
    "an unknown field": (lambda r: r.update(note="hi"), r"unknown field\(s\) \['note'\]"),
    "a wrong type": (lambda r: r.update(seed="4"), "'seed' must be an int or null, got '4'"),
    "a negative seed": (lambda r: r.update(seed=-1), "'seed' must be a non-negative int or null, got -1"),
    "a bool for an int": (lambda r: r.update(version=False), "'version' must be an int"),
    "a short move": (lambda r: r["actions"][3].pop(), r"action 3 must be \[seat, action id, words\]"),
    "an unknown variant": (lambda r: r.update(variant="chess"), "unknown variant 'chess'"),
    "a bad option": (lambda r: r["options"].update(num_players=9), "make no table"),
    "too few agents": (lambda r: r["agents"].pop(), r"names 1 agent\(s\) for a table of 2 seats"),
    "an illegal move": (set_action(5, 1, 10**6), "move 5 .* is not legal for seat .*; legal: "),
    "the wrong seat": (
        lambda r: r["actions"][1].__setitem__(0, 1 - r["actions"][1][0]),
        "move 1 is seat .* to move",
    ),
    "words not the move's": (set_action(2, 2, "6-6 somewhere"), "move 2 says '6-6 somewhere', but action"),
    "a tile dealt twice": (
        lambda r: r["deals"][0]["hands"][0].__setitem__(0, r["deals"][0]["hands"][1][0]),
        "deal of round 1 is not a deal of this table: tile .* appears twice",
    ),
    "a tampered deal": (swap_tiles, "not legal|not dealt as recorded"),
    "a deal not whole": (
        lambda r: r["deals"][1].pop("boneyard"),
        r"round 2 is not dealt as recorded \(boneyard differs\)",
    ),
    "a deal too many": (
        lambda r: r["deals"].append(r["deals"][0]),
        "deals for .* round.*, but its moves play",
    ),
    "a tampered result": (lambda r: r["result"]["scores"].reverse(), "but the record says"),
    "moves cut short": (lambda r: r["actions"].pop(), "stop before the end of the match"),
    "a move after the end": (
        lambda r: r["actions"].append(r["actions"][-1]),
        "comes after the end of the match",
    ),
    "no result for a finished game": (
        lambda r: r.update(result=None),
        "no result, but its moves end the match",
    ),
    "a bad result": (lambda r: r.update(result={"scores": [1, 2]}), "'result' must be null or"),
}


@pytest.mark.parametrize("what", BAD_RECORDS)
def test_a_bad_record_is_refused_and_left_as_it_was(classic_record: dict[str, Any], what: str) -> None:
    change, message = BAD_RECORDS[what]
    bad = changed(classic_record, change)
    before = copy.deepcopy(bad)
    with pytest.raises(ValueError, match=message):
        replay(bad)
    assert bad == before


def test_a_step_outside_the_record_is_refused(classic_record: dict[str, Any]) -> None:
    moves = len(classic_record["actions"])
    for step in (-1, moves + 1, True, 2.0):
        with pytest.raises(ValueError, match=rf"step must be an int in 0\.\.{moves}"):
            replay(classic_record, step)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="a game record is a JSON object, got list"):
        replay([])  # type: ignore[arg-type]


def test_a_file_that_is_no_record_is_refused_by_name(classic_record: dict[str, Any], tmp_path: Path) -> None:
    text = write_record(classic_record, tmp_path / "game.json").read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match=r"cut\.json is not a game record: not valid JSON \(.* at line \d+"):
        load_record(cut)
    other = tmp_path / "other.json"
    other.write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"other\.json: a game record is a JSON object, got list"):
        load_record(other)
    with pytest.raises(ValueError, match=r"cannot read the game record .*missing\.json"):
        load_record(tmp_path / "missing.json")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match=r"cannot read the game record .*binary\.json"):
        load_record(binary)


# --- the commands -------------------------------------------------------------------------------


def replayed_files(folder: Path) -> dict[str, dict[str, Any]]:
    """Every record in ``folder`` by file name, each read and replayed to its end."""
    records = {path.name: load_record(path) for path in sorted(folder.iterdir())}
    for record in records.values():
        replay(record)
    return records


def test_evaluate_records_every_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--variant", "blitz", "--games", "2", "--no-progress"]
    agents = ["evaluate", "greedy", "random"]
    assert main([*agents, *args, "--option", "episode=round", "--record", str(tmp_path / "games")]) == 0
    assert f"game records: {tmp_path / 'games'}" in capsys.readouterr().out
    records = replayed_files(tmp_path / "games")
    assert list(records) == [
        "blitz-greedy-vs-random-deal0000-seat0.json",
        "blitz-greedy-vs-random-deal0001-seat1.json",
    ]
    first, second = records.values()
    assert (first["agents"], second["agents"]) == (["greedy", "random"], ["random", "greedy"])
    assert (first["seed"], second["seed"], first["options"]) == (0, 1, {"episode": "round"})
    three = [*agents, "random", *args, "--option", "num_players=3"]  # random given twice
    assert main([*three, "--record", str(tmp_path / "x")]) == 2
    assert "same file names" in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    assert main([*agents, *args, "--record", str(tmp_path / "file")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_benchmark_records_the_games_its_workers_play(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the protocol, without search's cost
    monkeypatch.setattr(benchmark.protocol, "LADDER", ("random", "greedy"))
    monkeypatch.setattr(benchmark.protocol, "TOP", "greedy")
    (tmp_path / "agents").mkdir()  # no shipped agent
    args = ["benchmark", "greedy", "--variants", "blind", "blitz", "--games", "2", "--no-progress"]
    folders = ["--out", str(tmp_path / "out"), "--agents-dir", str(tmp_path / "agents")]
    # two pairings, each played whole by one of two worker processes, which write its records
    assert main([*args, *folders, "--workers", "2", "--fresh", "--record", str(tmp_path / "games")]) == 0
    assert "game records: " in capsys.readouterr().out
    records = replayed_files(tmp_path / "games")  # greedy-random, played once and read both ways
    assert list(records) == [
        f"{variant}-greedy-vs-random-deal0000-seat{seat}.json"
        for variant in ("blind", "blitz")
        for seat in (0, 1)
    ]
    assert {r["seed"] for r in records.values()} == {benchmark.DEAL_SEED}  # one deal, once per seating
    seat0, seat1 = (records[f"blitz-greedy-vs-random-deal0000-seat{seat}.json"]["deals"] for seat in (0, 1))
    assert seat0[0] == seat1[0]  # (later rounds: the same tiles, the leader the last round's winner)


def test_play_records_the_game_finished_or_not(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["play", "--variant", "all_fives", "--option", "episode=round", "--seed", "3", "--seat", "1"]
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * 200))  # always the first move offered
    assert main([*args, "--record", str(tmp_path)]) == 0
    path = tmp_path / "all_fives-person-vs-greedy-seat1-seed3.json"
    assert f"game record: {path}" in capsys.readouterr().out
    record = load_record(path)
    assert record["agents"] == ["greedy", "person"] and record["result"] is not None
    assert all(replay(record).unwrapped.terminations.values())
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    assert main([*args, "--seat", "0", "--record", str(tmp_path)]) == 0
    quit_early = load_record(tmp_path / "all_fives-person-vs-greedy-seat0-seed3.json")
    assert quit_early["result"] is None and len(quit_early["actions"]) <= 1  # the opponent's lead at most
    replay(quit_early)
