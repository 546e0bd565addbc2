"""Pairings played in worker processes, with one progress bar over their games.

The benchmark and the ladder share this: each job (a pairing) is played whole by one worker, so
the numbers do not depend on how many workers there are, and a worker's games tick the bar of
the main process through a queue. A worker ends itself once the main process is gone (killed,
say), rather than play on for a pairing nobody will read.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from functools import partial
from multiprocessing import get_context
from typing import Any, TypeVar

from tqdm import tqdm

Job = TypeVar("Job")
Played = TypeVar("Played")

_ticks: Any = None  # in a worker: the queue its games tick, set by worker_start
_stop: Any = None  # in a worker: set by the main process when it gives up (an error, an interrupt)


class Stopped(Exception):
    """A worker's job ended early: the main process gave the run up."""


def worker_start(ticks: Any, stop: Any, parent: int) -> None:
    """Set a worker up: one torch thread (the workers share the cores), the queue its games
    tick, the main process's stop, and a watch that ends it when ``parent``, the main process,
    is gone."""
    import torch

    global _ticks, _stop
    torch.set_num_threads(1)
    _ticks, _stop = ticks, stop
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True).start()


def _exit_when_orphaned(parent: int, every: float = 0.5) -> None:
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(1)


def _tick(k: int) -> None:
    """A game of job ``k`` is over: tick the bar, or end the job if the run was given up."""
    if _stop.is_set():
        raise Stopped
    _ticks.put(k)


def _play_job(play: Callable[[Job, Callable[[], object]], Played], job: Job, k: int) -> Played:
    return play(job, partial(_tick, k))


def play_in_processes(
    jobs: Sequence[Job],
    play: Callable[[Job, Callable[[], object]], Played],
    *,
    workers: int,
    bar: tqdm,
    label: Callable[[int], str],
    on_done: Callable[[int, Played], object] | None = None,
) -> list[Played]:
    """``play(job, on_game)`` for every job in ``workers`` spawned processes (``play`` a module
    function, so that it pickles); ``bar`` ticks once a game, described by ``label(job index)``
    of the job that last finished one; ``on_done(job index, played)`` is called here as each job
    finishes (so a caller can keep what is done). An error or an interrupt drops what is queued
    and ends the jobs running at their next game."""
    context = get_context("spawn")
    ticks = context.SimpleQueue()  # (its puts are written at once: all in the pipe before the job's result)
    stop = context.Event()
    pool = ProcessPoolExecutor(min(workers, len(jobs)), context, worker_start, (ticks, stop, os.getpid()))
    try:
        futures = [pool.submit(_play_job, play, job, k) for k, job in enumerate(jobs)]
        index = {f: k for k, f in enumerate(futures)}
        pending: set[Future[Played]] = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
            _drain(ticks, bar, label)
            for future in sorted(done, key=index.__getitem__):
                played = future.result()  # (a worker's error is raised here, at once)
                if on_done is not None:
                    on_done(index[future], played)
        _drain(ticks, bar, label)
        results = [f.result() for f in futures]
    except BaseException:  # (an interrupt too: drop what is queued, end what runs at its next game)
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return results


def _drain(ticks: Any, bar: tqdm, label: Callable[[int], str]) -> None:
    last = None
    while not ticks.empty():
        last = ticks.get()
        bar.update(1)
    if last is not None:
        bar.set_description(label(last))
