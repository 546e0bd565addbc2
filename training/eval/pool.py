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


def worker_start(ticks: Any, parent: int) -> None:
    """Set a worker up: one torch thread (the workers share the cores), the queue its games
    tick, and a watch that ends it when ``parent``, the main process, is gone."""
    import torch

    global _ticks
    torch.set_num_threads(1)
    _ticks = ticks
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True).start()


def _exit_when_orphaned(parent: int, every: float = 0.5) -> None:
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(1)


def _play_job(play: Callable[[Job, Callable[[], object]], Played], job: Job, k: int) -> Played:
    return play(job, partial(_ticks.put, k))


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
    finishes (so a caller can keep what is done). An error or an interrupt drops what is queued."""
    context = get_context("spawn")
    ticks = context.SimpleQueue()  # (its puts are written at once: all in the pipe before the job's result)
    pool = ProcessPoolExecutor(min(workers, len(jobs)), context, worker_start, (ticks, os.getpid()))
    try:
        futures = [pool.submit(_play_job, play, job, k) for k, job in enumerate(jobs)]
        index = {f: k for k, f in enumerate(futures)}
        pending: set[Future[Played]] = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
            _drain(ticks, bar, label)
            for future in sorted(done, key=index.__getitem__):
                if on_done is not None:
                    on_done(index[future], future.result())  # (a worker's error is raised here)
        _drain(ticks, bar, label)
        played = [f.result() for f in futures]  # a worker's error is raised here
    except BaseException:  # (an interrupt too: drop what is queued, keep nothing)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return played


def _drain(ticks: Any, bar: tqdm, label: Callable[[int], str]) -> None:
    last = None
    while not ticks.empty():
        last = ticks.get()
        bar.update(1)
    if last is not None:
        bar.set_description(label(last))
