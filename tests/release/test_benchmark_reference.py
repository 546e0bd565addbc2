"""Release check: the benchmark reference (``training/eval/benchmark_reference_v2.json``) holds
every shipped variant's ladder, and replaying it is what the code plays (``make release-check``;
slow: it plays the first deal of each variant's pairings again)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

import domino_env
from domino_env.registry import shipped
from training.eval import benchmark

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = shipped()


@functools.cache
def stored() -> dict[str, dict[tuple[str, str], Any]]:
    """The reference file's pairings by variant and (first, second)."""
    data = json.loads(benchmark.REFERENCE.read_text())
    assert (data["protocol"], data["deal_seed"]) == (benchmark.PROTOCOL, benchmark.DEAL_SEED)
    found: dict[str, dict[tuple[str, str], Any]] = {}
    for entry in data["pairings"]:
        found.setdefault(entry["variant"], {})[(entry["first"], entry["second"])] = entry
    return found


def test_the_reference_holds_every_shipped_variant() -> None:
    missing = set(shipped()) - set(
        stored()
    )  # (read now: tests/training/test_scaffold.py marks one of its own)
    assert not missing, (
        f"the benchmark reference has no pairings of {sorted(missing)}: regenerate it "
        "(docs/benchmark-v2.md) and copy its pairings.json over the file"
    )
    assert set(stored()) <= set(domino_env.SPECS)


@pytest.mark.parametrize("variant", SHIPPED)
def test_the_shipped_reference_is_what_the_code_plays(variant: str) -> None:
    """Replay the first deal of the variant's search-against-shipped pairing in the reference
    file, and of one pairing of each search tier the file holds (against search where it has
    that): a change to the rules, the search or an agent that changes play fails here (then
    regenerate the file, as docs/benchmark-v2.md says). Every variant holds at least v1's ladder
    (the same games)."""
    assert variant in stored(), f"the benchmark reference has no pairings of {variant}"
    entries = stored()[variant]
    path = str(ROOT / "agents" / f"{variant}.pt")
    shipped = benchmark.identity(benchmark.contestant(path))
    players = {shipped if n == benchmark.SHIPPED else n for n in benchmark.REFERENCE_PLAYERS}
    named = {n for pair in entries for n in pair}
    assert named <= players and players - {"advanced", "expert"} <= named
    spec = {name: name for name in players} | {shipped: path}
    pairs = [("search", shipped)]
    for tier in ("expert", "advanced"):  # one stored pairing of each tier, against search where stored
        theirs = [pair for pair in entries if tier in pair]
        if theirs:  # (a variant's tiers are stored pairing by pairing as they are played)
            pairs.append(next((pair for pair in theirs if "search" in pair), theirs[0]))
    for a, b in pairs:
        entry = entries.get((a, b)) or entries[(b, a)]
        match = entry["match"]
        k = match["per_deal"]
        replay = benchmark.play_task(benchmark.Task(variant, spec[entry["first"]], spec[entry["second"]], k))
        assert (replay.shares, replay.margins) == (match["shares"][:k], match["margins"][:k])
