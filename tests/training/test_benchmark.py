"""``python -m training benchmark``: the protocol, the files, the normalized score, bad input,
exploratory runs labelled so, honest intervals, and an earlier benchmark kept unless --overwrite."""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from training.__main__ import main
from training.eval import benchmark
from training.eval.benchmark import protocol, runner
from training.eval.benchmark.scores import (
    VariantResults,
    deal_draws,
    group_interval_with_deals,
    score_with_interval,
    scored_in,
)
from training.eval.evaluate import Contestant
from training.matches import Match, wilson_interval
from training.model.config import Config, EnvConfig

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cheap_ladder(monkeypatch: pytest.MonkeyPatch) -> None:
    """random and greedy as the ladder, greedy as the score's 1: the protocol's mechanics at a
    fraction of search's cost (search's own runs are in test_search.py)."""
    monkeypatch.setattr(protocol, "LADDER", ("random", "greedy"))
    monkeypatch.setattr(protocol, "TOP", "greedy")


@pytest.fixture
def small_protocol(monkeypatch: pytest.MonkeyPatch) -> None:
    """A protocol of 10 games a pairing on Classic and Blitz: a run that keeps to it, cheaply."""
    monkeypatch.setattr(protocol, "PROTOCOL_GAMES", 10)
    monkeypatch.setattr(protocol, "PROTOCOL_VARIANTS", ("classic", "blitz"))


def test_normalized_score_on_a_hand_made_case() -> None:
    # per-deal win shares against the top rung: W(random) = 0.1, the top's own (a mirror) 0.5
    shares = {"random": [0.0, 0.2], "expert": [0.5, 0.5], "mine": [0.3, 0.5], "better": [0.9, 0.9]}
    scores = benchmark.normalized(shares)
    assert scores["random"] == pytest.approx([-0.25, 0.25])  # (0 - .1) / .4 and (.2 - .1) / .4
    assert scores["expert"] == pytest.approx([1.0, 1.0])
    assert scores["mine"] == pytest.approx([0.5, 1.0])
    assert scores["better"] == pytest.approx([2.0, 2.0])  # beating the top rung scores above 1
    flat = {k: [0.5, 0.5] for k in shares}
    assert math.isnan(benchmark.normalized(flat)["mine"][0])


def test_the_score_reads_only_the_games_against_the_top_rung(
    cheap_ladder: None, small_protocol: None, tmp_path: Path
) -> None:
    """W is the win rate against TOP: the other rungs' games are tabled, not scored."""
    summary = run(tmp_path, ["shipped"], ["blitz"], 10)
    rows = csv_rows(tmp_path)
    low = float(rows[("blitz", "random", "greedy")]["win_rate"])
    mine = float(rows[("blitz", "shipped", "greedy")]["win_rate"])
    expected = (mine - low) / (0.5 - low)
    assert summary["agents"]["shipped"]["scores"]["blitz"] == pytest.approx(expected, abs=1e-6)
    assert summary["agents"]["greedy"]["scores"]["blitz"] == pytest.approx(1.0)
    assert "win rate against greedy" in summary["score"]


