"""The benchmark's protocol: its version, deals, ladder and standard tables, what makes a run
exploratory, and the normalized score (see :mod:`training.eval.benchmark`).

The other modules read these names as ``protocol.NAME`` when they run, not when they are
imported, so a test that sets a cheaper ladder (``LADDER``, ``TOP``) sets it everywhere."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

import domino_env
from training.eval.evaluate import Contestant, check_fits
from training.model import checkpoint

PROTOCOL = "v2"
PROTOCOL_NAME = f"protocol {PROTOCOL}"
DEAL_SEED = 1_000_000  # the protocol's deals: seeds DEAL_SEED, DEAL_SEED + 1, ... (v1's too)
PROTOCOL_GAMES = 200  # the protocol's games a pairing, at least: fewer is an exploratory run
PROTOCOL_VARIANTS = tuple(domino_env.SPECS)  # the protocol plays every variant: fewer is exploratory
LADDER = ("random", "greedy", "search", "advanced", "expert")  # then the variant's shipped agent
BOTTOM, TOP = "random", "expert"  # the scores' 0 and 1: W = the win rate against TOP
SHIPPED = "shipped"  # a contestant name: the variant's agents/<variant>.pt
REFERENCE_PLAYERS = (*LADDER, SHIPPED)  # the ladder against itself: the reference file's pairings


def standard_table(variant: str) -> dict[str, Any]:
    return dict(domino_env.spec(variant).benchmark_tables[0])


def shipped_path(agents_dir: str | Path, variant: str) -> Path:
    return Path(agents_dir) / f"{variant}.pt"


def fits(c: Contestant, variant: str) -> bool:
    """Can ``c`` play ``variant`` at its standard table (a checkpoint: only its own)?"""
    try:
        check_fits([c], variant, standard_table(variant))
    except checkpoint.CheckpointError:
        return False
    return True


def deviations(variants: list[str], games: int) -> list[str]:
    """Why a run is not the protocol (nothing when it is): ``games`` (a pairing's, after rounding
    to whole deals) below the protocol's, or some of its variants left out."""
    reasons = []
    if games < PROTOCOL_GAMES:
        reasons.append(f"{games} games a pairing, the protocol plays {PROTOCOL_GAMES}")
    played = [v for v in PROTOCOL_VARIANTS if v in variants]
    if len(played) < len(PROTOCOL_VARIANTS):
        reasons.append(
            f"{len(played)} of the {len(PROTOCOL_VARIANTS)} variants, the protocol plays every one"
        )
    return reasons


def protocol_label(reasons: list[str]) -> str:
    """``protocol v2``, or ``exploratory (not protocol v2: <reasons>)``."""
    return f"exploratory (not {PROTOCOL_NAME}: {'; '.join(reasons)})" if reasons else PROTOCOL_NAME


def normalized(top_shares: dict[str, list[float]]) -> dict[str, list[float]]:
    """Each player's per-deal normalized scores (see the module docstring) from its per-deal
    win shares against ``TOP`` (``TOP``'s own: its mirror match's 1/sides); nan where ``TOP``
    and ``random`` do equally well against it (the scale has no width)."""
    per_deal = {p: np.asarray(shares, dtype=float) for p, shares in top_shares.items()}
    low, high = float(per_deal[BOTTOM].mean()), float(per_deal[TOP].mean())
    width = high - low
    return {p: ((values - low) / width).tolist() if width else [math.nan] for p, values in per_deal.items()}
