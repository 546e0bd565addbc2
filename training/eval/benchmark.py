"""``python -m training benchmark``: agents against a fixed ladder on every variant, under a published
protocol, with normalized scores and their aggregate.

    python -m training benchmark runs/all_fives-1 search:32 --variants all_fives classic --games 200

**Protocol v2** (``PROTOCOL``, written into every result): each variant at its first standard
table (``spec.benchmark_tables[0]``), whole matches, **duplicate deals** from the fixed deal seeds
``DEAL_SEED + d`` (d = 0, 1, ...: every pairing plays the same deals), each deal once per seating,
so ``--games`` is rounded up to whole deals. The first agent of a pairing is seeded ``DEAL_SEED``,
the second ``DEAL_SEED + 1``. Every variant is played (``PROTOCOL_VARIANTS``), at least
``PROTOCOL_GAMES`` (200) games a pairing. The ladder (``LADDER``) is ``random``, ``greedy``,
``search``, ``advanced``, ``expert`` (the search tiers of :mod:`domino_env.agents.expert`: no
trained network, so the ladder never moves when an agent is retrained) and the variant's shipped
agent (``agents/<variant>.pt``); the name ``shipped`` stands for that agent as a contestant too.
A checkpoint plays only the variant and table it was trained on (other variants are skipped for
it, and the output says so). v2 keeps v1's deals and seeds, so a pairing of v1's ladder
(random, greedy, search, shipped) is the same games under both; v1 scored against ``search``,
which a one-minute PPO run tops, and a v1 pairings file given as a reference is refused, naming
v2.

**Pairings played once.** Two agents that are the same agent (a name, or a checkpoint's content)
are not played: by symmetry a mirror match is won 1/sides of the time, and that is what it counts.
At a table of two sides (heads-up, partnerships) A against B is the same games as B against A
seen from the other side, so it is played once and read both ways. And a pairing already in the
**reference file** (``--reference``; by default :data:`REFERENCE`, this version's ladder played
under the protocol) is read from it rather than played again, when it was played with the same
table, games, agents (checkpoints by content) and protocol; ``--fresh`` plays everything. Every
run writes what it played and read to ``pairings.json``, which a later run can take as its
reference. ``tests/test_benchmark.py`` replays the start of every stored pairing, so the shipped
file stays what the code plays.

**Exploratory runs.** A run with fewer games a pairing (after rounding to whole deals) or only
some of the variants plays the protocol's deals, but is not the protocol: its IQM is over other
variants, or its intervals rest on a handful of deals. It says so wherever the protocol would be
named: ``exploratory (not protocol v2: <why>)`` on screen, in ``benchmark.md``, ``benchmark.png``
(its title and its PNG ``Description``), in the ``protocol`` column of ``benchmark.csv``, and in
``summary.json`` (``"protocol": null``, ``"exploratory": true``, ``"exploratory_reasons"``,
``"label"``).

**Win-rate intervals** are 95% Wilson score intervals over the deals (:func:`win_rate_interval`):
the deal is the independent unit (its games share its tiles), so n is the number of deals and
the proportion the deals' mean win share (a shared first place counts its share). A share lies in
[0, 1], so its variance is at most p(1 - p), which Wilson assumes: the interval is conservative,
and it never has zero width when every game went one way.

**Output folder.** A run refuses an ``out`` folder that already holds a benchmark's files
(``BENCHMARK_FILES``) before any game, unless ``overwrite``: then its files replace them.

**Normalized score** of agent ``a`` on a variant: ``(W(a) - W(random)) / (1/sides - W(random))``,
where ``W(x)`` is x's win rate against ``expert`` (``TOP``) and ``1/sides`` is ``expert``'s own
against itself (a mirror match: 1/2 at two sides, 1/4 at Cross's four single seats): 0 plays
like ``random``, 1 holds its own against ``expert``, above 1 beats it. The top rung alone sets
the scale because the weak rungs saturate it: an agent that beats ``random`` and ``greedy`` in
nearly every match gains nothing more there, so a mean over the whole ladder (v1's W) puts a
search-level agent near the top of a scale whose top it is far from. The other rungs' win rates
are still played and tabled. Per deal the same formula gives each deal's contribution, whose
mean is the score.

**Aggregate** (``summary.json``): the interquartile mean of an agent's scores over the variants
(``scipy.stats.trim_mean``, 25% cut each side), with a 95% stratified bootstrap interval
(``scipy.stats.bootstrap``, deals resampled within each variant); with ``--group`` the listed
agents are runs (training seeds) of one algorithm, the IQM is over every (run, variant) score and
the runs are resampled within each variant - the rliable paper's convention. An interval of zero
width (every resample gave the same IQM: too few distinct outcomes) is not an interval: it is
reported as nan (``NaN`` in ``summary.json``), as is one with nothing to resample.

The pairings to play are shared out to ``--workers`` processes (default: every core); each is
played whole by one process, so the numbers do not depend on how many there are.

**Game records** (``--record DIR``): every game played is also written there, one JSON file
each (see :class:`training.matches.RecordFolder`), by the process that plays it. Pairings read
from the reference and mirror matches are not played, so they have none (``--fresh`` plays
every pairing).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from functools import cache, partial
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats
from tqdm import tqdm

import domino_env
from training.eval.evaluate import Contestant, Result, check_fits, contestant, play_pairing
from training.eval.pool import play_in_processes
from training.eval.report import writable_folder, write_rows
from training.matches import Match, RecordFolder, seatings, whole_deals, wilson_interval
from training.model import checkpoint
from training.model.names import parse_guided_name

PROTOCOL = "v2"
PROTOCOL_NAME = f"protocol {PROTOCOL}"
DEAL_SEED = 1_000_000  # the protocol's deals: seeds DEAL_SEED, DEAL_SEED + 1, ... (v1's too)
PROTOCOL_GAMES = 200  # the protocol's games a pairing, at least: fewer is an exploratory run
PROTOCOL_VARIANTS = tuple(domino_env.SPECS)  # the protocol plays every variant: fewer is exploratory
LADDER = ("random", "greedy", "search", "advanced", "expert")  # then the variant's shipped agent
BOTTOM, TOP = "random", "expert"  # the scores' 0 and 1: W = the win rate against TOP
SHIPPED = "shipped"  # a contestant name: the variant's agents/<variant>.pt
REFERENCE_PLAYERS = (*LADDER, SHIPPED)  # the ladder against itself: the reference file's pairings
REFERENCE = Path(__file__).with_name("benchmark_reference_v2.json")
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
    "ms_per_decision",
    "source",
    "protocol",
    "version",
)
# What a benchmark writes in its ``out`` folder: an earlier benchmark's, which --overwrite replaces.
BENCHMARK_FILES = ("benchmark.csv", "benchmark.md", "summary.json", "benchmark.png", "pairings.json")


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


def check_out(out: str | Path, overwrite: bool) -> None:
    """Refuse (ValueError) an ``out`` folder that holds an earlier benchmark's files, unless
    ``overwrite``. Nothing is touched here: a run that goes on writes over them at its end."""
    folder = Path(out)
    earlier = [name for name in BENCHMARK_FILES if (folder / name).exists()] if folder.is_dir() else []
    if earlier and not overwrite:
        raise ValueError(
            f"{folder} already holds a benchmark ({', '.join(earlier)}); add --overwrite to replace it"
        )


def two_places(value: float, sign: bool = False) -> str:
    """``value`` to two places, never ``-0.00`` (a score that rounds to zero is zero)."""
    return f"{round(value, 2) + 0.0:{'+' if sign else ''}.2f}"


def win_rate_interval(match: Match) -> tuple[float, float]:
    """95% Wilson score interval of a pairing's win rate over its deals (n: the number of deals,
    the proportion: their mean win share; see the module docstring). Never zero width: all wins
    over 10 games (5 deals of two seatings) gives [56.6%, 100%]."""
    shares = match.deal_shares()
    if not shares:
        return 0.0, 1.0
    return wilson_interval(sum(shares), len(shares))


@cache
def _digest(path: str) -> str:
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()


def identity(c: Contestant) -> str:
    """What a pairing is filed under: a built-in agent's name, a checkpoint's content hash (a
    policy-guided search: its worlds and its checkpoint's hash)."""
    if c.config is None:
        return c.spec
    guided = parse_guided_name(c.spec)
    if guided is None:
        return _digest(c.spec)
    worlds, path = guided
    return f"search:{worlds}:{_digest(str(checkpoint.resolve(Path(path))))}"


# --- pairings: what is played, stored and read ------------------------------------------------


@dataclass(frozen=True)
class Task:
    """A pairing to play: ``first`` (a spec ``contestant`` takes) against ``second``."""

    variant: str
    first: str
    second: str
    games: int
    labels: tuple[str, str] = field(default=("", ""), compare=False)  # what the progress bar says
    record: str | None = field(default=None, compare=False)  # a folder to write the games to


def play_task(task: Task, on_game: Callable[[], object] | None = None) -> Match:
    """Play one pairing under the protocol (in a worker process, or here), writing its games to
    ``task.record`` when it names a folder (the agents named by ``task.labels``)."""
    table = standard_table(task.variant)
    env = domino_env.raw_env(task.variant, **table)
    first = contestant(task.first, task.labels[0] or None)
    second = contestant(task.second, task.labels[1] or None)
    records = None if task.record is None else RecordFolder(Path(task.record), task.variant, table)
    played = play_pairing(env, first, second, task.games, DEAL_SEED, on_game, duplicate=True, records=records)
    return Match(**{f.name: getattr(played, f.name) for f in fields(Match)})


def swapped(match: Match, lower_score_wins: bool) -> Match:
    """The same games of a two-sided table from the second agent's side."""
    sign = -1.0 if lower_score_wins else 1.0
    return Match(
        games=match.games,
        wins=match.games - match.wins,
        mean_reward=-match.mean_reward,
        mean_rounds=match.mean_rounds,
        steps=match.steps,
        mean_score=match.mean_score - sign * match.margin,
        shares=[1.0 - s for s in match.shares],
        margins=[-m for m in match.margins],
        per_deal=match.per_deal,
        decisions=match.decisions[::-1],
        seconds=match.seconds[::-1],
    )


class OldProtocol(ValueError):
    """A pairings file of another protocol than this one."""


Key = tuple[str, str, str, str, int]  # variant, table, first identity, second identity, games


def key_of(variant: str, first: str, second: str, games: int) -> Key:
    return variant, json.dumps(standard_table(variant), sort_keys=True), first, second, games


class Store:
    """Pairings already played under the protocol (a reference file, and this run's games)."""

    def __init__(self) -> None:
        self.matches: dict[Key, Match] = {}
        self.read: set[Key] = set()  # the keys that came from the file

    @classmethod
    def load(cls, path: str | Path | None) -> Store:
        """Read a ``pairings.json``; one from another deal list gives nothing. A file that is
        not one, or one of another protocol (v1's: its ladder lacks the search tiers), raises
        ValueError saying so."""
        store = cls()
        if path is None:
            return store
        try:
            data = json.loads(Path(path).read_text())
            if data["protocol"] != PROTOCOL:
                raise OldProtocol(
                    f"{path} holds protocol {data['protocol']} pairings; this benchmark is "
                    f"{PROTOCOL_NAME} (its ladder: {', '.join(LADDER)}, scored against {TOP}): "
                    f"give a {PROTOCOL} pairings.json, or --fresh to play every pairing"
                )
            if data["deal_seed"] != DEAL_SEED:
                return store
            for entry in data["pairings"]:
                k = (entry["variant"], entry["table"], entry["first"], entry["second"], int(entry["games"]))
                store.matches[k] = Match(**entry["match"])
        except OldProtocol:
            raise
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ValueError(
                f"{path} is not a benchmark pairings file (pairings.json): {type(err).__name__}: {err}"
            ) from err
        store.read = set(store.matches)
        return store

    def save(self, path: Path, keys: set[Key]) -> None:
        entries = [
            {"variant": k[0], "table": k[1], "first": k[2], "second": k[3], "games": k[4], "match": vars(m)}
            for k, m in sorted(self.matches.items())
            if k in keys
        ]
        data = {
            "protocol": PROTOCOL,
            "deal_seed": DEAL_SEED,
            "version": version("domino-env"),
            "pairings": entries,
        }
        path.write_text(json.dumps(data, separators=(",", ":")) + "\n")


# --- one variant's plan and results -----------------------------------------------------------


@dataclass
class VariantPlan:
    """Who plays whom on one variant, and the pairings (by key) that answer it."""

    variant: str
    roster: dict[str, Contestant]  # label -> contestant
    players: list[str]
    opponents: list[str]
    games: int  # per pairing: whole deals
    per_deal: int
    sides: int
    lower_score_wins: bool
    pairs: dict[tuple[str, str], tuple[Key, bool] | None] = field(default_factory=dict)
    # (player, opponent) -> the stored key and whether to read it swapped; None: a mirror match

    def plan_pairs(self) -> dict[Key, Task]:
        """Fill ``pairs``; return the tasks behind them (what the store may lack)."""
        tasks: dict[Key, Task] = {}
        for p in self.players:
            for o in self.opponents:
                a, b = identity(self.roster[p]), identity(self.roster[o])
                if a == b:
                    self.pairs[(p, o)] = None
                    continue
                flip = self.sides == 2 and a > b  # two sides: one orientation, whoever asks
                first, second = (o, p) if flip else (p, o)
                k = key_of(self.variant, min(a, b) if flip else a, max(a, b) if flip else b, self.games)
                self.pairs[(p, o)] = (k, flip)
                specs = self.roster[first].spec, self.roster[second].spec
                tasks[k] = Task(self.variant, *specs, self.games, (first, second))
        return tasks


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


def normalized(top_shares: dict[str, list[float]]) -> dict[str, list[float]]:
    """Each player's per-deal normalized scores (see the module docstring) from its per-deal
    win shares against ``TOP`` (``TOP``'s own: its mirror match's 1/sides); nan where ``TOP``
    and ``random`` do equally well against it (the scale has no width)."""
    per_deal = {p: np.asarray(shares, dtype=float) for p, shares in top_shares.items()}
    low, high = float(per_deal[BOTTOM].mean()), float(per_deal[TOP].mean())
    width = high - low
    return {p: ((values - low) / width).tolist() if width else [math.nan] for p, values in per_deal.items()}


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
            if o == TOP:
                top_shares[p] = [1.0 / plan.sides] * deals
            continue
        k, flip = pair
        match = store.matches[k]
        match = swapped(match, plan.lower_score_wins) if flip else match
        results[(p, o)] = Result(**vars(match), agent=p, opponent=o)
        sources[(p, o)] = source if k in store.read else "played"
        if o == TOP:
            top_shares[p] = match.deal_shares()
    return VariantResults(plan.variant, results, normalized(top_shares), sources, mirrors)


# --- running ----------------------------------------------------------------------------------


def run_tasks(tasks: list[Task], workers: int, progress: bool) -> list[Match]:
    """Play every task (in ``workers`` processes when more than one), a progress bar over the
    games naming the pairing that last finished a game."""
    total = sum(t.games for t in tasks)
    with tqdm(total=total, unit="game", disable=not progress or not tasks) as bar:

        def label(i: int) -> str:
            t = tasks[i]
            return f"{t.variant}: {t.labels[0]} vs {t.labels[1]}"

        if workers <= 1 or len(tasks) <= 1:
            played = []
            for i, task in enumerate(tasks):
                bar.set_description(label(i))
                played.append(play_task(task, partial(bar.update, 1)))
            return played
        return play_in_processes(tasks, play_task, workers, bar, label)


def benchmark(
    agents: list[str],
    variants: list[str] | None = None,
    games: int = 200,
    out: str | Path = "runs/benchmark",
    group: str | None = None,
    agents_dir: str | Path = "agents",
    progress: bool = True,
    workers: int | None = None,
    reference: str | Path | None = REFERENCE,
    record: str | Path | None = None,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Play the protocol, write ``OUT/benchmark.csv``, ``benchmark.md``, ``summary.json``,
    ``benchmark.png`` and ``pairings.json`` (only once every game is played: an interrupted run
    writes nothing), and return the summary. ``reference`` None plays every pairing; ``record``:
    a folder where every game played is written as a game record. Fewer games or variants than
    the protocol's make an exploratory run, labelled so (:func:`deviations`). Bad input (an
    unknown variant or agent, games below 1, an unwritable ``out`` or ``record``, an ``out`` that
    holds a benchmark without ``overwrite``, a broken reference) raises ValueError before any
    game, with nothing touched."""
    variants = list(variants or domino_env.SPECS)
    for name in variants:
        domino_env.spec(name)  # an unknown variant: ValueError listing the known ones
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    workers = len(os.sched_getaffinity(0)) if workers is None else workers
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    given = {a: contestant(a) for a in dict.fromkeys(agents) if a != SHIPPED}  # unknown agents fail here
    store = Store.load(reference)
    check_out(out, overwrite)
    folder = writable_folder(out)
    records = None if record is None else str(writable_folder(record))
    skipped: dict[str, list[str]] = {a: [] for a in [*given, *([SHIPPED] if SHIPPED in agents else [])]}
    plans = []
    for variant in variants:
        roster = {name: contestant(name) for name in (*LADDER, BOTTOM, TOP)}
        shipped = shipped_path(agents_dir, variant)
        if shipped.exists() and fits(ship := contestant(str(shipped), SHIPPED), variant):
            roster[SHIPPED] = ship
        elif SHIPPED in agents:
            skipped[SHIPPED].append(variant)
        for name, c in given.items():
            if fits(c, variant):
                roster.setdefault(name, c)
            else:
                skipped[name].append(variant)
        players = [BOTTOM, TOP, *(a for a in dict.fromkeys(agents) if a in roster and a not in (BOTTOM, TOP))]
        opponents = [*LADDER, *([SHIPPED] if SHIPPED in roster else [])]
        rules = domino_env.raw_env(variant, **standard_table(variant)).rules
        k = seatings(rules.num_players, rules.teams)
        sides = 2 if rules.teams else rules.num_players
        per_pairing = whole_deals(games, rules)
        plans.append(
            VariantPlan(variant, roster, players, opponents, per_pairing, k, sides, rules.lower_score_wins)
        )
    tasks: dict[Key, Task] = {}
    for plan in plans:
        tasks.update(plan.plan_pairs())
    missing = [key for key in tasks if key not in store.matches]
    played = run_tasks([replace(tasks[key], record=records) for key in missing], workers, progress)
    store.matches.update(zip(missing, played, strict=True))
    source = Path(reference).name if reference is not None else ""
    by_variant = [collect(plan, store, source) for plan in plans]
    fewest = min(plan.games for plan in plans)
    summary = summarize(by_variant, agents, group, games, deviations(variants, fewest))
    summary["games_per_pairing"] = fewest  # (the fewest, after rounding)
    summary["skipped"] = {a: v for a, v in skipped.items() if v}
    summary["pairings"] = {"played": len(missing), "read": len(tasks) - len(missing), "reference": source}
    write_results(folder, by_variant, summary)
    store.save(folder / "pairings.json", set(tasks))
    return summary


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
    group: str | None,
    games: int,
    reasons: list[str] | None = None,
) -> dict:
    """Scores per variant and their IQM, for each agent (or for the group and the references),
    and each agent's decision time per variant; ``reasons``: why the run is exploratory, not the
    protocol (:func:`deviations`; none: it is the protocol)."""
    reasons = list(reasons or [])
    labels = [*(a for a in (BOTTOM, TOP) if a not in agents), *dict.fromkeys(agents)]
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
        runs = [a for a in agents if a not in (BOTTOM, TOP)]
        per_variant = [[v.score(a) for a in runs if a in v.deal_scores] for v in by_variant]
        centre, low, high = iqm_with_interval(per_variant, pooled=True)
        entries[group] = {"runs": runs, "iqm": round(centre, 6), "iqm_ci": [round(low, 6), round(high, 6)]}
    return {
        "protocol": None if reasons else PROTOCOL,
        "exploratory": bool(reasons),
        "exploratory_reasons": reasons,
        "label": protocol_label(reasons),
        "version": version("domino-env"),
        "deal_seed": DEAL_SEED,
        "games_asked": games,
        "ladder": [*LADDER, SHIPPED],
        "score": f"(W(agent) - W({BOTTOM})) / (1/sides - W({BOTTOM})), W = the win rate against {TOP}",
        "win_rate_interval": "95% Wilson score interval, n = the deals, p = their mean win share",
        "iqm_interval": "95% stratified bootstrap (percentile); NaN where it would have zero width",
        "agents": entries,
    }


def write_results(folder: Path, by_variant: list[VariantResults], summary: dict[str, Any]) -> None:
    rows = []
    for v in by_variant:
        for (player, opponent), r in v.results.items():
            row = {**r.row(), "agent": player, "opponent": opponent, "variant": v.variant}
            row["ci_low"], row["ci_high"] = win_rate_interval(r)
            row.update(
                score=v.score(player),
                ms_per_decision=r.ms_per_decision(),
                source=v.sources[(player, opponent)],
                protocol=summary["protocol"] or summary["label"],
                version=summary["version"],
            )
            rows.append({column: row[column] for column in COLUMNS})
    write_rows(folder / "benchmark.csv", COLUMNS, rows)
    (folder / "benchmark.md").write_text(markdown(by_variant, summary))
    (folder / "summary.json").write_text(json.dumps(summary, indent=1, allow_nan=True) + "\n")
    plot(folder / "benchmark.png", by_variant, summary)


def markdown(by_variant: list[VariantResults], summary: dict[str, Any]) -> str:
    """The results as two tables a person reads: scores per variant, then each pairing's win rate."""
    labels = [a for a in summary["agents"] if "scores" in summary["agents"][a]]
    ladder = summary["ladder"]
    exploratory = summary["exploratory"]
    lines = [f"**{summary['label']}**", ""] if exploratory else []
    named = "" if exploratory else f", {summary['label']}"
    lines += [
        f"Normalized scores{named} (0: plays like {BOTTOM}, 1: holds its own against {TOP}):",
        "",
        "| variant | " + " | ".join(labels) + " |",
        "|---" * (len(labels) + 1) + "|",
    ]
    for v in by_variant:  # (rounded first: a score of -0.0001 reads 0.00, not -0.00)
        cells = [two_places(v.score(a)) if a in v.deal_scores else "" for a in labels]
        lines.append(f"| {v.variant} | " + " | ".join(cells) + " |")
    iqms = [two_places(summary["agents"][a]["iqm"]) for a in labels]
    lines += ["| **IQM** | " + " | ".join(iqms) + " |", ""]
    lines += [
        "Win rate of the row's agent against each opponent (95% Wilson score interval over the deals:",
        "n = the deals, p = their mean win share; a mirror match counts as 1/sides), and its time per",
        "decision:",
        "",
        "| variant | agent | " + " | ".join(f"vs {o}" for o in ladder) + " | ms/decision |",
        "|---" * (len(ladder) + 3) + "|",
    ]
    for v in by_variant:
        for a in labels:
            if a not in v.deal_scores:
                continue
            cells = []
            for o in ladder:
                r = v.results.get((a, o))
                if r is None:
                    cells.append("mirror" if (a, o) in v.mirrors else "")
                else:
                    low, high = win_rate_interval(r)
                    cells.append(f"{r.win_rate:.1%} [{low:.1%}, {high:.1%}]")
            lines.append(f"| {v.variant} | {a} | " + " | ".join(cells) + f" | {v.ms_per_decision(a):.2f} |")
    return "\n".join(lines) + "\n"


def plot(path: Path, by_variant: list[VariantResults], summary: dict[str, Any]) -> None:
    """One panel: each agent's normalized score per variant (95% t-interval over deals), the
    references at 0 and 1; titled with the protocol, or as exploratory with the reasons (and
    the label in the PNG's ``Description``)."""
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
        ax.barh(ys, xs, height=height, xerr=errors, capsize=2, label=f"{label} (IQM {two_places(iqm)})")
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(by_variant))], [v.variant for v in by_variant])
    ax.axvline(0, color="grey", lw=0.8)
    ax.axvline(1, color="grey", lw=0.8, ls="--")
    ax.set_xlabel(f"normalized score (0: plays like {BOTTOM}, 1: holds its own against {TOP})")
    if summary["exploratory"]:  # the reasons on a second line, smaller, wrapped to the figure
        reasons = textwrap.fill(
            "not " + PROTOCOL_NAME + ": " + "; ".join(summary["exploratory_reasons"]), 110
        )
        fig.suptitle("domino-env benchmark, exploratory", color="firebrick")
        ax.set_title(reasons, fontsize="small", color="firebrick")
    else:
        ax.set_title(f"domino-env benchmark, {summary['label']}")
    ax.legend(loc="best", fontsize="small")
    fig.savefig(path, dpi=100, metadata={"Title": "domino-env benchmark", "Description": summary["label"]})
