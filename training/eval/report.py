"""What evaluations and ratings show and write: tables a person reads, CSV files, the ratings
figure, and the output paths, checked before any game is played so a bad path wastes none."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from training.matches import mean_interval, wilson_interval

if TYPE_CHECKING:  # the reported types import this module for their texts
    from training.eval.evaluate import Evaluation, Result
    from training.eval.ratings import Rating

RESULT_COLUMNS = (
    "agent",
    "opponent",
    "games",
    "win_rate",
    "ci_low",
    "ci_high",
    "mean_reward",
    "mean_score",
    "mean_rounds",
    "margin",
    "margin_ci_low",
    "margin_ci_high",
    "duplicate",
)
RATING_COLUMNS = ("agent", "iteration", "steps", "mu", "sigma", "ordinal", "games", "win_rate")


def table_text(variant: str, options: dict[str, Any]) -> str:
    """``all_fives (num_players=2, episode=match)``: the table in the headers and the errors. The
    ``reward`` option is left out: evaluation and play count outcomes whatever reward the env gives;
    so are options left unset (None: the variant's own)."""
    shown = [f"{k}={v}" for k, v in options.items() if k != "reward" and v is not None]
    return f"{variant} ({', '.join(shown) or 'default options'})"


def writable_file(path: str | Path) -> Path:
    """An output file checked before any game is played, so a bad path does not waste them."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a file to write")
    writable_folder(path.parent)
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{path} is not writable")
    return path


def writable_folder(path: str | Path) -> Path:
    """An output folder, created now (before training or games) so a bad path fails at once."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{path} is a file, not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"cannot create the folder {path}: {err.strerror}") from err
    if not os.access(path, os.W_OK):
        raise ValueError(f"the folder {path} is not writable")
    return path


def format_results(results: list[Result], score_label: str = "score") -> str:
    """A table a person reads: win rate with its 95% interval (Wilson's; over deals with duplicate
    deals), mean outcome reward, final score, rounds, and the points margin per match with its
    interval; ``score_label`` says what the score is (``penalty`` where lower is better)."""
    width = max([len("opponent"), *(len(r.agent) for r in results), *(len(r.opponent) for r in results)])
    lines = [
        f"{'agent':<{width}}  {'opponent':<{width}}  {'games':>5} {'win rate':>8} {'95% CI':>16} "
        f"{'reward':>7} {score_label:>7} {'rounds':>6} {'margin':>7} {'95% CI':>16}"
    ]
    for r in results:
        low, high = r.interval()
        margin_low, margin_high = r.margin_interval()
        lines.append(
            f"{r.agent:<{width}}  {r.opponent:<{width}}  {r.games:>5} {r.win_rate:>8.1%} "
            f"{f'[{low:.1%}, {high:.1%}]':>16} {r.mean_reward:>+7.2f} {r.mean_score:>7.1f} "
            f"{r.mean_rounds:>6.1f} {r.margin:>+7.1f} {f'[{margin_low:+.1f}, {margin_high:+.1f}]':>16}"
        )
    return "\n".join(lines)


def duplicate_gain(results: list[Result]) -> str:
    """How much narrower duplicate deals made the intervals than independent deals' would be at
    the same games, averaged over the pairings: the win rate's against Wilson's at the same win
    rate, the margin's (paired by deal) against the t-interval over single games."""
    win_ratios, margin_ratios = [], []
    for r in results:
        low, high = r.interval()
        wilson_low, wilson_high = wilson_interval(r.wins, r.games)
        if wilson_high > wilson_low:
            win_ratios.append((high - low) / (wilson_high - wilson_low))
        margin_low, margin_high = r.margin_interval()
        single_low, single_high = mean_interval(r.margins)
        if single_high > single_low:
            margin_ratios.append((margin_high - margin_low) / (single_high - single_low))
    if not win_ratios and not margin_ratios:
        return "duplicate deals: no interval to compare"

    def change(ratios: list[float]) -> str:
        if not ratios:
            return "not comparable"
        gain = 1 - sum(ratios) / len(ratios)
        return f"{gain:.0%} narrower" if gain >= 0 else f"{-gain:.0%} wider"

    return (
        f"duplicate deals, against independent deals at the same games: win-rate interval "
        f"{change(win_ratios)} (than Wilson's), margin interval {change(margin_ratios)} (paired by "
        f"deal); mean over {len(results)} pairing(s)"
    )


def write_rows(path: Path, columns: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
    """A CSV with floats to 4 decimals, as ``evaluations.csv`` writes them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        out = csv.DictWriter(handle, fieldnames=list(columns))
        out.writeheader()
        for row in rows:
            out.writerow({k: f"{v:.4f}" if isinstance(v, float) else v for k, v in row.items()})


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
    run_dir: str | Path, plan: Evaluation, ratings: list[Rating], games: int, seed: int, quiet: bool = False
) -> None:
    """``ratings.csv`` and ``ratings.png`` in the run folder, and the table printed (unless ``quiet``)."""
    csv_path, png_path = Path(run_dir) / "ratings.csv", Path(run_dir) / "ratings.png"
    write_rows(csv_path, RATING_COLUMNS, [r.row() for r in ratings])
    plot_ratings(run_dir, ratings, games, png_path)
    if not quiet:
        print(rating_header(plan, games, seed))
        print(format_ratings(ratings))
        print(f"written: {csv_path}\n         {png_path}")
