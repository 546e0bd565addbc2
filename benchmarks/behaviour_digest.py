"""Behaviour digest: one hash per table of everything seeded random play shows.

    python benchmarks/behaviour_digest.py --save before.json [--rounds 300] [--matches 30]
    python benchmarks/behaviour_digest.py --check before.json

For every table in ``TABLES`` it plays ``--rounds`` seeded rounds (``episode="round"``) and
``--matches`` seeded matches (``episode="match"``) with a seeded random player, and hashes at
every step the observation of every seat, the mask, rewards, terminations, ``public_state()``,
the ``ansi`` render and the events of the round so far. A refactor that claims to keep
behaviour identical shows the same digests before and after (``--check`` prints the tables
that differ and exits 1). Only the public API is read, plus the round's event list.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any, NoReturn

import domino_env

# (variant, options): every table of every registered variant (players, partners), then the
# options that change play. Built from ``VARIANTS`` only, so the script runs on older commits.
TABLES: list[tuple[str, dict[str, Any]]] = [
    (name, {"num_players": n, **({"teams": True} if teams else {})})
    for name, rules in sorted(domino_env.VARIANTS.items())
    for n in rules.player_counts
    for teams in ((False, True) if n == 4 and rules.teams_allowed else (False,))
] + [
    ("classic", {"num_players": 2, "draw": False}),
    ("metro", {"num_players": 3, "metro_penalty": 2}),
    ("blitz", {"num_players": 4, "teams": True, "draw": False}),
    ("blind_blitz", {"num_players": 2, "arrange": "dealt"}),
    ("domino3d", {"num_players": 3, "open_hands": True, "board_size": 8}),
    ("domino3d", {"num_players": 2, "stacking": False, "no_doubles": True, "sets": 2}),
]


def table_id(name: str, options: dict[str, Any]) -> str:
    return name + "".join(f" {k}={v}" for k, v in sorted(options.items()))


def events_of(env: Any) -> list[tuple[Any, ...]]:
    """The round's events as plain tuples (event types that are tuples hash the same)."""
    return [tuple(event) for event in env.unwrapped.game.events]


def play(digest: Any, name: str, options: dict[str, Any], episode: str, games: int, seed: int) -> None:
    env = domino_env.make(name, episode=episode, render_mode="ansi", **options)
    rng = random.Random(seed)
    agents = env.unwrapped.possible_agents
    for game in range(games):
        env.reset(seed=seed * 100_003 + game)
        seen = 0
        while True:
            for agent in agents:
                obs = env.observe(agent)
                digest.update(obs["observation"].tobytes())
                digest.update(obs["action_mask"].tobytes())
            digest.update(repr(sorted(env.rewards.items())).encode())
            digest.update(repr(sorted(env.terminations.items())).encode())
            digest.update(repr(env.unwrapped.public_state()).encode())
            digest.update(str(env.render()).encode())
            events = events_of(env)
            if len(events) < seen:
                seen = 0  # a new round
            digest.update(repr(events[seen:]).encode())
            seen = len(events)
            _obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                break
            legal = [int(a) for a in env.observe(env.agent_selection)["action_mask"].nonzero()[0]]
            env.step(legal[rng.randrange(len(legal))])


def digests(rounds: int, matches: int, only: list[str] | None) -> dict[str, str]:
    out = {}
    for name, options in TABLES:
        if only and name not in only:
            continue
        digest = hashlib.sha256()
        play(digest, name, options, "round", rounds, seed=1)
        play(digest, name, options, "match", matches, seed=2)
        out[table_id(name, options)] = digest.hexdigest()
        print(f"{table_id(name, options):60s} {out[table_id(name, options)][:16]}", flush=True)
    return out


class _Parser(argparse.ArgumentParser):
    """argparse's, its errors in one line, exit 2 (as ``training.cli.OneLineParser``'s: this
    script imports only ``domino_env``, so that it runs on older commits too)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {self.prog}: {message} (see {self.prog} --help)\n")


def count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return int(text)


def main() -> int:
    parser = _Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=count, default=300)
    parser.add_argument("--matches", type=count, default=30)
    parser.add_argument("--variants", nargs="*", help="only these variants")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", metavar="FILE")
    group.add_argument("--check", metavar="FILE")
    args = parser.parse_args()
    unknown = sorted(set(args.variants or ()) - {name for name, _ in TABLES})
    if unknown:  # (else no table is played, and a check of none passes)
        parser.error(
            f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(sorted(domino_env.VARIANTS))}"
        )
    if args.save and (Path(args.save).is_dir() or not Path(args.save).resolve().parent.is_dir()):
        parser.error(f"--save {args.save}: not a file in a folder that is there")
    try:
        saved = None if args.save else json.loads(Path(args.check).read_text())
        if saved is not None and not {"rounds", "matches", "digests"} <= set(saved):
            raise ValueError("it holds no digests")
    except (OSError, ValueError, TypeError) as err:
        parser.error(f"--check {args.check} is not a digest file this script saved: {err}")
    found = digests(args.rounds, args.matches, args.variants)
    if saved is None:
        with open(args.save, "w") as f:
            json.dump({"rounds": args.rounds, "matches": args.matches, "digests": found}, f, indent=1)
        return 0
    if (saved["rounds"], saved["matches"]) != (args.rounds, args.matches):
        print(f"{args.check} was made with --rounds {saved['rounds']} --matches {saved['matches']}")
        return 1
    differ = [t for t, d in found.items() if saved["digests"].get(t) != d]
    print(f"{len(found) - len(differ)} of {len(found)} tables identical")
    for t in differ:
        print(f"  differs: {t}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
