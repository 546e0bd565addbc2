"""The search tiers' names everywhere an agent name goes: ``advanced`` and ``expert`` are
accepted by every command, a training config, the single-agent wrapper and the web app, and a
malformed tier (``expert:16``, ``advanced:abc``) is refused in one line naming the allowed
forms, exit status 2, with nothing written.

Most tests shrink the tiers (:func:`small_tiers`): the names and the plumbing are under test
here, not the search's strength (test_expert.py). The tiers are looked up in
``domino_env.agents.expert.TIERS`` at every call, and the commands run with ``--workers 1``
play in this process, so the patch reaches every game."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from domino_env.agents import ExpertAgent, expert, make_agent
from domino_env.wrappers import SingleAgentEnv
from tests.support.training_helpers import ROOT
from training.__main__ import main
from training.eval import benchmark
from training.model.config import ConfigError, load_config

ALLOWED = "allowed: advanced, expert"
MALFORMED = ["expert:16", "advanced:abc"]
ROUND = ["--variant", "blitz", "--option", "episode=round"]  # a single Blitz round: a few decisions


@pytest.fixture
def small_tiers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both tiers at a few evaluations a decision (the solver kept, on a small node budget)."""
    small = {
        name: dataclasses.replace(tier, budget=4, max_worlds=2, min_worlds=1, node_budget=50, solve_nodes=200)
        for name, tier in expert.TIERS.items()
    }
    monkeypatch.setattr(expert, "TIERS", MappingProxyType(small))
    agent = make_agent("expert")
    assert isinstance(agent, ExpertAgent) and agent.tier == small["expert"]


def refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run a command that must refuse a tier name: exit 2, one line on stderr, nothing on stdout."""
    code = main(argv)  # (an argparse refusal would raise SystemExit: none is expected)
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


# --- accepted -----------------------------------------------------------------------------


@pytest.mark.parametrize("tier", ["advanced", "expert"])
def test_evaluate_plays_a_tier_at_its_real_budget(
    tier: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "results.csv"
    args = ["evaluate", tier, "random", *ROUND, "--games", "2", "--csv", str(table), "--no-progress"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert any(line.split()[:2] == [tier, "random"] for line in out.splitlines()), out
    rows = list(csv.DictReader(table.open()))
    assert [(r["agent"], r["opponent"], r["games"]) for r in rows] == [(tier, "random", "2")]


def test_record_takes_a_tier(small_tiers: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gif = tmp_path / "game.gif"
    assert main(["record", "blitz", "expert", "random", "--out", str(gif), "--max-frames", "4"]) == 0
    out = capsys.readouterr().out
    assert "P0 expert" in out and "P1 random" in out
    assert gif.stat().st_size > 0


def test_ladder_takes_a_tier_and_rating_refuses_a_malformed_one(
    small_tiers: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ladder"
    args = ["ladder", "random", "expert", "--variant", "blitz", "--games", "2", "--out", str(out)]
    assert main([*args, "--workers", "1", "--no-progress"]) == 0
    assert "expert" in capsys.readouterr().out
    saved = json.loads((out / "ladder.json").read_text())
    assert saved["rungs"] == ["random", "expert"]
    before = sorted(p.name for p in out.iterdir())
    rated = tmp_path / "rated"
    err = refused(
        capsys, ["ladder", "--rate", "expert:16", "--against", str(out / "ladder.json"), "--out", str(rated)]
    )
    assert ALLOWED in err
    assert not rated.exists() and sorted(p.name for p in out.iterdir()) == before


def test_benchmark_takes_a_tier(
    small_tiers: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the ladder's top rung is expert (shrunk); greedy as the given agent meets it
    monkeypatch.setattr(benchmark.protocol, "LADDER", ("random", "expert"))
    assert benchmark.TOP == "expert"
    out = tmp_path / "bench"
    args = ["benchmark", "greedy", "expert", "--variants", "blitz", "--games", "2", "--workers", "1"]
    agents_dir = tmp_path / "agents"  # no shipped agent: nothing but the ladder and the given
    assert main([*args, "--out", str(out), "--fresh", "--agents-dir", str(agents_dir), "--no-progress"]) == 0
    assert any(line.startswith("expert ") for line in capsys.readouterr().out.splitlines())
    rows = list(csv.DictReader((out / "benchmark.csv").open()))
    pairs = {(r["agent"], r["opponent"]) for r in rows}
    assert {("greedy", "expert"), ("expert", "random"), ("random", "expert")} <= pairs
    summary = json.loads((out / "summary.json").read_text())
    assert {"greedy", "expert"} <= set(summary["agents"])
    assert summary["agents"]["expert"]["scores"]["blitz"] == pytest.approx(1.0)  # the scale's top


def test_play_takes_a_tier(
    small_tiers: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * 40))  # the first move, every time
    folder = tmp_path / "games"
    args = ["play", "--opponent", "expert", *ROUND, "--seed", "3", "--record", str(folder)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "against expert" in out.splitlines()[0] and "P1 (expert)" in out
    (record,) = folder.glob("*.json")
    saved = json.loads(record.read_text())
    assert saved["agents"][1] == "expert" and saved["result"] is not None  # the round was played out


def test_a_config_names_a_tier_as_baseline_and_opponent() -> None:
    config = load_config(
        None, ["env.variant=blitz", "pool.baselines=[expert]", "eval.opponents=[random, expert]"]
    )
    assert config.pool.baselines == ["expert"] and config.eval.opponents == ["random", "expert"]


@pytest.mark.parametrize("key", ["pool.baselines", "eval.opponents"])
@pytest.mark.parametrize("name", MALFORMED)
def test_a_config_refuses_a_malformed_tier(key: str, name: str) -> None:
    with pytest.raises(ConfigError, match=rf"{key}: .*{ALLOWED}"):
        load_config(None, [f"{key}=['{name}']"])


def test_the_single_agent_wrapper_takes_expert_and_refuses_a_malformed_tier(
    small_tiers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    searched: list[int] = []  # the expert's decisions with a choice to make
    first_batch = ExpertAgent.first_batch

    def counted(self: ExpertAgent, *args: Any) -> int:
        searched.append(1)
        return first_batch(self, *args)

    monkeypatch.setattr(ExpertAgent, "first_batch", counted)
    env = SingleAgentEnv("classic", opponents="expert", num_players=2)
    (opponent,) = [agent for agent in env.agents if agent is not None]
    assert isinstance(opponent, ExpertAgent) and opponent.name == "expert"
    env.reset(seed=0)
    steps = 0
    terminated = truncated = False
    while not (terminated or truncated) and steps < 6:
        _, _, terminated, truncated, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        steps += 1
    assert steps >= 2 and searched  # the expert searched in between
    for name in MALFORMED:
        with pytest.raises(ValueError, match=ALLOWED):
            SingleAgentEnv("classic", opponents=name, num_players=2).reset(seed=0)


# --- refused ------------------------------------------------------------------------------


def commands(name: str, tmp: Path) -> dict[str, tuple[list[str], Path]]:
    """Each command naming ``name`` as an agent, and the output it must not create."""
    out = tmp / "out"
    blitz = str(ROOT / "configs" / "blitz.yaml")
    return {
        "evaluate": (
            ["evaluate", name, "random", *ROUND, "--csv", str(out / "r.csv"), "--record", str(out)],
            out,
        ),
        "evaluate-second": (["evaluate", "random", name, *ROUND, "--record", str(out)], out),
        "record": (["record", "blitz", "random", name, "--out", str(out / "game.gif")], out),
        "ladder": (["ladder", "random", name, "--variant", "blitz", "--out", str(out)], out),
        "benchmark": (["benchmark", name, "--variants", "blitz", "--out", str(out)], out),
        "exploit": (["exploit", name, "--variant", "blitz", "--out-dir", str(out)], out),
        "exploitability": (
            ["exploitability", name, "--variant", "classic", "--preset", "tiny", "--out-dir", str(out)],
            out,
        ),
        "play": (["play", "--opponent", name, *ROUND, "--record", str(out)], out),
        "train": (["train", blitz, f"pool.baselines=[{name}]", f"run.out_dir={out}"], out),
        "train-eval": (["train", blitz, f"eval.opponents=[{name}]", f"run.out_dir={out}"], out),
        "ship": (["ship", blitz, "--opponents", "random", name, "--agents-dir", str(out)], out),
    }


COMMANDS = list(commands("expert:16", Path()))


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("name", MALFORMED)
def test_every_command_refuses_a_malformed_tier_in_one_line_writing_nothing(
    command: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, out = commands(name, tmp_path)[command]
    err = refused(capsys, [*argv, "--no-progress"] if command not in ("record", "play") else argv)
    assert ALLOWED in err and repr(name) in err, err
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_the_web_app_takes_a_tier_and_refuses_a_malformed_one(small_tiers: None, tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    import warnings

    with warnings.catch_warnings():  # (starlette's note that httpx has a successor)
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    from training.apps.serve import create_app

    client = TestClient(create_app(agents_dir=tmp_path))
    body = {"variant": "blitz", "options": {"episode": "round"}, "seed": 2}
    state = client.post("/api/games", json={**body, "mode": "watch", "agents": ["expert", "advanced"]}).json()
    assert "expert" in json.dumps(state) and "advanced" in json.dumps(state)
    while not state["finished"]:
        response = client.post(f"/api/games/{state['id']}/advance")
        assert response.status_code == 200, response.json()
        state = response.json()
    played = client.post("/api/games", json={**body, "mode": "play", "agents": ["expert"]})
    assert played.status_code == 200 and played.json()["to_move"] == played.json()["seat"]
    for name in MALFORMED:
        response = client.post("/api/games", json={**body, "mode": "play", "agents": [name]})
        assert response.status_code == 400 and ALLOWED in response.json()["detail"]
