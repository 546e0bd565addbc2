"""``python -m training new-variant NAME --like VARIANT [--root DIR]``: the files of a new variant
(its rules module, rules page, scenario tests, config and nav line), from an existing variant's;
the logic is :mod:`training.apps.scaffold`, the recipe docs/guides/architecture.md."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "new-variant",
        help="write a new variant's files from an existing one's",
        description=(
            "Write domino_env/variants/NAME.py (the --like variant's module, renamed), "
            "docs/rules/NAME.md, tests/rules/test_NAME_rules.py, configs/NAME.yaml and the rules page's "
            "line in mkdocs.yml; nothing is written when the name is taken, a file exists or a file "
            "stands where a folder must be, and a write that fails (permissions, a full disk) removes "
            "what was written before it."
        ),
    )
    parser.add_argument("name", help="the new variant's name: a lowercase Python identifier, e.g. my_game")
    parser.add_argument(
        "--like", required=True, help="the variant to start from (one alone in its module, e.g. blitz)"
    )
    parser.add_argument("--root", default=None, help="write under this folder (default: the repository)")
    return parser


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from training.apps.scaffold import next_steps, scaffold

    written = scaffold(args.name, args.like, Path(args.root) if args.root else None)  # (a refusal: exit 2)
    print(f"wrote under {written.root}:")
    for path in written.files:
        print(f"  {path.as_posix()}")
    print(f"  mkdocs.yml: {written.nav}")
    print(next_steps(args.name, args.like))
    return 0
