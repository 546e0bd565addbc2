"""``training.eval.pool``: jobs played in worker processes give their results in order with a
tick per game, a worker's error reaches the main process, and workers do not outlive it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tqdm import tqdm

from tests.support.helpers import all_end, assert_killing_ends_them
from training.eval.pool import play_in_processes

ROOT = Path(__file__).resolve().parents[2]


def ten_games(job: int, on_game: Callable[[], object]) -> int:
    for _ in range(10):
        on_game()
    return job * job


def fails_on_two(job: int, on_game: Callable[[], object]) -> int:
    if job == 2:
        raise ValueError("job 2 failed")
    return job


def endless(folder: str, on_game: Callable[[], object]) -> None:
    """Note this worker's pid, then play 'games' until stopped."""
    Path(folder, str(os.getpid())).touch()
    while True:
        time.sleep(0.05)
        on_game()


def bar(total: int) -> tqdm:
    return tqdm(total=total, file=open(os.devnull, "w"))


def test_results_in_order_with_every_game_ticked() -> None:
    done: list[tuple[int, int]] = []
    with bar(50) as progress:
        played = play_in_processes(
            list(range(5)),
            ten_games,
            workers=2,
            bar=progress,
            label=str,
            on_done=lambda k, p: done.append((k, p)),
        )
        assert progress.n == 50  # every tick is in before the result it precedes
    assert played == [0, 1, 4, 9, 16]
    assert sorted(done) == [(k, k * k) for k in range(5)]


def test_a_workers_error_is_raised_in_the_main_process() -> None:
    with bar(0) as progress, pytest.raises(ValueError, match="job 2 failed"):
        play_in_processes([1, 2, 3], fails_on_two, workers=2, bar=progress, label=str)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_workers_end_when_the_main_process_is_killed(tmp_path: Path) -> None:
    script = (
        "from tqdm import tqdm\n"
        "from tests.training.test_pool import endless\n"
        "from training.eval.pool import play_in_processes\n"
        "if __name__ == '__main__':\n"
        f"    jobs = [{str(tmp_path)!r}] * 3\n"
        "    play_in_processes(jobs, endless, workers=2, bar=tqdm(disable=True), label=str)\n"
    )
    main = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while len(list(tmp_path.iterdir())) < 2:
            assert main.poll() is None and time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.1)
        assert_killing_ends_them(main, [int(p.name) for p in tmp_path.iterdir()])
    finally:
        main.kill()


def fails_soon(folder: str, on_game: Callable[[], object]) -> None:
    """The first job: fail once the other job has started."""
    deadline = time.monotonic() + 120
    while not list(Path(folder).iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    raise ValueError("the first job failed")


def endless_or_fails(job: tuple[int, str], on_game: Callable[[], object]) -> None:
    k, folder = job
    (fails_soon if k == 0 else endless)(folder, on_game)


def test_a_failed_run_ends_the_jobs_still_running(tmp_path: Path) -> None:
    """The main process lives on after the error (a library caller): the other worker's job
    ends at its next game instead of playing on."""
    with bar(0) as progress, pytest.raises(ValueError, match="the first job failed"):
        play_in_processes(
            [(0, str(tmp_path)), (1, str(tmp_path))], endless_or_fails, workers=2, bar=progress, label=str
        )
    (worker,) = [int(p.name) for p in tmp_path.iterdir()]
    assert all_end([worker]), "a job played on after the run failed"
