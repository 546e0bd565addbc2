"""Environment speed of two commits, interleaved: did a change make the hot loop slower?

    python benchmarks/compare_commits.py OLD_REV [--runs 3] [--seconds 1] [--variants classic osel]

Checks ``OLD_REV`` out in a temporary git worktree and runs ``benchmarks/env_speed.py`` there
and in this tree by turns, ``--runs`` times each, so load on the machine falls on both alike.
Prints, per table both list, the best microseconds per decision of each and new / old.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from training.cli import OneLineParser, run_script
from training.eval.arena import positive_int

sys.path.insert(0, str(Path(__file__).resolve().parent))  # env_speed, beside this script

from env_speed import positive_float

HERE = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^(\w+)\s+(.+?)\s+[\d,]+\s+[\d,]+\s+([\d.]+)\s+[\d.]+x$")


def speeds(tree: Path, args: argparse.Namespace) -> dict[tuple[str, str], float]:
    """us/decision per (variant, options) from one env_speed run in ``tree``."""
    command = [sys.executable, "benchmarks/env_speed.py", "--seconds", str(args.seconds), "--repeats", "3"]
    if args.variants:
        command += ["--variants", *args.variants]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        match = ROW.match(line.strip())
        if match:
            found[(match[1], match[2])] = float(match[3])
    return found


def main() -> int:
    parser = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", help="the commit to compare against (any git revision)")
    parser.add_argument("--runs", type=positive_int, default=3)
    parser.add_argument("--seconds", type=positive_float, default=1.0)
    parser.add_argument("--variants", nargs="*")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = Path(tmp) / "old"
        subprocess.run(
            ["git", "worktree", "add", "-q", "--detach", str(old_tree), args.old], cwd=HERE, check=True
        )
        try:
            best: dict[str, dict[tuple[str, str], float]] = {"old": {}, "new": {}}
            for run in range(args.runs):
                for side, tree in (("old", old_tree), ("new", HERE)):
                    for table, us in speeds(tree, args).items():
                        best[side][table] = min(us, best[side].get(table, us))
                print(f"run {run + 1} of {args.runs} done", file=sys.stderr)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old_tree)], cwd=HERE, check=True)
    print(f"{'variant':<12} {'options':<34} {'old us':>8} {'new us':>8} {'new/old':>8}")
    for table in sorted(best["old"].keys() & best["new"].keys()):
        old, new = best["old"][table], best["new"][table]
        print(f"{table[0]:<12} {table[1]:<34} {old:>8.1f} {new:>8.1f} {new / old:>8.3f}")
    return 0


if __name__ == "__main__":
    run_script(main)
