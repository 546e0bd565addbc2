"""``python -m training ladder``: fixed reference opponents (the *rungs*) rated on one scale, and a
new agent rated against them without refitting them.

    python -m training ladder random greedy search:2 search --variant classic --games 200
    python -m training ladder --rate runs/classic-1 --against runs/ladder-classic/ladder.json

**Games.** Every pair of rungs plays ``--games`` whole matches (rounded up to whole deals) on
duplicate deals, as ``evaluate --duplicate`` plays a pairing (:func:`training.eval.evaluate.play_all`,
:func:`training.matches.play_match` with ``duplicate=True``): deal ``d`` is dealt from
``seed + d`` and played once per seating, and every pairing plays the same deals. A pairing's
two rungs are seated in the benchmark's order (by name; a checkpoint by its content hash), the
first seeded ``seed``, the second ``seed + 1``, as :mod:`training.eval.benchmark` seats them. So on
the benchmark's table and deals (``--seed 1000000``, its 200 games) a pairing is the same games
as the benchmark's, and ``--reference training/eval/benchmark_reference_v2.json`` (any benchmark
``pairings.json``) reads the pairings it holds instead of playing them. At a table of two sides
(heads-up or partnerships) a pair plays once; at 3-4 single seats (Cross) one agent sits alone
against copies of the other, and both orders are played, as the benchmark plays them.

**Method: Bradley-Terry**, P(i beats j) = 1 / (1 + exp(-(θi - θj))). At 3-4 single seats, i
alone against k copies of j comes first with **Luce's choice** probability w_i / (w_i + k w_j),
w = e^θ: the first place of the Plackett-Luce model, which is Bradley-Terry over the whole table
(k = 1 is Bradley-Terry itself, and equal strengths give i the even share 1 / (1 + k)). Both are
P(first wins) = sigmoid(θi - θj - ln k), a logistic model with a known offset, fitted by maximum
likelihood over every pairing (its likelihood is concave; ``scipy.optimize.minimize``'s
``Newton-CG``) on the games the first of each pairing won; a shared first place
counts as its share. **Regularization**: one virtual game per pairing, won in the even share
(half a win each way at two sides: the prior of BayesElo's virtual draws). It keeps the rating
of a pairing won in every game finite (at two sides n games of n read as n + 1/2 of n + 1) and
moves a pairing's win rate by at most 1 / (n + 1), within any interval n games give.

**Scale**: Elo points, R = 400 / ln 10 × θ, so that P(i beats j) = 1 / (1 + 10^((Rj - Ri) / 400));
anchored with the first rung at 0 (give ``random`` first to read ratings above random).

**Intervals**: of a rating, the 2.5 and 97.5 percentiles of a bootstrap over deals
(:data:`RESAMPLES` resamples of the deals, drawn with replacement, the same draw in every
pairing since the pairings were dealt alike; each resample refitted and anchored again: so the
anchor has none and the others' are relative to it). Of a pairing's win rate, the 95% Wilson
score interval over its deals (n = the deals, p = their mean win share), as the benchmark gives
(:func:`training.eval.benchmark.win_rate_interval`).

**Rating a new agent** (``--rate AGENT --against DIR/ladder.json``): it plays every rung on the
ladder's table, deals and seeds (the first of a pairing seeded ``seed``, the second ``seed +
1``); the rungs' ratings stay as the ladder has them, and the agent's alone is fitted, by maximum
likelihood of the same model (with the same virtual game per pairing) in one dimension
(``scipy.optimize``). At two sides the agent is the first of each pairing; at 3-4 single seats
it plays each rung in both orders (alone against copies of the rung, then the rung alone
against copies of it: its side is known by that order, not by its name). Its
interval is a bootstrap over its deals with the rungs held fixed: it leaves out the rungs' own
uncertainty, which their intervals in the ladder show.

**Gaps**: each rung over the next one down by rating, with the gap's own interval (the same
resamples' differences): two ratings' intervals each carry the anchor's uncertainty and can
overlap while the rungs are clearly apart.

**Files** (``--out``, default ``runs/ladder-<variant>``): ``ladder.json`` (everything: rungs,
ratings, intervals, gaps, pairings with every game's win share, games, seeds, the method),
``ladder.csv`` (a row per rung: rating, interval, win rate against each other rung) and
``ladder.png`` (ratings with their intervals, and the pairwise win rates as a heatmap). A folder
that already holds a ladder is refused unless ``overwrite``; a rating writes
``rating-<agent>.json`` next to the ladder (or in ``--out``), refused too if it exists.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from domino_env import raw_env
from training.eval.benchmark import DEAL_SEED, Store, identity, key_of, standard_table
from training.eval.evaluate import (
    Contestant,
    Evaluation,
    Result,
    check_fits,
    contestant,
    play_all,
    play_pairing,
    prepare,
    rules_table,
)
from training.eval.pool import play_in_processes
from training.eval.report import refuse_earlier, table_text, writable_folder, write_rows
from training.matches import wilson_interval

FORMAT = "domino-env/ladder"
FORMAT_VERSION = 1
ELO = 400 / math.log(10)  # Elo points per unit of Bradley-Terry strength (natural log odds)
PRIOR_GAMES = 1.0  # virtual games added to every pairing, won in the even share (half each way at two sides)
DEFAULT_GAMES = 200  # games a pairing
RESAMPLES = 1000  # bootstrap resamples of the deals
BOOTSTRAP_SEED = 0  # the bootstrap's own random stream: the same games give the same intervals
LADDER_FILES = ("ladder.json", "ladder.csv", "ladder.png")
METHOD = (
    "Bradley-Terry, P(i beats j) = 1 / (1 + 10^((Rj - Ri) / 400)) with R = 400 / ln 10 x strength; at "
    "3-4 single seats i alone against k copies of j comes first with Luce's choice probability "
    "wi / (wi + k wj), w = e^strength (the Plackett-Luce model's first place; k = 1 is Bradley-Terry); "
    "fitted by maximum likelihood (scipy.optimize.minimize, Newton-CG) on the games won, a shared "
    f"first place counted as its share, with {PRIOR_GAMES:g} virtual game per pairing won in the even "
    "share (1/2 at two sides, 1/(1 + k) alone against k); anchored with the first "
    f"rung at 0; 95% intervals: percentiles of a {RESAMPLES}-resample bootstrap over deals (the same "
    "resampled deals in every pairing), each refitted; pairwise win rates: 95% Wilson interval over deals"
)
RATE_METHOD = (
    "the rungs' ratings fixed as the ladder has them; the agent's fitted alone by maximum likelihood "
    f"of the same model ({PRIOR_GAMES:g} virtual game per pairing won in the even share; "
    "scipy.optimize.minimize_scalar); 95% interval: percentiles of a "
    f"{RESAMPLES}-resample bootstrap over its deals, the rungs held fixed"
)


# --- the fit ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcomes:
    """Pairings' games in arrays, one entry a pairing: ``first[p]`` (one side, or at 3-4 single
    seats one seat) against ``copies[p]`` seats of ``second[p]`` (1 at two sides) won ``won[p]``
    of ``games[p]`` (a shared first place counted as its share)."""

    first: np.ndarray
    second: np.ndarray
    won: np.ndarray
    games: np.ndarray
    copies: np.ndarray

    def with_prior(self, prior: float) -> tuple[np.ndarray, np.ndarray]:
        """The first's wins and losses with ``prior`` virtual games added to each pairing, won
        in the even share (1/2 at two sides, 1/(1 + copies) for one seat against copies)."""
        even = 1 / (1 + self.copies)
        return self.won + prior * even, self.games - self.won + prior * (1 - even)


def log_loss(won: np.ndarray, lost: np.ndarray, margin: np.ndarray) -> float:
    """The model's negative log likelihood: games won and lost at each ``margin`` (the first's
    log odds), -log sigmoid(d) = log(1 + e^-d)."""
    return float(np.sum(won * np.logaddexp(0, -margin) + lost * np.logaddexp(0, margin)))


def fit_strengths(count: int, outcomes: Outcomes, prior: float = PRIOR_GAMES) -> np.ndarray:
    """Strengths (natural log odds, the first rung's 0) of ``count`` rungs by maximum likelihood
    of :data:`METHOD`'s model, P(first wins) = sigmoid(θ_first - θ_second - ln copies), with
    ``prior`` virtual games a pairing. Every rung must be joined to every other through the
    pairings (a round-robin is). The likelihood is concave: Newton's steps (scipy's
    ``Newton-CG``, to a step of 1e-12) on the rungs but the first reach its maximum in a few
    iterations."""
    from scipy.optimize import minimize

    won, lost = outcomes.with_prior(prior)
    total = float(np.sum(won + lost))  # (the likelihood per game: a tolerance whatever the games)
    won, lost = won / total, lost / total
    first, second, offset = outcomes.first, outcomes.second, np.log(outcomes.copies)
    games = won + lost

    def margins(free: np.ndarray) -> np.ndarray:
        theta = np.concatenate([[0.0], free])
        return theta[first] - theta[second] - offset

    def loss(free: np.ndarray) -> tuple[float, np.ndarray]:
        d = margins(free)
        slope = games / (1 + np.exp(-d)) - won  # d(-log likelihood) / d(margin)
        grad = np.bincount(first, slope, count) - np.bincount(second, slope, count)
        return log_loss(won, lost, d), grad[1:]

    def hessian(free: np.ndarray) -> np.ndarray:
        p = 1 / (1 + np.exp(-margins(free)))
        curve = games * p * (1 - p)
        h = np.zeros((count, count))
        np.add.at(h, (first, first), curve)
        np.add.at(h, (second, second), curve)
        np.add.at(h, (first, second), -curve)
        np.add.at(h, (second, first), -curve)
        return h[1:, 1:]

    result = minimize(
        loss, np.zeros(count - 1), jac=True, hess=hessian, method="Newton-CG", options={"xtol": 1e-12}
    )
    if not result.success:  # (a concave likelihood with a finite maximum: not seen, but never silent)
        raise RuntimeError(f"the ratings' maximum-likelihood fit did not converge: {result.message}")
    return np.concatenate([[0.0], result.x])


def to_elo(strengths: np.ndarray, anchor: int = 0) -> np.ndarray:
    """Strengths in Elo points, rung ``anchor`` at 0."""
    return ELO * (np.asarray(strengths) - strengths[anchor])


def fit_one(
    rungs: np.ndarray,
    wins: np.ndarray,
    games: np.ndarray,
    offsets: np.ndarray | None = None,
    prior: float = PRIOR_GAMES,
) -> float:
    """The Elo rating of one agent whose side won ``wins[k]`` of ``games[k]`` against the rung
    rated ``rungs[k]`` (Elo, fixed), by maximum likelihood of the same model: P(its side wins) =
    sigmoid(x - θ_k + offsets[k]), the offset -ln(copies) where it sits alone against copies of
    the rung, +ln(copies) where it fills the copies' seats (0 at two sides), with ``prior``
    virtual games a pairing won in the even share (so the likelihood has a finite maximum, and
    one)."""
    from scipy.optimize import minimize_scalar

    theta = np.asarray(rungs, dtype=float) / ELO
    offset = np.zeros(len(theta)) if offsets is None else np.asarray(offsets, dtype=float)
    even = 1 / (1 + np.exp(-offset))
    won = np.asarray(wins, dtype=float) + prior * even
    lost = np.asarray(games, dtype=float) - np.asarray(wins, dtype=float) + prior * (1 - even)

    def loss(x: float) -> float:
        return log_loss(won, lost, x - theta + offset)

    # the optimum lies within log(2 games + 1) of the rungs' range, offsets aside: inside these bounds
    reach = math.log(float(np.sum(games)) + 2) + 1 + float(np.abs(offset).max(initial=0.0))
    bounds = (float(theta.min()) - reach, float(theta.max()) + reach)
    result = minimize_scalar(loss, bounds=bounds, method="bounded", options={"xatol": 1e-10})
    return float(ELO * result.x)


def percentile_interval(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 95% percentile interval of bootstrap samples (along the first axis)."""
    low, high = np.percentile(samples, [2.5, 97.5], axis=0)
    return low, high


