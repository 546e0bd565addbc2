"""Checkpoints: round trips, exact resumes (also after Ctrl-C), refusals of damaged, foreign or
mismatched files, run folders, weights-only exports and RNG states."""

from __future__ import annotations

import copy
import csv
import os
import pickle
import random
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import domino_env
import training.rl.train as train_module
from domino_env import raw_env
from domino_env.core.grid import Geometry
from domino_env.core.line import Line
from domino_env.core.tiles import TileSet
from tests.support.helpers import play_random
from tests.support.training_helpers import ROOT, random_masks, resumed_halfway, tiny_config
from training.__main__ import main
from training.agents import resolve_agent
from training.model import checkpoint
from training.model.checkpoint import CheckpointError, load_model
from training.model.config import ConfigError
from training.rl.train import Trainer


@pytest.fixture(scope="module")
def classic_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two iterations of tiny self-play on Classic, 2 players: its checkpoints folder."""
    out = tmp_path_factory.mktemp("classic_run")
    trainer = Trainer(tiny_config(out))
    trainer.train(progress=False)
    return trainer.run_dir / "checkpoints"


def test_checkpoint_round_trip_gives_identical_outputs(tmp_path: Path) -> None:
    trainer = Trainer(tiny_config(tmp_path))
    path = trainer.train(progress=False)
    assert path.name == "iter_00002.pt"
    for source in (path, path.parent / "latest.pt"):
        model, config = load_model(source, trainer.collector.obs_size, trainer.collector.num_actions)
        assert config == trainer.config
        assert not model.training
        for name, value in trainer.model.state_dict().items():
            assert torch.equal(model.state_dict()[name], value)
        rng = np.random.default_rng(0)
        obs = torch.from_numpy(rng.normal(size=(50, trainer.collector.obs_size)).astype(np.float32))
        masks = torch.from_numpy(random_masks(rng, 50, trainer.collector.num_actions))
        trainer.model.eval()
        mine, value = trainer.model.distribution(obs, masks)
        theirs, their_value = model.distribution(obs, masks)
        assert torch.equal(mine.probs, theirs.probs) and torch.equal(value, their_value)
    data = checkpoint.load(path)
    assert data["iteration"] == 2 and data["steps"] == 128


def test_resume_is_exact(tmp_path: Path) -> None:
    """Four iterations straight, against two, a checkpoint, and two more in a fresh trainer
    resumed from it: bitwise-identical weights. The pool, annealing and evaluation run too."""
    overrides = [
        "run.total_steps=256",  # four iterations of 4 envs x 16 decisions
        "run.checkpoint_every=2",
        "pool.share=0.5",
        "pool.snapshot_every=1",
        "pool.size=2",
        "pool.baselines=[random, greedy]",  # baselines in the pool, with their random streams
        "eval.every=2",
        "eval.games=2",
        "eval.opponents=[random]",
    ]
    options = "{num_players: 2, episode: round, reward: points}"
    straight, resumed = resumed_halfway(tmp_path, overrides, "all_fives", options)
    assert len(resumed.collector.pool) == 2
    for x, y in zip(straight.collector.pool, resumed.collector.pool, strict=True):
        assert all(torch.equal(p, q) for p, q in zip(x.parameters(), y.parameters(), strict=True))


def test_interrupt_saves_the_last_complete_iteration_and_resumes_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    straight = Trainer(tiny_config(tmp_path / "a", "run.checkpoint_every=10"))
    straight.train(progress=False)

    real_update, calls = train_module.update, []

    def interrupted(*args: Any, **kwargs: Any) -> dict[str, float]:
        calls.append(1)
        if len(calls) == 2:  # Ctrl-C during the second iteration's update
            raise KeyboardInterrupt
        return real_update(*args, **kwargs)

    monkeypatch.setattr(train_module, "update", interrupted)
    first = Trainer(tiny_config(tmp_path / "b", "run.checkpoint_every=10"))
    with pytest.raises(KeyboardInterrupt):
        first.train(progress=False)
    monkeypatch.setattr(train_module, "update", real_update)
    saved = first.run_dir / "checkpoints" / "latest.pt"
    assert (first.run_dir / "checkpoints" / "iter_00001.pt").exists()
    assert checkpoint.load(saved)["iteration"] == 1

    resumed = Trainer(tiny_config(tmp_path / "c", "run.checkpoint_every=10"), resume=saved)
    resumed.train(progress=False)
    for name, value in straight.model.state_dict().items():
        assert torch.equal(resumed.model.state_dict()[name], value), name


def test_corrupt_or_foreign_files_are_refused(tmp_path: Path, classic_run: Path) -> None:
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"\x00not a checkpoint at all" * 10)
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes((classic_run / "latest.pt").read_bytes()[:2000])
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": [1, 2, 3]}, foreign)
    bad_config = tmp_path / "bad_config.pt"
    data = torch.load(classic_run / "latest.pt", weights_only=False)
    data["config"]["ppo"]["no_such_key"] = 1
    torch.save(data, bad_config)
    damaged = {  # a field that checks the first load but breaks a later reader (ratings, sizes)
        "config": ("zzz", "a config must be a mapping"),
        "steps": ("abc", "steps='abc', not an int"),
        "iteration": (-1, "iteration=-1, not an int of at least 0"),
        "obs_size": ("112", "obs_size='112', not an int"),
    }
    for key, (value, _) in damaged.items():
        data = torch.load(classic_run / "latest.pt", weights_only=False)
        data[key] = value
        torch.save(data, tmp_path / f"damaged_{key}.pt")

    cases = [
        (garbage, "cannot be read"),
        (truncated, "cannot be read"),
        (foreign, "not a checkpoint"),
        (bad_config, "no_such_key"),
        (tmp_path / "missing.pt", "does not exist"),
        *((tmp_path / f"damaged_{key}.pt", re.escape(words)) for key, (_, words) in damaged.items()),
    ]
    for path, words in cases:
        with pytest.raises(CheckpointError, match=words):
            load_model(path)
        with pytest.raises(CheckpointError, match=words):
            Trainer(tiny_config(tmp_path / "out"), resume=path)
    with pytest.raises(CheckpointError, match=r"^run folder \S+no_run does not exist; give a checkpoint"):
        checkpoint.latest(tmp_path / "no_run")  # (rate's run folder: not "damaged", just not there)


class _RunsCode:
    """Unpickles as a call to ``os.mkdir``: what a hostile checkpoint could hold."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return os.mkdir, (str(self.target),)


