"""benchmarks/search_speed.py: which names it times (the built-in searches and a policy-guided
search on its checkpoint's variant), and what it refuses."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tests.support.helpers import load_script

search_speed = load_script("search_speed")
ROOT = Path(__file__).resolve().parents[2]
OSEL = str(ROOT / "agents" / "osel.pt")


def test_it_takes_the_search_tiers_and_a_guided_search_whose_checkpoint_exists() -> None:
    for name in ("search", "search:4", "advanced", "expert", f"search:{OSEL}", f"search:16:{OSEL}"):
        assert search_speed.agent_name(name) == name
    for name, says in [
        ("greedy", "is not a search agent"),
        ("search:0", "from 1 to 4096"),
        ("search:nowhere.pt", "no checkpoint file or run folder 'nowhere.pt'"),
        (f"search:0:{OSEL}", "from 1 to 4096"),
    ]:
        with pytest.raises(argparse.ArgumentTypeError, match=says):
            search_speed.agent_name(name)


def test_a_guided_search_is_timed_on_its_own_variant_only(capsys: pytest.CaptureFixture[str]) -> None:
    search_speed.main(
        ["--agents", "search", f"search:2:{OSEL}", "--variants", "osel", "classic", "--decisions", "3"]
    )
    rows = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()[3:]}
    assert all(float(cell) > 0 for cell in rows["osel"])
    assert all(float(cell) > 0 for cell in rows["classic"][:2])  # search
    assert rows["classic"][2:] == ["-", "-"]  # the Osel checkpoint's search: not timed on Classic
    times = search_speed.decision_times("osel", f"search:2:{OSEL}", decisions=3, seed=0)
    assert len(times) == 3 and all(t > 0 for t in times)
