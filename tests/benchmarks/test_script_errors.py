"""Every script in ``benchmarks/`` meets bad input as the commands do (``training.cli.run_script``):
one line on stderr, exit 2, before any work, and nothing written over its results."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import load_script
from training.cli import run_script

SCRIPTS = sorted(path.stem for path in (Path(__file__).resolve().parents[2] / "benchmarks").glob("*.py"))


def refused(
    name: str, argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> str:
    """Run the script ``name`` with ``argv`` as its entry point does; it exits 2, its last line
    on stderr the error (returned), no traceback."""
    module = load_script(name)
    monkeypatch.setattr(sys, "argv", [f"{name}.py", *argv])
    with pytest.raises(SystemExit) as stop:
        run_script(module.main)
    err = capsys.readouterr().err.splitlines()  # (a note on what was skipped may come first)
    assert stop.value.code == 2 and err[-1].startswith("error: "), err
    assert not any(line.startswith(("error", "Traceback")) for line in err[:-1]), err
    return err[-1]


@pytest.mark.parametrize("name", SCRIPTS)
def test_argparse_refuses_in_one_line(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unknown flag (or first a missing argument) is refused by the script's one-line parser."""
    assert refused(name, ["--no-such-flag"], monkeypatch, capsys).startswith(f"error: {name}.py: ")


@pytest.mark.parametrize(
    ("name", "argv", "words"),
    [
        ("ismcts", ["--opponent", "rando"], "unknown agent 'rando'"),
        ("ismcts", ["--exploration", "nan"], "must be a finite number of 0 or more"),
        ("presets", ["--variants", "nope"], "unknown variant 'nope'"),
        ("presets", ["--variants", "blind", "--out", "{tmp}/presets.csv"], "nothing measured"),
        ("vector_speed", ["--csv", "{tmp}"], "is a folder: give the path of a file to write"),
        ("vector_speed", ["--plot", "{tmp}/rows.txt"], "a picture ends in .png, .svg or .pdf"),
        ("equal_time", ["--arm", "a=ppo.gamma=1", "--arm", "a=ppo.gamma=0.9"], "--arm names each arm once"),
        ("equal_time", ["--arm", "a=env.variant=blitz"], "changes the table"),
        ("compare_commits", ["HEAD", "--runs", "0"], "must be a positive integer"),
        ("behaviour_digest", ["--variants", "clasic", "--check", "x.json"], "unknown variant(s) clasic"),
        ("learning_curve", ["{tmp}", "--csv", "{tmp}/curve.csv"], "holds no checkpoints/iter_*.pt"),
    ],
)
def test_bad_input_is_one_line_before_any_work(
    name: str,
    argv: list[str],
    words: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = refused(name, [a.format(tmp=tmp_path) for a in argv], monkeypatch, capsys)
    assert words in err, err
    assert not (tmp_path / "presets.csv").exists() and not (tmp_path / "curve.csv").exists()


def test_the_boundary_turns_a_message_or_a_failed_command_into_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def says() -> None:
        raise SystemExit("error: a message for a person")

    def runs() -> None:
        subprocess.run([sys.executable, "-c", "raise SystemExit(3)"], check=True)

    for script, words in ((says, "error: a message for a person\n"), (runs, "stopped with exit status 3")):
        with pytest.raises(SystemExit) as stop:
            run_script(script)
        err = capsys.readouterr().err
        assert stop.value.code == 2 and err.count("\n") == 1 and words in err
    with pytest.raises(SystemExit) as stop:
        run_script(lambda: 0)
    assert stop.value.code == 0
