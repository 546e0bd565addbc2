"""What several commands share: their flags (the table's ``--variant``, ``--option`` and
``--config``; ``--torch-threads``; positive and non-negative integers, a seed the latter), the
line an all-or-nothing command prints when Ctrl-C stops it, and the activate hint for the
commands one suggests next."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import domino_env


def positive_int(text: str) -> int:
    """:func:`training.eval.arena.positive_int`, imported when an argument is parsed (not at this
    module's top, which imports nothing of the train extra)."""
    from training.eval.arena import positive_int

    return positive_int(text)


def non_negative_int(text: str) -> int:
    """:func:`training.eval.arena.non_negative_int` (a seed), imported when an argument is parsed."""
    from training.eval.arena import non_negative_int

    return non_negative_int(text)


def output_file(text: str) -> Path:
    """An argparse type: a file written when the work is done, checked before it starts (a long
    run must not end in a traceback): not a folder, and under a folder, or where one can be made."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder: give the path of a file to write")
    above = next(folder for folder in path.absolute().parents if folder.exists())
    if not above.is_dir():
        raise argparse.ArgumentTypeError(f"{text} cannot be written: {above} is a file, not a folder")
    return path


def picture_file(text: str) -> Path:
    """:func:`output_file`, as a picture matplotlib writes by its suffix (.png, .svg or .pdf)."""
    path = output_file(text)
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise argparse.ArgumentTypeError(f"{text}: a picture ends in .png, .svg or .pdf")
    return path


def table_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--variant",
        help=f"one of {', '.join(domino_env.SPECS)} (default: the checkpoint's, else all_fives)",
    )
    parser.add_argument(
        "--option", action="append", metavar="KEY=VALUE", help="table option, repeatable (num_players=4)"
    )
    parser.add_argument("--config", help="take variant and options from this training YAML")


def threads_argument(parser: argparse.ArgumentParser) -> None:
    # Agents act on small batches, where more threads only fight over the cores (a 2,000-game
    # evaluation of a board agent took 8 minutes with torch's default threads, 25 s with one).
    parser.add_argument("--torch-threads", type=positive_int, default=1, help="torch threads (default 1)")


def activate_hint() -> str:
    """`` (source .venv/bin/activate first)`` when this runs in a virtual environment, so that the
    commands suggested after it find this interpreter and its packages; empty otherwise."""
    script = Path(sys.prefix) / "bin" / "activate"
    if sys.prefix == sys.base_prefix or not script.is_file():
        return ""
    with contextlib.suppress(ValueError):  # shown relative to here when it is below here
        script = script.relative_to(Path.cwd())
    return f" (source {script} first)"


@contextlib.contextmanager
def interrupted_says(message: str) -> Iterator[None]:
    """Ctrl-C in the block prints ``interrupted: MESSAGE`` on stderr (what was kept or lost) and
    goes on to :func:`training.cli.main`, which exits 130."""
    try:
        yield
    except KeyboardInterrupt:
        print(f"interrupted: {message}", file=sys.stderr)
        raise
