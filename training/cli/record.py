"""``record``: a game between agents as an animated GIF, the table's picture after the deal and
after every move."""

from __future__ import annotations

import argparse

import domino_env
from training.cli.arguments import non_negative_int, positive_int, threads_argument

SUFFIXES = (".gif",)  # what --out may end in: record writes an animated GIF (Pillow's GIF writer)


def frames_a_second(text: str) -> float:
    """An argparse type for ``--fps``: a number above 0 and at most
    :data:`training.apps.record.MOST_FPS` (imported when parsed: it needs the train extra)."""
    from training.apps.record import MOST_FPS

    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= MOST_FPS:  # (nan and inf fail here too)
        raise argparse.ArgumentTypeError(f"must be a number above 0 and at most {MOST_FPS}, got {text!r}")
    return value


def gif_file(text: str) -> str:
    """An argparse type for ``--out``: a file name ending in one of :data:`SUFFIXES`."""
    if not text.lower().endswith(SUFFIXES):
        raise argparse.ArgumentTypeError(
            f"must name a {' or '.join(SUFFIXES)} file (record writes an animated GIF), got {text!r}"
        )
    return text


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "record",
        help="record a game between agents as an animated GIF, a frame per move",
        description="One episode (a round; --option episode=match for a whole match) drawn as the "
        "table's rgb_array picture after the deal and after every move. Agents take the seats in "
        "turn: random, greedy, search[:N], advanced, expert, a checkpoint file or a run folder.",
    )
    parser.add_argument("variant", help=f"one of {', '.join(domino_env.SPECS)}")
    parser.add_argument(
        "agents", nargs="+", metavar="AGENT", help="an agent per seat, or fewer taking the seats in turn"
    )
    parser.add_argument("--out", required=True, type=gif_file, help="the GIF file to write (FILE.gif)")
    parser.add_argument(
        "--seed",
        type=non_negative_int,
        default=0,
        help="deal seed; seat s's agent is seeded SEED+1+s (default 0)",
    )
    parser.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="table option, repeatable (num_players=4, episode=match; default episode=round)",
    )
    parser.add_argument(
        "--fps", type=frames_a_second, default=2.0, help="frames a second, above 0 and at most 50 (default 2)"
    )
    parser.add_argument(
        "--max-frames", type=positive_int, help="stop the game after this many frames (default: all)"
    )
    threads_argument(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from training.apps.record import prepare_recording, record
    from training.eval import report

    recording = prepare_recording(args.variant, args.agents, args.option, args.seed)
    path = report.writable_file(args.out)  # (after the agents: a bad name creates no folder)
    print(f"recording {recording.header}")
    frames = record(recording, path, args.fps, args.max_frames)
    print(f"written: {path} ({frames} frames)")
    return 0
