"""``ship`` and ``demo`` lose nothing: shipping writes ``agents/`` only once every measurement is
done, and neither command starts over a run folder that holds a run it did not make."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.support.training_helpers import ROOT
from training.__main__ import main

TINY_CONFIG = str(ROOT / "configs" / "classic_tiny.yaml")
STEPS = "run.total_steps=512"  # one iteration of the tiny config (16 envs x 32 steps)


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones too), by its path there, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def one_error_line(capsys: pytest.CaptureFixture[str], *words: str, quiet: bool = True) -> None:
    """The command said what was wrong in one line (with ``words``), and (``quiet``) nothing else."""
    out, err = capsys.readouterr()
    assert err.startswith("error:") and len(err.strip().splitlines()) == 1, err
    assert all(word in err for word in words), err
    assert out == "" or not quiet, out


def train_tiny(out_dir: Path, name: str, *overrides: str) -> Path:
    """A `train` run of the tiny config (not made by ship or demo): its folder."""
    argv = ["train", TINY_CONFIG, STEPS, f"run.out_dir={out_dir.as_posix()}", f"run.name={name}", *overrides]
    assert main([*argv, "--no-progress"]) == 0
    return out_dir / name


def test_ship_changes_nothing_in_agents_when_a_measurement_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A measurement that fails (or Ctrl-C while measuring), or a write of the results that fails,
    leaves the shipped agent, its yaml, results.csv and README.md byte for byte as they were,
    and no temporary file beside them; --measure-only and --guided never rewrite the agent."""
    from training.eval import report, ship

    agents = tmp_path / "agents"
    measuring = ["--agents-dir", str(agents), "--games", "2", "--opponents", "random", "--no-progress"]
    run = train_tiny(tmp_path / "runs", "trained")
    assert main(["ship", "--from", str(run), *measuring]) == 0
    shipped = files_of(agents)
    assert {"classic.pt", "classic.yaml", "results.csv", "README.md"} <= set(shipped)

    calls = []

    def fails(*args: object, **kwargs: object) -> None:
        calls.append(args)
        raise ValueError("the measuring failed")

    other = train_tiny(tmp_path / "runs", "other", "run.seed=2")  # another agent, not shipped
    monkeypatch.setattr(ship, "measure", fails)
    config = [TINY_CONFIG, STEPS, f"run.out_dir={(tmp_path / 'runs').as_posix()}"]
    for argv in (["--from", str(other)], config, [*config, "--measure-only"], [*config, "--guided"]):
        assert main(["ship", *argv, *measuring]) == 2, argv
        one_error_line(capsys, "the measuring failed", quiet=False)
        assert files_of(agents) == shipped, argv
    assert len(calls) == 4

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(ship, "measure", interrupted)
    assert main(["ship", "--from", str(other), *measuring]) == 130
    assert files_of(agents) == shipped

    monkeypatch.undo()  # measured for real, then the results fail to write
    real_write_rows = report.write_rows

    def half_written(path: Path, *args: object) -> None:
        path.write_text("variant,agent\nhalf")  # (a crash in the middle of writing)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(report, "write_rows", half_written)
    capsys.readouterr()
    assert main(["ship", "--from", str(other), *measuring]) == 2
    one_error_line(capsys, "No space left on device", "nothing in it changed", quiet=False)
    assert files_of(agents) == shipped  # the half-written file was a temporary one, and went

    monkeypatch.setattr(report, "write_rows", real_write_rows)
    assert main(["ship", *config, *measuring, "--measure-only"]) == 0
    measured = files_of(agents)
    assert measured["classic.pt"] == shipped["classic.pt"]  # measured again, not rewritten
    assert measured["classic.yaml"] == shipped["classic.yaml"]
    assert not [name for name in measured if name.endswith(".partial")]


