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
it, and the output says so; one that plays none of the chosen variants is refused). A variant
with no shipped agent in ``--agents-dir`` (or one of another table) is played without that rung,
and a note says so before any game. v2 keeps v1's deals and seeds, so a pairing of v1's ladder
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
reference. ``tests/release/test_benchmark_reference.py`` replays the start of every stored
pairing, so the shipped file stays what the code plays.

**Interrupted runs.** Until a run is whole, ``OUT/pairings.partial.json`` holds every pairing
it has finished (and those it read), rewritten as each one ends: a pairings file like any other.
``resume`` (``--resume``) reads it as well as the reference and plays only the rest, so a run cut
off after hours loses only the pairings it was playing; a new run into that folder without
``--resume`` or ``--overwrite`` is refused. The whole run's files replace it at the end.

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
(``scipy.stats.trim_mean``, 25% cut each side), with a 95% percentile bootstrap interval (the
deals resampled within each variant, alike for every agent, the scale's zero recomputed from
each resample); with ``--group`` the listed agents are runs (training seeds) of one algorithm,
the IQM is over every (run, variant) score, and ``iqm_ci`` resamples the runs within each
variant (``scipy.stats.bootstrap``) - the rliable paper's convention: the seeds' spread on the
protocol's deals, which every run shares. ``iqm_ci_with_deals`` redraws the deals as well, so it
also holds what another set of deals would change, erring wide (runs and deals drawn
independently count a run's own deal noise more than once; 1.6 to 2.5 times as wide on the
three full-table groups measured). An interval of zero
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

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import domino_env
from training.eval.benchmark import protocol
from training.eval.benchmark.output import (
    BENCHMARK_FILES,
    COLUMNS,
    PARTIAL,
    check_out,
    markdown,
    plot,
    two_places,
    write_results,
)
from training.eval.benchmark.protocol import (
    BOTTOM,
    DEAL_SEED,
    LADDER,
    PROTOCOL,
    PROTOCOL_GAMES,
    PROTOCOL_NAME,
    PROTOCOL_VARIANTS,
    REFERENCE_PLAYERS,
    SHIPPED,
    TOP,
    deviations,
    fits,
    normalized,
    protocol_label,
    shipped_path,
    standard_table,
)
from training.eval.benchmark.runner import Task, VariantPlan, play_task, run_tasks
from training.eval.benchmark.scores import (
    VariantResults,
    collect,
    iqm_with_interval,
    summarize,
    win_rate_interval,
)
from training.eval.benchmark.store import REFERENCE, Key, OldProtocol, Store, identity, key_of, swapped
from training.eval.evaluate import Contestant, contestant
from training.eval.report import table_text, writable_folder
from training.matches import Match, seatings, whole_deals

__all__ = [  # the entry point, and what the rest of training and the tests use
    "BENCHMARK_FILES",
    "BOTTOM",
    "COLUMNS",
    "DEAL_SEED",
    "LADDER",
    "PARTIAL",
    "PROTOCOL",
    "PROTOCOL_GAMES",
    "PROTOCOL_NAME",
    "PROTOCOL_VARIANTS",
    "REFERENCE",
    "REFERENCE_PLAYERS",
    "SHIPPED",
    "TOP",
    "Key",
    "OldProtocol",
    "Store",
    "Task",
    "VariantPlan",
    "VariantResults",
    "benchmark",
    "check_out",
    "check_plays_some",
    "collect",
    "contestant",
    "deviations",
    "fits",
    "identity",
    "iqm_with_interval",
    "key_of",
    "markdown",
    "normalized",
    "play_task",
    "plot",
    "protocol_label",
    "run_tasks",
    "shipped_path",
    "standard_table",
    "summarize",
    "swapped",
    "two_places",
    "win_rate_interval",
    "write_results",
]


