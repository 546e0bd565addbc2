"""``algorithm=cfr``: tabular CFR+ on the tiny table's game tree, its average policy fitted into
a network at the powers of two and the last iteration: the run folder and checkpoints every
command reads, the tabular NashConv equal to ``GameTree.cfr_plus``'s, a fitted network far
less exploitable than uniform play, and the refusals (a table without a tree, --resume, --ray,
an earlier run)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest

from domino_env.gametree import GameTree
from tests.support.training_helpers import write
from training.__main__ import main
from training.cli.train import run_cfr
from training.eval.exploitability import network_policy, observe_all
from training.model import checkpoint
from training.model.config import ConfigError, load_config
from training.rl.cfr import CFRSolver, checkpoint_iterations
from training.rl.train import Trainer

ITERATIONS = 16
TINY_CFR = ["algorithm=cfr", f"cfr.iterations={ITERATIONS}", "cfr.fit_epochs=60", "network.hidden=[32]"]


def train_args(out_dir: Path, *more: str) -> list[str]:
    return ["train", "configs/classic_tiny.yaml", *TINY_CFR, f"run.out_dir={json.dumps(str(out_dir))}", *more]


@pytest.fixture(scope="module")
def solved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One cfr run on the tiny table, through the CLI: its run folder and what it printed."""
    out_dir = tmp_path_factory.mktemp("cfr")
    printed = io.StringIO()  # (module scope: no capsys)
    with contextlib.redirect_stdout(printed):
        assert main([*train_args(out_dir), "--no-progress"]) == 0
    return out_dir / "classic-1", printed.getvalue()


@pytest.fixture(scope="module")
def tree() -> GameTree:
    return GameTree.build("classic", preset="tiny")


def test_checkpoint_iterations_are_the_powers_of_two_and_the_last() -> None:
    assert checkpoint_iterations(1) == [1]
    assert checkpoint_iterations(16) == [1, 2, 4, 8, 16]
    assert checkpoint_iterations(20) == [1, 2, 4, 8, 16, 20]
    assert checkpoint_iterations(0) == []
    assert checkpoint_iterations(300, first=64) == [64, 128, 256, 300]  # (mccfr's: from 2**6)
    assert checkpoint_iterations(20, first=64) == [20]


def test_a_run_writes_every_checkpoint_in_the_common_format(solved: tuple[Path, str], tree: GameTree) -> None:
    run_dir, printed = solved
    folder = run_dir / "checkpoints"
    names = sorted(p.name for p in folder.iterdir())
    assert names == [*(f"iter_{t:05d}.pt" for t in (1, 2, 4, 8, 16)), "latest.pt"]
    assert (run_dir / "tb").is_dir() and any((run_dir / "tb").iterdir())
    assert printed.splitlines()[-1] == f"final checkpoint: {folder / 'iter_00016.pt'}"
    assert "iteration 16: NashConv tabular" in printed
    data = checkpoint.load(folder / "latest.pt")
    expected = {"model", "optimizer", "config", "obs_size", "num_actions", "architecture", "iteration"}
    assert expected | {"steps", "rng", "nash_conv"} <= set(data)
    assert data["config"].algorithm == "cfr" and data["iteration"] == ITERATIONS
    # steps: the decision nodes CFR+ visited, every one once per seat and iteration
    assert data["steps"] == ITERATIONS * tree.num_players * tree.size.decisions == 16 * 2 * 334
    assert checkpoint.load(folder / "iter_00004.pt")["steps"] == 4 * 2 * 334


def test_the_tabular_nash_conv_is_cfr_plus_own(solved: tuple[Path, str], tree: GameTree) -> None:
    run_dir, _ = solved
    _, curve = tree.cfr_plus(ITERATIONS, checkpoint_iterations(ITERATIONS))
    for t, value in curve:
        saved = checkpoint.load(run_dir / "checkpoints" / f"iter_{t:05d}.pt")["nash_conv"]
        assert saved["tabular"] == value  # exactly: the same arithmetic, the same run