def test_demo_and_ship_refuse_a_run_they_did_not_make_unless_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """demo --name (or run.name=) and ship run.name= of a folder that holds a `train` run: one
    line, exit 2, before any training, and the run's files stay; with --overwrite they start it
    over."""
    out_dir = tmp_path / "druns"
    victim = train_tiny(out_dir, "victim")
    before = files_of(victim)
    assert "checkpoints/latest.pt" in before
    capsys.readouterr()
    demo = ["demo", "--config", TINY_CONFIG, "--steps", "512", f"run.out_dir={out_dir.as_posix()}"]
    quick = ["--games", "2", "--rating-games", "1", "--no-progress"]
    for argv in (
        [*demo, "--name", "victim", *quick],
        [*demo, "run.name=victim", *quick],  # an override wins over --name
    ):
        assert main(argv) == 2, argv
        one_error_line(capsys, str(victim), "demo did not make", "--overwrite", "--name")
        assert files_of(victim) == before
    agents = ["--agents-dir", str(tmp_path / "agents"), "--games", "2", "--opponents", "random"]
    ship = ["ship", TINY_CONFIG, STEPS, f"run.out_dir={out_dir.as_posix()}", "run.name=victim", *agents]
    assert main([*ship, "--no-progress"]) == 2
    one_error_line(capsys, str(victim), "ship did not make", "--overwrite", "run.name")
    assert files_of(victim) == before
    assert not (tmp_path / "agents").exists()  # refused before the agents folder too
    assert main(["ship", "--from", str(victim), *agents, "--overwrite"]) == 2  # nothing to overwrite
    one_error_line(capsys, "--overwrite")
    assert files_of(victim) == before

    assert main([*demo, "--name", "victim", *quick, "--overwrite"]) == 0
    assert files_of(victim) != before
    assert (victim / "checkpoints" / ".made-by-demo").is_file()
    assert (victim / "ratings.csv").is_file() and (victim / "final_evaluation.csv").is_file()


def test_demo_twice_with_its_defaults_starts_its_own_run_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`make demo` twice: the second call replaces the run the first made (no --overwrite); once a
    `train --overwrite` has taken the folder over, demo refuses it again, and ship its own the same."""
    out_dir = tmp_path / "runs"
    demo = ["demo", "--config", TINY_CONFIG, "--steps", "512", f"run.out_dir={out_dir.as_posix()}"]
    quick = ["--games", "2", "--rating-games", "1", "--no-progress"]
    assert main([*demo, *quick]) == 0
    folder = out_dir / "demo"
    first = files_of(folder)
    assert "checkpoints/.made-by-demo" in first and "ratings.csv" in first
    (folder / "checkpoints" / "iter_99999.pt").write_bytes(b"from the first call")  # gone next time
    assert main([*demo, *quick]) == 0
    assert "1/3 training" in capsys.readouterr().out
    second = files_of(folder)
    assert "checkpoints/iter_99999.pt" not in second and "checkpoints/.made-by-demo" in second
    logs = [{name for name in files if name.startswith("tb/")} for files in (first, second)]
    assert set(second) - logs[1] == set(first) - logs[0] - {"checkpoints/iter_99999.pt"}
    assert logs[0] and logs[1] and not logs[0] & logs[1]  # logged anew

    train = ["train", TINY_CONFIG, STEPS, f"run.out_dir={out_dir.as_posix()}", "run.name=demo"]
    assert main([*train, "--overwrite", "--no-progress"]) == 0  # a train run takes the folder over
    assert not (folder / "checkpoints" / ".made-by-demo").exists()
    capsys.readouterr()
    assert main([*demo, *quick]) == 2
    one_error_line(capsys, "demo did not make")

    agents = ["--agents-dir", str(tmp_path / "agents"), "--games", "2", "--opponents", "random"]
    ship = ["ship", TINY_CONFIG, STEPS, f"run.out_dir={out_dir.as_posix()}", *agents, "--no-progress"]
    assert main(ship) == 0 and main(ship) == 0  # ship's own folder (ship-<run name>), started over
    assert (out_dir / "ship-classic-1" / "checkpoints" / ".made-by-ship").is_file()


def test_a_demo_run_resumed_by_train_is_the_users_and_demo_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`train --resume` of demo's run in its own folder makes it the user's run: the mark goes, so
    the next demo refuses to start it over (its message names the Makefile's way round)."""
    out_dir = tmp_path / "runs"
    demo = ["demo", "--config", TINY_CONFIG, "--steps", "512", f"run.out_dir={out_dir.as_posix()}"]
    quick = ["--games", "2", "--rating-games", "1", "--no-progress"]
    assert main([*demo, *quick]) == 0
    folder = out_dir / "demo"
    resume = [
        "train",
        TINY_CONFIG,
        "run.total_steps=1024",
        f"run.out_dir={out_dir.as_posix()}",
        "run.name=demo",
    ]
    resume += ["--resume", str(folder), "--no-progress"]  # (in its own folder)
    assert main(resume) == 0
    assert not (folder / "checkpoints" / ".made-by-demo").exists()
    before = files_of(folder)
    capsys.readouterr()
    assert main([*demo, *quick]) == 2
    one_error_line(capsys, "demo did not make", "make demo DEMO_ARGS=--overwrite")
    assert files_of(folder) == before


