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
    player's per-deal score, and where each pairing came from."""

    variant: str
    results: dict[tuple[str, str], Result]
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
    return VariantResults(plan.variant, results, protocol.normalized(top_shares), sources, mirrors)


def iqm_with_interval(samples: list[list[float]], pooled: bool) -> tuple[float, float, float]:
    """The IQM and its 95% stratified bootstrap interval. ``samples`` holds one list per variant:
    per-deal scores (``pooled`` False: the IQM is over the variants' means) or runs' scores
    (``pooled`` True: over every value). The interval is nan when there is nothing to resample,
    or when every resample gives the same IQM (a zero width that would claim certainty)."""
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
    low, high = float(boot.confidence_interval.low), float(boot.confidence_interval.high)
    if not high > low:  # every resample alike (too few distinct outcomes): no interval to give
        return centre, math.nan, math.nan
    return centre, low, high


def summarize(
    by_variant: list[VariantResults],
    agents: list[str],
    *,
    group: str | None,
    games: int,
    reasons: list[str] | None = None,
) -> dict:
    """Scores per variant and their IQM, for each agent (or for the group and the references),
    and each agent's decision time per variant; ``reasons``: why the run is exploratory, not the
    protocol (:func:`deviations`; none: it is the protocol)."""
    reasons = list(reasons or [])
    labels = [*(a for a in (protocol.BOTTOM, protocol.TOP) if a not in agents), *dict.fromkeys(agents)]
    entries: dict[str, Any] = {}
    for label in labels:
        scores = {v.variant: round(v.score(label), 6) for v in by_variant if label in v.deal_scores}
        samples = [v.deal_scores[label] for v in by_variant if label in v.deal_scores]
        centre, low, high = iqm_with_interval(samples, pooled=False)
        entries[label] = {
            "scores": scores,
            "iqm": round(centre, 6),
            "iqm_ci": [round(low, 6), round(high, 6)],
            "ms_per_decision": {
                v.variant: round(v.ms_per_decision(label), 3) for v in by_variant if label in v.deal_scores
            },
        }
    if group:
        runs = [a for a in agents if a not in (protocol.BOTTOM, protocol.TOP)]
        per_variant = [[v.score(a) for a in runs if a in v.deal_scores] for v in by_variant]
        centre, low, high = iqm_with_interval(per_variant, pooled=True)
        entries[group] = {"runs": runs, "iqm": round(centre, 6), "iqm_ci": [round(low, 6), round(high, 6)]}
    return {
        "protocol": None if reasons else protocol.PROTOCOL,
        "exploratory": bool(reasons),
        "exploratory_reasons": reasons,
        "label": protocol.protocol_label(reasons),
        "version": version("domino-env"),
        "deal_seed": protocol.DEAL_SEED,
        "games_asked": games,
        "ladder": [*protocol.LADDER, protocol.SHIPPED],
        "score": f"(W(agent) - W({protocol.BOTTOM})) / (1/sides - W({protocol.BOTTOM})), "
        f"W = the win rate against {protocol.TOP}",
        "win_rate_interval": "95% Wilson score interval, n = the deals, p = their mean win share",
        "iqm_interval": "95% stratified bootstrap (percentile); NaN where it would have zero width",
        "agents": entries,
    }
