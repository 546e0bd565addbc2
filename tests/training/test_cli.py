"""The command line: setup errors exit 2 with one line, a tiny ``train`` run, ``ship``."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.training_helpers import ROOT, TINY, write
from training.__main__ import main
from training.model.checkpoint import load_model
from training.model.config import load_config


def test_cli_bad_config_key_exits_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["train", str(ROOT / "configs" / "all_fives.yaml"), "ppo.bogus=1"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("error:") and "ppo.bogus" in err and "learning_rate" in err


@pytest.mark.parametrize(
    ("make_args", "words"),
    [
        (lambda tmp: [str(tmp / "missing.yaml")], "does not exist"),
        (lambda tmp: [str(write(tmp, "ppo: [1, 2\nrun: {a: 1}\n"))], "not valid YAML"),
        (lambda tmp: [str(write(tmp, "ppo:\n  clip: 1\n"))], "ppo.clip"),
        (lambda tmp: [str(ROOT / "configs" / "classic.yaml"), "run.seed"], "section.key=value"),
        (lambda tmp: [str(ROOT / "configs" / "classic.yaml"), "env.variant=checkers"], "checkers"),
        (
            lambda tmp: [str(ROOT / "configs" / "classic.yaml"), "--resume", str(write(tmp, "junk", "x.pt"))],
            "cannot be read",
        ),
        (
            lambda tmp: [str(ROOT / "configs" / "classic.yaml"), "run.seed=-1"],
            "run.seed must be a non-negative integer (0 or more), got -1",
        ),
    ],
    ids=["missing", "yaml", "key", "syntax", "variant", "resume", "seed"],
)
def test_cli_setup_errors_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_args: Any, words: str
) -> None:
    code = main(["train", *make_args(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("error:") and words in err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["evaluate", "random", "greedy", "--games", "abc"], "argument --games: must be a positive integer"),
        (["evaluate"], "the following arguments are required: agent"),
        (["train"], "the following arguments are required: config ("),  # (not "config, overrides")
        (["exploit"], "the following arguments are required: agent ("),
        (["serve", "--port", "abc"], "argument --port: invalid int value"),
        (["nope"], "invalid choice: 'nope' (choose from 'train', 'evaluate'"),
    ],
)
def test_a_flag_argparse_refuses_is_one_line_too(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse's own refusals (a bad flag value, a missing argument, an unknown command) read
    like the commands' own: one line, what was wrong and where the flags are listed, exit 2."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    out, err = capsys.readouterr()
    assert exited.value.code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: python -m training") and words in err
    assert err.rstrip().endswith("--help)")


def refused_when_parsed(argv: list[str], folder: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``argv`` in ``folder`` (the caller's chdir): argparse refuses it, exit 2, one line on
    stderr and none on stdout, nothing written there; returns that line."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    out, err = capsys.readouterr()
    assert exited.value.code == 2 and out == "" and err.count("\n") == 1, err
    assert list(folder.iterdir()) == []
    return err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (
            ["evaluate", "random", "greedy", "--gmes", "3"],
            "python -m training evaluate: unrecognized arguments: --gmes 3 "
            "(see python -m training evaluate --help)",
        ),
        (
            ["train", "configs/classic.yaml", "--no-progress", "run.total_steps=0"],
            "python -m training train: unrecognized arguments: run.total_steps=0: KEY=VALUE overrides "
            "go right after CONFIG, before any --option (see python -m training train --help)",
        ),
        (
            ["exploit", "greedy", "--games", "3", "run.num_envs=2"],
            "overrides go right after AGENT, before any --option (see python -m training exploit --help)",
        ),
        (
            ["ship", "configs/classic.yaml", "--games", "3", "run.seed=1"],
            "overrides go right after CONFIG, before any --option (see python -m training ship --help)",
        ),
        (
            ["train", "configs/classic.yaml", "--no-progress", "--bogus"],
            "unrecognized arguments: --bogus (see python -m training train --help)",
        ),
    ],
    ids=[
        "misspelled-flag",
        "train-override-late",
        "exploit-override-late",
        "ship-override-late",
        "train-flag",
    ],
)
def test_an_unknown_argument_names_its_commands_help_and_where_overrides_go(
    argv: list[str],
    words: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An argument a command does not know is that command's error: one line naming its own
    --help; a KEY=VALUE after an option says overrides come right after the config (exit 2,
    nothing run or written)."""
    monkeypatch.chdir(tmp_path)
    err = refused_when_parsed(argv, tmp_path, capsys)
    assert err.startswith("error: python -m training ") and err.endswith(f"{words}\n")


