"""Command line: ``python -m training <command> ...`` (also ``domino-train``).

One module per command, in :data:`COMMANDS` (``--help`` lists them in that order): its
``add_parser(subparsers)`` registers the command and its flags, its ``run(args)`` does the work
and returns the exit status; :mod:`.arguments` holds the flags several commands share.
:func:`main` is the one error boundary: a ValueError (ConfigError, CheckpointError, an unknown
agent or table...) becomes one line on stderr and exit 2, Ctrl-C exit 130. No module here
imports anything of the train extra at its top, so that without it :func:`main` says so in one
line instead of a traceback.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from collections.abc import Callable
from typing import NoReturn

from training.cli import (
    benchmark,
    demo,
    evaluate,
    exploit,
    exploitability,
    ladder,
    new_variant,
    play,
    rate,
    record,
    serve,
    ship,
    train,
)

COMMANDS = (
    train,
    evaluate,
    exploit,
    exploitability,
    rate,
    play,
    demo,
    ship,
    record,
    benchmark,
    ladder,
    serve,
    new_variant,
)

# The import names of each extra's packages (pyproject.toml). Every command needs the train
# extra; a few need one more (COMMAND_EXTRAS, and `train --ray` the ray extra).
EXTRA_MODULES = {
    "train": ("torch", "yaml", "tqdm", "tensorboard", "matplotlib", "openskill", "scipy"),
    "openspiel": ("pyspiel",),
    "serve": ("fastapi", "uvicorn"),
    "ray": ("ray",),
}
COMMAND_EXTRAS = {"serve": "serve"}


def missing_extra(extra: str) -> str | None:
    """One line naming the extra's modules that are not installed (looked up, not imported) and
    how to install them; None when every one is there."""
    missing = [name for name in EXTRA_MODULES[extra] if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return (
        f"the {extra} extra is missing (no module {', '.join(missing)}): install it with "
        f'pip install -e ".[{extra}]" in a checkout, or pip install "domino-env[{extra}]"'
    )


def extras_needed(args: argparse.Namespace) -> list[str]:
    """The extras a parsed command needs beyond the train extra."""
    extra = COMMAND_EXTRAS.get(args.command)
    ray = args.command == "train" and train.uses_ray(args)
    return [e for e in (extra, "ray" if ray else None) if e is not None]


class OneLineParser(argparse.ArgumentParser):
    """argparse's parser (its sub-commands' too) whose errors are one line, as :func:`fail`'s:
    what was wrong, and where the flags are listed; exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {self.prog}: {message} (see {self.prog} --help)\n")

    def parse_args(  # type: ignore[override]
        self, args: list[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """argparse's, but arguments a command does not know are that command's error (its
        ``--help`` named, not the top level's), and a stray ``KEY=VALUE`` after an option says
        where a command's overrides go."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = self.commands().get(getattr(parsed, "command", None) or "")
            (command or self).error(unrecognized(command, extras))
        return parsed

    def commands(self) -> dict[str, argparse.ArgumentParser]:
        """The sub-commands' parsers by name (none for a parser without sub-commands)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                return dict(action.choices)
        return {}


def unrecognized(command: argparse.ArgumentParser | None, extras: list[str]) -> str:
    """argparse's "unrecognized arguments" line; for a command that takes ``KEY=VALUE``
    overrides, one of them in ``extras`` (given after an option, where argparse no longer takes
    them) also says where they go."""
    message = f"unrecognized arguments: {' '.join(extras)}"
    positionals = [a for a in command._actions if not a.option_strings] if command else []
    names = [a.dest for a in positionals]
    if "overrides" not in names or not any(looks_like_override(text) for text in extras):
        return message
    before = names[: names.index("overrides")]
    where = f"right after {before[-1].upper()}" if before else "first"
    return f"{message}: KEY=VALUE overrides go {where}, before any --option"


def looks_like_override(text: str) -> bool:
    """``key=value`` or ``a.b=value``: no leading dash, a key before the ``=``."""
    key, sep, _ = text.partition("=")
    return bool(sep) and bool(key) and not key.startswith("-")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="python -m training",
        description="Train, evaluate, rate, play and ship domino agents (also installed as domino-train).",
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(subparsers).set_defaults(run=command.run)
    return parser


def fail(message: object) -> int:
    """A setup problem (unknown agent, bad checkpoint, wrong table) as one line, without a traceback."""
    print(f"error: {message}", file=sys.stderr)
    return 2


def run_script(script_main: Callable[[], object]) -> NoReturn:
    """The error boundary of a script in ``benchmarks/``, as :func:`main` is the commands': its
    bad input (a ValueError, a file it cannot read or write, a ``SystemExit`` with a message, a
    command it runs that refused) ends in one line on stderr and exit 2, Ctrl-C in exit 130;
    else the exit status ``script_main`` returns (None: 0). Its parser is a :class:`OneLineParser`."""
    try:
        status = script_main()
    except (ValueError, OSError) as err:
        sys.exit(fail(err))
    except subprocess.CalledProcessError as err:  # (the command printed its own line first)
        sys.exit(fail(f"{' '.join(map(str, err.cmd))} stopped with exit status {err.returncode}"))
    except SystemExit as err:
        if isinstance(err.code, str):
            sys.exit(fail(err.code.removeprefix("error: ")))
        raise
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(status if isinstance(status, int) else 0)


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` (default: the process's arguments) and return its exit status."""
    missing = missing_extra("train")
    if missing is not None:
        return fail(missing)
    args = build_parser().parse_args(argv)
    for extra in extras_needed(args):  # before any work, in one line
        missing = missing_extra(extra)
        if missing is not None:
            return fail(missing)
    try:
        if getattr(args, "torch_threads", None):  # train, demo and ship take theirs from the config
            import torch

            torch.set_num_threads(args.torch_threads)
        return int(args.run(args))
    except ValueError as err:  # CheckpointError and ConfigError are ValueErrors too
        return fail(err)
    except KeyboardInterrupt:  # a command that keeps what finished says so first
        return 130