def test_a_pairings_file_of_protocol_v1_is_refused_naming_this_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "pairings.json"
    old.write_text(json.dumps({"protocol": "v1", "deal_seed": benchmark.DEAL_SEED, "pairings": []}))
    out = tmp_path / "bench"
    assert main(["benchmark", "greedy", "--reference", str(old), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "protocol v1 pairings" in err and f"protocol {benchmark.PROTOCOL}" in err and "expert" in err
    assert not out.exists()


def test_swapped_reads_a_two_sided_match_from_the_other_side() -> None:
    match = Match(
        4,
        2.5,
        0.25,
        3.0,
        100,
        mean_score=80.0,
        shares=[1, 0, 0.5, 1],
        margins=[10, -4, 0, 6],
        per_deal=2,
        decisions=[30, 20],
        seconds=[0.3, 0.1],
    )
    for lower_wins, other_score in ((False, 80.0 - 3.0), (True, 80.0 + 3.0)):
        other = benchmark.swapped(match, lower_wins)
        assert (other.wins, other.mean_reward, other.mean_score) == (1.5, -0.25, other_score)
        assert other.shares == [0, 1, 0.5, 0] and other.margins == [-10, 4, 0, -6]
        assert (other.decisions, other.seconds) == ([20, 30], [0.1, 0.3])
        assert benchmark.swapped(other, lower_wins) == match


def variant_of(shares: dict[str, list[float]], name: str = "classic") -> VariantResults:
    """A variant's results as the scores read them: each player's per-deal share against expert
    (expert's own: its mirror's 1/2)."""
    shares = {"expert": [0.5] * len(shares["random"]), **shares}
    return VariantResults(name, {}, shares, protocol.normalized(shares), {}, set())


def test_a_players_interval_redraws_the_deals_for_every_player_and_the_scale() -> None:
    """The scale's zero, W(random), is drawn again with the deals: a player whose every deal
    is alike still has an interval, one that plays each deal exactly as ``random`` scores 0 in
    every draw (no interval), and ``random`` and ``expert`` have none."""
    random_shares = [0.0, 0.0, 0.5, 0.0, 0.0, 0.5, 0.0, 0.0]
    by_variant = [variant_of({"random": random_shares, "steady": [0.25] * 8, "echo": random_shares})]
    draws = deal_draws(by_variant)
    centre, low, high = score_with_interval(scored_in(by_variant, "steady"), "steady", draws)
    assert centre == pytest.approx((0.25 - 0.125) / (0.5 - 0.125)) and low < centre < high
    for player, score in (("echo", 0.0), ("random", 0.0), ("expert", 1.0)):
        centre, low, high = score_with_interval(scored_in(by_variant, player), player, draws)
        assert centre == pytest.approx(score) and math.isnan(low) and math.isnan(high), player


def test_a_players_iqm_is_over_the_variants() -> None:
    by_variant = [
        variant_of({"random": [0.0, 0.2, 0.0, 0.2], "p": [0.5, 0.3, 0.4, 0.4]}, name)
        for name in ("classic", "osel", "blitz")
    ]
    by_variant[1] = variant_of({"random": [0.0, 0.2, 0.0, 0.2], "p": [0.1, 0.1, 0.2, 0.2]}, "osel")
    centre, low, high = score_with_interval(scored_in(by_variant, "p"), "p", deal_draws(by_variant))
    expected = [(0.4 - 0.1) / 0.4, (0.15 - 0.1) / 0.4, (0.4 - 0.1) / 0.4]  # three variants: none trimmed
    assert centre == pytest.approx(sum(expected) / 3) and low <= centre <= high


def test_a_groups_interval_is_stratified_and_handles_single_values() -> None:
    runs = [[0.1, 0.2, 0.3, 0.4], [1.0, 2.0, 3.0, 4.0]]
    centre, low, high = benchmark.iqm_with_interval(runs)
    assert centre == pytest.approx((0.3 + 0.4 + 1.0 + 2.0) / 4)  # the middle half of eight values
    assert low <= centre <= high
    one_run = benchmark.iqm_with_interval([[0.5], [1.5]])  # nothing to resample
    assert one_run[0] == 1.0 and math.isnan(one_run[1]) and math.isnan(one_run[2])
    alike = benchmark.iqm_with_interval([[0.5, 0.5, 0.5], [1.0, 1.0]])  # every resample alike
    assert math.isnan(alike[1]) and math.isnan(alike[2])


def test_a_groups_interval_with_the_deals_holds_the_noise_every_run_shares() -> None:
    """Runs that play every deal alike have no spread between them, so resampling the runs alone
    gives no interval; the deals they all played are still a sample, and redrawing them (the
    scale's zero with them) gives one around the group's score, as wide as one run's own."""
    random_shares = [0.0, 0.0, 0.5, 0.0, 0.0, 0.5, 0.0, 0.0]
    seeds = {f"seed{k}": [1.0, 0.0, 0.5, 0.5, 1.0, 0.0, 0.5, 0.5] for k in range(3)}
    by_variant = [variant_of({"random": random_shares, **seeds})]
    draws = deal_draws(by_variant)
    centre, low, high = benchmark.iqm_with_interval([[by_variant[0].score(s) for s in seeds]])
    assert centre == pytest.approx((0.5 - 0.125) / (0.5 - 0.125)) and math.isnan(low) and math.isnan(high)
    deals_low, deals_high = group_interval_with_deals(by_variant, list(seeds), draws)
    one = score_with_interval(by_variant, "seed0", draws)
    assert deals_low < centre < deals_high and (deals_low, deals_high) == pytest.approx(one[1:])
    spread = {**seeds, "seed2": [0.25] * 8}  # one run apart: both intervals, the deals' the wider
    by_variant = [variant_of({"random": random_shares, **spread})]
    _, low, high = benchmark.iqm_with_interval([[by_variant[0].score(s) for s in spread]])
    deals_low, deals_high = group_interval_with_deals(by_variant, list(spread), draws)
    assert deals_high - deals_low > high - low > 0
    assert (
        group_interval_with_deals(by_variant, ["nobody"], draws)
        == (pytest.approx(math.nan, nan_ok=True),) * 2
    )


def run(tmp_path: Path, agents: list[str], variants: list[str], games: int, **options: object) -> dict:
    options = {"agents_dir": ROOT / "agents", "progress": False, "workers": 1, "reference": None, **options}
    return benchmark.benchmark(agents, variants, games=games, out=tmp_path, **options)  # type: ignore[arg-type]


def csv_rows(folder: Path) -> dict[tuple[str, str, str], dict[str, str]]:
    rows = list(csv.DictReader((folder / "benchmark.csv").open()))
    assert rows and list(rows[0]) == list(benchmark.COLUMNS)
    return {(r["variant"], r["agent"], r["opponent"]): r for r in rows}


def test_benchmark_writes_the_protocol(cheap_ladder: None, small_protocol: None, tmp_path: Path) -> None:
    checkpoint = str(ROOT / "agents" / "classic.pt")  # the shipped agent's file: the same agent
    summary = run(tmp_path, ["greedy", "shipped", checkpoint], ["classic", "blitz"], 9)
    protocol = benchmark.PROTOCOL
    assert (summary["protocol"], summary["exploratory"], summary["label"]) == (
        protocol,
        False,
        f"protocol {protocol}",
    )
    assert summary["games_per_pairing"] == 10  # 9 rounded up: the protocol's 10
    rows = csv_rows(tmp_path)
    assert {r["protocol"] for r in rows.values()} == {protocol}
    assert {r["games"] for r in rows.values()} == {"10"}  # 9 rounded up to whole deals of two seatings
    assert {r["source"] for r in rows.values()} == {"played"}
    same = {"shipped": "shipped", checkpoint: "shipped"}  # who is who: mirror matches are not played
    players, opponents = {"random", "greedy", "shipped", checkpoint}, {"random", "greedy", "shipped"}
    assert {(a, o) for v, a, o in rows if v == "classic"} == {
        (p, o) for p in players for o in opponents if same.get(p, p) != o
    }
    assert {(a, o) for v, a, o in rows if v == "blitz"} == {
        (p, o) for p in players - {checkpoint} for o in opponents if p != o
    }
    assert summary["skipped"] == {checkpoint: ["blitz"]}  # a checkpoint plays only its own table
    assert summary["agents"][checkpoint]["variants"] == ["classic"]  # (its IQM: one variant's)
    assert summary["agents"]["greedy"]["variants"] == ["classic", "blitz"]
    # two sides: each pair of agents is played once and read from both sides
    stored = json.loads((tmp_path / "pairings.json").read_text())["pairings"]
    assert len(stored) == 2 * 3  # per variant: random-greedy, random-shipped, greedy-shipped
    for v in ("classic", "blitz"):
        there, back = rows[(v, "random", "greedy")], rows[(v, "greedy", "random")]
        assert float(there["win_rate"]) == pytest.approx(1 - float(back["win_rate"]), abs=1e-4)
        assert float(there["margin"]) == pytest.approx(-float(back["margin"]), abs=1e-4)
    assert rows[("classic", checkpoint, "greedy")] | {"agent": ""} == rows[
        ("classic", "shipped", "greedy")
    ] | {"agent": ""}
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert saved["protocol"] == protocol and saved["deal_seed"] == benchmark.DEAL_SEED
    assert saved["agents"]["random"]["scores"]["classic"] == pytest.approx(0.0, abs=1e-9)
    assert saved["agents"]["greedy"]["scores"]["blitz"] == pytest.approx(1.0)  # the scale's top
    assert saved["agents"]["greedy"]["ms_per_decision"]["classic"] > 0
    # each score's own interval, one variant's bootstrap (the plot's error bars): the references have none
    assert set(saved["agents"][checkpoint]["scores_ci"]) == {"classic"}
    for agent, entry in saved["agents"].items():
        assert set(entry["scores_ci"]) == set(entry["variants"])
        for variant, (low, high) in entry["scores_ci"].items():
            if agent in ("random", "greedy"):  # (greedy is the scale's top here: 1 in every resample)
                assert math.isnan(low) and math.isnan(high)
            elif not math.isnan(low):
                assert low <= entry["scores"][variant] + 1e-6 and entry["scores"][variant] <= high + 1e-6
    assert not math.isnan(saved["agents"]["shipped"]["scores_ci"]["classic"][0])  # (5 deals: one to check)
    table = (tmp_path / "benchmark.md").read_text()
    assert "| classic | greedy | " in table and "mirror" in table
    assert table.startswith(f"Normalized scores, protocol {protocol} (") and "exploratory" not in table
    assert (tmp_path / "benchmark.png").stat().st_size > 1000
    assert Image.open(tmp_path / "benchmark.png").info["Description"] == f"protocol {protocol}"


def test_deviations_from_the_protocol() -> None:
    every = list(benchmark.PROTOCOL_VARIANTS)
    assert benchmark.deviations(every, 200) == [] and benchmark.deviations(every, 400) == []
    assert benchmark.deviations(every, 10) == ["10 games a pairing, the protocol plays 200"]
    assert benchmark.deviations(["classic"], 200) == ["1 of the 9 variants, the protocol plays every one"]
    assert benchmark.protocol_label(benchmark.deviations(["classic", "blitz"], 10)) == (
        "exploratory (not protocol v2: 10 games a pairing, the protocol plays 200; "
        "2 of the 9 variants, the protocol plays every one)"
    )


FILES = ("benchmark.csv", "benchmark.md", "summary.json", "benchmark.png", "pairings.json")  # it writes
SMALL_RUN = ["benchmark", "greedy", "--variants", "blitz", "--games", "2", "--fresh", "--no-progress"]


def small_run(out: Path, *more: str) -> int:
    return main(
        [*SMALL_RUN, "--workers", "1", "--agents-dir", str(ROOT / "agents"), "--out", str(out), *more]
    )


def test_a_small_run_is_labelled_exploratory_on_screen_and_in_every_file(
    cheap_ladder: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench"
    assert small_run(out) == 0
    label = (
        "exploratory (not protocol v2: 2 games a pairing, the protocol plays 200; "
        "1 of the 9 variants, the protocol plays every one)"
    )
    screen = capsys.readouterr().out.splitlines()
    assert screen[0].startswith(f"{label}: not comparable with the reference")
    assert "IQM intervals too narrow to trust" in screen[0]
    ends = [line for line in screen if line.startswith(("random ", "greedy "))]  # (the cheap ladder's)
    assert len(ends) == 2 and all("n/a (the scale's ends" in line for line in ends)
    assert screen[-1].endswith(f"pairings.json ({label})")
    assert not any("(protocol v2)" in line for line in screen)
    assert {r["protocol"] for r in csv_rows(out).values()} == {label}
    table = (out / "benchmark.md").read_text()
    assert table.startswith(f"**{label}**\n") and "protocol v2 (" not in table
    saved = json.loads((out / "summary.json").read_text())
    assert saved["protocol"] is None and saved["exploratory"] is True and saved["label"] == label
    assert saved["exploratory_reasons"] == [
        "2 games a pairing, the protocol plays 200",
        "1 of the 9 variants, the protocol plays every one",
    ]
    assert Image.open(out / "benchmark.png").info["Description"] == label


def test_the_screen_gives_each_agents_interval_and_says_what_it_is_over(
    cheap_ladder: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Enough deals for intervals: a group of three runs says its interval is about their range,
    and a checkpoint scored on one of two variants says it is not comparable."""
    checkpoint = str(ROOT / "agents" / "blitz.pt")
    args = [
        "benchmark",
        "search:1",
        "search:2",
        checkpoint,
        "--group",
        "searches",
        "--fresh",
        "--no-progress",
    ]
    args += [
        "--variants",
        "blitz",
        "all_fives",
        "--games",
        "8",
        "--workers",
        "1",
        "--out",
        str(tmp_path / "b"),
    ]
    assert main(args) == 0
    screen = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if "IQM score" in line}
    assert " over 3 runs on these deals: about their range; [" in screen["searches"]  # (the checkpoint too)
    assert screen["searches"].endswith("] with the deals redrawn too")
    assert "over 1 variant(s) only (blitz): not comparable" in screen[checkpoint]
    assert "not comparable" not in screen["search:1"]
    saved = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert saved["variants"] == ["blitz", "all_fives"] and saved["agents"][checkpoint]["variants"] == [
        "blitz"
    ]


def test_a_groups_interval_with_the_deals_shows_when_its_runs_agree(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Runs that all score alike have no interval over the runs; the one with the deals redrawn
    is still on screen."""
    nan = math.nan
    summary = {
        "exploratory": False,
        "label": "protocol v2",
        "variants": ["classic"],
        "agents": {
            "alg": {"runs": ["a", "b"], "iqm": 0.5, "iqm_ci": [nan, nan], "iqm_ci_with_deals": [0.25, 0.75]}
        },
        "skipped": {},
        "pairings": {"played": 0, "resumed": 0, "read": 0, "reference": "reference.json"},
    }
    monkeypatch.setattr(benchmark, "benchmark", lambda *args, **kwargs: summary)
    assert main(["benchmark", "greedy", "--out", str(tmp_path / "b"), "--no-progress"]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("alg ")]
    assert line.endswith(
        "n/a (too few distinct outcomes) over 2 runs on these deals; "
        "[+0.25, +0.75] with the deals redrawn too"
    )


def test_win_rate_interval_is_wilson_over_deals_and_never_zero_width() -> None:
    all_wins = Match(10, 10.0, 1.0, 1.0, 100, shares=[1.0] * 10, margins=[5.0] * 10, per_deal=2)
    low, high = benchmark.win_rate_interval(all_wins)
    assert all_wins.interval() == (low, high)  # evaluate's too, when every deal went one way
    assert high == 1.0 and low == pytest.approx(0.5655, abs=1e-4)  # Wilson, n = 5 deals
    all_losses = Match(10, 0.0, -1.0, 1.0, 100, shares=[0.0] * 10, margins=[-5.0] * 10, per_deal=2)
    low, high = benchmark.win_rate_interval(all_losses)
    assert low == 0.0 and high == pytest.approx(1 - 0.5655, abs=1e-4)
    # a draw counts half: deals of shares (1, .5), (0, 1) -> p = .625 over n = 2 deals
    mixed = Match(4, 2.5, 0.25, 1.0, 40, shares=[1.0, 0.5, 0.0, 1.0], margins=[1, 0, -1, 1], per_deal=2)
    assert benchmark.win_rate_interval(mixed) == pytest.approx(wilson_interval(1.25, 2))


def test_the_files_carry_wilson_intervals(cheap_ladder: None, tmp_path: Path) -> None:
    run(tmp_path, ["greedy"], ["blitz"], 2)  # one deal a pairing: whatever its outcome, wide intervals
    for row in csv_rows(tmp_path).values():
        low, high, rate = float(row["ci_low"]), float(row["ci_high"]), float(row["win_rate"])
        assert (low, high) == pytest.approx(wilson_interval(rate, 1), abs=1e-4)
        assert high - low > 0.7
    assert "95% Wilson score interval over the deals" in (tmp_path / "benchmark.md").read_text()


def test_a_second_benchmark_into_the_same_out_is_refused_unless_overwrite(
    cheap_ladder: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "bench"
    assert small_run(out) == 0
    written = {name: (out / name).read_bytes() for name in FILES}
    capsys.readouterr()
    play = benchmark.run_tasks

    def no_game(*args: object) -> None:
        raise AssertionError("a game was played")

    monkeypatch.setattr(benchmark, "run_tasks", no_game)
    assert small_run(out, "--games", "4") == 2
    captured = capsys.readouterr()
    files = ", ".join(FILES)
    assert (
        captured.err == f"error: {out} already holds a benchmark ({files}); add --overwrite to replace it\n"
    )
    assert captured.out == ""
    assert {name: (out / name).read_bytes() for name in FILES} == written
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    monkeypatch.setattr(benchmark, "run_tasks", play)
    assert small_run(out, "--games", "4", "--overwrite") == 0
    assert json.loads((out / "summary.json").read_text())["games_asked"] == 4
    assert {r["games"] for r in csv_rows(out).values()} == {"4"}


def test_a_run_reads_back_what_it_wrote(cheap_ladder: None, tmp_path: Path) -> None:
    first = run(tmp_path / "a", ["shipped"], ["blitz"], 4)
    assert first["pairings"]["played"] == 3 and first["pairings"]["read"] == 0
    again = run(tmp_path / "b", ["shipped"], ["blitz"], 4, reference=tmp_path / "a" / "pairings.json")
    assert again["pairings"] == {"played": 0, "resumed": 0, "read": 3, "reference": "pairings.json"}
    a, b = csv_rows(tmp_path / "a"), csv_rows(tmp_path / "b")
    assert {k: r | {"source": ""} for k, r in a.items()} == {k: r | {"source": ""} for k, r in b.items()}
    assert {r["source"] for r in b.values()} == {"pairings.json"}
    other_games = run(tmp_path / "c", ["shipped"], ["blitz"], 6, reference=tmp_path / "a" / "pairings.json")
    assert other_games["pairings"]["played"] == 3  # other deals: nothing to read


def test_an_interrupted_run_keeps_its_finished_pairings_and_resume_plays_only_the_rest(
    cheap_ladder: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = tmp_path / "whole"
    assert small_run(whole, "--games", "4") == 0
    out = tmp_path / "cut"
    play, played = runner.play_task, []

    def cut_off_at_the_second(task: benchmark.Task, on_game: object = None) -> Match:
        if played:
            raise KeyboardInterrupt
        played.append(task)
        return play(task, on_game)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "play_task", cut_off_at_the_second)
    assert small_run(out, "--games", "4") == 130
    partial = out / benchmark.PARTIAL
    assert capsys.readouterr().err.startswith(f"interrupted: any pairing finished is kept in {partial}")
    assert sorted(p.name for p in out.iterdir()) == [benchmark.PARTIAL]  # the finished pairing, no more
    kept = benchmark.Store.load(partial).matches
    assert [(k[2], k[3]) for k in kept] == [(played[0].first, played[0].second)]

    assert small_run(out, "--games", "4") == 2  # neither --resume nor --overwrite: refused, kept
    assert "add --resume to go on with them or --overwrite to start again" in capsys.readouterr().err
    assert benchmark.Store.load(partial).matches == kept

    replayed: list[benchmark.Task] = []

    def recorded(task: benchmark.Task, on_game: object = None) -> Match:
        replayed.append(task)
        return play(task, on_game)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "play_task", recorded)
    assert small_run(out, "--games", "4", "--resume") == 0
    assert "pairings: 2 played, 1 resumed from pairings.partial.json\n" in capsys.readouterr().out
    assert played[0] not in replayed and len(replayed) == 2
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)  # the partial file is gone
    untimed = ("ms_per_decision",)  # the same results as the run that was never cut off, but the clock
    assert {k: {c: r[c] for c in r if c not in untimed} for k, r in csv_rows(out).items()} == {
        k: {c: r[c] for c in r if c not in untimed} for k, r in csv_rows(whole).items()
    }
    resumed, fresh = (benchmark.Store.load(f / "pairings.json").matches for f in (out, whole))
    assert {k: vars(m) | {"seconds": 0} for k, m in resumed.items()} == {
        k: vars(m) | {"seconds": 0} for k, m in fresh.items()
    }


def test_workers_play_the_same_games(cheap_ladder: None, tmp_path: Path) -> None:
    run(tmp_path / "one", ["shipped"], ["blind"], 2)
    run(tmp_path / "two", ["shipped"], ["blind"], 2, workers=2)
    assert not (tmp_path / "two" / benchmark.PARTIAL).exists()  # kept as they ended, gone once whole
    one, two = csv_rows(tmp_path / "one"), csv_rows(tmp_path / "two")
    columns = ("win_rate", "margin", "games")
    assert {k: [r[c] for c in columns] for k, r in one.items()} == {
        k: [r[c] for c in columns] for k, r in two.items()
    }


def test_a_shipped_agent_of_another_table_is_left_out(cheap_ladder: None, tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    shutil.copy(ROOT / "agents" / "blitz.pt", agents / "classic.pt")  # trained on Blitz, not Classic
    notes: list[str] = []
    summary = run(tmp_path / "out", ["greedy"], ["classic"], 2, agents_dir=agents, say=notes.append)
    why = f"{agents / 'classic.pt'} was trained on blitz ("
    assert summary["no_shipped"]["classic"].startswith(why)
    assert notes == [
        f"note: no shipped classic agent: {summary['no_shipped']['classic']}; the shipped "
        "rung is left out on classic"
    ]
    assert {o for _, _, o in csv_rows(tmp_path / "out")} == {"random", "greedy"}
    # named as an agent, it would play nothing (an IQM of nan): refused before any game
    with pytest.raises(
        ValueError,
        match=r"^shipped \(an agent given\) plays none of the chosen variants "
        r"\(classic\): .*classic.pt was trained on blitz",
    ):
        run(tmp_path / "again", ["shipped", "greedy"], ["classic"], 2, agents_dir=agents)
    assert not (tmp_path / "again").exists()


def reference_run(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    """``benchmark`` at the protocol's 200 games a pairing on Classic and Blitz, every pairing read
    from the shipped reference: nothing is played (a game would fail the test)."""
    play = benchmark.run_tasks

    def nothing_to_play(tasks: list, *args: object, **kwargs: object) -> list:
        assert not tasks, "a game was played"
        return play(tasks, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(benchmark, "run_tasks", nothing_to_play)
    return main(["benchmark", *argv, "--variants", "classic", "blitz", "--no-progress", "--workers", "1"])


def test_a_variant_without_a_shipped_agent_is_said_so_and_played_without_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its shipped rung is left out, not failed: a note on stderr for each such variant (one for all
    when the folder is not there), and the variant that has one plays it."""
    agents = tmp_path / "agents"
    agents.mkdir()
    shutil.copy(ROOT / "agents" / "blitz.pt", agents / "blitz.pt")  # Blitz's, none of Classic
    out = tmp_path / "bench"
    assert reference_run(["random", "--agents-dir", str(agents), "--out", str(out)], monkeypatch) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        f"note: no shipped classic agent: no classic.pt in {agents} (--agents-dir); the shipped rung "
        "is left out on classic\n"
    )
    opponents = {(v, o) for v, _, o in csv_rows(out)}
    assert ("blitz", "shipped") in opponents and ("classic", "shipped") not in opponents
    saved = json.loads((out / "summary.json").read_text())
    assert saved["no_shipped"] == {"classic": f"no classic.pt in {agents} (--agents-dir)"}

    nowhere = tmp_path / "nowhere"
    again = tmp_path / "again"
    assert reference_run(["random", "--agents-dir", str(nowhere), "--out", str(again)], monkeypatch) == 0
    assert capsys.readouterr().err == (
        f"note: no shipped agent: the agents folder {nowhere} (--agents-dir) is not a folder; the "
        "shipped rung is left out on classic, blitz\n"
    )
    assert {o for _, _, o in csv_rows(again)} == {"random", "greedy", "search", "advanced", "expert"}


@pytest.mark.parametrize(
    ("agents", "refused", "fits"),
    [
        (["agents/classic.pt"], "agents/classic.pt", "it plays only classic (add --variants classic)"),
        (
            ["greedy", "agents/classic.pt"],
            "agents/classic.pt",
            "it plays only classic (add --variants classic)",
        ),
        (  # a group of runs, one of another variant: refused too, not left out of the group quietly
            ["agents/blitz.pt", "agents/classic.pt", "--group", "g"],
            "agents/classic.pt",
            "it plays only classic (add --variants classic)",
        ),
    ],
)
def test_an_agent_that_plays_none_of_the_variants_is_refused_before_any_game(
    agents: list[str],
    refused: str,
    fits: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)  # (the checkpoints named as a person would, from the repository)
    out = tmp_path / "bench"
    argv = [*agents, "--variants", "osel", "blitz", "--out", str(out), "--no-progress"]
    monkeypatch.setattr(benchmark, "run_tasks", lambda *a, **k: pytest.fail("a game was played"))
    assert main(["benchmark", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        f"error: {refused} plays none of the chosen variants (osel, blitz): {fits}; a checkpoint "
        "plays only the table it was trained on\n"
    )
    assert not out.exists()


def test_a_checkpoint_of_no_standard_table_is_refused_saying_what_it_was_trained_on() -> None:
    trained = Config(env=EnvConfig(variant="classic", options={"preset": "tiny"}))
    tiny = Contestant("runs/tiny/latest.pt", "tiny", trained)
    with pytest.raises(ValueError) as refused:
        benchmark.check_plays_some("runs/tiny", tiny, ["classic", "blitz"])
    assert str(refused.value) == (
        "runs/tiny plays none of the chosen variants (classic, blitz): it was trained on classic "
        "(preset=tiny), no variant's standard table, which the benchmark plays; a checkpoint plays "
        "only the table it was trained on"
    )
    benchmark.check_plays_some("greedy", Contestant("greedy", "greedy"), ["osel"])  # plays every one


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--resume", "--overwrite"], "argument --overwrite: not allowed with argument --resume"),
        (["--overwrite", "--resume"], "argument --resume: not allowed with argument --overwrite"),
        (["--fresh", "--reference", "x.json"], "argument --reference: not allowed with argument --fresh"),
    ],
)
def test_flags_that_contradict_each_other_are_refused(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As train refuses --resume with --overwrite: argparse's one line, exit 2, nothing written."""
    out = tmp_path / "bench"
    with pytest.raises(SystemExit) as stop:
        main(["benchmark", "greedy", *flags, "--out", str(out), "--no-progress"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: python -m training benchmark: {message}") and err.count("\n") == 1
    assert not out.exists()
    with pytest.raises(ValueError, match="--resume and --overwrite go one or the other"):
        benchmark.benchmark(["greedy"], ["blitz"], out=out, overwrite=True, resume=True, progress=False)
    assert not out.exists()


def test_a_group_of_no_runs_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench"
    assert main(["benchmark", "random", "expert", "--group", "g", "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--group g groups runs" in err and not out.exists()


def test_a_broken_reference_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "pairings.json"
    broken.write_text('{"protocol": "v2"}')
    out = tmp_path / "bench"
    assert main(["benchmark", "greedy", "--reference", str(broken), "--out", str(out), "--no-progress"]) == 2
    assert "is not a benchmark pairings file" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("wins", "abc", "not a finite number"),
        ("wins", None, "not a finite number"),
        ("shares", "xyz", "not a finite number, or a list of them"),
        ("shares", [0.5], "1 win shares and 200 margins for 200 games"),
        ("shares", [2.0] * 200, "a win share outside [0, 1]"),
        ("wins", 3.0, "3.0 wins, but its win shares add up to"),
        ("per_deal", 3, "200 games are not whole deals of 3"),
        ("seconds", [1.0], "decisions and seconds are not two agents' counts"),
        ("mean_score", float("nan"), "not a finite number"),
    ],
)
def test_a_reference_with_a_damaged_pairing_is_refused(
    field: str, value: Any, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every pairing's fields are checked as they are read: a damaged one is named, in one line,
    before any game (it was a traceback mid-run, or a score read from one game)."""
    data = json.loads(benchmark.REFERENCE.read_text())
    entry = next(e for e in data["pairings"] if e["variant"] == "blitz")
    entry["match"][field] = value
    damaged = tmp_path / "pairings.json"
    damaged.write_text(json.dumps(data))
    out = tmp_path / "bench"
    argv = ["benchmark", "greedy", "--variants", "blitz", "--reference", str(damaged), "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"pairing blitz {entry['first']} against {entry['second']}" in err
    assert message in err and not out.exists()


def test_benchmark_group_aggregates_runs(cheap_ladder: None, tmp_path: Path) -> None:
    runs = [str(ROOT / "agents" / "blitz.pt"), "shipped"]  # the same agent twice: two "seeds" alike
    summary = benchmark.benchmark(
        runs,
        ["blitz"],
        games=2,
        out=tmp_path,
        group="alg",
        agents_dir=ROOT / "agents",
        progress=False,
        reference=None,
    )
    group = summary["agents"]["alg"]
    assert group["runs"] == runs
    assert group["iqm"] == pytest.approx(summary["agents"]["shipped"]["scores"]["blitz"])
    assert summary["agents"][runs[0]]["scores"] == summary["agents"]["shipped"]["scores"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nobody"], "nobody"),
        (["greedy", "--variants", "chess"], "unknown variant 'chess'"),
        (["greedy", "--games", "0"], "must be a positive integer"),
        (["greedy", "--workers", "0"], "must be a positive integer"),
        (["search:0"], "the search budget must be an integer from 1 to 4096"),
    ],
)
def test_bad_input_is_refused_before_any_game(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench"
    try:
        code = main(["benchmark", *args, "--out", str(out), "--no-progress"])
    except SystemExit as stop:  # argparse refuses --games 0 itself
        code = stop.code
    assert code == 2
    assert message in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())  # nothing half-written


def test_an_unwritable_out_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["benchmark", "greedy", "--out", str(blocker), "--no-progress"]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_a_score_that_rounds_to_zero_is_printed_as_zero() -> None:
    assert benchmark.two_places(-0.001, sign=True) == "+0.00"
    assert benchmark.two_places(-0.0) == "0.00"
    assert benchmark.two_places(-0.33, sign=True) == "-0.33" and benchmark.two_places(1.0) == "1.00"