def test_ship_refuses_a_results_csv_it_cannot_read_and_leaves_it_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A results.csv that is no results table (garbage text, bytes that are not text, a row
    longer than its header, a folder): --measure-only, and a config's ship before it trains, say
    so in one line, exit 2, before any game, and leave the agents folder as it was; moved
    away, the same command measures and writes a new one."""
    from training.model import checkpoint
    from training.model.config import load_config
    from training.rl.train import Trainer, save_checkpoint

    runs = tmp_path / "runs"
    untrained = Trainer(load_config(TINY_CONFIG, [f"run.out_dir={runs.as_posix()}", "run.name=untrained"]))
    agents = tmp_path / "agents"
    agents.mkdir()
    checkpoint.export(save_checkpoint(untrained.run_dir, untrained.payload()), agents / "classic.pt")
    results = agents / "results.csv"
    measuring = ["--agents-dir", str(agents), "--games", "2", "--opponents", "random", "--no-progress"]
    config = [TINY_CONFIG, STEPS, f"run.out_dir={runs.as_posix()}", "run.name=shipped"]
    bad = {
        "garbage": lambda: results.write_text("this is not\na results table\n"),
        "bytes": lambda: results.write_bytes(b"\xff\xfe\x00garbage\x81"),
        "long row": lambda: results.write_text(
            "variant,agent,players,steps,train_minutes\nclassic,policy,2,1,1,x\n"
        ),
        "no agent": lambda: results.write_text("variant,agent,players,steps,train_minutes\nclassic,,2,1,1\n"),
        "folder": lambda: results.mkdir(),
    }
    for kind, make in bad.items():
        make()
        before = files_of(agents)
        for argv in ([*config, "--measure-only"], config):
            assert main(["ship", *argv, *measuring]) == 2, (kind, argv)
            one_error_line(capsys, str(results), "not a results table ship can read", "move it away")
            assert files_of(agents) == before, kind
            assert results.is_dir() == (kind == "folder")
            assert not (runs / "shipped").exists()  # refused before training
        if results.is_dir():
            results.rmdir()
        else:
            results.unlink()
    assert main(["ship", *config, "--measure-only", *measuring]) == 0
    (row,) = (r for r in ship_rows(results) if r["variant"] == "classic")
    assert row["agent"] == "policy" and row["vs_random_games"] == "2"


def ship_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_demo_takes_its_name_as_typed_and_refuses_an_empty_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--name is a folder name, not YAML: 123 or true name folders (a run elsewhere there is
    refused as not demo's, so nothing is trained here); an empty one is refused in one line."""
    out_dir = tmp_path / "runs"
    for name in ("123", "true"):
        (out_dir / name / "checkpoints").mkdir(parents=True)
        (out_dir / name / "checkpoints" / "latest.pt").write_bytes(b"somebody's run")
    demo = [
        "demo",
        "--config",
        TINY_CONFIG,
        "--steps",
        "512",
        f"run.out_dir={out_dir.as_posix()}",
        "--no-progress",
    ]
    for name in ("123", "true"):
        assert main([*demo, "--name", name]) == 2
        one_error_line(capsys, str(out_dir / name), "demo did not make")
    assert main([*demo, "--name", " "]) == 2
    one_error_line(capsys, "--name must be a folder name")
