"""``python -m training benchmark``: the protocol, the files, the normalized score, bad input."""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path

import pytest

import domino_env
from training import benchmark
from training.__main__ import main
from training.matches import Match

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def cheap_ladder(monkeypatch: pytest.MonkeyPatch) -> None:
    """random and greedy as the ladder, greedy as the score's 1: the protocol's mechanics at a
    fraction of search's cost (search's own runs are in test_search.py)."""
    monkeypatch.setattr(benchmark, "LADDER", ("random", "greedy"))
    monkeypatch.setattr(benchmark, "TOP", "greedy")


def test_normalized_score_on_a_hand_made_case() -> None:
    # per-deal win shares against two opponents x, y: W(random) = 0.25, W(search) = 0.75
    shares = {
        "random": [[0.0, 0.5], [0.5, 0.0]],
        "search": [[1.0, 0.5], [0.5, 1.0]],
        "mine": [[1.0, 0.0], [0.5, 0.5]],
    }
    scores = benchmark.normalized(shares)
    assert scores["random"] == pytest.approx([0.0, 0.0])  # per deal (0 + .5) / 2 and (.5 + 0) / 2
    assert scores["search"] == pytest.approx([1.0, 1.0])
    # mine: per deal (1 + .5) / 2 = .75 and (0 + .5) / 2 = .25 -> (.75 - .25) / .5 = 1, 0
    assert scores["mine"] == pytest.approx([1.0, 0.0])
    flat = {k: [[0.5, 0.5]] for k in shares}
    assert math.isnan(benchmark.normalized(flat)["mine"][0])


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


def test_iqm_interval_is_stratified_and_handles_single_values() -> None:
    centre, low, high = benchmark.iqm_with_interval([[0.0, 1.0, 0.5], [2.0, 2.0], [1.0]], pooled=False)
    assert centre == pytest.approx((0.5 + 2.0 + 1.0) / 3)  # three variants: nothing trimmed
    assert low <= centre <= high
    runs = [[0.1, 0.2, 0.3, 0.4], [1.0, 2.0, 3.0, 4.0]]
    centre, _, _ = benchmark.iqm_with_interval(runs, pooled=True)
    assert centre == pytest.approx((0.3 + 0.4 + 1.0 + 2.0) / 4)  # the middle half of eight values
    one_run = benchmark.iqm_with_interval([[0.5], [1.5]], pooled=True)  # nothing to resample
    assert one_run[0] == 1.0 and math.isnan(one_run[1]) and math.isnan(one_run[2])


def run(tmp_path: Path, agents: list[str], variants: list[str], games: int, **options: object) -> dict:
    options = {"agents_dir": ROOT / "agents", "progress": False, "workers": 1, "reference": None, **options}
    return benchmark.benchmark(agents, variants, games, tmp_path, **options)  # type: ignore[arg-type]


def csv_rows(folder: Path) -> dict[tuple[str, str, str], dict[str, str]]:
    rows = list(csv.DictReader((folder / "benchmark.csv").open()))
    assert rows and list(rows[0]) == list(benchmark.COLUMNS)
    return {(r["variant"], r["agent"], r["opponent"]): r for r in rows}


def test_benchmark_writes_the_protocol(cheap_ladder: None, tmp_path: Path) -> None:
    checkpoint = str(ROOT / "agents" / "classic.pt")  # the shipped agent's file: the same agent
    summary = run(tmp_path, ["greedy", "shipped", checkpoint], ["classic", "blitz"], 9)
    rows = csv_rows(tmp_path)
    assert {r["protocol"] for r in rows.values()} == {"v1"}
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
    assert saved["protocol"] == "v1" and saved["deal_seed"] == benchmark.DEAL_SEED
    assert saved["agents"]["random"]["scores"]["classic"] == pytest.approx(0.0, abs=1e-9)
    assert saved["agents"]["greedy"]["scores"]["blitz"] == pytest.approx(1.0)  # the scale's top
    assert saved["agents"]["greedy"]["ms_per_decision"]["classic"] > 0
    table = (tmp_path / "benchmark.md").read_text()
    assert "| classic | greedy | " in table and "mirror" in table
    assert (tmp_path / "benchmark.png").stat().st_size > 1000


