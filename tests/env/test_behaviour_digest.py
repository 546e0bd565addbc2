"""Seeded play is the same as when ``tests/env/behaviour_digest.json`` was saved.

The digest (``benchmarks/behaviour_digest.py``) hashes everything seeded random play shows on
every table: each seat's observation, the mask, rewards, terminations, ``public_state()``, the
``ansi`` render and the round's events. It was saved before the rules redesign (chance points,
variants from parts, each variant's facts in its module), which must change none of it. A
deliberate change of behaviour regenerates it, as does a variant that ships (only shipped variants
are checked, so a variant being written does not trip it):
``python benchmarks/behaviour_digest.py --save tests/env/behaviour_digest.json --rounds 100 --matches 10``.
"""

from __future__ import annotations

import json
from pathlib import Path

from domino_env.registry import shipped
from tests.support.helpers import load_script

SAVED = Path(__file__).with_name("behaviour_digest.json")


def test_seeded_play_on_every_table_is_what_the_saved_digest_says() -> None:
    saved = json.loads(SAVED.read_text())
    script = load_script("behaviour_digest")
    found = script.digests(saved["rounds"], saved["matches"], shipped())
    new = sorted(set(found) - set(saved["digests"]))
    assert not new, f"tables without a saved digest: {new}; regenerate the digest deliberately"
    differ = [table for table, digest in found.items() if saved["digests"][table] != digest]
    assert not differ, f"seeded play differs from the saved digest on: {differ}"
