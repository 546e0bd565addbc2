"""``python -m training benchmark``: the protocol, the files, the normalized score, bad input."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from training import benchmark
from training.__main__ import main
from training.evaluate import Result

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def cheap_ladder(monkeypatch: pytest.MonkeyPatch) -> None:
    """random and greedy as the ladder, greedy as the score's 1: the protocol's mechanics at a
    fraction of search's cost (search's own runs are in test_search.py)."""
    monkeypatch.setattr(benchmark, "LADDER", ("random", "greedy"))
    monkeypatch.setattr(benchmark, "TOP", "greedy")


def result(shares: list[float], per_deal: int = 2) -> Result:
    return Result(
        len(shares), sum(shares), 0.0, 1.0, 0, shares=shares, margins=[0.0] * len(shares), per_deal=per_deal
    )


def test_normalized_score_on_a_hand_made_case() -> None:
    # two opponents, two deals of two seatings; W(random) = 0.25, W(search) = 0.75
    results = {
        ("random", "x"): result([0, 0, 1, 0]),
        ("random", "y"): result([0, 1, 0, 0]),
        ("search", "x"): result([1, 1, 1, 0]),
        ("search", "y"): result([1, 0, 1, 1]),
        ("mine", "x"): result([1, 1, 0, 0]),  # deal means 1, 0
        ("mine", "y"): result([1, 0, 1, 0]),  # deal means .5, .5
    }
    scores = benchmark.normalized(results, ["random", "search", "mine"], ["x", "y"])
    assert scores["random"] == pytest.approx([0.0, 0.0])  # per deal (0 + .5) / 2 and (.5 + 0) / 2
    assert scores["search"] == pytest.approx([1.0, 1.0])
    # mine: per deal (1 + .5) / 2 = .75 and (0 + .5) / 2 = .25 -> (.75 - .25) / .5 = 1, 0
    assert scores["mine"] == pytest.approx([1.0, 0.0])
    flat = {k: result([0.5, 0.5]) for k in results}
    assert math.isnan(benchmark.normalized(flat, ["random", "search", "mine"], ["x", "y"])["mine"][0])


def test_iqm_interval_is_stratified_and_handles_single_values() -> None:
    centre, low, high = benchmark.iqm_with_interval([[0.0, 1.0, 0.5], [2.0, 2.0], [1.0]], pooled=False)
    assert centre == pytest.approx((0.5 + 2.0 + 1.0) / 3)  # three variants: nothing trimmed
    assert low <= centre <= high
    runs = [[0.1, 0.2, 0.3, 0.4], [1.0, 2.0, 3.0, 4.0]]
    centre, _, _ = benchmark.iqm_with_interval(runs, pooled=True)
    assert centre == pytest.approx((0.3 + 0.4 + 1.0 + 2.0) / 4)  # the middle half of eight values
    one_run = benchmark.iqm_with_interval([[0.5], [1.5]], pooled=True)  # nothing to resample
    assert one_run[0] == 1.0 and math.isnan(one_run[1]) and math.isnan(one_run[2])


def test_benchmark_writes_the_protocol(cheap_ladder: None, tmp_path: Path) -> None:
    out = tmp_path / "bench"
    summary = benchmark.benchmark(
        ["greedy", "shipped", str(ROOT / "agents" / "classic.pt")],
        ["classic", "blitz"],
        games=9,
        out=out,
        agents_dir=ROOT / "agents",
        progress=False,
    )
    rows = list(csv.DictReader((out / "benchmark.csv").open()))
    assert list(rows[0]) == list(benchmark.COLUMNS)
    assert {r["protocol"] for r in rows} == {"v1"}
    assert {r["games"] for r in rows} == {"10"}  # 9 rounded up to whole deals of two seatings
    classic = {(r["agent"], r["opponent"]) for r in rows if r["variant"] == "classic"}
    opponents = {"random", "greedy", "shipped"}
    checkpoint = str(ROOT / "agents" / "classic.pt")
    players = {"random", "greedy", "shipped", checkpoint}
    assert classic == {(p, o) for p in players for o in opponents}
    assert summary["skipped"] == {checkpoint: ["blitz"]}  # a checkpoint plays only its own table
    saved = json.loads((out / "summary.json").read_text())
    assert saved["protocol"] == "v1" and saved["deal_seed"] == benchmark.DEAL_SEED
    assert saved["agents"]["random"]["scores"]["classic"] == pytest.approx(0.0, abs=1e-9)
    assert saved["agents"]["greedy"]["scores"]["blitz"] == pytest.approx(1.0)  # the scale's top
    assert (out / "benchmark.png").stat().st_size > 1000


def test_benchmark_group_aggregates_runs(cheap_ladder: None, tmp_path: Path) -> None:
    runs = [str(ROOT / "agents" / "blitz.pt"), "shipped"]  # the same agent twice: two "seeds" alike
    summary = benchmark.benchmark(
        runs, ["blitz"], 2, tmp_path, group="alg", agents_dir=ROOT / "agents", progress=False
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