def test_the_fitted_network_is_far_less_exploitable_than_uniform(
    solved: tuple[Path, str], tree: GameTree
) -> None:
    run_dir, _ = solved
    observed = observe_all(tree, progress=False)
    fitted = tree.nash_conv(network_policy(tree, run_dir, observed))
    uniform = tree.nash_conv(tree.uniform())
    assert fitted < uniform / 10  # (uniform: 0.0222; the tabular policy at 16: 0.00016)
    saved = checkpoint.load(run_dir)["nash_conv"]
    assert saved["network"] == pytest.approx(fitted, rel=1e-9, abs=1e-12)  # the run's own reading
    first = checkpoint.load(run_dir / "checkpoints" / "iter_00001.pt")["nash_conv"]["network"]
    assert fitted < first  # (the first: CFR+'s first average policy, uniform play)


def test_its_checkpoint_plays_in_evaluate(
    solved: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, _ = solved
    assert main(["evaluate", str(run_dir), "random", "--games", "4", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "classic-1/latest" in out and "random" in out


def test_a_table_without_a_game_tree_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = write(tmp_path, "env:\n  variant: classic\n  options: {num_players: 2, episode: round}\n")
    match = write(tmp_path, "env:\n  variant: classic\n  options: {num_players: 2}\n", "match.yaml")
    for path, why in ((full, "deals a round"), (match, "plays whole matches")):
        out_dir = json.dumps(str(tmp_path / "runs"))
        assert main(["train", str(path), "algorithm=cfr", f"run.out_dir={out_dir}", "--no-progress"]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and why in err
        assert err.startswith("error: algorithm=cfr solves the table's whole game tree")
        assert "preset: tiny, small or medium" in err
        assert not (tmp_path / "runs").exists()  # nothing written
    with pytest.raises(ConfigError, match="deals a round"):
        CFRSolver(load_config(full, ["algorithm=cfr"]))


def test_unknown_algorithms_are_still_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "configs/classic_tiny.yaml", "algorithm=cfrr"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown algorithm 'cfrr'; known: ")
    assert {"cfr", "mccfr"} <= set(err.split("known: ")[1].strip().split(", "))
    assert err.count("\n") == 1


def test_resume_ray_and_an_earlier_run_are_refused(
    solved: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, _ = solved
    assert main([*train_args(tmp_path), "--resume", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: algorithm=cfr cannot --resume") and err.count("\n") == 1
    ray = argparse.Namespace(ray=2, ray_address=None, resume=None, overwrite=False, no_progress=True)
    with pytest.raises(ConfigError, match="algorithm=cfr plays no games: --ray"):  # (without the ray extra)
        run_cfr(load_config("configs/classic_tiny.yaml", TINY_CFR), ray)
    before = sorted(p.name for p in (run_dir / "checkpoints").iterdir())
    assert main([*train_args(run_dir.parent), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "already holds a run (checkpoints, tb)" in err and "--overwrite" in err
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == before  # untouched


def test_overwrite_starts_over_and_seeds_repeat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = [*train_args(tmp_path, "cfr.iterations=2", "cfr.fit_epochs=5"), "--no-progress"]
    assert main(args) == 0
    first = checkpoint.load(tmp_path / "classic-1")
    (tmp_path / "classic-1" / "evaluations.csv").write_text("an earlier run's\n")
    assert main([*args, "--overwrite"]) == 0
    again = checkpoint.load(tmp_path / "classic-1")
    assert not (tmp_path / "classic-1" / "evaluations.csv").exists()
    assert sorted(p.name for p in (tmp_path / "classic-1" / "checkpoints").iterdir()) == [
        "iter_00001.pt",
        "iter_00002.pt",
        "latest.pt",
    ]
    for name, weights in first["model"].items():  # the same seed: the same network
        assert np.array_equal(weights.numpy(), again["model"][name].numpy())
    capsys.readouterr()


# --- algorithm=mccfr: external-sampling MCCFR, the same run folder and checkpoints -----------------

MCCFR_ITERATIONS = 1024
TINY_MCCFR = [
    "algorithm=mccfr",
    f"mccfr.iterations={MCCFR_ITERATIONS}",
    "mccfr.fit_epochs=60",
    "network.hidden=[32]",
]


@pytest.fixture(scope="module")
def sampled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One mccfr run on the tiny table, through the CLI: its run folder and what it printed."""
    out_dir = tmp_path_factory.mktemp("mccfr")
    printed = io.StringIO()
    args = ["train", "configs/classic_tiny.yaml", *TINY_MCCFR, f"run.out_dir={json.dumps(str(out_dir))}"]
    with contextlib.redirect_stdout(printed):
        assert main([*args, "--no-progress"]) == 0
    return out_dir / "classic-1", printed.getvalue()


def test_an_mccfr_run_checkpoints_its_fitted_average_policy(
    sampled: tuple[Path, str], tree: GameTree
) -> None:
    run_dir, printed = sampled
    folder = run_dir / "checkpoints"
    marks = (64, 128, 256, 512, 1024)  # the powers of two from 2**6, and the last
    assert sorted(p.name for p in folder.iterdir()) == [*(f"iter_{t:05d}.pt" for t in marks), "latest.pt"]
    assert printed.splitlines()[-1] == f"final checkpoint: {folder / 'iter_01024.pt'}"
    assert "iteration 1024: NashConv tabular" in printed
    data = checkpoint.load(folder / "latest.pt")
    assert {"model", "optimizer", "config", "architecture", "iteration", "steps", "rng", "nash_conv"} <= set(
        data
    )
    assert data["config"].algorithm == "mccfr" and data["iteration"] == MCCFR_ITERATIONS
    # steps: the decision nodes the sampled traversals touched, the run's own (seed run.seed)
    stepped = list(tree.external_sampling_averages(MCCFR_ITERATIONS, marks, seed=1))
    for t, average, touched in stepped:
        saved = checkpoint.load(folder / f"iter_{t:05d}.pt")
        assert saved["steps"] == touched and saved["nash_conv"]["tabular"] == tree.nash_conv(average)
    assert data["steps"] < MCCFR_ITERATIONS * tree.num_players * tree.size.decisions / 10
    # the fitted network: well below uniform play (0.0222; the tabular policy: 0.0016)
    observed = observe_all(tree, progress=False)
    fitted = tree.nash_conv(network_policy(tree, run_dir, observed))
    assert fitted < tree.nash_conv(tree.uniform()) / 4
    assert data["nash_conv"]["network"] == pytest.approx(fitted, rel=1e-9, abs=1e-12)


def test_mccfr_is_refused_where_cfr_is(
    sampled: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, _ = sampled
    args = ["train", "configs/classic_tiny.yaml", *TINY_MCCFR, f"run.out_dir={json.dumps(str(tmp_path))}"]
    assert main([*args, "--resume", str(run_dir)]) == 2
    assert capsys.readouterr().err.startswith("error: algorithm=mccfr cannot --resume")
    ray = argparse.Namespace(ray=2, ray_address=None, resume=None, overwrite=False, no_progress=True)
    with pytest.raises(ConfigError, match="algorithm=mccfr plays no games: --ray"):
        run_cfr(load_config("configs/classic_tiny.yaml", TINY_MCCFR), ray)
    with pytest.raises(ConfigError, match="algorithm=mccfr solves the game tree rather than training here"):
        Trainer(load_config("configs/classic_tiny.yaml", ["algorithm=mccfr"]))
    with pytest.raises(ConfigError, match="the mccfr settings apply to algorithm=mccfr only"):
        load_config("configs/classic_tiny.yaml", ["algorithm=cfr", "mccfr.iterations=8"])
    with pytest.raises(ConfigError, match=r"mccfr\.iterations must be at least 1, got 0"):
        load_config("configs/classic_tiny.yaml", ["algorithm=mccfr", "mccfr.iterations=0"])
    assert load_config("configs/classic_tiny.yaml", ["algorithm=mccfr"]).mccfr.iterations == 2**17
