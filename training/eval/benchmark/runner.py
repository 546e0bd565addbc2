"""Who plays whom: each variant's plan of pairings (mirror matches and pairings already played
left out), the tasks behind them, and the processes that play them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import partial
from pathlib import Path

from tqdm import tqdm

import domino_env
from training.eval.benchmark import protocol
from training.eval.benchmark.store import Key, identity, key_of
from training.eval.evaluate import Contestant, contestant, play_pairing
from training.eval.pool import play_in_processes
from training.matches import Match, RecordFolder


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
    table = protocol.standard_table(task.variant)
    env = domino_env.raw_env(task.variant, **table)
    first = contestant(task.first, task.labels[0] or None)
    second = contestant(task.second, task.labels[1] or None)
    records = None if task.record is None else RecordFolder(Path(task.record), task.variant, table)
    played = play_pairing(
        env,
        first,
        second,
        games=task.games,
        seed=protocol.DEAL_SEED,
        on_game=on_game,
        duplicate=True,
        records=records,
    )
    return Match(**{f.name: getattr(played, f.name) for f in fields(Match)})


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


def run_tasks(
    tasks: list[Task],
    workers: int,
    progress: bool,
    on_done: Callable[[int, Match], object] | None = None,
) -> list[Match]:
    """Play every task (in ``workers`` processes when more than one), a progress bar over the
    games naming the pairing that last finished a game; ``on_done(task index, match)`` as each
    pairing is finished."""
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
                if on_done is not None:
                    on_done(i, played[-1])
            return played
        return play_in_processes(tasks, play_task, workers=workers, bar=bar, label=label, on_done=on_done)