def test_an_override_where_it_belongs_is_no_unknown_argument(capsys: pytest.CaptureFixture[str]) -> None:
    """Only an argument argparse left over is refused so: a misspelled option's hint does not
    speak of overrides, and an evaluate agent that looks like key=value is an unknown agent."""
    assert main(["evaluate", "random", "a=1", "--games", "1"]) == 2
    err = capsys.readouterr().err
    assert "agent 'a=1'" in err and "overrides" not in err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--fps", "0"], "argument --fps: must be a number above 0 and at most 50, got '0'"),
        (["--fps", "-2"], "argument --fps: must be a number above 0 and at most 50, got '-2'"),
        (["--fps", "1000"], "argument --fps: must be a number above 0 and at most 50, got '1000'"),
        (["--fps", "nan"], "argument --fps: must be a number above 0 and at most 50, got 'nan'"),
        (
            ["--out", "x.txt"],
            "argument --out: must name a .gif file (record writes an animated GIF), got 'x.txt'",
        ),
        (["--out", "x"], "argument --out: must name a .gif file"),
    ],
    ids=["fps-0", "fps-negative", "fps-1000", "fps-nan", "out-txt", "out-no-suffix"],
)
def test_record_refuses_fps_and_out_when_parsed(
    argv: list[str],
    words: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--fps outside (0, 50] and an --out that is no .gif are argparse's refusals: one line
    naming the flag and what is allowed, exit 2, before any game is played or file written."""
    from training.apps.record import MOST_FPS

    assert MOST_FPS == 50  # (the messages above and record's --help say 50)
    monkeypatch.chdir(tmp_path)
    err = refused_when_parsed(
        ["record", "classic", "random", "greedy", "--out", "x.gif", *argv], tmp_path, capsys
    )
    assert err.startswith("error: python -m training record: ") and words in err
    assert err.rstrip().endswith("(see python -m training record --help)")


def test_record_takes_an_upper_case_gif_and_the_most_fps(tmp_path: Path) -> None:
    out = tmp_path / "GAME.GIF"
    args = ["record", "classic", "greedy", "--out", str(out), "--fps", "50", "--max-frames", "2"]
    assert main(args) == 0 and out.is_file()


def test_record_takes_its_episode_from_an_option_and_refuses_a_render_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its default of one round gives way to --option episode=match (not a key given twice);
    a render mode is its own, so --option render_mode is refused in one line."""
    out = tmp_path / "game.gif"
    args = ["record", "classic", "greedy", "--out", str(out), "--max-frames", "2"]
    assert main([*args, "--option", "episode=match"]) == 0 and out.is_file()
    assert "episode=match" in capsys.readouterr().out
    assert main([*args, "--option", "render_mode=ansi"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "leave out --option render_mode" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "search:99999999999999999999", "greedy", "--games", "1"],
        ["evaluate", "search:4097", "greedy", "--games", "1"],
        ["evaluate", "search:5000:agents/classic.pt", "greedy", "--games", "1"],
        ["record", "classic", "search:99999999999999999999", "--out", "x.gif"],
    ],
    ids=["evaluate-huge", "evaluate-4097", "evaluate-guided", "record-huge"],
)
def test_a_search_budget_past_the_most_is_refused_before_any_game(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """search:N (and search:N:CHECKPOINT) takes 1 to 4096 worlds: a larger N is one line
    saying the range, exit 2, and nothing is played or written."""
    monkeypatch.chdir(tmp_path)
    if "agents/classic.pt" in " ".join(argv):
        (tmp_path / "agents").mkdir()
        (tmp_path / "agents" / "classic.pt").symlink_to(ROOT / "agents" / "classic.pt")
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "must be an integer from 1 to 4096" in err
    assert not (tmp_path / "x.gif").exists()


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("garbage.pt", "; to measure one checkpoint: python -m training evaluate garbage.pt random greedy"),
        ("afile", ""),
    ],
)
def test_rate_says_a_file_is_no_run_folder(
    name: str, words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """rate takes a run folder: a file (a checkpoint or anything else) is named as a file, in
    one line, exit 2, and nothing is written beside it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_bytes(b"not a run")
    assert main(["rate", name, "--games", "1"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (
        f"error: rate takes a training run folder (<out_dir>/<name>, holding checkpoints/), and {name} "
        f"is a file{words}\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--seed", "-1", "random", "greedy"],
        ["evaluate", "--seed", "-1", "--duplicate", "random", "greedy"],
        ["evaluate", "--record", "recneg", "--csv", "csvneg/x.csv", "--seed", "-1", "random", "greedy"],
        ["record", "classic", "random", "greedy", "--out", "x.gif", "--seed", "-1"],
        ["play", "--seed", "-1"],
        ["ladder", "random", "greedy", "--out", "lad1", "--seed", "-1"],
        ["rate", "--seed", "-1", "RUN"],
        ["exploit", "--seed", "-1", "random", "--out-dir", "runs"],
        ["exploitability", "random", "--out-dir", "out", "--seed=-1"],
        ["evaluate", "--seed", "two", "random", "greedy"],
    ],
    ids=lambda argv: "-".join(a for a in argv if not a.startswith("-"))[:40],
)
def test_a_negative_seed_is_refused_when_parsed_and_nothing_is_written(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A seed is 0 or more: argparse refuses any other in one line naming --seed and what is
    allowed, exit 2, before any game, training or folder (--out, --record, --csv) is made."""
    monkeypatch.chdir(tmp_path)
    err = refused_when_parsed(argv, tmp_path, capsys)
    assert "argument --seed: must be a non-negative integer, got '" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["benchmark", "shipped", "--variants", "classic", "--games", "2", "--agents-dir", "{missing}"],
        ["serve", "--port", "0", "--agents-dir", "{missing}"],
        ["exploitability", "random", "--variant", "classic", "--preset", "tiny", "--out-dir", "{file}/x"],
        ["evaluate", "random", "greedy", "--games", "2", "--csv", "/proc/x.csv"],
    ],
    ids=["benchmark-agents-dir", "serve-agents-dir", "exploitability-out-dir", "evaluate-csv-in-proc"],
)
def test_an_unusable_folder_is_refused_before_any_work(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder that is not there, or one that cannot take a file (as root ``os.access`` says
    yes to /proc: the check writes for real), is one line and exit 2 before any game or walk."""
    (tmp_path / "afile").write_text("")
    args = [a.format(missing=tmp_path / "missing", file=tmp_path / "afile") for a in argv]
    if "/proc/x.csv" in args and not Path("/proc").is_dir():
        pytest.skip("no /proc here")
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ") and err.count("\n") == 1, (out, err)


def test_cli_module_entry_point_exits_2() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "training", "train", "configs/all_fives.yaml", "ppo.bogus=1", "--no-progress"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "ppo.bogus" in lines[0]


@pytest.mark.parametrize(
    ("missing", "start"),
    [
        # python -m training
        ("yaml", "import runpy; runpy.run_module('training', run_name='__main__', alter_sys=True)"),
        # the domino-train script's own lines
        ("torch", "from training.__main__ import main; sys.exit(main())"),
    ],
    ids=["python-m-training", "domino-train"],
)
def test_without_the_train_extra_the_cli_says_how_to_install_it(missing: str, start: str) -> None:
    """A plain ``pip install -e .`` lacks the extra: one line saying so and how to get it, exit 2."""
    script = f"import sys; sys.modules[{missing!r}] = None; sys.argv = ['domino-train', 'demo']; {start}"
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        f"error: the train extra is missing (no module {missing}): install it with "
        'pip install -e ".[train]" in a checkout, or pip install "domino-env[train]"\n'
    )


@pytest.mark.parametrize(
    ("hidden", "args", "extra"),
    [
        ("fastapi", ["serve", "--port", "0"], "serve"),
        ("ray", ["train", str(ROOT / "configs" / "classic.yaml"), "--ray", "1"], "ray"),
    ],
    ids=["serve", "train-ray"],
)
def test_a_command_without_its_extra_says_which_and_how_to_install_it(
    hidden: str,
    args: list[str],
    extra: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A command whose extra is not installed refuses in one line before any work, exit 2."""
    monkeypatch.setitem(sys.modules, hidden, None)  # find_spec then reports the module missing
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"error: the {extra} extra is missing (no module {hidden}): install it with "
        f'pip install -e ".[{extra}]" in a checkout, or pip install "domino-env[{extra}]"\n'
    )


