"""The benchmark scripts refuse a negative seed and a count below one the way the CLI does:
argparse's exit status 2 and one line naming the flag and what it takes, before any work."""

from __future__ import annotations

import pytest

from tests.support.helpers import load_script

SEEDED = ("ceiling", "ismcts", "leaf_ideas", "learning_curve", "oracle", "search_speed")
COUNTED = (
    ("algorithms", "--seeds"),
    ("aliasing", "--iterations"),
    ("equal_time", "--games"),
    ("full_tables", "--workers"),
    ("presets", "--cfr-iterations"),
)


def refusal(script: str, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        load_script(script).main(argv)
    assert stop.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("script", SEEDED)
def test_a_negative_seed_is_refused(script: str, capsys: pytest.CaptureFixture[str]) -> None:
    line = refusal(script, ["--seed", "-1"], capsys)
    assert "argument --seed: must be a non-negative integer, got '-1' (see " in line


@pytest.mark.parametrize(("script", "flag"), COUNTED)
def test_a_count_below_one_is_refused(script: str, flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    line = refusal(script, [flag, "0"], capsys)
    assert f"argument {flag}: must be a positive integer, got '0' (see " in line
