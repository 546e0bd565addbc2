"""The algorithm benchmark of ``benchmarks/algorithms.py`` on the tiny table: two algorithms,
two seeds and a tiny budget write the raw runs in marl-eval's layout, the CSV and the picture;
its IQM and bootstrap band are rliable's."""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from tests.support.helpers import load_script

algorithms = load_script("algorithms")


def test_iqm_is_rliables_trimmed_mean() -> None:
    # 5 scores: sorted 1, 2, 3, 4, 100; floor(5 / 4) = 1 dropped at each end: (2 + 3 + 4) / 3
    assert float(algorithms.iqm(np.array([4.0, 100.0, 1.0, 3.0, 2.0]))) == pytest.approx(3.0)
    # 8 scores: 2 dropped at each end, the middle 4 averaged
    assert float(algorithms.iqm(np.arange(8.0))) == pytest.approx((2 + 3 + 4 + 5) / 4)
    assert float(algorithms.iqm(np.array([1.0, 5.0]))) == pytest.approx(3.0)  # under 4: the mean
    assert algorithms.iqm(np.array([[1.0, 2.0, 3.0, 4.0, 9.0]] * 2), axis=1).tolist() == [3.0, 3.0]
    scipy_stats = pytest.importorskip("scipy.stats")
    values = np.random.default_rng(0).random(11)
    assert float(algorithms.iqm(values)) == pytest.approx(scipy_stats.trim_mean(values, 0.25))


def test_the_band_holds_the_iqm_and_is_seeded() -> None:
    scores = np.array([0.1, 0.2, 0.3, 0.4, 0.9])
    low, high = algorithms.bootstrap_band(scores, reps=4000, seed=3)
    assert 0.1 <= low < float(algorithms.iqm(scores)) < high <= 0.9
    assert algorithms.bootstrap_band(scores, reps=4000, seed=3) == (low, high)
    assert algorithms.bootstrap_band(np.full(5, 0.25), reps=100) == (0.25, 0.25)


def test_measured_checkpoints_are_log_spaced() -> None:
    chosen = algorithms.measured(list(range(1, 1001)), 10)
    assert chosen[0] == 1 and chosen[-1] == 1000 and len(chosen) <= 11
    assert all(b / a > 1.5 for a, b in itertools.pairwise(chosen))
    assert algorithms.measured([2, 4, 6], 10) == [2, 4, 6]


def test_tiny_table_two_algorithms_two_seeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out" / "bench"
    args = ["--preset", "tiny", "--algorithms", "ppo", "mmd", "--seeds", "2", "--steps", "2048"]
    args += ["--set", "network.hidden=[16]", "run.checkpoint_every=1", "ppo.update_epochs=1"]
    args += ["--runs", str(tmp_path / "runs"), "--out", str(out), "--cfr-iterations", "4"]
    assert algorithms.main([*args, "--reps", "500", "--no-progress"]) == 0
    summary = capsys.readouterr().out
    assert "final NashConv IQM" in summary and "uniform" in summary and "cfr+" in summary
    # marl-eval's layout: env -> task -> algorithm -> run -> step_k / absolute_metrics
    data = json.loads(out.with_suffix(".json").read_text())
    assert list(data) == ["classic"] and list(data["classic"]) == ["tiny"]
    table = data["classic"]["tiny"]
    assert list(table) == ["ppo", "mmd"]
    for runs in table.values():
        assert list(runs) == ["run_1", "run_2"]
        for run in runs.values():
            steps = [key for key in run if key != "absolute_metrics"]
            assert steps == [f"step_{k}" for k in range(1, len(steps) + 1)] and len(steps) == 4
            counts = [run[s]["step_count"] for s in steps]
            assert counts == [512, 1024, 1536, 2048]  # decisions: 16 tables x 32 moves an iteration
            for step in steps:
                assert set(run[step]) == {"step_count", "nash_conv", "seconds"}
                (value,) = run[step]["nash_conv"]
                assert 0.0 <= value <= 2.0
                assert len(run[step]["seconds"]) == 1 and run[step]["seconds"][0] > 0
            assert run["absolute_metrics"] == {"nash_conv": run[steps[-1]]["nash_conv"]}
    # the CSV: one row per run and point, then uniform and CFR+
    with out.with_suffix(".csv").open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["algorithm", "seed", "decisions", "iteration", "seconds", "nash_conv"]
    points = [r for r in rows if r["algorithm"] in ("ppo", "mmd")]
    assert len(points) == 2 * 2 * 4
    assert {(r["algorithm"], r["seed"]) for r in points} == {(a, s) for a in ("ppo", "mmd") for s in "12"}
    assert all(0.0 <= float(r["nash_conv"]) <= 2.0 for r in rows)
    (uniform,) = [r for r in rows if r["algorithm"] == "uniform"]
    assert float(uniform["nash_conv"]) == pytest.approx(0.0222222, abs=1e-6)
    assert [r["iteration"] for r in rows if r["algorithm"] == "cfr+"] == ["1", "2", "4"]
    assert out.with_suffix(".png").stat().st_size > 0
    # the checkpoints measured are kept, the others deleted
    assert len(list((tmp_path / "runs" / "ppo").glob("*/checkpoints/iter_*.pt"))) == 2 * 4

    # run again, every run is read from its measured.json: nothing trained, the same output
    def nothing(*args: object, **kwargs: object) -> None:
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(algorithms, "Trainer", nothing)
    assert algorithms.main([*args, "--reps", "500", "--no-progress"]) == 0
    assert json.loads(out.with_suffix(".json").read_text()) == data  # (the runs' points, seconds too)
    # another budget is another run: its curve is not the stored one
    with pytest.raises(AssertionError, match="trained again"):
        longer = ["4096" if word == "2048" else word for word in args]
        algorithms.main([*longer, "--reps", "500", "--no-progress"])
    # --merge: the output cut in two by algorithm, merged again, is the output (nothing trained)
    header, *lines = out.with_suffix(".csv").read_text().splitlines(keepends=True)
    references = [line for line in lines if line.startswith(("uniform,", "cfr+,"))]
    for algorithm in ("ppo", "mmd"):
        part = [line for line in lines if line.startswith(f"{algorithm},")]
        (tmp_path / f"{algorithm}.csv").write_text("".join([header, *part, *references]))
    merged = tmp_path / "merged"
    parts = [str(tmp_path / "ppo.csv"), str(tmp_path / "mmd.csv")]
    assert (
        algorithms.main(["--preset", "tiny", "--merge", *parts, "--out", str(merged), "--reps", "500"]) == 0
    )
    assert merged.with_suffix(".csv").read_text() == out.with_suffix(".csv").read_text()
    assert json.loads(merged.with_suffix(".json").read_text()) == data
    assert "final NashConv IQM" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="ppo is in both"):
        algorithms.main(["--preset", "tiny", "--merge", parts[0], parts[0], "--out", str(merged)])
    with pytest.raises(SystemExit, match="another table's"):
        algorithms.main(["--preset", "small", "--merge", parts[0], "--out", str(merged)])
    with pytest.raises(SystemExit, match="does not exist"):
        algorithms.main(["--preset", "tiny", "--merge", str(tmp_path / "nothing.csv"), "--out", str(merged)])