def test_cli_trains_a_tiny_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write(tmp_path, "env:\n  variant: classic\n  options: {num_players: 2, episode: round}\n")
    overrides = [o for o in TINY if not o.startswith("run.total_steps")]
    code = main(
        [
            "train",
            str(config),
            *overrides,
            "run.total_steps=64",
            "run.name=cli",
            "eval.every=1",
            "eval.games=2",
            f"run.out_dir={tmp_path.as_posix()}",
            "--no-progress",
        ]
    )
    out, _ = capsys.readouterr()
    assert code == 0
    checkpoints = tmp_path / "cli" / "checkpoints"
    assert str(checkpoints / "iter_00001.pt") in out  # the final checkpoint is named
    assert {p.name for p in checkpoints.iterdir()} == {"iter_00001.pt", "latest.pt"}
    assert (tmp_path / "cli" / "evaluations.csv").read_text().splitlines()[0].startswith("iteration,steps")


def test_ship_from_a_trained_run_exports_its_checkpoint_with_its_steps_and_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import torch

    from tests.support.training_helpers import tiny_config
    from training.model import checkpoint
    from training.rl.train import Trainer

    trainer = Trainer(tiny_config(tmp_path / "runs"))
    latest = trainer.train(progress=False)
    agents = tmp_path / "agents"
    args = ["--agents-dir", str(agents), "--games", "2", "--opponents", "random", "--no-progress"]
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:  # the measuring acts with the config's threads (1), not torch's default
        assert main(["ship", "--from", str(trainer.run_dir), *args]) == 0
        assert torch.get_num_threads() == trainer.config.run.torch_threads == 1
    finally:
        torch.set_num_threads(threads)
    _, shipped = load_model(agents / "classic.pt")
    assert shipped == trainer.config
    reproduce = load_config(str(agents / "classic.yaml"))  # the run's config, in a folder of its own
    assert reproduce.run.name == f"ship-{trainer.config.run_name}"
    written = yaml.safe_load((agents / "classic.yaml").read_text())  # no section the run never read
    assert "ppo" in written and not {"mmd", "dmc", "nfsp", "cfr", "mccfr", "distill"} & set(written)
    reproduce.run.name = trainer.config.run.name
    assert reproduce == trainer.config
    assert torch_equal_weights(agents / "classic.pt", latest)
    with (agents / "results.csv").open() as handle:
        (row,) = csv.DictReader(handle)
    assert row["steps"] == "128" and row["vs_random_games"] == "2"
    assert float(row["train_minutes"]) == round(checkpoint.load(latest)["seconds"] / 60, 1)
    capsys.readouterr()
    for wrong in (
        [],  # neither a config nor --from
        [str(ROOT / "configs" / "classic.yaml"), "--from", str(latest)],  # both
        ["--from", str(latest), "--measure-only"],
        ["--from", str(tmp_path / "nowhere")],
    ):
        assert main(["ship", *wrong, *args]) == 2, wrong
        _, err = capsys.readouterr()
        assert err.startswith("error:") and len(err.strip().splitlines()) == 1, err