def benchmark(
    agents: list[str],
    variants: list[str] | None = None,
    *,
    games: int = 200,
    out: str | Path = "runs/benchmark",
    group: str | None = None,
    agents_dir: str | Path = "agents",
    progress: bool = True,
    workers: int | None = None,
    reference: str | Path | None = REFERENCE,
    record: str | Path | None = None,
    overwrite: bool = False,
    resume: bool = False,
    say: Callable[[str], object] | None = None,
) -> dict[str, Any]:
    """Play the protocol, write ``OUT/benchmark.csv``, ``benchmark.md``, ``summary.json``,
    ``benchmark.png`` and ``pairings.json`` once every game is played, and return the summary.
    Until then ``OUT/pairings.partial.json`` holds every pairing finished so far (rewritten as
    each one ends, with those read from the reference), so an interrupted run loses at most the
    pairings it was playing: ``resume`` reads them too and plays the rest. ``reference`` None
    plays every pairing; ``record``: a folder where every game played is written as a game
    record. Fewer games or variants than the protocol's make an exploratory run, labelled so
    (:func:`deviations`). Bad input (an unknown variant or agent, an agent that plays none of
    ``variants``, games below 1, an unwritable ``out`` or ``record``, an ``out`` that holds a
    benchmark without ``overwrite`` or ``resume``, both of those, a broken reference or partial
    file) raises ValueError before any game, with nothing touched. A variant without a shipped
    agent in ``agents_dir`` (or one of another table) is played without that rung: ``say`` (a
    function taking a line) is told so before any game, and the summary's ``"no_shipped"``
    holds why, by variant."""
    ladder, bottom, top = protocol.LADDER, protocol.BOTTOM, protocol.TOP  # (as the protocol has them now)
    variants = list(variants or domino_env.SPECS)
    for name in variants:
        domino_env.spec(name)  # an unknown variant: ValueError listing the known ones
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    workers = len(os.sched_getaffinity(0)) if workers is None else workers
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if overwrite and resume:
        raise ValueError(
            "--resume and --overwrite go one or the other: --resume goes on with an interrupted run "
            "in --out, --overwrite replaces what is there"
        )
    if group and all(a in (bottom, top) for a in agents):  # (its IQM would be over no runs: nan)
        raise ValueError(
            f"--group {group} groups runs (checkpoints, run folders, agents): give some besides "
            f"{bottom} and {top}, the scores' ends, which no group holds"
        )
    given = {a: contestant(a) for a in dict.fromkeys(agents) if a != SHIPPED}  # unknown agents fail here
    if SHIPPED in agents and not Path(agents_dir).is_dir():  # (else every one quietly left out)
        raise ValueError(
            f"the agents folder {agents_dir} (--agents-dir) is not a folder; the shipped ones are in agents/"
        )
    for name, c in given.items():  # (else it plays nothing and its IQM reads nan)
        check_plays_some(name, c, variants)
    ships = {variant: shipped_agent(agents_dir, variant) for variant in variants}
    no_shipped = {variant: why for variant, (_, why) in ships.items() if why}
    if SHIPPED in agents and len(no_shipped) == len(variants):
        raise ValueError(
            f"shipped (an agent given) plays none of the chosen variants ({', '.join(variants)}): "
            f"{'; '.join(no_shipped.values())}; leave shipped out or give --agents-dir the folder "
            "that holds their agents (agents/)"
        )
    store = Store.load(reference)
    check_out(out, overwrite, resume)
    for line in shipped_notes(agents_dir, no_shipped, variants):  # (once nothing is refused)
        if say is not None:
            say(line)
    partial = Path(out) / PARTIAL
    earlier = Store.load(partial if resume and partial.exists() else None)
    folder = writable_folder(out)
    records = None if record is None else str(writable_folder(record))
    skipped: dict[str, list[str]] = {a: [] for a in [*given, *([SHIPPED] if SHIPPED in agents else [])]}
    plans = []
    for variant in variants:
        roster = {name: contestant(name) for name in (*ladder, bottom, top)}
        ship, _ = ships[variant]
        if ship is not None:
            roster[SHIPPED] = ship
        elif SHIPPED in agents:
            skipped[SHIPPED].append(variant)
        for name, c in given.items():
            if fits(c, variant):
                roster.setdefault(name, c)
            else:
                skipped[name].append(variant)
        players = [bottom, top, *(a for a in dict.fromkeys(agents) if a in roster and a not in (bottom, top))]
        opponents = [*ladder, *([SHIPPED] if SHIPPED in roster else [])]
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
    resumed = [key for key in tasks if key in earlier.matches and key not in store.matches]
    store.matches.update((key, earlier.matches[key]) for key in resumed)
    missing = [key for key in tasks if key not in store.matches]
    finished = set(tasks) & set(store.matches)

    def keep(i: int, match: Match) -> None:
        store.matches[missing[i]] = match
        finished.add(missing[i])
        store.save(partial, finished)

    run_tasks([replace(tasks[key], record=records) for key in missing], workers, progress, keep)
    source = Path(reference).name if reference is not None else ""
    by_variant = [collect(plan, store, source) for plan in plans]
    fewest = min(plan.games for plan in plans)
    summary = summarize(by_variant, agents, group=group, games=games, reasons=deviations(variants, fewest))
    summary["games_per_pairing"] = fewest  # (the fewest, after rounding)
    summary["skipped"] = {a: v for a, v in skipped.items() if v}
    summary["no_shipped"] = no_shipped  # variant -> why its ladder has no shipped rung
    summary["pairings"] = {
        "played": len(missing),
        "resumed": len(resumed),
        "read": len(tasks) - len(missing) - len(resumed),
        "reference": source,
    }
    write_results(folder, by_variant, summary)
    store.save(folder / "pairings.json", set(tasks))
    partial.unlink(missing_ok=True)
    return summary