def test_a_checkpoint_that_would_run_code_is_refused_without_running_it(
    tmp_path: Path, classic_run: Path
) -> None:
    """Checkpoints are shared: loading one builds tensors, numpy arrays and game states only. A
    file that names anything else (here a function, beside a valid checkpoint's contents) is
    refused in one line, and the function never runs."""
    marker = tmp_path / "ran"
    data = torch.load(classic_run / "latest.pt", weights_only=False)
    data["notes"] = _RunsCode(marker)
    hostile = tmp_path / "hostile.pt"
    torch.save(data, hostile)
    for load in (checkpoint.load, load_model):
        with pytest.raises(CheckpointError, match=r"it names \S*mkdir, which could run code") as info:
            load(hostile)
        _assert_says_damaged(str(info.value), hostile)
    with pytest.raises(CheckpointError, match="could run code"):
        Trainer(tiny_config(tmp_path / "out"), resume=hostile)
    assert not marker.exists()
    assert checkpoint.load(classic_run / "latest.pt")["collector"]["games"]  # (games in progress load)


@pytest.mark.parametrize("name", sorted(domino_env.SPECS))
def test_every_variants_game_in_progress_loads_weights_only(name: str, tmp_path: Path) -> None:
    """A checkpoint's games in progress name only ``domino_env.state_classes()`` (and numpy's
    arrays), whatever the variant and the moment of the game, and load back equal."""
    env = domino_env.make(name, **({"num_players": 3} if name != "cross" else {}))
    env.reset(seed=4)
    play_random(env, 9, random.Random(5))
    games = [copy.deepcopy(env.unwrapped.game)]
    play_random(env, 40, random.Random(6))  # (later in the match: a round or two on)
    games.append(env.unwrapped.game)
    path = tmp_path / "games.pt"
    torch.save({"games": games}, path)
    named = set(torch.serialization.get_unsafe_globals_in_checkpoint(path))
    assert named <= set(checkpoint.allowed_globals()), named - set(checkpoint.allowed_globals())
    assert checkpoint.unpickle(path)["games"] == games


class _Builds:
    """Unpickles as ``kind(*args)``: an allowed class asked for a huge size by a crafted file."""

    def __init__(self, kind: type, *args: int) -> None:
        self.kind, self.args = kind, args

    def __reduce__(self) -> tuple[type, tuple[int, ...]]:
        return self.kind, self.args