def test_a_run_reads_back_what_it_wrote(cheap_ladder: None, tmp_path: Path) -> None:
    first = run(tmp_path / "a", ["shipped"], ["blitz"], 4)
    assert first["pairings"]["played"] == 3 and first["pairings"]["read"] == 0
    again = run(tmp_path / "b", ["shipped"], ["blitz"], 4, reference=tmp_path / "a" / "pairings.json")
    assert again["pairings"] == {"played": 0, "read": 3, "reference": "pairings.json"}
    a, b = csv_rows(tmp_path / "a"), csv_rows(tmp_path / "b")
    assert {k: r | {"source": ""} for k, r in a.items()} == {k: r | {"source": ""} for k, r in b.items()}
    assert {r["source"] for r in b.values()} == {"pairings.json"}
    other_games = run(tmp_path / "c", ["shipped"], ["blitz"], 6, reference=tmp_path / "a" / "pairings.json")
    assert other_games["pairings"]["played"] == 3  # other deals: nothing to read


def test_workers_play_the_same_games(cheap_ladder: None, tmp_path: Path) -> None:
    run(tmp_path / "one", ["shipped"], ["blind"], 2)
    run(tmp_path / "two", ["shipped"], ["blind"], 2, workers=2)
    one, two = csv_rows(tmp_path / "one"), csv_rows(tmp_path / "two")
    columns = ("win_rate", "margin", "games")
    assert {k: [r[c] for c in columns] for k, r in one.items()} == {
        k: [r[c] for c in columns] for k, r in two.items()
    }


def test_a_shipped_agent_of_another_table_is_left_out(cheap_ladder: None, tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    shutil.copy(ROOT / "agents" / "blitz.pt", agents / "classic.pt")  # trained on Blitz, not Classic
    summary = run(tmp_path / "out", ["shipped", "greedy"], ["classic"], 2, agents_dir=agents)
    assert summary["skipped"] == {"shipped": ["classic"]}
    assert {o for _, _, o in csv_rows(tmp_path / "out")} == {"random", "greedy"}


def test_the_shipped_reference_is_what_the_code_plays() -> None:
    """Replay the first deal of every variant's search-against-shipped pairing in the reference
    file: a change to the rules, the search or an agent that changes play fails here (then
    regenerate the file, as its README section says)."""
    data = json.loads(benchmark.REFERENCE.read_text())
    assert (data["protocol"], data["deal_seed"]) == (benchmark.PROTOCOL, benchmark.DEAL_SEED)
    stored: dict[str, dict] = {}
    for entry in data["pairings"]:
        stored.setdefault(entry["variant"], {})[(entry["first"], entry["second"])] = entry
    assert set(stored) == set(domino_env.SPECS)
    for variant, entries in stored.items():
        shipped = benchmark.identity(benchmark.contestant(str(ROOT / "agents" / f"{variant}.pt")))
        players = {shipped if n == benchmark.SHIPPED else n for n in benchmark.REFERENCE_PLAYERS}
        assert players <= {n for pair in entries for n in pair}
        entry = entries.get(("search", shipped)) or entries[(shipped, "search")]
        match = entry["match"]
        k = match["per_deal"]
        spec = {"search": "search", shipped: str(ROOT / "agents" / f"{variant}.pt")}
        replay = benchmark.play_task(benchmark.Task(variant, spec[entry["first"]], spec[entry["second"]], k))
        assert (replay.shares, replay.margins) == (match["shares"][:k], match["margins"][:k]), variant


def test_a_broken_reference_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "pairings.json"
    broken.write_text('{"protocol": "v1"}')
    out = tmp_path / "bench"
    assert main(["benchmark", "greedy", "--reference", str(broken), "--out", str(out), "--no-progress"]) == 2
    assert "is not a benchmark pairings file" in capsys.readouterr().err
    assert not out.exists()


def test_benchmark_group_aggregates_runs(cheap_ladder: None, tmp_path: Path) -> None:
    runs = [str(ROOT / "agents" / "blitz.pt"), "shipped"]  # the same agent twice: two "seeds" alike
    summary = benchmark.benchmark(
        runs, ["blitz"], 2, tmp_path, group="alg", agents_dir=ROOT / "agents", progress=False, reference=None
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
        (["search:0"], "the search budget must be a positive integer"),
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
