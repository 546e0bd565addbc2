"""The numbers: each variant's results read from the store, the normalized scores per deal,
the win rates' Wilson intervals over the deals, and the IQM with its bootstrap interval."""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

import numpy as np
from scipy import stats

from training.eval.benchmark import protocol
from training.eval.benchmark.runner import VariantPlan
from training.eval.benchmark.store import Store, swapped
from training.eval.evaluate import Result
from training.matches import Match, wilson_interval


def win_rate_interval(match: Match) -> tuple[float, float]:
    """95% Wilson score interval of a pairing's win rate over its deals (n: the number of deals,
    the proportion: their mean win share; see the module docstring). Never zero width: all wins
    over 10 games (5 deals of two seatings) gives [56.6%, 100%]."""
    shares = match.deal_shares()
    if not shares:
        return 0.0, 1.0
    return wilson_interval(sum(shares), len(shares))


@dataclass
class VariantResults:
    """One variant's pairings: ``results[(player, opponent)]`` (mirror matches left out), each
    player's per-deal win share against ``TOP`` and per-deal score, and where each pairing came
    from."""

    variant: str
    results: dict[tuple[str, str], Result]
    top_shares: dict[str, list[float]]  # player -> its win share against TOP on each deal
    deal_scores: dict[str, list[float]]  # player -> each deal's normalized contribution
    sources: dict[tuple[str, str], str]
    mirrors: set[tuple[str, str]]

    def score(self, player: str) -> float:
        values = self.deal_scores.get(player, [])
        return float(np.mean(values)) if values else math.nan

    def ms_per_decision(self, player: str) -> float:
        """The player's mean decision time over its pairings here."""
        mine = [r for (p, _), r in self.results.items() if p == player]
        decisions = sum(r.decisions[0] for r in mine)
        return 1000 * sum(r.seconds[0] for r in mine) / decisions if decisions else math.nan


def collect(plan: VariantPlan, store: Store, source: str) -> VariantResults:
    """The plan's results, read from the store (every pairing is in it by now)."""
    results: dict[tuple[str, str], Result] = {}
    sources: dict[tuple[str, str], str] = {}
    mirrors = set()
    top_shares: dict[str, list[float]] = {}
    deals = plan.games // plan.per_deal
    for (p, o), pair in plan.pairs.items():
        if pair is None:
            mirrors.add((p, o))
            if o == protocol.TOP:
                top_shares[p] = [1.0 / plan.sides] * deals
            continue
        k, flip = pair
        match = store.matches[k]
        match = swapped(match, plan.lower_score_wins) if flip else match
        results[(p, o)] = Result(**vars(match), agent=p, opponent=o)
        sources[(p, o)] = source if k in store.read else "played"
        if o == protocol.TOP:
            top_shares[p] = match.deal_shares()
    return VariantResults(
        plan.variant, results, top_shares, protocol.normalized(top_shares), sources, mirrors
    )


RESAMPLES = 1000


def deal_draws(by_variant: list[VariantResults]) -> dict[str, np.ndarray]:
    """Per variant, the bootstrap's resampled deal indices (``RESAMPLES`` x deals): one draw for
    every player, who all played the same deals."""
    rng = np.random.default_rng(0)
    deals = {
        v.variant: len(v.top_shares[protocol.BOTTOM]) for v in by_variant if protocol.BOTTOM in v.top_shares
    }
    return {variant: rng.integers(n, size=(RESAMPLES, n)) for variant, n in deals.items()}


def scored_in(by_variant: list[VariantResults], player: str) -> list[VariantResults]:
    """The variants that give ``player`` a score (a checkpoint plays only its own; a variant whose
    scale has no width scores nobody)."""
    return [v for v in by_variant if player in v.deal_scores and not math.isnan(v.score(player))]


