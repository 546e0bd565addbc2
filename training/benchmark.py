"""``python -m training benchmark``: agents against a fixed ladder on every variant, under a published
protocol, with normalized scores and their aggregate.

    python -m training benchmark search:64 runs/all_fives-1 --variants all_fives classic --games 200

**Protocol v1** (``PROTOCOL``, written into every result): each variant at its first standard
table (``spec.benchmark_tables[0]``), whole matches, **duplicate deals** from the fixed deal seeds
``DEAL_SEED + d`` (d = 0, 1, ...: every pairing plays the same deals), each deal once per seating,
so ``--games`` is rounded up to whole deals. The ladder is ``random``, ``greedy``, ``search`` and
the variant's shipped agent (``agents/<variant>.pt``, where there is one); the name ``shipped``
stands for that agent as a contestant too. A checkpoint plays only the variant and table it was
trained on (other variants are skipped for it, and the output says so).

**Normalized score** of agent ``a`` on a variant: ``(W(a) - W(random)) / (W(search) - W(random))``,
where ``W(x)`` is x's mean win rate against the ladder's opponents: 0 plays like ``random``, 1
like ``search``, against the same ladder (``random`` and ``search`` play it too, as the
references). Per deal the same formula gives each deal's contribution, whose mean is the score.

**Aggregate** (``summary.json``): the interquartile mean of an agent's scores over the variants
(``scipy.stats.trim_mean``, 25% cut each side), with a 95% stratified bootstrap interval
(``scipy.stats.bootstrap``, deals resampled within each variant); with ``--group`` the listed
agents are runs (training seeds) of one algorithm, the IQM is over every (run, variant) score and
the runs are resampled within each variant - the rliable paper's convention.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats
from tqdm import tqdm

import domino_env
from training import checkpoint
from training.evaluate import Contestant, Result, check_fits, contestant, play_pairing
from training.matches import seatings
from training.report import writable_folder, write_rows

PROTOCOL = "v1"
DEAL_SEED = 1_000_000  # protocol v1's deals: seeds DEAL_SEED, DEAL_SEED + 1, ...
LADDER = ("random", "greedy", "search")  # then the variant's shipped agent
BOTTOM, TOP = "random", "search"  # the scores' 0 and 1
SHIPPED = "shipped"  # a contestant name: the variant's agents/<variant>.pt
COLUMNS = (
    "agent",
    "variant",
    "opponent",
    "games",
    "win_rate",
    "ci_low",
    "ci_high",
    "margin",
    "margin_ci_low",
    "margin_ci_high",
    "score",
    "protocol",
    "version",
)


@dataclass
class VariantResults:
    """One variant's pairings: ``results[(player, opponent)]``, and each player's per-deal score."""

    variant: str
    results: dict[tuple[str, str], Result]
    deal_scores: dict[str, list[float]]  # player -> each deal's normalized contribution

    def score(self, player: str) -> float:
        values = self.deal_scores.get(player, [])
        return float(np.mean(values)) if values else math.nan


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


def deal_means(result: Result) -> list[float]:
    k = result.per_deal
    return [sum(result.shares[i : i + k]) / k for i in range(0, len(result.shares), k)]


def normalized(results: dict[tuple[str, str], Result], players: list[str], opponents: list[str]) -> dict:
    """Each player's per-deal normalized scores (see the module docstring); nan where ``search``
    and ``random`` do equally well (the scale has no width)."""
    per_deal = {p: np.mean([deal_means(results[(p, o)]) for o in opponents], axis=0) for p in players}
    low, high = float(per_deal[BOTTOM].mean()), float(per_deal[TOP].mean())
    width = high - low
    return {p: ((values - low) / width).tolist() if width else [math.nan] for p, values in per_deal.items()}


def iqm_with_interval(samples: list[list[float]], pooled: bool) -> tuple[float, float, float]:
    """The IQM and its 95% stratified bootstrap interval. ``samples`` holds one list per variant:
    per-deal scores (``pooled`` False: the IQM is over the variants' means) or runs' scores
    (``pooled`` True: over every value)."""
    samples = [s for s in samples if s and not any(math.isnan(v) for v in s)]
    if not samples:
        return math.nan, math.nan, math.nan

    def iqm(*groups: Any) -> float:
        values = np.concatenate(groups) if pooled else [np.mean(g) for g in groups]
        return float(stats.trim_mean(values, 0.25))

    arrays = [np.asarray(s) for s in samples]
    centre = iqm(*arrays)
    varied = [i for i, a in enumerate(arrays) if len(a) > 1]  # a single value has nothing to resample
    if not varied:
        return centre, math.nan, math.nan

    def iqm_of_resampled(*resampled: Any) -> float:
        groups = list(arrays)
        for i, group in zip(varied, resampled, strict=True):
            groups[i] = group
        return iqm(*groups)

    boot = stats.bootstrap(
        tuple(arrays[i] for i in varied),
        iqm_of_resampled,
        vectorized=False,
        paired=False,
        n_resamples=1000,
        method="percentile",
        rng=np.random.default_rng(0),
    )
    return centre, float(boot.confidence_interval.low), float(boot.confidence_interval.high)


def benchmark(
    agents: list[str],
    variants: list[str] | None = None,
    games: int = 200,
    out: str | Path = "runs/benchmark",
    group: str | None = None,
    agents_dir: str | Path = "agents",
    progress: bool = True,
) -> dict[str, Any]:
    """Play the protocol, write ``OUT/benchmark.csv``, ``summary.json`` and ``benchmark.png``
    (only once every game is played: an interrupted run writes nothing), and return the summary.
    Bad input (an unknown variant or agent, games below 1, an unwritable ``out``) raises
    ValueError before any game."""
    variants = list(variants or domino_env.SPECS)
    for name in variants:
        domino_env.spec(name)  # an unknown variant: ValueError listing the known ones
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    folder = writable_folder(out)
    given = {a: contestant(a) for a in dict.fromkeys(agents) if a != SHIPPED}  # unknown agents fail here
    skipped: dict[str, list[str]] = {a: [] for a in given}
    plans = []
    for variant in variants:
        roster = {name: contestant(name) for name in (*LADDER, BOTTOM, TOP)}
        shipped = shipped_path(agents_dir, variant)
        if shipped.exists():
            roster[SHIPPED] = contestant(str(shipped), SHIPPED)
        for name, c in given.items():
            if fits(c, variant):
                roster.setdefault(name, c)
            else:
                skipped[name].append(variant)
        players = [BOTTOM, TOP, *(a for a in dict.fromkeys(agents) if a in roster and a not in (BOTTOM, TOP))]
        opponents = [*LADDER, *([SHIPPED] if SHIPPED in roster else [])]
        env = domino_env.raw_env(variant, **standard_table(variant))
        k = seatings(env.rules.num_players, env.rules.teams)
        plans.append((variant, env, roster, players, opponents, -(-games // k) * k))
    total = sum(len(players) * len(opponents) * n for *_, players, opponents, n in plans)
    by_variant: list[VariantResults] = []
    with tqdm(total=total, unit="game", disable=not progress) as bar:
        for variant, env, roster, players, opponents, per_pairing in plans:
            results: dict[tuple[str, str], Result] = {}
            for p in players:
                for o in opponents:
                    bar.set_description(f"{variant}: {p} vs {o}")
                    results[(p, o)] = play_pairing(
                        env, roster[p], roster[o], per_pairing, DEAL_SEED, bar.update, duplicate=True
                    )
            by_variant.append(VariantResults(variant, results, normalized(results, players, opponents)))
    summary = summarize(by_variant, agents, group, games)
    summary["skipped"] = {a: v for a, v in skipped.items() if v}
    write_results(folder, by_variant, summary)
    return summary


def summarize(by_variant: list[VariantResults], agents: list[str], group: str | None, games: int) -> dict:
    """Scores per variant and their IQM, for each agent (or for the group and the references)."""
    labels = [BOTTOM, TOP, *[a for a in agents if a not in (BOTTOM, TOP)]]
    entries: dict[str, Any] = {}
    for label in labels:
        scores = {v.variant: round(v.score(label), 6) for v in by_variant if label in v.deal_scores}
        samples = [v.deal_scores[label] for v in by_variant if label in v.deal_scores]
        centre, low, high = iqm_with_interval(samples, pooled=False)
        entries[label] = {
            "scores": scores,
            "iqm": round(centre, 6),
            "iqm_ci": [round(low, 6), round(high, 6)],
        }
    if group:
        runs = [a for a in agents if a not in (BOTTOM, TOP)]
        per_variant = [[v.score(a) for a in runs if a in v.deal_scores] for v in by_variant]
        centre, low, high = iqm_with_interval(per_variant, pooled=True)
        entries[group] = {"runs": runs, "iqm": round(centre, 6), "iqm_ci": [round(low, 6), round(high, 6)]}
    return {
        "protocol": PROTOCOL,
        "version": version("domino-env"),
        "deal_seed": DEAL_SEED,
        "games_asked": games,
        "ladder": [*LADDER, SHIPPED],
        "score": "(W(agent) - W(random)) / (W(search) - W(random)), W = mean win rate against the ladder",
        "agents": entries,
    }


def write_results(folder: Path, by_variant: list[VariantResults], summary: dict[str, Any]) -> None:
    rows = []
    for v in by_variant:
        for (player, opponent), r in v.results.items():
            row = {**r.row(), "agent": player, "opponent": opponent, "variant": v.variant}
            row.update(score=v.score(player), protocol=PROTOCOL, version=summary["version"])
            rows.append({column: row[column] for column in COLUMNS})
    write_rows(folder / "benchmark.csv", COLUMNS, rows)
    (folder / "summary.json").write_text(json.dumps(summary, indent=1, allow_nan=True) + "\n")
    plot(folder / "benchmark.png", by_variant, summary)


def plot(path: Path, by_variant: list[VariantResults], summary: dict[str, Any]) -> None:
    """One panel: each agent's normalized score per variant (95% t-interval over deals), the
    references at 0 and 1."""
    from matplotlib.figure import Figure

    labels = [a for a in summary["agents"] if "scores" in summary["agents"][a]]
    fig = Figure(figsize=(9, 1.2 + 0.45 * len(by_variant) * max(1, len(labels)) / 2), layout="constrained")
    ax = fig.subplots()
    height = 0.8 / max(len(labels), 1)
    for k, label in enumerate(labels):
        ys, xs, errors = [], [], []
        for i, v in enumerate(by_variant):
            values = v.deal_scores.get(label)
            if not values or any(math.isnan(x) for x in values):
                continue
            mean = float(np.mean(values))
            half = float(stats.sem(values) * stats.t.ppf(0.975, len(values) - 1)) if len(values) > 1 else 0.0
            ys.append(i + k * height)
            xs.append(mean)
            errors.append(half)
        iqm = summary["agents"][label]["iqm"]
        ax.barh(ys, xs, height=height, xerr=errors, capsize=2, label=f"{label} (IQM {iqm:.2f})")
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(by_variant))], [v.variant for v in by_variant])
    ax.axvline(0, color="grey", lw=0.8)
    ax.axvline(1, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("normalized score (0: random, 1: search, against the same ladder)")
    ax.set_title(f"domino-env benchmark, protocol {summary['protocol']}")
    ax.legend(loc="best", fontsize="small")
    fig.savefig(path, dpi=100)
