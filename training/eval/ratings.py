"""Ratings of a run's checkpoints: OpenSkill (Plackett-Luce) from a round-robin of a sample of
them and the baselines, on the run's own table, and what a rating writes: its table,
``ratings.csv`` and the ``ratings.png`` figure.

    python -m training rate runs/all_fives-1
"""

from __future__ import annotations

import csv
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
from training.eval.report import table_text, write_rows
from training.model import checkpoint

RATING_COLUMNS = ("agent", "iteration", "steps", "mu", "sigma", "ordinal", "games", "win_rate")


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
    results = list(
        play_all(plan.env(), plan.contestants, pairs=pairs, games=games, seed=seed, progress=progress)
    )
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
    *,
    games: int = 20,
    seed: int = 0,
    most: int = 8,
    quiet: bool = False,
    progress: bool = False,
) -> list[Rating]:
    """Rate a run's checkpoints and the baselines; writes ``ratings.csv`` and ``ratings.png`` in it."""
    plan = rating_plan(run_dir, most)
    ratings = rate(plan, games, seed, progress)
    report_ratings(run_dir, plan, ratings=ratings, games=games, seed=seed, quiet=quiet)
    return ratings


def rating_header(plan: Evaluation, games: int, seed: int) -> str:
    """The rating table's first line: what each pairing played, and what its games column
    counts (an agent's games against all the others, not a pairing's)."""
    per_agent = games * sum(0 in pair for pair in plan.pairs())  # a round-robin: alike for every agent
    return (
        f"{table_text(plan.variant, plan.options)}: round-robin of {len(plan.contestants)} agents, "
        f"{games} games per pairing ({per_agent} per agent: the games column), seats rotated, seed {seed}"
    )


def format_ratings(ratings: list[Rating]) -> str:
    """Baselines first, then the checkpoints by training step; mu-3σ is a conservative rating."""
    width = max(len("agent"), *(len(r.contestant.label) for r in ratings))
    lines = [
        f"{'agent':<{width}}  {'steps':>9} {'mu':>6} {'sigma':>6} {'mu-3σ':>6} {'games':>5} {'win rate':>8}"
    ]
    for r in ratings:
        row = r.row()
        steps = f"{row['steps']:,}" if row["steps"] != "" else "-"
        lines.append(
            f"{row['agent']:<{width}}  {steps:>9} {r.mu:>6.1f} {r.sigma:>6.2f} {row['ordinal']:>6.1f} "
            f"{r.games:>5} {row['win_rate']:>8.1%}"
        )
    return "\n".join(lines)


def read_learning_curve(run_dir: str | Path) -> dict[str, list[float]]:
    """``evaluations.csv`` as columns (``steps`` and one ``win_rate_vs_*`` per baseline); {} if absent."""
    path = Path(run_dir) / "evaluations.csv"
    if not path.is_file():
        return {}
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows:
        return {}
    return {key: [float(row[key]) for row in rows] for key in rows[0] if key != "iteration"}


def plot_ratings(run_dir: str | Path, ratings: list[Rating], games: int, path: Path) -> None:
    """Two panels on one training-steps axis: the learning curve against the baselines, and the
    checkpoints' ratings (mu ± sigma) with the baselines' as bands."""
    from matplotlib.figure import Figure  # no pyplot: no global backend or figure state

    fig = Figure(figsize=(9, 7.5), layout="constrained")
    curve_ax, rating_ax = fig.subplots(2, 1, sharex=True)
    curve = read_learning_curve(run_dir)
    if curve:
        for key, values in curve.items():
            if key.startswith("win_rate_vs_"):
                curve_ax.plot(
                    curve["steps"], values, marker="o", ms=3, label=f"vs {key[len('win_rate_vs_') :]}"
                )
        curve_ax.axhline(0.5, color="grey", lw=0.8, ls="--")
        curve_ax.legend(loc="best")
        first = min((s for s in curve["steps"] if s > 0), default=0.0)
        if first:  # step 0 and the log-spaced early evaluations stay apart from the later ones
            curve_ax.set_xscale("symlog", linthresh=first)
    else:
        message = "no evaluations.csv in this run (trained with eval.every=0)"
        curve_ax.text(0.5, 0.5, message, ha="center", va="center", transform=curve_ax.transAxes, color="grey")
    curve_ax.set_ylim(0, 1)
    curve_ax.set_ylabel("win rate")
    curve_ax.set_title(f"{Path(run_dir).resolve().name}: win rate during training")
    curve_ax.grid(alpha=0.3)

    trained = [r for r in ratings if r.contestant.steps is not None]
    steps = [r.contestant.steps or 0 for r in trained]
    colours = {"random": "tab:red", "greedy": "tab:green"}
    for r in ratings:
        if r.contestant.steps is None:
            colour = colours.get(r.contestant.label, "tab:grey")
            rating_ax.axhspan(r.mu - r.sigma, r.mu + r.sigma, color=colour, alpha=0.12)
            rating_ax.axhline(r.mu, color=colour, lw=1, ls="--")
            rating_ax.annotate(
                f"{r.contestant.label} {r.mu:.1f}",
                (0.01, r.mu),
                xycoords=("axes fraction", "data"),
                va="bottom",
                color=colour,
            )
    rating_ax.errorbar(
        steps,
        [r.mu for r in trained],
        yerr=[r.sigma for r in trained],
        fmt="o-",
        capsize=3,
        color="tab:blue",
        label="checkpoints",
    )
    rating_ax.set_xlabel("training steps")
    rating_ax.set_ylabel("rating (mu ± sigma)")
    rating_ax.set_title(
        f"OpenSkill Plackett-Luce rating, round-robin of {games} games per pair, seats rotated"
    )
    rating_ax.legend(loc="best")
    rating_ax.grid(alpha=0.3)
    fig.savefig(path, dpi=120)


def report_ratings(
    run_dir: str | Path,
    plan: Evaluation,
    *,
    ratings: list[Rating],
    games: int,
    seed: int,
    quiet: bool = False,
) -> None:
    """``ratings.csv`` and ``ratings.png`` in the run folder, and the table printed (unless ``quiet``)."""
    csv_path, png_path = Path(run_dir) / "ratings.csv", Path(run_dir) / "ratings.png"
    write_rows(csv_path, RATING_COLUMNS, [r.row() for r in ratings])
    plot_ratings(run_dir, ratings, games, png_path)
    if not quiet:
        print(rating_header(plan, games, seed))
        print(format_ratings(ratings))
        print(f"written: {csv_path}\n         {png_path}")
