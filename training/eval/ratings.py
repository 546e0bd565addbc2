"""Ratings of a run's checkpoints: OpenSkill (Plackett-Luce) from a round-robin of a sample of
them and the baselines, on the run's own table.

    python -m training rate runs/all_fives-1
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from training.eval.evaluate import (
    BASELINES,
    Contestant,
    Evaluation,
    check_fits,
    contestant,
    evaluation_table,
    play_all,
)
from training.eval.report import report_ratings
from training.model import checkpoint


def sample_checkpoints(run_dir: str | Path, most: int = 8) -> list[Path]:
    """At most ``most`` of the run's ``iter_*.pt``, spread evenly back from the last to the first,
    and ``latest.pt`` (the caller drops it when it repeats the last ``iter_*.pt``)."""
    folder = Path(run_dir) / "checkpoints"
    latest = checkpoint.latest(run_dir)
    files = sorted(folder.glob("iter_*.pt"))
    if len(files) > most:
        files = [files[i] for i in sorted(set(np.linspace(len(files) - 1, 0, most).round().astype(int)))]
    return [*files, latest]


@dataclass
class Rating:
    """An agent's OpenSkill rating after the round-robin, and its record there (``wins``: games its
    side came first, shared first places as fractions; for an agent filling several seats, the
    games its opponent did not win)."""

    contestant: Contestant
    mu: float
    sigma: float
    games: int
    wins: float

    def row(self) -> dict[str, Any]:
        c = self.contestant
        return {
            "agent": c.label,
            "iteration": "" if c.iteration is None else c.iteration,
            "steps": "" if c.steps is None else c.steps,
            "mu": self.mu,
            "sigma": self.sigma,
            "ordinal": self.mu - 3 * self.sigma,
            "games": self.games,
            "win_rate": self.wins / max(self.games, 1),
        }


def rating_plan(run_dir: str | Path, most: int = 8) -> Evaluation:
    """The baselines and a sample of the run's checkpoints (one per iteration), on the run's table."""
    seen: set[int | None] = set()
    checkpoints = []
    for path in sample_checkpoints(run_dir, most):
        c = contestant(str(path), label=path.stem)
        if c.iteration not in seen:  # latest.pt repeats the last iter_*.pt
            seen.add(c.iteration)
            checkpoints.append(c)
    checkpoints.sort(key=lambda c: c.steps or 0)
    config = checkpoints[-1].config
    assert config is not None  # checkpoints always carry their config
    plan = Evaluation(*evaluation_table(config), [contestant(b) for b in BASELINES] + checkpoints)
    check_fits(plan.contestants, plan.variant, plan.options)
    return plan


def rate(plan: Evaluation, games: int = 20, seed: int = 0, progress: bool = False) -> list[Rating]:
    """OpenSkill (Plackett-Luce) ratings from a round-robin; the games of all pairings are rated
    interleaved (game 0 of every pairing, then game 1, ...) so no pairing's order biases them."""
    from openskill.models import PlackettLuce

    pairs = plan.pairs()
    results = list(play_all(plan.env(), plan.contestants, pairs, games, seed, progress))
    model = PlackettLuce()
    ratings = [model.rating(name=c.label) for c in plan.contestants]
    played = [0] * len(ratings)
    wins = [0.0] * len(ratings)
    for g in range(games):
        for (i, j), result in zip(pairs, results, strict=True):
            share = result.shares[g]
            ranks = [0.0, 1.0] if share == 1 else [1.0, 0.0] if share == 0 else [0.0, 0.0]
            [[ratings[i]], [ratings[j]]] = model.rate([[ratings[i]], [ratings[j]]], ranks=ranks)
            played[i] += 1
            played[j] += 1
            wins[i] += share
            wins[j] += 1 - share
    return [
        Rating(c, r.mu, r.sigma, n, w)
        for c, r, n, w in zip(plan.contestants, ratings, played, wins, strict=True)
    ]


def rate_run(
    run_dir: str | Path,
    games: int = 20,
    seed: int = 0,
    most: int = 8,
    quiet: bool = False,
    progress: bool = False,
) -> list[Rating]:
    """Rate a run's checkpoints and the baselines; writes ``ratings.csv`` and ``ratings.png`` in it."""
    plan = rating_plan(run_dir, most)
    ratings = rate(plan, games, seed, progress)
    report_ratings(run_dir, plan, ratings, games, seed, quiet)
    return ratings