@pytest.mark.parametrize(
    ("part", "words"),
    [
        (_Builds(TileSet, 10**6), "max_pip must be 1 to 18"),
        (_Builds(Geometry, 10**5, 7), "a board is 1 to 64 cells a side"),
    ],
)
def test_a_crafted_file_cannot_make_the_game_parts_huge(
    part: _Builds, words: str, tmp_path: Path, classic_run: Path
) -> None:
    """The classes a checkpoint may build are built with the sizes it names: a few bytes asking
    for a double-million set or a 100,000-cell-a-side board are refused, not allocated."""
    data = torch.load(classic_run / "latest.pt", weights_only=False)
    data["notes"] = part
    crafted = tmp_path / "crafted.pt"
    torch.save(data, crafted)
    with pytest.raises(CheckpointError, match=words):
        checkpoint.load(crafted)


def test_a_line_is_refused_a_huge_number_of_slots() -> None:
    line = Line(TileSet(6))
    _, state = line.__getstate__()
    with pytest.raises(ValueError, match="a line has 1 to 64 slots, got 100000000"):
        Line.__new__(Line).__setstate__((None, {**state, "num_slots": 10**8}))


def _old_line_state(self: Any) -> tuple[None, dict[str, Any]]:
    """A line's pickled state before checkpoints loaded weights-only: every slot, caches too."""
    return None, {name: getattr(self, name) for name in type(self).__slots__}