def torch_equal_weights(first: Path, second: Path) -> bool:
    a, _ = load_model(first)
    b, _ = load_model(second)
    return all(x.equal(y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))


def test_ship_exports_the_agent_with_its_config_and_records_its_win_rates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write(tmp_path, "env:\n  variant: classic\n  options: {num_players: 2, episode: round}\n")
    agents = tmp_path / "agents"
    overrides = [o for o in TINY if not o.startswith("run.total_steps")]
    common = [*overrides, "run.total_steps=64", f"run.out_dir={tmp_path.as_posix()}"]
    args = ["--agents-dir", str(agents), "--games", "6", "--search-games", "2", "--no-progress"]
    (tmp_path / "classic-1" / "checkpoints").mkdir(parents=True)  # a `train` run of the same config
    assert main(["ship", str(config), *common, *args]) == 0
    assert "agents" in capsys.readouterr().out
    assert (tmp_path / "classic-1" / "checkpoints").is_dir()  # left alone: ship trains in its own folder
    assert (tmp_path / "ship-classic-1" / "checkpoints" / "latest.pt").is_file()
    _, trained = load_model(agents / "classic.pt")  # weights only, with the config
    assert trained.env.variant == "classic" and trained.network.hidden == [32]
    assert load_config(str(agents / "classic.yaml")) == trained
    with (agents / "results.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["variant"], r["agent"]) for r in rows] == [("classic", "policy")]
    assert rows[0]["vs_random_games"] == "6" and rows[0]["steps"] == "64"
    assert (
        0.0
        <= float(rows[0]["vs_random_low"])
        <= float(rows[0]["vs_random"])
        <= float(rows[0]["vs_random_high"])
    )
    table = (agents / "README.md").read_text()
    assert "| classic |" in table and "vs greedy" in table

    blitz = write(
        tmp_path, "env:\n  variant: blitz\n  options: {num_players: 2, episode: round}\n", "blitz.yaml"
    )
    assert main(["ship", str(blitz), *common, *args, "--opponents", "greedy", "search:1"]) == 0
    assert main(["ship", str(config), *common, "run.seed=5", *args]) == 0  # shipped again: replaced
    with (agents / "results.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [r["variant"] for r in rows] == ["blitz", "classic"]
    assert rows[0]["vs_random"] == "" and 0.0 <= float(rows[0]["vs_search:1"]) <= 1.0  # measured as asked
    assert rows[0]["vs_search:1_games"] == "2" and rows[0]["vs_greedy_games"] == "6"  # per opponent
    assert rows[1]["vs_search:1"] == "" and rows[1]["vs_random"] != ""
    assert "| vs random | vs greedy | vs search:1 |" in (agents / "README.md").read_text()

    # measured again without training (its other columns stay), and its guided search in a row of its own
    shipped = (agents / "classic.pt").read_bytes()
    assert main(["ship", str(config), *common, *args, "--measure-only", "--opponents", "search:1"]) == 0
    guided = ["--guided", "--opponents", "search:1", "policy"]  # policy: the shipped one it searches with
    assert main(["ship", str(config), *common, *args, *guided]) == 0
    assert (agents / "classic.pt").read_bytes() == shipped
    with (agents / "results.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["variant"], r["agent"]) for r in rows] == [
        ("blitz", "policy"),
        ("classic", "policy"),
        ("classic", "guided"),
    ]
    assert rows[1]["vs_random"] != "" and rows[1]["vs_search:1"] != "" and rows[1]["steps"] == "64"
    assert rows[2]["vs_random"] == "" and rows[2]["vs_search:1_games"] == "2" and rows[2]["steps"] == "64"
    assert rows[2]["vs_policy_games"] == "2"  # a guided pairing costs --search-games
    assert rows[1]["vs_policy"] == ""
    assert "| classic | guided |" in (agents / "README.md").read_text()
    assert main(["ship", str(config), *common, *args]) == 0  # a new agent: its old guided row goes
    with (agents / "results.csv").open() as handle:
        assert [r["agent"] for r in csv.DictReader(handle)] == ["policy", "policy"]
    missing = write(tmp_path, "env:\n  variant: osel\n  options: {num_players: 2}\n", "osel.yaml")
    assert main(["ship", str(missing), *args, "--measure-only"]) == 2  # nothing shipped to measure
    assert main(["ship", str(config), *common, *args, "--opponents", "nobody"]) == 2  # before training
    assert main(["ship", str(config), *common, *args, "--opponents", "policy"]) == 2  # guided rows only
    assert main(["ship", str(tmp_path / "missing.yaml"), *args]) == 2
