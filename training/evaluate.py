"""How good is a trained policy? Head-to-head tables, a rating of a run's checkpoints, the final check.

    python -m training evaluate runs/all_fives-1 greedy random --games 200
    python -m training rate runs/all_fives-1

Every pairing is played by :func:`training.matches.play_match`, as ``head_to_head`` plays it:
seeded games with the seats rotated, so neither side keeps the lead or a seat. Agents are ``random``,
``greedy``, a checkpoint file, or a run folder (its ``checkpoints/latest.pt``).
"""

from __future__ import annotations

import csv
import inspect
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from tqdm import tqdm

from domino_env.agents import AGENTS, Agent
from domino_env.env import DominoEnv
from domino_env.registry import VARIANTS, raw_env
from domino_env.variants.base import ChainRules
from training import checkpoint
from training.agents import checkpoint_file, resolve_agent
from training.config import Config, load_config
from training.matches import Match, play_match

BASELINES = tuple(AGENTS)
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
)
RATING_COLUMNS = ("agent", "iteration", "steps", "mu", "sigma", "ordinal", "games", "win_rate")


# --- agents and tables -------------------------------------------------------------------------


@dataclass
class Contestant:
    """An agent named once and resolved once: a baseline, or a checkpoint with what it was trained on."""

    spec: str  # what resolve_agent takes: a baseline name or a checkpoint path
    label: str
    config: Config | None = None  # the checkpoint's training config; None for baselines
    iteration: int | None = None
    steps: int | None = None

    def agent(self, env: DominoEnv, seed: int) -> Agent:
        """A fresh agent for one pairing, so a baseline's random stream never depends on earlier pairings."""
        return resolve_agent(self.spec, env, seed)


def contestant(spec: str, label: str | None = None) -> Contestant:
    """Resolve a command-line agent; unknown names and unreadable checkpoints raise ValueError."""
    path = checkpoint_file(spec)
    if path is None:
        return Contestant(spec, label or spec)
    data = checkpoint.load(path)
    if label is None:  # <run>/checkpoints/iter_00010.pt -> <run>/iter_00010
        label = f"{path.parent.parent.name}/{path.stem}" if path.parent.name == "checkpoints" else path.stem
    return Contestant(str(path), label, data["config"], data.get("iteration"), data.get("steps"))


def parse_options(texts: list[str] | None) -> dict[str, Any]:
    """``key=value`` pairs, values read as YAML (``teams=true`` is a bool, ``num_players=4`` an int)."""
    options: dict[str, Any] = {}
    for text in texts or []:
        key, sep, raw = text.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"option {text!r} must look like key=value, e.g. num_players=4")
        options[key.strip()] = yaml.safe_load(raw)
    return options


def evaluation_table(config: Config) -> tuple[str, dict[str, Any]]:
    """The table a run is evaluated on: its training table, with the episode its own evaluations
    use (``eval.episode``, e.g. whole matches for a policy trained on single rounds)."""
    options = dict(config.env.options)
    episode = getattr(config.eval, "episode", None)
    if episode is not None:
        options["episode"] = episode
    return config.env.variant, options


