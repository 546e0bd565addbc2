"""benchmarks/full_tables.py: each (algorithm, seed) trained once into its own folder, the
benchmark's group scores written as a CSV row and marl-eval's raw-run layout."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import load_script

full_tables = load_script("full_tables")
AGENTS = Path(__file__).resolve().parents[2] / "agents"


def test_runs_are_trained_once_and_the_group_scores_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    played: list[list[str]] = []

    def fake_benchmark(algorithm: str, runs: list[Path], args: Any) -> dict[str, Any]:
        """The benchmark's summary for these runs (its scoring is tested with the benchmark)."""
        played.append([str(run) for run in runs])
        agents: dict[str, Any] = {str(run): {"scores": {"classic": 0.25 * k}} for k, run in enumerate(runs)}
        agents[algorithm] = {"iqm": 0.125, "iqm_ci": [0.0, 0.25], "iqm_ci_with_deals": [-0.125, 0.375]}
        return {"agents": agents, "games_per_pairing": 4}

    def fake_exploit(algorithm: str, run: Path, args: Any) -> dict[str, Any]:
        """The exploit's result (its training and play are tested with the exploit command)."""
        rate = 0.5 + 0.125 * int(run.name[-1])
        return {"win_rate": rate, "low": rate - 0.03, "high": rate + 0.03, "games": 1000}

    monkeypatch.setattr(full_tables, "benchmark", fake_benchmark)
    monkeypatch.setattr(full_tables, "exploit", fake_exploit)
    argv = [
        "--config",
        "configs/classic_tiny.yaml",
        "--algorithms",
        "ppo",
        "--seeds",
        "2",
        "--steps",
        "256",
        "--runs",
        str(tmp_path / "runs"),
        "--csv",
        str(tmp_path / "full.csv"),
        "--json",
        str(tmp_path / "full.json"),
        "--plot",
        str(tmp_path / "full.png"),
        "--set",
        "run.num_envs=4",
        "run.rollout_steps=16",
        "--no-progress",
    ]
    assert full_tables.main(argv) == 0
    runs = [tmp_path / "runs" / "ppo" / f"classic-{seed}" for seed in (1, 2)]
    assert played == [[str(run) for run in runs]]
    assert all((run / "checkpoints" / "latest.pt").exists() for run in runs)
    stamps = [(run / "checkpoints" / "latest.pt").stat().st_mtime_ns for run in runs]
    threads = [*argv[:-1], "run.torch_threads=2", argv[-1]]  # (a setting that changes no play)
    assert full_tables.main(threads) == 0  # (trained already: the runs are kept, the benchmark plays)
    assert [(run / "checkpoints" / "latest.pt").stat().st_mtime_ns for run in runs] == stamps
    rows = list(csv.DictReader((tmp_path / "full.csv").open()))
    assert rows[0]["algorithm"] == "ppo" and rows[0]["seeds"] == "2"
    assert (rows[0]["iqm"], rows[0]["ci_low"], rows[0]["ci_high"]) == ("0.1250", "0.0000", "0.2500")
    assert (rows[0]["ci_deals_low"], rows[0]["ci_deals_high"]) == ("-0.1250", "0.3750")
    assert rows[0]["scores"] == "0.0000 0.2500" and rows[0]["exploiter_win_rates"] == "0.6250 0.7500"
    assert (
        rows[0]["exploiter_intervals"] == "0.5950-0.6550 0.7200-0.7800" and rows[0]["exploit_games"] == "1000"
    )
    assert len(rows) == 1  # (the second run replaced its row)
    assert rows[0]["command"].startswith(
        "python benchmarks/full_tables.py --variant classic --algorithms ppo"
    )
    with pytest.raises(SystemExit, match=r"holds a run of other settings .*run\.total_steps: 256 -> 512"):
        full_tables.main([*argv[:7], "512", *argv[8:]])  # (another --steps: not trained over)
    assert [(run / "checkpoints" / "latest.pt").stat().st_mtime_ns for run in runs] == stamps
    raw = json.loads((tmp_path / "full.json").read_text())["classic"]["standard"]["ppo"]
    point = raw["run_2"]["step_1"]
    assert point["step_count"] == 256 and point["score"] == [0.25] and point["exploiter_win_rate"] == [0.75]
    assert 0 < point["seconds"][0] < 300  # (the log's start to the last checkpoint)
    assert (tmp_path / "full.png").stat().st_size > 0


