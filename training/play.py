"""A person against agents in the terminal: ``python -m training play --opponent greedy``.

Plain lines in and out (no curses): the layout (the line of play, or 3D dominoes' grid),
your hand and your legal moves numbered; type a number, or ``q`` to quit. Tests and scripts
drive it by feeding stdin.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from domino_env import grid_render, render
from domino_env.agents import Agent
from domino_env.engine.state import DEAL, ROUND_END
from domino_env.env import ChainEnv, DominoEnv
from domino_env.tiles import format_tile, iter_bits
from domino_env.variants.base import PLAY
from training.evaluate import seat_outcomes


def move_text(move: dict[str, Any]) -> str:
    """One entry of ``env.legal_moves()`` as a person reads it: ``3-4 on east (end 4)``, ``stop``,
    or on a grid ``3-4: 3 on (8,9), 4 on (8,10), floor 2, +1``."""
    tile = "" if move["tile"] is None else format_tile(move["tile"])
    if "cells" in move:  # 3D dominoes
        where = grid_render.placement_text(move["cells"], move["values"], move["level"])
        return f"{tile}: {where}" + (f", +{move['scores']}" if move["scores"] else "")
    if move["kind"] != PLAY:
        return f"{move['kind']} {tile}".strip()
    if move["arm"] == "lead":
        where = "lead"
    else:
        where = f"on {move['arm']}" + ("" if move["end_value"] is None else f" (end {move['end_value']})")
    return f"{tile} {where}" + (" face down" if move["face_down"] else "")


class EventFeed:
    """What happened since it was last asked, across round boundaries (each deal starts a new event list)."""

    def __init__(self, env: DominoEnv, names: list[str]) -> None:
        self.env, self.names = env, names
        self.events: list[tuple[Any, ...]] | None = None
        self.seen = 0

    def news(self) -> list[str]:
        events = self.env.game.events
        lines: list[str] = []
        if self.events is not None and self.events is not events:  # the old round's tail, then the new deal
            lines += self._texts(self.events[self.seen :])
            self.seen = 0
        self.events = events
        lines += self._texts(events[self.seen :])
        self.seen = len(events)
        return lines

    def _texts(self, events: list[tuple[Any, ...]]) -> list[str]:
        out = []
        for event in events:
            if event[0] == DEAL:
                out.append(f"--- round {event[1] + 1}: tiles dealt ---")
            elif event[0] == ROUND_END:
                _, winner, blocked = event
                who = "no winner" if winner < 0 else f"{self.names[winner]} wins"
                out.append(f"round over ({'blocked' if blocked else 'domino'}): {who}")
            else:
                text = table_module(self.env).event_text(self.env.rules, event, self.names)
                if text:
                    out.append(text)
        return out


def ask(count: int, stdin: TextIO, stdout: TextIO) -> int | None:
    """The index of the chosen move, or None to quit (``q`` or the end of the input)."""
    while True:
        stdout.write(f"your move (1-{count}, q quits): ")
        stdout.flush()
        line = stdin.readline()
        if not line or not stdin.isatty():  # piped input is not echoed: keep the transcript readable
            stdout.write(line.rstrip("\n") + "\n")
        if not line:
            return None
        text = line.strip().lower()
        if text in ("q", "quit", "exit"):
            return None
        if text.isdigit() and 1 <= int(text) <= count:
            return int(text) - 1
        stdout.write(f"{line.strip()!r} is not one of the moves: type a number from 1 to {count}, or q\n")


def table_module(env: DominoEnv) -> Any:
    """The text functions (``render_text``, ``event_text``) of the env's kind of table."""
    return render if isinstance(env, ChainEnv) else grid_render


def board_text(env: DominoEnv, seat: int, names: list[str]) -> str:
    """The table as ``seat`` sees it: only tiles of its own hand that it can name (blind variants),
    others' hands only where they are open; without the renderer's recent-events line, which the
    running commentary already gave."""
    if not isinstance(env, ChainEnv):
        shown = None if env.rules.open_hands else [seat]
        text = grid_render.render_text(env.rules, env.game, names, hands_of=shown)
        return "\n".join(line for line in text.splitlines() if not line.startswith("  last: "))
    rules, game = env.rules, env.game
    known = rules.known_hand(game, seat)
    whole = known == game.hands[seat]
    text = render.render_text(rules, game, names, hands_of=[seat] if whole else [])
    lines = [line for line in text.splitlines() if not line.startswith("  last: ")]
    if not whole:
        tiles = " ".join(format_tile(rules.tile_set.tiles[t]) for t in iter_bits(known)) or "none"
        lines.append(f"  your tiles you know: {tiles}")
    lines += [f"  {key}: {value}" for key, value in rules.public_extra(game).items()]
    return "\n".join(lines)


def result_text(env: DominoEnv, seat: int, names: list[str]) -> str:
    """Who won the episode (the round or the match), ranked as the env's outcome reward ranks it."""
    outcomes = seat_outcomes(env)
    best = max(outcomes)
    firsts = {env.rules.side_of[s] for s, value in enumerate(outcomes) if value == best}
    verdict = "you lose" if outcomes[seat] < best else "you win" if len(firsts) == 1 else "first place shared"
    scores = ", ".join(f"{names[s]} {score}" for s, score in enumerate(env.public_state()["scores"]))
    return f"{env.episode} over: {verdict} (scores: {scores})"


def check_seat(env: DominoEnv, seat: int) -> None:
    n = env.rules.num_players
    if not 0 <= seat < n:
        raise ValueError(f"the seat must be in 0..{n - 1} at a table of {n}, got {seat}")


def play(
    env: DominoEnv,
    seat: int,
    opponent: Agent,
    opponent_label: str,
    seed: int | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> bool:
    """One episode with a person in ``seat`` and ``opponent`` in every other seat; False if they quit.
    Reads ``stdin`` and writes ``stdout`` (default: the process's, looked up at the call)."""
    reader, out = stdin or sys.stdin, stdout or sys.stdout
    check_seat(env, seat)
    n = env.rules.num_players
    names = [f"P{s} (you)" if s == seat else f"P{s} ({opponent_label})" for s in range(n)]
    env.reset(seed=seed)
    feed = EventFeed(env, names)
    me = env.possible_agents[seat]

    def say(lines: list[str]) -> None:
        for line in lines:
            out.write(line + "\n")

    say(feed.news())
    while not all(env.terminations.values()):
        agent = env.agent_selection
        if agent == me:
            moves = env.legal_moves()
            say(["", board_text(env, seat, names), "your moves:"])
            say([f"  {k}) {move_text(move)}" for k, move in enumerate(moves, 1)])
            choice = ask(len(moves), reader, out)
            if choice is None:
                say(["quit"])
                return False
            env.step(moves[choice]["action"])
        else:
            env.step(opponent(env, env.observe(agent)))
        say(feed.news())
    say(["", table_module(env).render_text(env.rules, env.game, names), result_text(env, seat, names)])
    return True
