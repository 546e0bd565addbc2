"""Evaluation, ratings and terminal play: against a tiny run trained here in about a second."""

from __future__ import annotations

import contextlib
import csv
import io
import re
from pathlib import Path
from typing import Any

import pytest
import torch

from domino_env import raw_env
from training.__main__ import main
from training.apps.play import play
from training.eval import arena, evaluate, ratings, report
from training.model.config import load_config
from training.rl.train import Trainer

ROOT = Path(__file__).resolve().parents[2]

TINY = [
    "env.options={num_players: 2, episode: round}",
    "network.hidden=[16]",
    "run.total_steps=384",
    "run.num_envs=4",
    "run.rollout_steps=32",
    "run.checkpoint_every=1",
    "ppo.update_epochs=1",
    "eval.every=2",
    "eval.games=2",
    "eval.search_games=2",
]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three iterations of self-play: iter_00001..3.pt, latest.pt and evaluations.csv."""
    out = tmp_path_factory.mktemp("runs")
    config = load_config(None, [*TINY, f"run.out_dir={out}"])
    trainer = Trainer(config)
    trainer.train(progress=False)
    return trainer.run_dir


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


# --- evaluate ------------------------------------------------------------------------------------


def test_greedy_beats_random_with_a_confidence_interval() -> None:
    plan = evaluate.prepare(["greedy", "random"], "all_fives", ["num_players=2"])
    assert plan.options == {"num_players": 2, "episode": "match"}  # the default config's evaluation table
    (result,) = evaluate.evaluate(plan, games=40, seed=0)
    low, high = result.interval()
    assert (result.agent, result.opponent, result.games) == ("greedy", "random", 40)
    assert 0.5 < low <= result.win_rate <= high <= 1.0
    assert result.mean_reward > 0 and result.mean_score >= 250  # greedy reaches the All Fives target
    assert len(result.shares) == 40 and sum(result.shares) == result.wins


def test_pairings_round_robin_and_first_only() -> None:
    heads_up, three = raw_env("all_fives", num_players=2).rules, raw_env("all_fives", num_players=3).rules
    assert evaluate.pairings(3, heads_up) == [(0, 1), (0, 2), (1, 2)]
    assert evaluate.pairings(3, heads_up, first_only=True) == [(0, 1), (0, 2)]
    assert evaluate.pairings(2, three) == [(0, 1), (1, 0)]  # one seat against two copies is not symmetric


def test_evaluate_command_prints_every_pairing(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", str(run_dir), "greedy", "random", "--games", "4", "--seed", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "all_fives (num_players=2, episode=match): 4 games per pairing, seats rotated, seed 3"
    assert out[1].split() == [
        "agent",
        "opponent",
        "games",
        "win",
        "rate",
        "95%",
        "CI",
        "reward",
        "points",  # All Fives scores points; Classic's are penalties (see below)
        "rounds",
        "margin",
        "95%",
        "CI",
    ]
    pairs = [line.split()[:2] for line in out[2:-1]]
    label = f"{run_dir.name}/latest"
    assert pairs == [[label, "greedy"], [label, "random"], ["greedy", "random"]]
    assert all("[" in line and "%]" in line for line in out[2:-1])
    assert out[-1] == "95% CIs over the games: win rate, Wilson's; margin, a t-interval"  # (which ones)


def test_options_and_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "table.csv"
    args = ["evaluate", "greedy", "random", "--option", "episode=round", "--games", "6", "--csv", str(path)]
    assert main(args) == 0
    assert "episode=round" in capsys.readouterr().out
    (row,) = read_csv(path)
    assert row["agent"] == "greedy" and row["games"] == "6" and float(row["mean_rounds"]) == 1.0
    assert float(row["ci_low"]) <= float(row["win_rate"]) <= float(row["ci_high"])


def test_evaluate_final_writes_its_csv(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = evaluate.evaluate_final(run_dir, games=4, seed=0)
    assert [r["opponent"] for r in rows] == ["random", "greedy"]
    assert all(r["games"] == 4 and r["ci_low"] <= r["win_rate"] <= r["ci_high"] for r in rows)
    written = read_csv(run_dir / "final_evaluation.csv")
    assert [r["opponent"] for r in written] == ["random", "greedy"]
    assert list(written[0]) == list(evaluate.RESULT_COLUMNS)
    assert "final_evaluation.csv" in capsys.readouterr().out


# --- clear errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("agents", "message"),
    [
        (["grredy", "random"], "agent 'grredy' is not random or greedy"),
        (["missing.pt", "random"], "no checkpoint file or run folder"),
        (["CORRUPT", "random"], "cannot be read"),
        (["NOT_A_RUN", "random"], "holds no checkpoints/latest.pt"),
        (["RUN", "random", "--option", "num_players=3"], "was trained on all_fives (num_players=2"),
        (["RUN", "random", "--variant", "classic"], "not on classic"),
        (["greedy", "random", "--variant", "chess"], "unknown variant 'chess'"),
        (["greedy", "random", "--option", "colour"], "must look like key=value"),
        (["greedy", "random", "--option", "max_pip=[1"], "option 'max_pip=[1': the value is not valid YAML"),
        (
            ["greedy", "random", "--option", "preset=tiny", "--option", "preset=small"],
            "preset is given twice",
        ),
    ],
)
def test_clear_errors(
    agents: list[str], message: str, run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"not a checkpoint")
    swap = {
        "CORRUPT": str(corrupt),
        "NOT_A_RUN": str(tmp_path),
        "RUN": str(run_dir),
        "missing.pt": "missing.pt",
    }
    assert main(["evaluate", *(swap.get(a, a) for a in agents), "--games", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_evaluate_refuses_a_variant_other_than_its_configs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--config`` names its table: another ``--variant`` beside it (which would drop the
    config's options) is refused in one line before any game; the config's own variant, or
    ``--option``, keeps the config's options."""
    tiny = str(ROOT / "configs" / "classic_tiny.yaml")
    path = tmp_path / "table.csv"
    argv = ["evaluate", "random", "greedy", "--config", tiny, "--games", "2", "--csv", str(path)]
    assert main([*argv, "--variant", "osel", "--no-progress"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert "plays classic (with its options), not osel: give --variant or --config, not both" in err
    assert not path.exists()
    for extra in (["--variant", "classic"], ["--option", "num_players=2"]):
        assert main([*argv, *extra, "--no-progress"]) == 0, extra
        out = capsys.readouterr().out
        assert out.startswith("classic (num_players=2, preset=tiny, episode=round)"), out
        assert path.is_file()


CLASSIC, OSEL = str(ROOT / "agents" / "classic.pt"), str(ROOT / "agents" / "osel.pt")
CLASSIC_TABLE = "classic (num_players=2, teams=False, draw=True)"
OSEL_TABLE = "osel (num_players=2, teams=False)"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (  # no flag chose the table: the two checkpoints are named, no flag advice
            ["evaluate", CLASSIC, OSEL, "--games", "1"],
            f"checkpoints {CLASSIC} and {OSEL} play different tables: {CLASSIC} was trained on "
            f"{CLASSIC_TABLE}, {OSEL} on {OSEL_TABLE}; a game has one table, so pair each with "
            "agents of its own table",
        ),
        (  # --variant chose it: the advice to leave it out
            ["evaluate", CLASSIC, "random", "--variant", "osel", "--games", "1"],
            f"checkpoint {CLASSIC} was trained on {CLASSIC_TABLE}, not on {OSEL_TABLE}; "
            "leave out --variant/--option/--config to use its own table",
        ),
        (  # record's variant is positional: its own advice
            ["record", "classic", OSEL, "--out", "x.gif"],
            f"checkpoint {OSEL} was trained on {OSEL_TABLE}, not on {CLASSIC_TABLE}; record a "
            "checkpoint on the variant it was trained on, without --option for other rules",
        ),
    ],
    ids=["two-checkpoints", "variant-flag", "record"],
)
def test_a_checkpoint_of_another_table_is_told_by_what_chose_the_table(
    argv: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"error: {message}\n"
    assert list(tmp_path.iterdir()) == []


def test_check_fits_names_both_checkpoints_whichever_comes_first() -> None:
    classic, osel = evaluate.contestant(CLASSIC), evaluate.contestant(OSEL)
    with pytest.raises(
        ValueError, match=f"checkpoints {re.escape(OSEL)} and {re.escape(CLASSIC)} play different"
    ):
        evaluate.check_fits([classic, osel], "osel", {}, advice="never shown")
    with pytest.raises(ValueError, match=r"not on osel .*; take another table$"):
        evaluate.check_fits([classic], "osel", {}, advice="take another table")


def test_rate_and_play_refuse_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rate", str(tmp_path)]) == 2
    assert "holds no checkpoints/latest.pt" in capsys.readouterr().err
    assert main(["play", "--opponent", str(tmp_path / "gone.pt")]) == 2
    assert "no checkpoint file" in capsys.readouterr().err
    assert main(["play", "--seat", "2"]) == 2
    assert "seat must be in 0..1" in capsys.readouterr().err


# --- rate ------------------------------------------------------------------------------------------


def test_rate_writes_table_and_figure(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rate", str(run_dir), "--games", "2", "--most", "2"]) == 0
    out = capsys.readouterr().out
    rows = read_csv(run_dir / "ratings.csv")
    # baselines, then iter 1 and 3 (the first and last of a sample of 2); latest.pt repeats iter 3
    assert [r["agent"] for r in rows] == ["random", "greedy", "iter_00001", "iter_00003"]
    assert [r["steps"] for r in rows] == ["", "", "128", "384"]
    assert all(int(r["games"]) == 2 * 3 and float(r["sigma"]) > 0 for r in rows)
    header = out.splitlines()[0]  # says what the games column counts: 2 games against each of 3 others
    assert header.endswith(
        ": round-robin of 4 agents, 2 games per pairing (6 per agent: the games column), "
        "seats rotated, seed 0"
    )
    assert re.search(r"\n(iter_00003|random) +[-\d,]+ .* 6 +\d+\.\d%", out)
    assert (run_dir / "ratings.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "ratings.csv" in out and "ratings.png" in out and "iter_00003" in out


def test_rating_follows_results(run_dir: Path) -> None:
    """Greedy beats random nearly always over whole matches, so it ends rated above it."""
    plan = ratings.rating_plan(run_dir, most=1)
    by_label = {r.contestant.label: r for r in ratings.rate(plan, games=6, seed=0)}
    assert set(by_label) == {"random", "greedy", "iter_00003"}
    assert by_label["greedy"].mu > by_label["random"].mu


# --- command-line checks, progress and interruptions -----------------------------------------------


@pytest.mark.parametrize("where", ["a folder", "under a file"])
def test_evaluate_checks_its_csv_path_before_any_game(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "afile").write_text("")
    path = tmp_path if where == "a folder" else tmp_path / "afile" / "table.csv"
    assert main(["evaluate", "greedy", "random", "--games", "2", "--csv", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # no header: not one game was played
    assert err.startswith("error: ") and err.count("\n") == 1 and str(tmp_path) in err


def write_config(folder: Path, variant: str) -> Path:
    path = folder / f"{variant}.yaml"
    path.write_text(f"env:\n  variant: {variant}\n  options: {{num_players: 2, episode: round}}\n")
    return path


def tiny_ship_args(tmp_path: Path, agents_dir: Path) -> list[str]:
    config = write_config(tmp_path, "classic")
    overrides = [o for o in TINY if not o.startswith("run.total_steps")]
    runs = f"run.out_dir={(tmp_path / 'runs').as_posix()}"
    return ["ship", str(config), *overrides, "run.total_steps=64", runs, "--agents-dir", str(agents_dir)]


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_ship_checks_its_agents_dir_before_training(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    agents_dir = afile if where == "a file" else afile / "agents"
    assert main([*tiny_ship_args(tmp_path, agents_dir), "--games", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "afile" in err
    assert not (tmp_path / "runs").exists()  # training never started


def test_ship_without_progress_still_prints_its_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*tiny_ship_args(tmp_path, tmp_path / "agents"), "--games", "2", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    headers = [i for i, line in enumerate(lines) if line.split()[:2] == ["agent", "opponent"]]
    assert all("penalty" in lines[i].split() for i in headers)  # Classic scores are penalty points
    assert [lines[i + 1].split()[1] for i in headers] == ["random", "greedy"]  # a table per opponent
    assert "duplicate deals" in out
    assert "game/s" not in err  # no evaluation bar


def test_ship_records_one_run_at_a_time(tmp_path: Path) -> None:
    """Two ``ship`` runs that finish together must not lose each other's rows."""
    import fcntl
    import threading

    from training.eval import ship

    measured = {"vs_random": 0.5, "vs_random_low": 0.4, "vs_random_high": 0.6, "vs_random_games": 2}
    row = {"variant": "blitz", "agent": "policy", "players": "2", **measured}
    ship.record(tmp_path, {**row, "variant": "classic"})
    with (tmp_path / ".results.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another run is writing
        writer = threading.Thread(target=ship.record, args=(tmp_path, row))
        writer.start()
        writer.join(timeout=0.3)
        assert writer.is_alive()  # it waits for the lock
        assert [r["variant"] for r in ship.read_rows(tmp_path)] == ["classic"]
    writer.join(timeout=10)
    assert [r["variant"] for r in ship.read_rows(tmp_path)] == ["blitz", "classic"]


def test_headers_leave_out_the_reward_and_name_the_score(capsys: pytest.CaptureFixture[str]) -> None:
    """Results are outcomes whatever reward the env gives; Classic's score is a penalty."""
    args = ["greedy", "random", "--games", "2", "--no-progress", "--option", "reward=points"]
    assert main(["evaluate", *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("all_fives (num_players=2, episode=match): ") and "reward" not in lines[0]
    assert lines[1].split()[-5:-3] == ["points", "rounds"]
    assert main(["evaluate", *args, "--variant", "classic"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "reward=" not in lines[0] and lines[1].split()[-5:-3] == ["penalty", "rounds"]


def test_evaluate_and_rate_show_progress_unless_asked_not_to(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["evaluate", "greedy", "random", "--games", "3"]) == 0
    assert "/3 " in capsys.readouterr().err  # a bar over the 3 games
    assert main(["evaluate", "greedy", "random", "--games", "3", "--no-progress"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["rate", str(run_dir), "--games", "1", "--most", "1"]) == 0
    assert "/3 " in capsys.readouterr().err  # random, greedy and one checkpoint: 3 pairs of 1 game
    assert main(["rate", str(run_dir), "--games", "1", "--most", "1", "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


def test_demo_says_the_steps_it_trains_and_what_to_do_next(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run.total_steps= override wins over --steps, and the first line says so; the demo keeps a
    checkpoint every 40 iterations (and the last), which its rating reads; it ends with next steps."""
    config = str(ROOT / "configs" / "all_fives.yaml")
    tiny = [o for o in TINY if not o.startswith("run.checkpoint_every=")]  # the demo's own cadence
    overrides = [*tiny, f"run.out_dir={tmp_path.as_posix()}"]  # run.total_steps=384: 3 iterations
    args = ["--games", "1", "--rating-games", "1", "--no-progress"]
    assert main(["demo", "--config", config, *overrides, *args]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert " for 384 steps -> " in lines[0]
    run = tmp_path / "demo"
    checkpoints = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert checkpoints == [".made-by-demo", "iter_00003.pt", "latest.pt"]  # (the mark: demo may replace it)
    assert (run / "ratings.csv").is_file() and "game/s" not in err
    logdir = re.escape(str(run / "tb"))
    assert re.fullmatch(
        rf"next( \(source \S+activate first\))?: watch the curves with tensorboard --logdir {logdir},",
        lines[-3],
    )
    assert lines[-2] == f"  play the agent with python -m training play --opponent {run},"
    assert (
        lines[-1]
        == f"  or measure it against search with python -m training evaluate {run} search --games 20"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--games", "0"], "argument --games: must be a positive integer, got '0'"),
        (["--games", "-1"], "must be a positive integer"),
        (["--first", "greddy"], "argument --first: 'greddy' is no built-in agent: random, greedy, search"),
        (["--second", "agents/classic.pt"], "argument --second: 'agents/classic.pt' is no built-in agent"),
        (
            ["--first", "search:0"],
            "argument --first: agent 'search:0': the search budget must be an integer from 1 to 4096",
        ),
        (["--variants"], "argument --variants: expected at least one argument"),
    ],
)
def test_arena_refuses_bad_arguments(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        arena.main(args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_arena_plays_search(capsys: pytest.CaptureFixture[str]) -> None:
    arena.main(["--first", "search:1", "--second", "greedy", "--variants", "blind", "--games", "2"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("search:1 vs greedy: 2 whole matches per line")
    assert [line.split()[0] for line in lines[2:]] == ["blind", "blind"]  # heads-up and partners


def test_help_shows_defaults_and_errors_read_well(capsys: pytest.CaptureFixture[str]) -> None:
    def help_text(*command: str) -> str:
        with pytest.raises(SystemExit):
            main([*command, "--help"])
        return " ".join(capsys.readouterr().out.split())  # help wraps lines anywhere

    assert "``" not in help_text()
    demo = help_text("demo")
    assert "(default 500)" in demo and "(default 10)" in demo and "--seed SEED deal seed" in demo
    ship = help_text("ship")
    assert "(default 2000)" in ship and "--seed SEED deal seed" in ship
    assert "--seed SEED game g is dealt" in help_text("rate")
    assert (
        "built-in agents (baselines, search, search:n, advanced, expert)"
        in " ".join(arena_help().split()).lower()
    )
    for bad in ("x", "0"):
        with pytest.raises(SystemExit):
            main(["evaluate", "greedy", "random", "--games", bad])
        err = capsys.readouterr().err
        assert f"argument --games: must be a positive integer, got '{bad}'" in err and "_positive" not in err


def arena_help() -> str:
    out = io.StringIO()
    with pytest.raises(SystemExit), contextlib.redirect_stdout(out):
        arena.main(["--help"])
    return out.getvalue()


def test_interrupted_evaluate_says_so_and_shows_the_finished_pairings(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = evaluate.play_pairing
    calls: list[str] = []

    def interrupt_the_second(*args: Any, **kwargs: Any) -> evaluate.Result:
        calls.append("pairing")
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(evaluate, "play_pairing", interrupt_the_second)
    assert main(["evaluate", "greedy", "random", "random", "--games", "2", "--no-progress"]) == 130
    out, err = capsys.readouterr()
    assert err == "interrupted: 1 of 3 pairings finished\n"
    assert [line.split()[:2] for line in out.splitlines()[2:-1]] == [["greedy", "random"]]
    assert out.splitlines()[-1].startswith("95% CIs over the games")


def test_interrupted_rate_says_so(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupt(*args: Any, **kwargs: Any) -> evaluate.Result:
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluate, "play_pairing", interrupt)
    assert main(["rate", str(run_dir), "--games", "1", "--most", "1", "--no-progress"]) == 130
    assert capsys.readouterr().err.startswith("interrupted: ")


# --- play ------------------------------------------------------------------------------------------


def test_play_a_round_from_stdin() -> None:
    env = raw_env("all_fives", num_players=2, episode="round")
    stdin, stdout = io.StringIO("x\n0\n99\n" + "1\n" * 60), io.StringIO()
    greedy = evaluate.contestant("greedy").agent(env, 1)
    assert play(env, 0, opponent=greedy, opponent_label="greedy", seed=3, stdin=stdin, stdout=stdout)
    text = stdout.getvalue()
    assert "'x' is not one of the moves" in text and "'0' is not" in text and "'99' is not" in text
    assert "your moves:\n  1) " in text and "P1 (greedy)" in text
    assert "round over (" in text  # the running commentary
    assert text.rstrip().splitlines()[-1].startswith("round over: you ")
    assert env.game.round_over


def test_play_3d_dominoes_shows_the_grid_and_only_its_own_hand() -> None:
    env = raw_env("domino3d", num_players=2)
    stdin, stdout = io.StringIO("1\n" * 80), io.StringIO()
    greedy = evaluate.contestant("greedy").agent(env, 1)
    assert play(env, 0, opponent=greedy, opponent_label="greedy", seed=2, stdin=stdin, stdout=stdout)
    text = stdout.getvalue()
    assert "join the halves of a tile" in text  # the grid's legend
    assert "start tile" in text and "P1 (greedy) lays" in text  # the running commentary
    tile, first_move = text[text.index("your moves:") :].splitlines()[1:3]  # grouped under their tile
    assert re.fullmatch(r"  \d-\d:", tile)
    assert first_move.startswith("    1) ") and " on (" in first_move
    assert "P1 (greedy): 4 tiles" in text  # the opponent's hand stays hidden
    assert text.rstrip().splitlines()[-1].startswith("match over: you ")
    assert env.game.round_over


def test_play_quits_on_q_or_end_of_input() -> None:
    env = raw_env("all_fives", num_players=2)
    agent = evaluate.contestant("random").agent(env, 0)
    for feed in ("q\n", ""):
        stdout = io.StringIO()
        assert not play(
            env, 1, opponent=agent, opponent_label="random", seed=0, stdin=io.StringIO(feed), stdout=stdout
        )
        assert not env.game.match_over


def test_play_command_against_a_checkpoint(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * 60))
    args = ["play", "--opponent", str(run_dir), "--option", "episode=round", "--seat", "1", "--seed", "5"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("all_fives (num_players=2, episode=round): you are P1, against ")
    assert "round over: you " in out


def test_agent_commands_run_torch_on_the_threads_asked(run_dir: Path) -> None:
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        assert main(["evaluate", str(run_dir), "random", "--games", "2"]) == 0
        assert torch.get_num_threads() == 1  # the default: small batches run best on one thread
        assert main(["evaluate", str(run_dir), "random", "--games", "2", "--torch-threads", "2"]) == 0
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_table_is_described_by_the_options_it_sets(capsys: pytest.CaptureFixture[str]) -> None:
    """Options left unset (None: the variant's own) are not listed as ``max_pip=None``."""
    assert report.table_text("osel", {"num_players": 2, "max_pip": None, "reward": "outcome"}) == (
        "osel (num_players=2)"
    )
    shipped = str(ROOT / "agents" / "classic.pt")
    assert main(["evaluate", shipped, "random", "--variant", "osel", "--games", "1"]) == 2
    err = capsys.readouterr().err
    assert "not on osel (num_players=2" in err and "None" not in err


def test_replace_rows_replaces_rows_of_the_same_key_and_keeps_the_rest(tmp_path: Path) -> None:
    path, columns, key = tmp_path / "results.csv", ("run", "seed", "score"), ("run", "seed")
    report.replace_rows(
        path, columns, key, [{"run": "a", "seed": 1, "score": 0.5}, {"run": "a", "seed": 2, "score": 0.6}]
    )
    report.replace_rows(path, columns, key, [{"run": "b", "seed": 1, "score": 0.7}])
    report.replace_rows(path, columns, key, [{"run": "a", "seed": 1, "score": 0.9}])  # a rerun of one row
    rows = [(r["run"], r["seed"], r["score"]) for r in csv.DictReader(path.open())]
    assert rows == [("a", "2", "0.6"), ("b", "1", "0.7"), ("a", "1", "0.9")]