def test_a_benchmark_is_read_again_only_for_the_same_runs_as_they_are_now(tmp_path: Path) -> None:
    """The same group of runs, the same games asked, and each run's checkpoint (by content) among
    the pairings played; a run trained again since, another group or other games: played again."""
    runs = []
    for seed in (1, 2):
        run = tmp_path / f"classic-{seed}"
        (run / "checkpoints").mkdir(parents=True)
        (run / "checkpoints" / "latest.pt").write_bytes((AGENTS / "classic.pt").read_bytes())
        runs.append(run)
    (runs[1] / "checkpoints" / "latest.pt").write_bytes((AGENTS / "blitz.pt").read_bytes())
    names = [full_tables.identity(full_tables.contestant(str(run))) for run in runs]
    (tmp_path / "pairings.json").write_text(
        json.dumps({"pairings": [{"first": name, "second": "expert"} for name in names]})
    )
    group = {"runs": [str(run) for run in runs], "iqm_ci_with_deals": [0.1, 0.2]}
    summary = {"games_asked": 200, "agents": {"ppo": group}}
    assert full_tables.benchmarked(summary, "ppo", runs, 200, tmp_path)
    older = {"games_asked": 200, "agents": {"ppo": {"runs": group["runs"]}}}  # (before the interval)
    assert not full_tables.benchmarked(older, "ppo", runs, 200, tmp_path)
    assert not full_tables.benchmarked(summary, "ppo", runs, 100, tmp_path)  # other games
    assert not full_tables.benchmarked(summary, "ppo", runs[:1], 200, tmp_path)  # another group
    assert not full_tables.benchmarked(summary, "mmd", runs, 200, tmp_path)  # another algorithm
    (runs[1] / "checkpoints" / "latest.pt").write_bytes((AGENTS / "osel.pt").read_bytes())
    assert not full_tables.benchmarked(summary, "ppo", runs, 200, tmp_path)  # trained again since
    (tmp_path / "pairings.json").unlink()  # (a benchmark cut off between its summary and pairings)
    assert not full_tables.benchmarked(summary, "ppo", runs, 200, tmp_path)


def test_a_benchmark_played_again_reads_the_pairings_it_holds_and_keeps_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder whose summary is stale still holds every deal's result: they go in as the
    resumed pairings (the benchmark replays only those whose checkpoint or games changed), and
    the group's pairings are copied beside --json."""
    out = tmp_path / "runs" / "benchmark-ppo-classic"
    out.mkdir(parents=True)
    (out / "pairings.json").write_text('{"pairings": ["earlier"]}')
    commands: list[list[str]] = []

    def fake_run(command: list[str], **_: Any) -> None:
        commands.append(command)
        assert json.loads((out / "pairings.partial.json").read_text()) == {"pairings": ["earlier"]}
        (out / "pairings.json").write_text('{"pairings": ["now"]}')
        (out / "summary.json").write_text('{"agents": {}}')

    monkeypatch.setattr(full_tables.subprocess, "run", fake_run)
    args = full_tables.argparse.Namespace(
        runs=str(tmp_path / "runs"),
        variant="classic",
        games=200,
        workers=1,
        no_progress=True,
        json=str(tmp_path / "results" / "full_tables_classic.json"),
    )
    (tmp_path / "results").mkdir()
    assert full_tables.benchmark("ppo", [tmp_path / "run-1"], args) == {"agents": {}}
    assert len(commands) == 1 and "--resume" in commands[0] and str(out) in commands[0]
    kept = tmp_path / "results" / "full_tables_classic_ppo_pairings.json"
    assert json.loads(kept.read_text()) == {"pairings": ["now"]}