def resolve_table(
    contestants: list[Contestant],
    variant: str | None = None,
    option_texts: list[str] | None = None,
    config_path: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """The table to play: ``--config``'s, else the first checkpoint's, else the default config's
    (see :func:`evaluation_table`); ``--variant`` replaces the variant (and the options, when it
    differs), ``--option`` adds to them."""
    if config_path is not None:
        base = load_config(config_path)
    else:
        base = next((c.config for c in contestants if c.config is not None), Config())
    base_variant, base_options = evaluation_table(base)
    options = base_options if variant in (None, base_variant) else {}
    options.update(parse_options(option_texts))
    chosen = variant or base_variant
    raw_env(chosen, **options)  # unknown variants and options raise ValueError here, before any game
    return chosen, options


def rules_table(variant: str, options: dict[str, Any]) -> dict[str, Any]:
    """The rules options with their defaults filled in: what makes two tables the same game."""
    params = inspect.signature(VARIANTS[variant].__init__).parameters
    return {name: options.get(name, p.default) for name, p in params.items() if name != "self"}


def check_fits(contestants: list[Contestant], variant: str, options: dict[str, Any]) -> None:
    """A checkpoint plays only the game it was trained on (episode and reward options may differ)."""
    table = rules_table(variant, options)
    for c in contestants:
        if c.config is None:
            continue
        trained = c.config.env
        own = rules_table(trained.variant, trained.options)
        if (trained.variant, own) != (variant, table):
            raise checkpoint.CheckpointError(
                f"checkpoint {c.spec} was trained on {table_text(trained.variant, own)}, not on "
                f"{table_text(variant, table)}; leave out --variant/--option/--config to use its own table"
            )


def table_text(variant: str, options: dict[str, Any]) -> str:
    """``all_fives (num_players=2, episode=match)``: the table in the headers and the errors. The
    ``reward`` option is left out: evaluation and play count outcomes whatever reward the env gives."""
    shown = [f"{k}={v}" for k, v in options.items() if k != "reward"]
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


# --- playing pairings --------------------------------------------------------------------------


@dataclass
class Result(Match):
    """A pairing's :class:`~training.matches.Match`, with the contestants' labels."""

    agent: str = ""
    opponent: str = ""

    def row(self) -> dict[str, Any]:
        low, high = self.interval()
        return {
            "agent": self.agent,
            "opponent": self.opponent,
            "games": self.games,
            "win_rate": self.win_rate,
            "ci_low": low,
            "ci_high": high,
            "mean_reward": self.mean_reward,
            "mean_score": self.mean_score,
            "mean_rounds": self.mean_rounds,
        }


def play_pairing(
    env: DominoEnv,
    first: Contestant,
    second: Contestant,
    games: int,
    seed: int,
    on_game: Callable[[], object] | None = None,
) -> Result:
    """``first`` against ``second`` as :func:`~training.matches.play_match` plays them; game ``g``
    is dealt from ``seed + g`` whoever plays, so pairings share their deals. Each contestant is
    a fresh agent (seeded ``seed`` and ``seed + 1``), so no pairing depends on an earlier one."""
    match = play_match(env, first.agent(env, seed), second.agent(env, seed + 1), games, seed, on_game)
    return Result(**vars(match), agent=first.label, opponent=second.label)


def pairings(count: int, rules: ChainRules, first_only: bool = False) -> list[tuple[int, int]]:
    """Which contestants meet: the first against each other one, or a round-robin. Heads-up and
    partnership tables are symmetric with seats rotated, so each pair plays once; at 3-4 single
    seats one agent against copies of the other is not, so both orders are played."""
    symmetric = rules.num_players == 2 or rules.teams
    pairs = [(i, j) for i in range(count) for j in range(count) if i != j and (i < j or not symmetric)]
    return [(i, j) for i, j in pairs if i == 0] if first_only else pairs


def play_all(
    env: DominoEnv,
    contestants: list[Contestant],
    pairs: list[tuple[int, int]],
    games: int,
    seed: int,
    progress: bool = False,
) -> Iterator[Result]:
    """Every pairing on the same deals (common random numbers: less noise between pairings), one at
    a time, so a caller that is interrupted keeps the finished ones; ``progress`` shows a bar over
    all the games (hundreds of matches take minutes)."""
    with tqdm(total=len(pairs) * games, unit="game", disable=not progress, leave=False) as bar:
        for i, j in pairs:
            yield play_pairing(env, contestants[i], contestants[j], games, seed, on_game=bar.update)


def format_results(results: list[Result], score_label: str = "score") -> str:
    """A table a person reads: win rate with its 95% Wilson interval, mean outcome reward, final
    score and rounds; ``score_label`` says what the score is (``penalty`` where lower is better)."""
    width = max([len("opponent"), *(len(r.agent) for r in results), *(len(r.opponent) for r in results)])
    lines = [
        f"{'agent':<{width}}  {'opponent':<{width}}  {'games':>5} {'win rate':>8} {'95% CI':>16} "
        f"{'reward':>7} {score_label:>7} {'rounds':>6}"
    ]
    for r in results:
        low, high = r.interval()
        lines.append(
            f"{r.agent:<{width}}  {r.opponent:<{width}}  {r.games:>5} {r.win_rate:>8.1%} "
            f"{f'[{low:.1%}, {high:.1%}]':>16} {r.mean_reward:>+7.2f} {r.mean_score:>7.1f} "
            f"{r.mean_rounds:>6.1f}"
        )
    return "\n".join(lines)


def write_rows(path: Path, columns: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
    """A CSV with floats to 4 decimals, as ``evaluations.csv`` writes them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        out = csv.DictWriter(handle, fieldnames=list(columns))
        out.writeheader()
        for row in rows:
            out.writerow({k: f"{v:.4f}" if isinstance(v, float) else v for k, v in row.items()})


@dataclass
class Evaluation:
    """A checked plan: the table and the agents that fit it (built before any game is played)."""

    variant: str
    options: dict[str, Any]
    contestants: list[Contestant]

    def env(self) -> DominoEnv:
        return raw_env(self.variant, **self.options)

    def pairs(self, first_only: bool = False) -> list[tuple[int, int]]:
        """The pairings played (see :func:`pairings`)."""
        return pairings(len(self.contestants), self.env().rules, first_only)

    @property
    def score_label(self) -> str:
        """The score column's name: Classic-family scores are penalty points, where lower is better."""
        return "penalty" if VARIANTS[self.variant].lower_score_wins else "points"

    def header(self, games: int, seed: int) -> str:
        return (
            f"{table_text(self.variant, self.options)}: {games} games per pairing, seats rotated, seed {seed}"
        )


def prepare(
    specs: list[str],
    variant: str | None = None,
    option_texts: list[str] | None = None,
    config_path: str | None = None,
) -> Evaluation:
    """Resolve agents and table, and check that every checkpoint fits; raises ValueError
    (CheckpointError, ConfigError) with a message for a person."""
    contestants = [contestant(spec) for spec in specs]
    chosen, options = resolve_table(contestants, variant, option_texts, config_path)
    check_fits(contestants, chosen, options)
    env = raw_env(chosen, **options)
    for c in contestants:  # sizes too, so a mismatch fails here and not in the middle of the games
        c.agent(env, 0)
    return Evaluation(chosen, options, contestants)


def evaluate_pairings(
    plan: Evaluation, games: int, seed: int = 0, first_only: bool = False, progress: bool = False
) -> Iterator[Result]:
    """Play the plan's pairings (see :func:`pairings`), ``games`` each, yielding each as it ends."""
    env = plan.env()  # one table serves the pairings and the games
    pairs = pairings(len(plan.contestants), env.rules, first_only)
    return play_all(env, plan.contestants, pairs, games, seed, progress)


def evaluate(
    plan: Evaluation, games: int, seed: int = 0, first_only: bool = False, progress: bool = False
) -> list[Result]:
    """Play the plan's pairings (see :func:`pairings`), ``games`` each."""
    return list(evaluate_pairings(plan, games, seed, first_only, progress))


def evaluate_final(
    run_dir: str | Path, games: int = 200, seed: int = 0, quiet: bool = False, progress: bool = False
) -> list[dict[str, Any]]:
    """The run's latest checkpoint against ``random`` and ``greedy`` on its evaluation table,
    written to ``RUN_DIR/final_evaluation.csv`` and printed (unless ``quiet``); returns the rows."""
    plan = prepare([str(checkpoint.latest(run_dir)), *BASELINES])
    results = evaluate(plan, games, seed, first_only=True, progress=progress)
    rows = [r.row() for r in results]
    path = Path(run_dir) / "final_evaluation.csv"
    write_rows(path, RESULT_COLUMNS, rows)
    if not quiet:
        print(plan.header(games, seed))
        print(format_results(results, plan.score_label))
        print(f"written: {path}")
    return rows


# --- ratings -----------------------------------------------------------------------------------


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
    else:
        message = "no evaluations.csv in this run (trained with eval.every=0)"
        curve_ax.text(0.5, 0.5, message, ha="center", va="center", transform=curve_ax.transAxes, color="grey")
    curve_ax.set_ylim(0, 1)
    curve_ax.set_ylabel("win rate")
    curve_ax.set_title(f"{Path(run_dir).resolve().name}: win rate against the baselines during training")
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


def report_ratings(
    run_dir: str | Path, plan: Evaluation, ratings: list[Rating], games: int, seed: int, quiet: bool = False
) -> None:
    """``ratings.csv`` and ``ratings.png`` in the run folder, and the table printed (unless ``quiet``)."""
    csv_path, png_path = Path(run_dir) / "ratings.csv", Path(run_dir) / "ratings.png"
    write_rows(csv_path, RATING_COLUMNS, [r.row() for r in ratings])
    plot_ratings(run_dir, ratings, games, png_path)
    if not quiet:
        print(plan.header(games, seed))
        print(format_ratings(ratings))
        print(f"written: {csv_path}\n         {png_path}")
