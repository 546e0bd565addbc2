"""``serve``: a local web app to watch agents, replay game records and play against agents."""

from __future__ import annotations

import argparse

from training.cli.arguments import threads_argument


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "serve", help="a local web app to watch agents, replay game records and play against agents"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this host)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--agents-dir", default="agents", help="where shipped agents are (default agents)")
    parser.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="PATH",
        help="a checkpoint (file or run folder) the page may also pick, repeatable; "
        "the page names no other file",
    )
    threads_argument(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from training.apps.serve import listen, serve  # (main checked the serve extra)
    from training.model import checkpoint

    if not Path(args.agents_dir).is_dir():
        raise ValueError(f"--agents-dir {args.agents_dir} is not a folder; the shipped agents are in agents/")
    for path in args.agent:  # (each read once here: a damaged one is refused before serving)
        checkpoint.load(path)
    listener = listen(args.host, args.port)  # the port and the bind, before the address is announced
    serve(listener, args.agents_dir, args.agent)
    return 0
