"""What a table's totals are, in the words every text and picture of it uses.

Where the lower total wins (``rules.lower_score_wins``: Classic, Blitz, Blind, Blind blitz and
Cross count the pips left in hand, Osel its written round points, Domino-Metro a point per
lost game) a total is a *penalty* and the words say that the lower one wins; elsewhere (All
Fives, 3D dominoes) it is a *score*, the more the better.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def score_word(rules: Any) -> str:
    """What one total is called: ``penalty`` where the lower total wins, else ``score``."""
    return "penalty" if rules.lower_score_wins else "score"


def totals_label(rules: Any) -> str:
    """What a list of the totals is headed by: ``penalty points, lower wins`` or ``scores``."""
    return "penalty points, lower wins" if rules.lower_score_wins else "scores"


def score_event_text(rules: Any, who: str, points: int, reason: str) -> str:
    """A score event in words: ``P0 gets penalty 76 (pips in hand)`` (a penalty taken off:
    ``P0 has penalty 2 taken off (...)``), or ``P0 scores 10 (count)`` where more wins."""
    if not rules.lower_score_wins:
        return f"{who} scores {points} ({reason})"
    if points < 0:
        return f"{who} has penalty {-points} taken off ({reason})"
    return f"{who} gets penalty {points} ({reason})"


def header_sides(rules: Any, sides: Sequence[str]) -> list[str]:
    """A picture's header list of the totals (``P0: 76``), after ``penalty points, lower wins:``
    where the lower total wins."""
    return [f"{totals_label(rules)}:", *sides] if rules.lower_score_wins else list(sides)