def resampled_scores(v: VariantResults, players: list[str], rows: np.ndarray) -> np.ndarray:
    """Each player's score on ``v`` in every resample of its deals (``rows``: resamples x deal
    indices), the scale's zero and one recomputed from the same draw: float[resamples, players]
    (a resample with no scale: not finite)."""
    zero, one = (np.asarray(v.top_shares[p])[rows].mean(axis=1) for p in (protocol.BOTTOM, protocol.TOP))
    own = np.stack([np.asarray(v.top_shares[p])[rows].mean(axis=1) for p in players], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (own - zero[:, None]) / (one - zero)[:, None]


def iqm_percentiles(resampled: np.ndarray) -> tuple[float, float]:
    """The 95% percentile interval of the IQM of each resample (a row of ``resampled``), the
    rows with a score that is not finite left out; nan where none is left or every row agrees
    (a zero width would claim certainty)."""
    boot = stats.trim_mean(resampled[np.isfinite(resampled).all(axis=1)], 0.25, axis=1)
    if not boot.size:
        return math.nan, math.nan
    low, high = (float(x) for x in np.percentile(boot, [2.5, 97.5]))
    return (low, high) if high - low > 1e-12 else (math.nan, math.nan)


def score_with_interval(
    held: list[VariantResults], player: str, draws: dict[str, np.ndarray]
) -> tuple[float, float, float]:
    """A player's IQM over the variants that score it (``held``: :func:`scored_in`'s) and its
    95% percentile bootstrap interval. Each
    resample draws the deals again in every variant (``draws``: the same for every player) and
    recomputes the scale from them, ``W(random)`` included, so the interval carries the zero's
    uncertainty too (``random`` and ``expert`` score 0 and 1 in every resample: no interval).
    nan where there is nothing to resample or every resample agrees (a zero width would claim
    certainty)."""
    if not held:
        return math.nan, math.nan, math.nan
    centre = float(stats.trim_mean([v.score(player) for v in held], 0.25))
    if any(draws[v.variant].shape[1] < 2 for v in held):
        return centre, math.nan, math.nan
    low, high = iqm_percentiles(
        np.concatenate([resampled_scores(v, [player], draws[v.variant]) for v in held], axis=1)
    )
    return centre, low, high


def iqm_with_interval(samples: list[list[float]]) -> tuple[float, float, float]:
    """A group's IQM over every run's score in every variant and its 95% stratified bootstrap
    interval (``samples``: one list of runs' scores per variant, resampled within it, as
    rliable does). nan when there is nothing to resample, or when every resample gives the
    same IQM (a zero width that would claim certainty). With few runs a variant's resamples
    rarely leave its extremes out: the interval is then close to the runs' range."""
    samples = [s for s in samples if s and not any(math.isnan(v) for v in s)]
    if not samples:
        return math.nan, math.nan, math.nan

    def iqm(*groups: Any) -> float:
        return float(stats.trim_mean(np.concatenate(groups), 0.25))

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
    low, high = float(boot.confidence_interval.low), float(boot.confidence_interval.high)
    if not high > low:  # every resample alike (too few distinct outcomes): no interval to give
        return centre, math.nan, math.nan
    return centre, low, high


def group_interval_with_deals(
    by_variant: list[VariantResults], runs: list[str], draws: dict[str, np.ndarray]
) -> tuple[float, float]:
    """A group's 95% interval with the deals redrawn too: each resample draws the deals again in
    every variant (``draws``, as :func:`score_with_interval`'s, the scale's zero recomputed from
    them) and the runs again within each variant. All runs play the same deals, so the deals'
    noise is shared by every run and resampling the runs alone (:func:`iqm_with_interval`)
    leaves it out: that interval is the seeds' spread on these deals, this one holds what a new
    set of deals would add. Drawing runs and deals independently counts each run's own deal
    noise more than once, so it errs wide (conservative). nan where there is nothing to resample
    or every resample agrees."""
    rng = np.random.default_rng(1)
    resampled = []
    for v in by_variant:
        mine = [a for a in runs if a in v.deal_scores and not math.isnan(v.score(a))]
        if not mine:
            continue
        rows = draws[v.variant]
        if rows.shape[1] < 2:  # (one deal: nothing to redraw, as for one agent)
            return math.nan, math.nan
        scores = resampled_scores(v, mine, rows)
        picks = rng.integers(len(mine), size=scores.shape)  # the runs drawn again, within the variant
        resampled.append(np.take_along_axis(scores, picks, axis=1))
    if not resampled:
        return math.nan, math.nan
    return iqm_percentiles(np.concatenate(resampled, axis=1))


def summarize(
    by_variant: list[VariantResults],
    agents: list[str],
    *,
    group: str | None,
    games: int,
    reasons: list[str] | None = None,
) -> dict:
    """Scores per variant with their intervals and their IQM, for each agent (or for the group
    and the references), and each agent's decision time per variant; ``reasons``: why the run
    is exploratory, not the protocol (:func:`deviations`; none: it is the protocol)."""
    reasons = list(reasons or [])
    labels = [*(a for a in (protocol.BOTTOM, protocol.TOP) if a not in agents), *dict.fromkeys(agents)]
    entries: dict[str, Any] = {}
    draws = deal_draws(by_variant)
    for label in labels:
        scores = {v.variant: round(v.score(label), 6) for v in by_variant if label in v.deal_scores}
        held = scored_in(by_variant, label)
        centre, low, high = score_with_interval(held, label, draws)
        intervals = {v.variant: score_with_interval([v], label, draws)[1:] for v in held}  # (one: its score)
        entries[label] = {
            "scores": scores,
            "scores_ci": {variant: [round(a, 6), round(b, 6)] for variant, (a, b) in intervals.items()},
            "variants": [v.variant for v in held],  # (the ones its IQM is over)
            "iqm": round(centre, 6),
            "iqm_ci": [round(low, 6), round(high, 6)],
            "ms_per_decision": {
                v.variant: round(v.ms_per_decision(label), 3) for v in by_variant if label in v.deal_scores
            },
        }
    if group:
        runs = [a for a in agents if a not in (protocol.BOTTOM, protocol.TOP)]
        per_variant = [[v.score(a) for a in runs if a in v.deal_scores] for v in by_variant]
        centre, low, high = iqm_with_interval(per_variant)
        deals_low, deals_high = group_interval_with_deals(by_variant, runs, draws)
        entries[group] = {
            "runs": runs,
            "iqm": round(centre, 6),
            "iqm_ci": [round(low, 6), round(high, 6)],
            "iqm_ci_with_deals": [round(deals_low, 6), round(deals_high, 6)],
        }
    return {
        "protocol": None if reasons else protocol.PROTOCOL,
        "exploratory": bool(reasons),
        "exploratory_reasons": reasons,
        "label": protocol.protocol_label(reasons),
        "version": version("domino-env"),
        "deal_seed": protocol.DEAL_SEED,
        "games_asked": games,
        "ladder": [*protocol.LADDER, protocol.SHIPPED],
        "variants": [v.variant for v in by_variant],
        "score": f"(W(agent) - W({protocol.BOTTOM})) / (1/sides - W({protocol.BOTTOM})), "
        f"W = the win rate against {protocol.TOP}",
        "win_rate_interval": "95% Wilson score interval, n = the deals, p = their mean win share",
        "iqm_interval": "95% percentile bootstrap: a player's over the deals, redrawn alike for every "
        "player in each variant, the scale's zero recomputed from each draw; a group's iqm_ci over its "
        "runs within each variant (stratified: the seeds' spread on these deals), its iqm_ci_with_deals "
        "over the runs and the deals together (what another set of deals would add); NaN where it "
        "would have zero width",
        "agents": entries,
    }
