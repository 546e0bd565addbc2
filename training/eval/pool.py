"""Pairings played in worker processes, with one progress bar over their games.

The benchmark and the ladder share this: each job (a pairing) is played whole by one worker, so
the numbers do not depend on how many workers there are, and a worker's games tick the bar of
the main process through a queue.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from functools import partial
from multiprocessing import Manager, get_context
from typing import Any, TypeVar

from tqdm import tqdm

Job = TypeVar("Job")
Played = TypeVar("Played")


def worker_start() -> None:
    import torch

    torch.set_num_threads(1)  # the workers share the cores: one thread each


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
    with Manager() as manager:
        ticks = manager.Queue()
        pool = ProcessPoolExecutor(min(workers, len(jobs)), get_context("spawn"), worker_start)
        try:
            futures = [pool.submit(play, job, partial(ticks.put, k)) for k, job in enumerate(jobs)]
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
    while True:
        try:
            last = ticks.get_nowait()
        except queue.Empty:
            break
        bar.update(1)
    if last is not None:
        bar.set_description(label(last))
