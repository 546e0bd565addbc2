"""benchmarks/equal_time.py: the arms' budgets from their calibration seconds, each run trained
once and scored by its pairing against expert, rows written, and a rerun that replays nothing."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml

from tests.support.helpers import load_script
from training.model import checkpoint
from training.model.config import load_config

equal_time = load_script("equal_time")
ROOT = Path(__file__).resolve().parents[2]


def test_arms_get_equal_time_budgets_and_a_rerun_replays_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_train = equal_time.train

    def timed(config: str, overrides: list[str], steps: int, run: Path) -> float:
        real_train(config, overrides, steps, run)
        return 20.0 if "ppo.update_epochs=1" in overrides else 10.0  # the slow arm: twice the seconds

    small = load_config(ROOT / "configs" / "classic.yaml", ["network.hidden=[16]"])
    small.run.num_envs, small.run.rollout_steps = 4, 16  # (rollouts of 64 decisions)
    config = tmp_path / "classic.yaml"
    config.write_text(yaml.safe_dump(small.to_dict()))

    monkeypatch.setattr(equal_time, "train", timed)
    out, table = tmp_path / "runs", tmp_path / "rows.csv"
    argv = [
        "--config",
        str(config),
        "--steps",
        "256",
        "--calibrate",
        "64",
        "--seeds",
        "1",
        "--games",
        "2",
        "--arm",
        "plain=",
        "--arm",
        "slow=ppo.update_epochs=1",
        "--out",
        str(out),
        "--csv",
        str(table),
    ]
    assert equal_time.main(argv) == 0
    assert json.loads((out / "calibration_64.json").read_text()) == {"plain": 10.0, "slow": 20.0}
    latest = {arm: out / f"{arm}-1" / "checkpoints" / "latest.pt" for arm in ("plain", "slow")}
    steps = {arm: checkpoint.load(path)["steps"] for arm, path in latest.items()}
    assert steps == {"plain": 256, "slow": 128}  # half the decisions: the same time
    rows = {r["arm"]: r for r in csv.DictReader(table.open())}
    assert {a: int(r["decisions"]) for a, r in rows.items()} == steps
    for row in rows.values():
        low, high, rate = float(row["ci_low"]), float(row["ci_high"]), float(row["win_rate"])
        assert row["games"] == "2" and low <= rate <= high and row["cpu_seconds"] in ("10.0", "20.0")
    assert rows["slow"]["command"].endswith("--games 2 --arm plain= --arm slow=ppo.update_epochs=1")

    def nothing(*args: object) -> None:
        raise AssertionError("a run was trained or played again")

    monkeypatch.setattr(equal_time, "train", nothing)
    monkeypatch.setattr(equal_time, "play_task", nothing)
    written = table.read_text()
    assert equal_time.main(argv) == 0
    assert table.read_text() == written  # the same rows, replaced rather than appended


@pytest.mark.parametrize("text", ["=a=1", "nothing"])
def test_an_arm_is_a_name_and_its_overrides(text: str) -> None:
    if text == "nothing":
        assert equal_time.parse_arm("nothing") == ("nothing", [])
        assert equal_time.parse_arm("b=x.y=1,z.w=2") == ("b", ["x.y=1", "z.w=2"])
        assert equal_time.parse_arm("w=n.h=[512,512],r.c=v") == ("w", ["n.h=[512,512]", "r.c=v"])
    else:
        with pytest.raises(Exception, match="an arm is NAME=OVERRIDES"):
            equal_time.parse_arm(text)