def test_a_config_for_another_table_is_refused(tmp_path: Path) -> None:
    small = str(algorithms.ROOT / "configs" / "classic_small.yaml")
    args = ["--preset", "tiny", "--config", small, "--seeds", "1", "--steps", "512"]
    args += ["--runs", str(tmp_path), "--out", str(tmp_path / "x"), "--cfr-iterations", "0"]
    with pytest.raises(SystemExit, match="not the table measured"):
        algorithms.main([*args, "--no-progress"])


def test_runs_are_aggregated_at_common_decisions() -> None:
    def curve(values: list[float], step: int = 100) -> list[dict[str, float]]:
        return [
            {"decisions": step * (k + 1), "iteration": k + 1, "seconds": 1.0 + k, "nash_conv": v}
            for k, v in enumerate(values)
        ]

    runs = {s: curve([0.5, 0.4 - 0.01 * s, 0.1 * s]) for s in range(1, 6)}
    points = algorithms.aggregate(runs, reps=1000)
    assert [p["decisions"] for p in points] == [100, 200, 300]
    assert points[0]["iqm"] == pytest.approx(0.5) and points[0]["low"] == points[0]["high"] == 0.5
    assert points[2]["iqm"] == pytest.approx(0.3)  # 0.1 ... 0.5: the middle three
    assert all(p["low"] <= p["iqm"] <= p["high"] for p in points)
    assert points[1]["seconds"] == pytest.approx(2.0)
    # runs logged at other decisions: log-log interpolation onto the first run's points
    shifted = {1: curve([0.4, 0.2, 0.1]), 2: curve([0.4, 0.2, 0.1, 0.05], step=75)}
    points = algorithms.aggregate(shifted, reps=100)
    assert [p["decisions"] for p in points] == [100, 200, 300]
    assert points[-1]["iqm"] == pytest.approx((0.1 + 0.05) / 2)  # both runs log 300
    between = 0.2 * 0.5 ** (np.log(200 / 150) / np.log(225 / 150))  # run 2 at 200, log-log
    assert points[1]["iqm"] == pytest.approx((0.2 + between) / 2)


def test_mccfr_runs_through_the_solver_with_its_tabular_nash_conv(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    args = ["--preset", "tiny", "--algorithms", "mccfr", "--seeds", "1", "--cfr-iterations", "0"]
    args += ["--set", "mccfr.iterations=256", "mccfr.fit_epochs=5", "network.hidden=[16]"]
    assert algorithms.main([*args, "--runs", str(tmp_path / "runs"), "--out", str(out), "--no-progress"]) == 0
    points = json.loads(out.with_suffix(".json").read_text())["classic"]["tiny"]["mccfr"]["run_1"]
    steps = [points[f"step_{k}"] for k in (1, 2, 3)]  # iterations 64, 128, 256: the nodes touched
    assert [s["step_count"] for s in steps] == sorted(s["step_count"] for s in steps)
    assert steps[-1]["step_count"] < 256 * 2 * 334  # (sampled: below the whole tree's)
    assert all(algorithms.TABULAR in s for s in steps)
    rows = list(csv.DictReader(out.with_suffix(".csv").open()))
    assert {r["algorithm"] for r in rows} >= {"mccfr", "mccfr (tabular)", "uniform"}