def resampled_deals(deals: int, resamples: int = RESAMPLES, seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """``resamples`` draws of ``deals`` deal indices with replacement (one row a resample)."""
    return np.random.default_rng(seed).integers(0, deals, size=(resamples, deals))


def outcomes_of(pairings: list[Pairing], index: dict[str, int], draw: Any = None) -> Outcomes:
    """The pairings' games as :class:`Outcomes` (``draw``: the deals to count, a resample; None: all)."""
    won = []
    for p in pairings:
        by_deal = p.deal_wins()
        won.append(float(by_deal.sum() if draw is None else by_deal[draw].sum()))
    deals = np.array([p.deals if draw is None else len(draw) for p in pairings])
    return Outcomes(
        first=np.array([index[p.first] for p in pairings]),
        second=np.array([index[p.second] for p in pairings]),
        won=np.array(won),
        games=np.array([p.per_deal for p in pairings]) * deals.astype(float),
        copies=np.array([p.copies for p in pairings], dtype=float),
    )


def bootstrap_ladder(
    rungs: list[str], pairings: list[Pairing], resamples: int = RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> np.ndarray:
    """Each rung's Elo rating (first rung 0) refitted on ``resamples`` resamples of the deals,
    one row a resample; every pairing is drawn the same deals (they were dealt alike)."""
    index = {name: i for i, name in enumerate(rungs)}
    deals = {p.deals for p in pairings}
    if len(deals) != 1:
        raise ValueError(
            f"the pairings played different numbers of deals ({sorted(deals)}): one ladder plays one"
        )
    draws = resampled_deals(deals.pop(), resamples, seed)
    return np.array([to_elo(fit_strengths(len(rungs), outcomes_of(pairings, index, d))) for d in draws])


def bootstrap_one(
    rungs: np.ndarray,
    pairings: list[Pairing],
    first: list[bool],
    resamples: int = RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> np.ndarray:
    """The new agent's rating (:func:`fit_one`, the rungs fixed) on resamples of its deals, the
    same draw in every pairing; ``pairings[k]`` is the agent's pairing with the rung rated
    ``rungs[k]``, the agent its first where ``first[k]``."""
    deals = {p.deals for p in pairings}
    if len(deals) != 1:
        raise ValueError(f"the pairings played different numbers of deals ({sorted(deals)})")
    draws = resampled_deals(deals.pop(), resamples, seed)
    sides = [p.side(is_first) for p, is_first in zip(pairings, first, strict=True)]
    offsets = np.array([offset for _, offset in sides])
    per_deal = np.array([p.per_deal for p in pairings], dtype=float)
    out = []
    for d in draws:
        wins = np.array([by_deal[d].sum() for by_deal, _ in sides])
        out.append(fit_one(rungs, wins, per_deal * len(d), offsets))
    return np.array(out)


# --- pairings and their games -------------------------------------------------------------------


@dataclass
class Pairing:
    """``first`` against ``second``: the first's win share in every game (1 won, 0 lost, 1/2 a
    shared first place), ``per_deal`` games in a row sharing a deal (its seatings); ``copies``:
    the seats ``second`` fills (1 at two sides; at 3-4 single seats the first sits alone against
    copies of the second, and an even share is 1/(1 + copies))."""

    first: str
    second: str
    shares: list[float]
    per_deal: int
    copies: int = 1

    @classmethod
    def of(cls, result: Result, copies: int) -> Pairing:
        return cls(result.agent, result.opponent, [float(s) for s in result.shares], result.per_deal, copies)

    @property
    def label(self) -> str:
        """``a vs b``, or ``a vs 3 b`` where ``a`` sits alone against three copies of ``b``."""
        return (
            f"{self.first} vs {self.second}"
            if self.copies == 1
            else f"{self.first} vs {self.copies} {self.second}"
        )

    @property
    def games(self) -> int:
        return len(self.shares)

    @property
    def deals(self) -> int:
        return self.games // self.per_deal

    @property
    def wins(self) -> float:
        return float(sum(self.shares))

    @property
    def win_rate(self) -> float:
        return self.wins / max(self.games, 1)

    def deal_wins(self) -> np.ndarray:
        """The first's wins in each deal (the sum of its seatings' shares)."""
        return np.asarray(self.shares, dtype=float).reshape(self.deals, self.per_deal).sum(axis=1)

    def interval(self) -> tuple[float, float]:
        """95% Wilson score interval of the win rate over the deals (n = the deals, p = their mean
        share), as :func:`training.eval.benchmark.win_rate_interval` gives it."""
        return wilson_interval(float(self.deal_wins().sum()) / self.per_deal, self.deals)

    def side(self, first: bool) -> tuple[np.ndarray, float]:
        """The wins in each deal of the first's side (``first``) or the second's, and that side's
        offset in :func:`fit_one`'s model (-ln copies alone against copies, +ln copies in the
        copies' seats)."""
        if first:
            return self.deal_wins(), -math.log(self.copies)
        return self.per_deal - self.deal_wins(), math.log(self.copies)

    def entry(self) -> dict[str, Any]:
        low, high = self.interval()
        return {
            "first": self.first,
            "second": self.second,
            "games": self.games,
            "per_deal": self.per_deal,
            "copies": self.copies,
            "wins": self.wins,
            "win_rate": self.win_rate,
            "ci_low": low,
            "ci_high": high,
            "shares": self.shares,
        }


@dataclass(frozen=True)
class Job:
    """A pairing for a worker process: the table, the two contestants, the games and the seed."""

    variant: str
    options: dict[str, Any]
    first: Contestant
    second: Contestant
    games: int
    seed: int


def play_job(job: Job, on_game: Callable[[], object] | None = None) -> Result:
    env = raw_env(job.variant, **job.options)
    return play_pairing(
        env, job.first, job.second, games=job.games, seed=job.seed, on_game=on_game, duplicate=True
    )


def play_pairings(
    plan: Evaluation,
    pairs: list[tuple[int, int]],
    *,
    games: int,
    seed: int,
    workers: int = 1,
    progress: bool = False,
) -> list[Result]:
    """The pairs of ``plan``'s contestants on duplicate deals, ``games`` each: here, through
    :func:`training.eval.evaluate.play_all`, or shared out to ``workers`` processes, each pairing played
    whole by one (as the benchmark does), so the numbers do not depend on how many there are."""
    c = plan.contestants
    if workers <= 1 or len(pairs) <= 1:
        played = play_all(
            plan.env(), c, pairs=pairs, games=games, seed=seed, progress=progress, duplicate=True
        )
        return list(played)
    jobs = [Job(plan.variant, plan.options, c[i], c[j], games, seed) for i, j in pairs]

    def label(k: int) -> str:
        return f"{jobs[k].first.label} vs {jobs[k].second.label}"

    with tqdm(total=games * len(jobs), unit="game", disable=not progress) as bar:
        return play_in_processes(jobs, play_job, workers=workers, bar=bar, label=label)


# --- the ladder ---------------------------------------------------------------------------------


@dataclass
class Ladder:
    """The rungs, their pairings, ratings (Elo, the first rung 0) and 95% intervals."""

    variant: str
    options: dict[str, Any]
    rungs: list[str]  # labels, in the order given
    specs: list[str]  # what resolves each rung again (a name, a checkpoint path)
    identities: list[str]  # a name, or a checkpoint's content hash
    seed: int
    games: int  # per pairing, whole deals
    pairings: list[Pairing]
    ratings: list[float] = field(default_factory=list)
    intervals: list[tuple[float, float]] = field(default_factory=list)
    # each rung over the next one down by rating: (upper, lower, Elo gap, its 95% interval)
    gaps: list[tuple[str, str, float, float, float]] = field(default_factory=list)
    games_asked: int | None = None
    version: str = ""

    @property
    def anchor(self) -> str:
        return self.rungs[0]

    def rating(self, rung: str) -> float:
        return self.ratings[self.rungs.index(rung)]

    def win_rate(self, row: str, column: str) -> float:
        """How often ``row`` won against ``column`` (at 3-4 single seats: alone against copies of
        it; nan on the diagonal)."""
        for p in self.pairings:
            if (p.first, p.second) == (row, column):
                return p.win_rate
        for p in self.pairings:
            if (p.first, p.second) == (column, row) and p.copies == 1:
                return 1 - p.win_rate
        return math.nan

    @property
    def copies(self) -> int:
        """The seats the second of a pairing fills: 1 at two sides, else the other seats."""
        return self.pairings[0].copies

    def model_rate(self, p: Pairing) -> float:
        """The win rate the fitted ratings give ``p``'s first: 1 / (1 + copies 10^((R2 - R1) / 400))
        (what the scale claims, beside what the games showed)."""
        gap = self.rating(p.second) - self.rating(p.first)
        return 1 / (1 + p.copies * 10 ** (gap / 400))

    def fit(self, resamples: int = RESAMPLES) -> None:
        """Fit the ratings and their bootstrap intervals from the pairings."""
        index = {name: i for i, name in enumerate(self.rungs)}
        strengths = fit_strengths(len(self.rungs), outcomes_of(self.pairings, index))
        self.ratings = [float(r) for r in to_elo(strengths)]
        samples = bootstrap_ladder(self.rungs, self.pairings, resamples)
        low, high = percentile_interval(samples)
        self.intervals = [(float(a), float(b)) for a, b in zip(low, high, strict=True)]
        # Two rungs' intervals each carry the anchor's uncertainty: overlapping, they can still
        # be apart. Their gap's own interval comes from the same resamples, rung minus rung.
        order = sorted(range(len(self.rungs)), key=lambda i: -self.ratings[i])
        self.gaps = []
        for upper, lower in itertools.pairwise(order):
            gap_low, gap_high = np.percentile(samples[:, upper] - samples[:, lower], [2.5, 97.5])
            gap = self.ratings[upper] - self.ratings[lower]
            self.gaps.append((self.rungs[upper], self.rungs[lower], gap, float(gap_low), float(gap_high)))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "version": self.version,
            "variant": self.variant,
            "options": self.options,
            "table": table_text(self.variant, self.options),
            "duplicate": True,
            "seed": self.seed,
            "seeds": {
                "deals": f"seed + d, d = 0..{self.games // self.pairings[0].per_deal - 1}",
                "first": self.seed,
                "second": self.seed + 1,
                "bootstrap": BOOTSTRAP_SEED,
            },
            "games": self.games,
            "games_asked": self.games_asked,
            "rungs": self.rungs,
            "specs": self.specs,
            "identities": self.identities,
            "anchor": self.anchor,
            "scale": "Elo",
            "ratings": dict(zip(self.rungs, self.ratings, strict=True)),
            "intervals": {r: list(i) for r, i in zip(self.rungs, self.intervals, strict=True)},
            "gaps": [
                {"upper": u, "lower": w, "elo": gap, "interval": [low, high]}
                for u, w, gap, low, high in self.gaps
            ],
            "resamples": RESAMPLES,
            "prior_games": PRIOR_GAMES,
            "method": METHOD,
            "pairings": [{**p.entry(), "model_win_rate": self.model_rate(p)} for p in self.pairings],
            "report": report_lines(self),
        }

    @classmethod
    def load(cls, path: str | Path) -> Ladder:
        """Read a ``ladder.json``; anything that is not one raises ValueError saying so."""
        try:
            data = json.loads(Path(path).read_text())
            if not isinstance(data, dict) or data.get("format") != FORMAT:
                raise ValueError(f"its format is {data.get('format') if isinstance(data, dict) else None!r}")
            if data["format_version"] != FORMAT_VERSION:
                raise ValueError(
                    f"format_version {data['format_version']!r}, this version reads {FORMAT_VERSION}"
                )
            rungs = [str(r) for r in data["rungs"]]
            ladder = cls(
                variant=str(data["variant"]),
                options=dict(data["options"]),
                rungs=rungs,
                specs=[str(s) for s in data["specs"]],
                identities=[str(s) for s in data["identities"]],
                seed=int(data["seed"]),
                games=int(data["games"]),
                pairings=[
                    Pairing(
                        str(p["first"]),
                        str(p["second"]),
                        [float(s) for s in p["shares"]],
                        int(p["per_deal"]),
                        int(p.get("copies", 1)),  # (files written before 3-4 single seats: 1)
                    )
                    for p in data["pairings"]
                ],
                ratings=[float(data["ratings"][r]) for r in rungs],
                intervals=[(float(data["intervals"][r][0]), float(data["intervals"][r][1])) for r in rungs],
                gaps=[
                    (
                        str(g["upper"]),
                        str(g["lower"]),
                        float(g["elo"]),
                        float(g["interval"][0]),
                        float(g["interval"][1]),
                    )
                    for g in data.get("gaps", [])  # (files written before the gaps were kept: none)
                ],
                games_asked=data.get("games_asked"),
                version=str(data.get("version", "")),
            )
            if len(rungs) < 2 or len(set(rungs)) < len(rungs):
                raise ValueError("it needs two rungs or more, each once")
            if not len(ladder.specs) == len(ladder.identities) == len(rungs):
                raise ValueError("its specs and identities are not one a rung")
            if not all(math.isfinite(r) for r in ladder.ratings):
                raise ValueError("a rating is not a finite number")
            if ladder.games < 1 or any(p.games != ladder.games or p.per_deal < 1 for p in ladder.pairings):
                raise ValueError("its pairings do not all hold its games")
            if ladder.copies < 1 or any(p.copies != ladder.copies for p in ladder.pairings):
                raise ValueError("its pairings do not all seat the same copies (1 or more)")
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as err:
            reason = (
                err.strerror if isinstance(err, OSError) and err.strerror else f"{type(err).__name__}: {err}"
            )
            raise ValueError(f"{path} is not a ladder file (ladder.json): {reason}") from err
        return ladder


@dataclass
class LadderPlan:
    """A checked ladder, before any game: the table, the rungs, the games and where it goes."""

    evaluation: Evaluation
    pairs: list[tuple[int, int]]
    games: int  # per pairing, whole deals
    games_asked: int
    seed: int
    folder: Path
    workers: int
    stored: dict[tuple[int, int], Pairing] = field(default_factory=dict)  # read, not played

    def header(self) -> str:
        read = f", {len(self.stored)} read from the reference" if self.stored else ""
        return (
            f"{self.evaluation.header(self.games, self.seed, duplicate=True)}; "
            f"{len(self.pairs)} pairings of {len(self.evaluation.contestants)} rungs{read}"
        )


def is_standard_table(variant: str, options: dict[str, Any]) -> bool:
    """Do ``options`` make the benchmark's table of ``variant`` (defaults filled in)?"""
    return rules_table(variant, options) == rules_table(variant, standard_table(variant))


def stored_pairings(
    plan: Evaluation, pairs: list[tuple[int, int]], *, games: int, seed: int, reference: str | Path
) -> dict[tuple[int, int], Pairing]:
    """The pairs a benchmark ``pairings.json`` already holds: the same games when the ladder
    plays the benchmark's table and deals (``seed`` its deal seed); none otherwise."""
    store = Store.load(reference)
    if seed != DEAL_SEED or not is_standard_table(plan.variant, plan.options):
        return {}
    c = plan.contestants
    found = {}
    for i, j in pairs:
        match = store.matches.get(key_of(plan.variant, identity(c[i]), identity(c[j]), games))
        if match is not None:
            shares = [float(x) for x in match.shares]
            found[(i, j)] = Pairing(c[i].label, c[j].label, shares, match.per_deal, copies_of(plan))
    return found


def seated(plan: Evaluation) -> list[tuple[int, int]]:
    """Every pair of rungs, the two in the benchmark's order (by identity: a name, a checkpoint's
    content hash), so that on its table and deals a pairing is the benchmark's games; at 3-4
    single seats both orders (each rung alone against copies of the other)."""
    c = plan.contestants
    if copies_of(plan) > 1:
        return plan.pairs()
    return [(i, j) if identity(c[i]) <= identity(c[j]) else (j, i) for i, j in plan.pairs()]


def copies_of(plan: Evaluation) -> int:
    """The seats the second agent of a pairing fills: 1 at a table of two sides (heads-up,
    partnerships), else every seat but the first's."""
    rules = plan.env().rules
    return 1 if rules.num_players == 2 or rules.teams else rules.num_players - 1


def default_workers(workers: int | None) -> int:
    count = len(os.sched_getaffinity(0)) if workers is None else workers
    if count < 1:
        raise ValueError(f"workers must be at least 1, got {count}")
    return count


def check_out(folder: Path, overwrite: bool) -> None:
    """Refuse (ValueError) a folder that holds an earlier ladder's files, unless ``overwrite``."""
    refuse_earlier(folder, LADDER_FILES, "a ladder", overwrite)


def check_labels(contestants: list[Contestant]) -> None:
    labels = [c.label for c in contestants]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise ValueError(f"give each rung once: {', '.join(twice)} given more than once")


def prepare_ladder(
    agents: list[str],
    variant: str | None = None,
    *,
    option_texts: list[str] | None = None,
    config_path: str | None = None,
    games: int | None = None,
    seed: int | None = None,
    out: str | Path | None = None,
    workers: int | None = None,
    overwrite: bool = False,
    reference: str | Path | None = None,
) -> LadderPlan:
    """Check everything before any game: two rungs or more, each known and given once, ``games``
    at least 1, an ``out`` folder that is writable and holds no ladder (unless
    ``overwrite``), a readable ``reference`` (a benchmark's ``pairings.json``, whose pairings of
    the same games are read rather than played); raises ValueError with a message for a person."""
    games = DEFAULT_GAMES if games is None else games
    seed = 0 if seed is None else seed
    if len(agents) < 2:
        raise ValueError(f"a ladder needs two rungs or more, got {len(agents)}: {' '.join(agents) or 'none'}")
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    count = default_workers(workers)
    plan = prepare(agents, variant, option_texts, config_path)  # unknown agents and tables fail here
    check_labels(plan.contestants)
    folder = Path(out) if out is not None else Path("runs") / f"ladder-{plan.variant}"
    check_out(folder, overwrite)
    pairs, whole = seated(plan), plan.games(games, True)
    stored = (
        {} if reference is None else stored_pairings(plan, pairs, games=whole, seed=seed, reference=reference)
    )
    folder = writable_folder(folder)
    return LadderPlan(plan, pairs, whole, games, seed, folder, count, stored)


def play_ladder(plan: LadderPlan, progress: bool = False, resamples: int = RESAMPLES) -> Ladder:
    """Play every pairing (but those read from the reference), fit the ratings and their
    intervals (nothing is written)."""
    evaluation = plan.evaluation
    missing = [pair for pair in plan.pairs if pair not in plan.stored]
    results = play_pairings(
        evaluation, missing, games=plan.games, seed=plan.seed, workers=plan.workers, progress=progress
    )
    copies = copies_of(evaluation)
    played = dict(zip(missing, (Pairing.of(r, copies) for r in results), strict=True))
    contestants = evaluation.contestants
    ladder = Ladder(
        variant=evaluation.variant,
        options=evaluation.options,
        rungs=[c.label for c in contestants],
        specs=[c.spec for c in contestants],
        identities=[identity(c) for c in contestants],
        seed=plan.seed,
        games=plan.games,
        pairings=[plan.stored.get(pair) or played[pair] for pair in plan.pairs],
        games_asked=plan.games_asked,
        version=version("domino-env"),
    )
    ladder.fit(resamples)
    return ladder


def signed(value: float) -> str:
    return f"{round(value) + 0:+d}"  # (+ 0: -0 reads 0)


def report_lines(ladder: Ladder) -> list[str]:
    """The ratings and the pairings as lines a person reads."""
    width = max(len(r) for r in [*ladder.rungs, "rung"])
    lines = [f"{'rung':<{width}}  {'Elo':>6}  95% CI"]
    for rung, rating, (low, high) in zip(ladder.rungs, ladder.ratings, ladder.intervals, strict=True):
        interval = "(anchor)" if rung == ladder.anchor else f"[{signed(low)}, {signed(high)}]"
        lines.append(f"{rung:<{width}}  {signed(rating):>6}  {interval}")
    if ladder.gaps:
        lines.append("each rung over the next one down (Elo, 95% interval of the gap itself):")
        gap_width = max(len(f"{u} over {w}") for u, w, *_ in ladder.gaps)
        for upper, lower, gap, low, high in ladder.gaps:
            name = f"{upper} over {lower}"
            lines.append(f"  {name:<{gap_width}}  {signed(gap):>6}  [{signed(low)}, {signed(high)}]")
    pair_width = max(len(p.label) for p in ladder.pairings)
    alone = f", alone against {ladder.copies} of the second: even 1/{ladder.copies + 1}"
    whose = f"the first{alone if ladder.copies > 1 else ''}"
    lines.append(
        f"pairings (win rate of {whose}; 95% Wilson interval over deals; the rate the ratings give):"
    )
    misses = []
    for p in ladder.pairings:
        low, high = p.interval()
        model = ladder.model_rate(p)
        interval = f"[{low:.1%}, {high:.1%}]"
        lines.append(f"  {p.label:<{pair_width}}  {p.win_rate:6.1%}  {interval:<16}  model {model:6.1%}")
        if not low <= model <= high:
            misses.append(p.label)
    if misses:
        lines.append(
            f"note: the ratings' rate lies outside the games' interval for {', '.join(misses)}: "
            "one number a rung fits those pairings loosely"
        )
    sweeps = [p.label for p in ladder.pairings if p.wins in (0, p.games)]
    if sweeps:
        lines.append(
            f"note: {', '.join(sweeps)} went one way in every game: that gap is at least what it "
            "reads, held finite by the virtual game"
        )
    return lines


CSV_COLUMNS = ("rung", "elo", "ci_low", "ci_high", "games", "win_rate")


def write_ladder(ladder: Ladder, folder: Path) -> list[Path]:
    """``ladder.json``, ``ladder.csv`` and ``ladder.png`` in ``folder``."""
    paths = [folder / name for name in LADDER_FILES]
    paths[0].write_text(json.dumps(ladder.to_json(), indent=1) + "\n")
    columns = (*CSV_COLUMNS, *(f"vs {r}" for r in ladder.rungs))
    rows = []
    for rung, rating, (low, high) in zip(ladder.rungs, ladder.ratings, ladder.intervals, strict=True):
        mine = [p for p in ladder.pairings if rung in (p.first, p.second)]
        games = sum(p.games for p in mine)
        wins = sum(p.wins if p.first == rung else p.games - p.wins for p in mine)
        row: dict[str, Any] = {
            "rung": rung,
            "elo": round(rating, 1),
            "ci_low": round(low, 1),
            "ci_high": round(high, 1),
            "games": games,
            "win_rate": round(wins / max(games, 1), 4),
        }
        for other in ladder.rungs:
            rate = ladder.win_rate(rung, other)
            row[f"vs {other}"] = "" if math.isnan(rate) else round(rate, 4)
        rows.append(row)
    write_rows(paths[1], columns, rows)
    plot(paths[2], ladder)
    return paths


def plot(path: Path, ladder: Ladder) -> None:
    """Two panels: each rung's rating with its 95% interval (rungs in the ladder's order, the
    first at the top), and the win rate of each row's rung against each column's as a heatmap
    (white at the even share: 1/2, or 1/(1 + k) alone against k copies)."""
    from matplotlib import colormaps
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.figure import Figure

    n = len(ladder.rungs)
    fig = Figure(figsize=(10, 2.2 + 0.75 * max(n, 3)), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=[1.2, 1])
    ys = np.arange(n)
    ratings = np.array(ladder.ratings)
    low = np.array([i[0] for i in ladder.intervals])
    high = np.array([i[1] for i in ladder.intervals])
    errors = np.vstack([np.maximum(ratings - low, 0), np.maximum(high - ratings, 0)])
    left.errorbar(ratings, ys, xerr=errors, fmt="o", color="tab:blue", ecolor="tab:blue", capsize=4)
    for y, rating in zip(ys, ratings, strict=True):
        left.annotate(
            f"{signed(rating)}",
            (rating, y),
            textcoords="offset points",
            xytext=(0, 7),
            ha="center",
            fontsize="small",
        )
    left.set_yticks(ys, ladder.rungs)
    left.set_ylim(n - 0.5, -0.7)
    left.axvline(0, color="grey", lw=0.8)
    model = "Bradley-Terry" if ladder.copies == 1 else "Luce's choice"
    left.set_xlabel(f"Elo ({model}; {ladder.anchor} = 0), 95% bootstrap interval over deals")
    left.grid(axis="x", alpha=0.3)
    left.set_title("rating of each rung", fontsize="medium")
    matrix = np.array([[ladder.win_rate(r, c) for c in ladder.rungs] for r in ladder.rungs])
    cmap = colormaps["RdBu"].with_extremes(bad="0.9")  # the diagonal: no rung plays itself
    even = 1 / (1 + ladder.copies)
    norm = TwoSlopeNorm(vcenter=even, vmin=0, vmax=1)
    image = right.imshow(np.ma.masked_invalid(matrix), cmap=cmap, norm=norm)
    for i in range(n):
        for j in range(n):
            if not math.isnan(matrix[i, j]):
                ink = "white" if abs(norm(matrix[i, j]) - 0.5) > 0.3 else "black"
                right.text(j, i, f"{matrix[i, j]:.0%}", ha="center", va="center", color=ink, fontsize="small")
    right.set_xticks(range(n), [f"vs {r}" for r in ladder.rungs], rotation=30, ha="right")
    right.set_yticks(range(n), ladder.rungs)
    alone = f"alone\nagainst {ladder.copies} of the column (even {even:.0%})"
    right.set_title(
        f"win rate of the row {alone if ladder.copies > 1 else 'against the column'}", fontsize="medium"
    )
    fig.colorbar(image, ax=right, shrink=0.8)
    deals = ladder.games // ladder.pairings[0].per_deal
    fig.suptitle(
        f"ladder: {table_text(ladder.variant, ladder.options)}\n{ladder.games} games a pairing "
        f"({deals} duplicate deals), seed {ladder.seed}"
    )
    fig.savefig(path, dpi=100, metadata={"Title": "domino-env ladder", "Description": METHOD})


# --- a new agent against the fixed rungs --------------------------------------------------------


@dataclass
class RatingPlan:
    """A checked rating: the ladder, the agent and its opponents, the games, the file to write."""

    ladder: Ladder
    against: Path
    evaluation: Evaluation  # the agent first, then the rungs
    games: int
    path: Path
    workers: int

    def header(self) -> str:
        agent = self.evaluation.contestants[0].label
        return (
            f"rating {agent} against the {len(self.ladder.rungs)} rungs of {self.against}: "
            f"{self.evaluation.header(self.games, self.ladder.seed, duplicate=True)}"
        )


@dataclass
class Rated:
    """A new agent's rating against the fixed rungs, and its pairings with them."""

    agent: str
    rating: float
    interval: tuple[float, float]
    # in the ladder's order of rungs, the agent first; at 3-4 single seats each rung's second
    # pairing (the rung alone against copies of the agent) right after its first
    pairings: list[Pairing]
    rungs: list[str]  # the rung of each pairing (the agent may have a rung's name)
    first: list[bool]  # the agent is the first of each pairing (alone at 3-4 single seats)


def rating_file(label: str) -> str:
    return "rating-" + re.sub(r"[^\w.+-]+", "_", label, flags=re.ASCII) + ".json"


def prepare_rating(
    agent: str,
    against: str | Path,
    *,
    games: int | None = None,
    out: str | Path | None = None,
    workers: int | None = None,
    overwrite: bool = False,
) -> RatingPlan:
    """Check everything before any game: a ladder file, an agent that fits its table, rungs that
    are still the agents it rated, and an output file that is not there (unless ``overwrite``)."""
    if games is not None and games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    count = default_workers(workers)
    ladder = Ladder.load(against)
    contestants = [
        contestant(agent),
        *(contestant(s, rung) for s, rung in zip(ladder.specs, ladder.rungs, strict=True)),
    ]
    for c, was in zip(contestants[1:], ladder.identities, strict=True):
        if identity(c) != was:
            raise ValueError(
                f"rung {c.label} is not the agent the ladder rated ({was}): its checkpoint changed"
            )
    # the ladder's own table, exactly (not resolved again from a checkpoint's or the default config)
    check_fits(contestants, ladder.variant, ladder.options)
    evaluation = Evaluation(ladder.variant, ladder.options, contestants)
    env = evaluation.env()
    for c in contestants:  # sizes too, so a mismatch fails here and not in the middle of the games
        c.agent(env, 0)
    played = evaluation.games(games or ladder.games, True)
    folder = writable_folder(Path(out) if out is not None else Path(against).parent)
    path = folder / rating_file(evaluation.contestants[0].label)
    if path.exists() and not overwrite:
        raise ValueError(f"{path} already holds a rating; add --overwrite to replace it")
    return RatingPlan(ladder, Path(against), evaluation, played, path, count)


def play_rating(plan: RatingPlan, progress: bool = False, resamples: int = RESAMPLES) -> Rated:
    """Play the agent against every rung and fit its rating, the rungs' held fixed."""
    rungs, copies = plan.ladder.rungs, copies_of(plan.evaluation)
    both = copies > 1  # one seat against copies of the other: each order is its own pairing
    pairs = [pair for k in range(1, len(rungs) + 1) for pair in ([(0, k), (k, 0)] if both else [(0, k)])]
    results = play_pairings(
        plan.evaluation,
        pairs,
        games=plan.games,
        seed=plan.ladder.seed,
        workers=plan.workers,
        progress=progress,
    )
    pairings = [Pairing.of(r, copies) for r in results]
    first = [i == 0 for i, _ in pairs]  # (by the order played: the agent may have a rung's name)
    names = [rungs[max(pair) - 1] for pair in pairs]
    fixed = np.array([plan.ladder.rating(name) for name in names])
    sides = [p.side(is_first) for p, is_first in zip(pairings, first, strict=True)]
    wins = np.array([float(by_deal.sum()) for by_deal, _ in sides])
    games = np.array([p.games for p in pairings], dtype=float)
    rating = fit_one(fixed, wins, games, np.array([offset for _, offset in sides]))
    low, high = percentile_interval(bootstrap_one(fixed, pairings, first, resamples))
    agent = plan.evaluation.contestants[0].label
    return Rated(agent, rating, (float(low), float(high)), pairings, names, first)


def rating_lines(plan: RatingPlan, rated: Rated) -> list[str]:
    ladder = plan.ladder
    lines = []
    if ladder.copies == 1:  # "vs RUNG": the agent's win rate
        names = [f"vs {p.second}" for p in rated.pairings]
    else:  # at 3-4 single seats, the pairing and its first's win rate (alone against copies)
        names = [p.label for p in rated.pairings]
        lines.append(f"  (win rate of the first, alone against {ladder.copies}; even 1/{ladder.copies + 1})")
    width = max(len(name) for name in names)
    for p, name, rung in zip(rated.pairings, names, rated.rungs, strict=True):
        low, high = p.interval()
        fixed = ladder.rating(rung)
        lines.append(
            f"  {name:<{width}} ({signed(fixed):>5} Elo)  win rate {p.win_rate:6.1%}  [{low:.1%}, {high:.1%}]"
        )
    low, high = rated.interval
    lines.append(
        f"{rated.agent}: {signed(rated.rating)} Elo, 95% CI [{signed(low)}, {signed(high)}] "
        f"(on the ladder's scale, {ladder.anchor} = 0; the rungs fixed)"
    )
    return lines


def write_rating(plan: RatingPlan, rated: Rated) -> Path:
    ladder = plan.ladder
    data = {
        "format": "domino-env/ladder-rating",
        "format_version": FORMAT_VERSION,
        "version": version("domino-env"),
        "agent": rated.agent,
        "spec": plan.evaluation.contestants[0].spec,
        "identity": identity(plan.evaluation.contestants[0]),
        "against": str(plan.against),
        "variant": ladder.variant,
        "options": ladder.options,
        "table": table_text(ladder.variant, ladder.options),
        "seed": ladder.seed,
        "games": plan.games,
        "anchor": ladder.anchor,
        "scale": "Elo",
        "rating": rated.rating,
        "interval": list(rated.interval),
        "rungs": dict(zip(ladder.rungs, ladder.ratings, strict=True)),
        "resamples": RESAMPLES,
        "prior_games": PRIOR_GAMES,
        "method": RATE_METHOD,
        "pairings": [
            {**p.entry(), "rung": rung, "agent_first": first}
            for p, rung, first in zip(rated.pairings, rated.rungs, rated.first, strict=True)
        ],
        "report": rating_lines(plan, rated),
    }
    plan.path.write_text(json.dumps(data, indent=1) + "\n")
    return plan.path