def test_a_checkpoint_saved_before_weights_only_loading_says_how_to_save_it_again(
    tmp_path: Path, classic_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full checkpoint whose games' lines were pickled with their move tables (before this
    loader) is refused with the way to save it again, and that way works."""
    data = torch.load(classic_run / "latest.pt", weights_only=False)
    old = tmp_path / "old.pt"
    with monkeypatch.context() as patch:
        patch.setattr(type(data["collector"]["games"][0].line), "__getstate__", _old_line_state)
        torch.save(data, old)
    with pytest.raises(
        CheckpointError, match=re.escape("torch.save(torch.load(PATH, weights_only=False), PATH)")
    ):
        checkpoint.load(old)
    torch.save(torch.load(old, weights_only=False), old)
    assert checkpoint.load(old)["collector"]["games"]


def test_checkpoints_load_at_once_from_many_threads(classic_run: Path) -> None:
    """torch's allowlist is the process's: loads in threads (a server's requests) never see
    one another's taken away mid-load."""
    with ThreadPoolExecutor(4) as pool:
        loaded = list(pool.map(lambda _: checkpoint.load(classic_run / "latest.pt"), range(24)))
    assert all(data["steps"] == loaded[0]["steps"] for data in loaded)


def _bad_checkpoint(kind: str, folder: Path, good: Path) -> Path:
    """A file (or folder) of one kind that is not a readable checkpoint of this trainer."""
    path = folder / f"{kind}.pt"
    if kind == "truncated":  # cut mid-file, as by a full disk or a copy stopped half way
        data = good.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif kind == "random_bytes":
        path.write_bytes(np.random.default_rng(0).bytes(3000))
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "foreign_torch":  # a torch file of another program
        torch.save({"state_dict": {"w": torch.zeros(2)}, "epoch": 3}, path)
    elif kind == "torch_tensor":
        torch.save(torch.zeros(3), path)
    elif kind == "other_pickle":
        path.write_bytes(pickle.dumps({"format": checkpoint.FORMAT, "model": [1, 2]}))
    elif kind == "folder":  # a folder that is no run folder
        path.mkdir()
        (path / "notes.txt").write_text("not a run")
    else:  # pragma: no cover - the parametrization names every kind
        raise AssertionError(kind)
    return path


BAD_KINDS = ["truncated", "random_bytes", "empty", "foreign_torch", "torch_tensor", "other_pickle", "folder"]


def _assert_says_damaged(message: str, path: Path) -> None:
    """One line: the file, 'damaged or not a checkpoint of this trainer', what to do, and a
    short reason at the end."""
    assert "\n" not in message.strip() and "Traceback" not in message, message
    assert f"checkpoint {path} cannot be read: it is damaged or not a checkpoint of this trainer; " in message
    assert "a run folder, or its checkpoints/latest.pt" in message and "python -m training ship" in message
    reason = re.search(r"ship \((.+)\)$", message.strip())
    assert reason is not None and len(reason.group(1)) <= 130, message


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_every_unreadable_checkpoint_says_damaged_and_what_to_do(
    kind: str, tmp_path: Path, classic_run: Path
) -> None:
    bad = _bad_checkpoint(kind, tmp_path, classic_run / "latest.pt")
    for load in (checkpoint.load, load_model):
        with pytest.raises(CheckpointError) as info:
            load(bad)
        _assert_says_damaged(str(info.value), bad)
    with pytest.raises(CheckpointError) as info:
        Trainer(tiny_config(tmp_path / "out"), resume=bad)
    _assert_says_damaged(str(info.value), bad)


def test_a_policy_whose_weights_hold_nan_is_refused(tmp_path: Path, classic_run: Path) -> None:
    """A run that diverged saves nan weights: a policy of nan logits would still play (its
    first legal action, whatever the game), so it is refused where the policy is loaded."""
    data = torch.load(classic_run / "latest.pt", weights_only=False)
    name = next(iter(data["model"]))
    data["model"][name] = torch.full_like(data["model"][name], float("nan"))
    diverged = tmp_path / "diverged.pt"
    torch.save(data, diverged)
    with pytest.raises(
        CheckpointError,
        match=f"its weights hold nan or inf \\({re.escape(name)}\\.\\.\\.\\): the run diverged",
    ):
        load_model(diverged)
    assert load_model(classic_run / "latest.pt")  # (the run's own: finite)


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_the_cli_says_an_unreadable_checkpoint_is_damaged_in_one_line(
    kind: str, tmp_path: Path, classic_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from training.__main__ import main

    bad = _bad_checkpoint(kind, tmp_path, classic_run / "latest.pt")
    code = main(["evaluate", str(bad), "random", "--games", "1"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: ")
    _assert_says_damaged(err.strip(), bad)


def test_the_reason_is_short_and_on_one_line() -> None:
    assert checkpoint.short_reason(OSError(22, "Invalid argument")) == "OSError: Invalid argument"
    miniz = RuntimeError(
        "PytorchStreamReader failed reading zip archive: failed finding central directory. This is an "
        "internal miniz error. If you are seeing this error, there is a high likelihood that ..."
    )
    assert checkpoint.short_reason(miniz) == (
        "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory"
    )
    long = checkpoint.short_reason(RuntimeError("Error(s) in loading:\n\t" + "size mismatch " * 30))
    assert "\n" not in long and len(long) <= len("RuntimeError: ") + checkpoint.REASON_LENGTH
    assert long.endswith("...") and checkpoint.short_reason(EOFError()) == "EOFError"


def test_checkpoint_for_another_variant_or_table_is_refused(tmp_path: Path, classic_run: Path) -> None:
    path = classic_run / "latest.pt"
    fives = raw_env("all_fives", num_players=2)
    sizes = r"trained on classic with .*\(obs_size=\d+\), but this environment has obs_size=\d+"
    with pytest.raises(CheckpointError, match=sizes):
        load_model(path, fives.encoder.size, fives.rules.num_actions)
    with pytest.raises(CheckpointError, match="classic"):
        resolve_agent(str(path), fives)
    three = raw_env("classic", num_players=3)
    with pytest.raises(CheckpointError, match=r"obs_size=\d+\), but this environment has obs_size=\d+"):
        load_model(path, three.encoder.size, three.rules.num_actions)
    with pytest.raises(CheckpointError, match="obs_size"):
        resolve_agent(str(path), three)
    # resuming a run on another variant or table, or with another network, is refused too
    for config in (
        tiny_config(tmp_path, variant="all_fives", options="{num_players: 2, episode: round}"),
        tiny_config(tmp_path, options="{num_players: 3, episode: round}"),
        tiny_config(tmp_path, "network.hidden=[16]"),
    ):
        with pytest.raises(CheckpointError, match="trained on"):
            Trainer(config, resume=path)


def test_resume_refuses_what_the_saved_games_depend_on_and_damaged_state(
    tmp_path: Path, classic_run: Path
) -> None:
    """Games in progress are saved per env and per pool member: another ``run.num_envs`` or
    ``pool.baselines`` is refused with the value to use, as is a checkpoint whose saved state is
    damaged; the same file then still resumes a run with the right settings."""
    path = classic_run / "latest.pt"
    for override, words in (
        ("run.num_envs=8", r"run\.num_envs=4.*this run has 8: resume it with run\.num_envs=4"),
        ("run.num_envs=2", r"run\.num_envs=4"),
        ("pool.baselines=[random]", r"pool\.baselines=\[\].*resume it with pool\.baselines=\[\]"),
    ):
        with pytest.raises(CheckpointError, match=words):
            Trainer(tiny_config(tmp_path / "out", override), resume=path)
    data = torch.load(path, weights_only=False)
    damaged = {
        "no_optimizer": ({k: v for k, v in data.items() if k != "optimizer"}, r"lacks \['optimizer'\]"),
        "short_games": ({**data, "collector": {**data["collector"], "games": []}}, "damaged.*IndexError"),
        "bad_weights": (
            {**data, "model": {k: v[:1] for k, v in data["model"].items()}},
            "damaged.*RuntimeError",
        ),
        "not_games": (  # an allowed class where a game belongs (a file from another tool, say)
            {
                **data,
                "collector": {**data["collector"], "games": [TileSet(6)] * len(data["collector"]["games"])},
            },
            "damaged.*not a game",
        ),
    }
    for name, (payload, words) in damaged.items():
        torch.save(payload, tmp_path / f"{name}.pt")
        with pytest.raises(CheckpointError, match=words):
            Trainer(tiny_config(tmp_path / "out"), resume=tmp_path / f"{name}.pt")
    # a changed learning rate is this run's, even without annealing (not the optimizer's saved one)
    longer = ("run.total_steps=192", "ppo.anneal_lr=false", "ppo.learning_rate=0.5")
    trainer = Trainer(tiny_config(tmp_path / "out", *longer), resume=path)
    assert trainer.iteration == 2
    assert trainer.optimizer.param_groups[0]["lr"] == 0.5


def test_a_fresh_run_never_mixes_with_an_earlier_one_in_its_folder(tmp_path: Path) -> None:
    """Training again under the same run name is refused (its checkpoints, logs and evaluations
    would mix with the earlier run's) unless asked to start over, which removes the earlier run."""
    first = Trainer(tiny_config(tmp_path, "eval.every=1", "eval.games=2"))
    first.train(progress=False)
    assert (first.run_dir / "checkpoints" / "iter_00002.pt").is_file()
    with pytest.raises(
        ConfigError, match=r"already holds a run \(checkpoints, tb, evaluations\.csv\).*--overwrite"
    ):
        Trainer(tiny_config(tmp_path))
    assert (first.run_dir / "checkpoints" / "iter_00002.pt").is_file()  # refusing deletes nothing
    (first.run_dir / "notes.txt").write_text("mine")  # not the run's: --overwrite keeps it
    again = Trainer(tiny_config(tmp_path, "run.total_steps=64"), overwrite=True)
    again.train(progress=False)
    assert (first.run_dir / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in (again.run_dir / "checkpoints").iterdir()) == ["iter_00001.pt", "latest.pt"]
    assert not (again.run_dir / "evaluations.csv").exists()
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match=r"run\.out_dir: cannot write the run folder"):
        Trainer(tiny_config(blocker))


def test_resume_from_a_run_folder_or_an_earlier_checkpoint(tmp_path: Path) -> None:
    """A run folder resumes from its latest; an earlier checkpoint replays the iterations after it,
    whose evaluation rows are replaced (not repeated) as they are written again."""
    overrides = ("eval.every=1", "eval.games=2", "run.total_steps=192", "ppo.anneal_lr=false")
    run = Trainer(tiny_config(tmp_path, *overrides))
    run.train(progress=False)
    log = run.run_dir / "evaluations.csv"
    assert [row[0] for row in csv.reader(log.open())][1:] == ["0", "1", "2", "3"]
    assert (
        Trainer(tiny_config(tmp_path, *overrides, "run.total_steps=256"), resume=run.run_dir).iteration == 3
    )
    earlier = Trainer(tiny_config(tmp_path, *overrides), resume=run.run_dir / "checkpoints" / "iter_00001.pt")
    assert [row[0] for row in csv.reader(log.open())][1:] == ["0", "1", "2", "3"]  # nothing lost before work
    earlier.train(progress=False)
    assert [row[0] for row in csv.reader(log.open())][1:] == ["0", "1", "2", "3"]
    with pytest.raises(
        CheckpointError, match=r"\(checkpoint -> this run\): env\.options\.num_players: 2 -> 3"
    ):
        Trainer(tiny_config(tmp_path, options="{num_players: 3, episode: round}"), resume=run.run_dir)
    for changed, kept in (("run.rollout_steps=8", "run.rollout_steps=16"), ("eval.opponents=[greedy]", "")):
        with pytest.raises(
            CheckpointError, match=re.escape(kept or "eval.opponents=['random', 'greedy', 'search']")
        ):
            Trainer(tiny_config(tmp_path, *overrides, changed), resume=run.run_dir)
    with pytest.raises(CheckpointError, match="not a training run folder"):
        Trainer(tiny_config(tmp_path), resume=tmp_path)


def test_a_checkpoint_of_another_run_goes_on_in_a_free_folder_only(tmp_path: Path) -> None:
    """Resuming run a's checkpoint under run b's name starts b from it, unless b's folder holds
    a run: then it is refused (and nothing of either run is touched)."""
    a = Trainer(tiny_config(tmp_path, "run.name=a"))
    a.train(progress=False)
    b = Trainer(tiny_config(tmp_path, "run.name=b", "run.total_steps=64"))
    b.train(progress=False)
    before = sorted(p.name for p in (tmp_path / "b" / "checkpoints").iterdir())
    with pytest.raises(
        ConfigError, match=r"b already holds another run .* continue it under another run\.name"
    ):
        Trainer(tiny_config(tmp_path, "run.name=b", "run.total_steps=192"), resume=tmp_path / "a")
    assert sorted(p.name for p in (tmp_path / "b" / "checkpoints").iterdir()) == before
    c = Trainer(tiny_config(tmp_path, "run.name=c", "run.total_steps=192"), resume=tmp_path / "a")
    c.train(progress=False)
    assert sorted(p.name for p in (tmp_path / "c" / "checkpoints").iterdir()) == [
        "iter_00003.pt",
        "latest.pt",
    ]
    assert sorted(p.name for p in (tmp_path / "a" / "checkpoints").iterdir()) == [
        "iter_00001.pt",
        "iter_00002.pt",
        "latest.pt",
    ]


def files_under(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder``, by its path there, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_resume_prints_the_checkpoint_it_wrote_and_refuses_a_run_with_nothing_left_to_play(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``train --resume`` of a finished run under another ``run.name`` goes on in that (free)
    folder and prints the checkpoint it wrote there; a ``run.total_steps`` at or below the
    decisions already played is refused in one line, exit 2, before anything is written (no
    empty TensorBoard file, no folder for the other name)."""
    tiny = [str(ROOT / "configs" / "classic_tiny.yaml"), f"run.out_dir={tmp_path.as_posix()}"]
    assert main(["train", *tiny, "run.name=first", "run.total_steps=512", "--no-progress"]) == 0
    capsys.readouterr()
    first = files_under(tmp_path / "first")
    for name, steps in (("first", "512"), ("first", "100"), ("other", "512")):
        argv = ["train", *tiny, f"run.name={name}", f"run.total_steps={steps}", "--no-progress"]
        assert main([*argv, "--resume", str(tmp_path / "first")]) == 2, (name, steps)
        out, err = capsys.readouterr()
        assert out == "" and len(err.strip().splitlines()) == 1, err
        assert "already played 512 decisions" in err and "run.total_steps above 512" in err, err
        assert files_under(tmp_path / "first") == first
        assert not (tmp_path / "other").exists()
    argv = ["train", *tiny, "run.name=other", "run.total_steps=1024", "--no-progress"]
    assert main([*argv, "--resume", str(tmp_path / "first")]) == 0
    out = capsys.readouterr().out
    final = Path(out.split("final checkpoint: ")[1].strip())
    assert final.is_file() and final.parent == tmp_path / "other" / "checkpoints", out
    assert checkpoint.load(final)["steps"] == 1024
    assert checkpoint.load(tmp_path / "other")["steps"] == 1024  # (its latest.pt)
    assert files_under(tmp_path / "first") == first


def test_weights_only_export_loads_but_cannot_resume(tmp_path: Path, classic_run: Path) -> None:
    slim = checkpoint.export(classic_run / "latest.pt", tmp_path / "slim.pt")
    model, _ = load_model(slim)
    original, _ = load_model(classic_run / "latest.pt")
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), original.parameters(), strict=True))
    with pytest.raises(CheckpointError, match="cannot resume"):
        Trainer(tiny_config(tmp_path / "out"), resume=slim)


def test_a_run_counts_its_wall_time_across_resumes_and_the_export_keeps_it(tmp_path: Path) -> None:
    """``seconds`` (what ``ship --from`` reports as the training time) grows over a resume; a
    checkpoint without it (written before the trainer counted) leaves the count unknown for good."""
    first = Trainer(tiny_config(tmp_path))
    saved = first.train(progress=False)
    before = checkpoint.load(saved)["seconds"]
    assert 0.0 < before == first.seconds
    resumed = Trainer(tiny_config(tmp_path, "run.total_steps=256"), resume=saved)
    assert resumed.seconds == before
    after = checkpoint.load(resumed.train(progress=False))["seconds"]
    assert after > before
    assert checkpoint.load(checkpoint.export(saved, tmp_path / "slim.pt"))["seconds"] == before
    older = torch.load(saved, weights_only=False)
    del older["seconds"]
    checkpoint.save(tmp_path / "older.pt", older)
    unknown = Trainer(tiny_config(tmp_path / "older", "run.total_steps=256"), resume=tmp_path / "older.pt")
    assert "seconds" not in checkpoint.load(unknown.train(progress=False))


def test_rng_states_round_trip() -> None:
    rngs = {"a": np.random.default_rng(1)}
    states = checkpoint.rng_states(rngs)
    first = (torch.rand(3), rngs["a"].random(3))
    rngs["a"].random(5)
    torch.rand(5)
    checkpoint.restore_rngs(states, rngs)
    again = (torch.rand(3), rngs["a"].random(3))
    assert torch.equal(first[0], again[0]) and np.array_equal(first[1], again[1])


def test_run_init_starts_the_network_from_a_trained_policy(tmp_path: Path, classic_run: Path) -> None:
    """run.init: the network (and an mmd run's magnet) starts with the checkpoint's weights, as
    a run folder or a file, while the optimizer and counters start fresh; the first update then
    moves away from them."""
    saved = torch.load(classic_run / "latest.pt", weights_only=False)["model"]
    for source in (classic_run.parent, classic_run / "iter_00002.pt"):
        for algorithm in ("ppo", "mmd"):
            config = tiny_config(tmp_path / algorithm, f"algorithm={algorithm}", f"run.init={source}")
            trainer = Trainer(config, overwrite=True)
            started = trainer.model.state_dict()
            assert all(torch.equal(started[k], v) for k, v in saved.items())
            assert trainer.iteration == 0 and not trainer.optimizer.state
            if algorithm == "mmd":
                assert trainer.magnet is not None
                assert all(torch.equal(trainer.magnet.state_dict()[k], v) for k, v in saved.items())
    trainer.train(progress=False)
    assert not all(torch.equal(trainer.model.state_dict()[k], v) for k, v in saved.items())
    copy = tmp_path / "start.pt"  # a run started from a file that is gone since still loads
    copy.write_bytes((classic_run / "latest.pt").read_bytes())
    started = Trainer(tiny_config(tmp_path / "gone", f"run.init={copy}"))
    started.train(progress=False)
    copy.unlink()
    assert checkpoint.load(started.run_dir)["config"].run.init == str(copy)


@pytest.mark.parametrize(
    ("overrides", "error", "says"),
    [
        (("algorithm=dmc",), ConfigError, r"run\.init: a trained policy starts the runs of ppo and mmd only"),
        (
            ("network.hidden=[16]",),
            ConfigError,
            r"another network than this run's .*network\.hidden: \[32\] -> \[16\]",
        ),
        (
            ("env.variant=all_fives",),
            CheckpointError,
            r"was trained on classic .*plays only the table it was",
        ),
    ],
)
def test_run_init_refuses_a_policy_that_cannot_start_this_run(
    tmp_path: Path, classic_run: Path, overrides: tuple[str, ...], error: type, says: str
) -> None:
    with pytest.raises(error, match=says):
        Trainer(tiny_config(tmp_path, f"run.init={classic_run.parent}", *overrides))
    assert not (tmp_path / "classic-1").exists() and not (tmp_path / "all_fives-1").exists()
    with pytest.raises(CheckpointError, match=r"^run\.init: checkpoint nowhere\.pt does not exist"):
        Trainer(tiny_config(tmp_path, "run.init=nowhere.pt"))