def check_plays_some(name: str, c: Contestant, variants: list[str]) -> None:
    """Refuse (ValueError) an agent that fits none of ``variants`` (a checkpoint plays only the
    table it was trained on), naming the variants it fits."""
    if any(fits(c, variant) for variant in variants):
        return
    own = [variant for variant in domino_env.SPECS if fits(c, variant)]
    assert c.config is not None  # (a built-in agent plays every variant)
    trained = c.config.env
    where = (
        f"it plays only {', '.join(own)} (add --variants {' '.join(own)})"
        if own
        else f"it was trained on {table_text(trained.variant, dict(trained.options))}, "
        "no variant's standard table, which the benchmark plays"
    )
    raise ValueError(
        f"{name} plays none of the chosen variants ({', '.join(variants)}): {where}; a checkpoint "
        "plays only the table it was trained on"
    )


def shipped_agent(agents_dir: str | Path, variant: str) -> tuple[Contestant | None, str]:
    """The variant's shipped agent (``agents_dir/<variant>.pt``) and an empty string, or None and
    why it has none: no such file, or a checkpoint of another table."""
    path = shipped_path(agents_dir, variant)
    if not path.is_file():
        return None, f"no {path.name} in {agents_dir} (--agents-dir)"
    ship = contestant(str(path), SHIPPED)
    if not fits(ship, variant):
        assert ship.config is not None
        trained = ship.config.env
        table = table_text(trained.variant, dict(trained.options))
        return None, f"{path} was trained on {table}, not {variant}'s standard table"
    return ship, ""


def shipped_notes(agents_dir: str | Path, no_shipped: dict[str, str], variants: list[str]) -> list[str]:
    """A line for each variant whose ladder lacks the shipped rung, saying why (one line for them
    all when ``agents_dir`` is not a folder)."""
    rung = "the shipped rung is left out on"
    if no_shipped and not Path(agents_dir).is_dir():
        return [
            f"note: no shipped agent: the agents folder {agents_dir} (--agents-dir) is not a folder; "
            f"{rung} {', '.join(no_shipped)}"
        ]
    return [
        f"note: no shipped {variant} agent: {no_shipped[variant]}; {rung} {variant}"
        for variant in variants
        if variant in no_shipped
    ]
