"""A person against agents in the terminal: ``python -m training play --opponent greedy``.

Plain lines in and out (no curses): the layout (the line of play, or 3D dominoes' grid),
your hand and your legal moves numbered, each with the points it scores at once (All Fives'
count, 3D dominoes' placements, grouped by tile); type a number, or ``q`` to quit. The log
names the tiles you draw, not the others'. Tests and scripts drive it by feeding stdin. With
``--record DIR`` the game is also written down as a game record (:mod:`domino_env.records`).
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from domino_env import (
    DominoEnv,
    GameRecorder,
    SeatView,
    events,
    format_tile,
    move_text,
    per_seat_text,
    value_text,
)
from domino_env.agents import Agent
from domino_env.records import start_game

PERSON = "person"  # who plays the person's seat, in a game record

# The entries of public_state() that the table's own text already draws; the rest are the
# variant's (Blitz's laid_this_turn, Osel's remembered, Blind's rows ...), said below in the
# variant's words (``rules.extra_words``).
TABLE_KEYS = frozenset(
    (
        "variant", "round", "leader", "current_player", "scores", "ends", "open_ends", "table",
        "hand_sizes", "boneyard_size", "spinner", "round_over", "match_over", "heights",
        "top_values", "hands",
    )
)  # fmt: skip


class EventFeed:
    """What the seat saw happen since it was last asked, from its view (a drawn tile it cannot
    name stays unnamed), across round boundaries: the view keeps the finished round's events."""

    def __init__(self, env: DominoEnv, seat: int, names: list[str]) -> None:
        self.env, self.seat, self.names = env, seat, names
        self.round: int | None = None
        self.seen = 0

    def news(self) -> list[str]:
        view = self.env.view(self.seat)
        lines: list[str] = []
        if self.round is not None and view.round != self.round:  # the old round's tail, then the new deal
            lines += self._texts(view.last_round_events[self.seen :])
            self.seen = 0
        self.round = view.round
        lines += self._texts(view.events[self.seen :])
        self.seen = len(view.events)
        return lines

    def _texts(self, seen: tuple[tuple[Any, ...], ...]) -> list[str]:
        out = []
        for event in seen:
            if event[0] == events.DEAL:
                out.append(f"--- round {event[1] + 1}: tiles dealt ---")
            elif event[0] == events.ROUND_END:
                _, winner, blocked = event
                who = "no winner" if winner < 0 else f"{self.names[winner]} wins"
                out.append(f"round over ({'blocked' if blocked else 'domino'}): {who}")
            else:
                text = self.env.event_text(event, self.names)
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
        if text.isdecimal() and 1 <= int(text) <= count:  # (isdigit also passes '²', which int refuses)
            return int(text) - 1
        stdout.write(f"{line.strip()!r} is not one of the moves: type a number from 1 to {count}, or q\n")


def move_menu(env: DominoEnv) -> tuple[list[dict[str, Any]], list[str]]:
    """The legal moves in the order offered, and the lines offering them numbered from 1, each
    with the points it scores at once where it scores. 3D dominoes' placements (dozens a turn)
    come grouped by tile, under a line naming it, then by the cells they cover, top left first."""
    moves = env.legal_moves()

    def points(move: dict[str, Any]) -> str:
        scored = env.immediate_points(move["action"])
        return f", scores {scored}" if scored else ""

    if not any("cells" in move for move in moves):
        return moves, [f"  {k}) {move_text(move)}{points(move)}" for k, move in enumerate(moves, 1)]
    moves.sort(key=lambda move: (move["tile"], move["cells"], move["values"]))
    lines: list[str] = []
    for k, move in enumerate(moves, 1):
        if k == 1 or move["tile"] != moves[k - 2]["tile"]:
            lines.append(f"  {format_tile(move['tile'])}:")
        (r1, c1), (r2, c2) = move["cells"]
        x, y = move["values"]
        floor = f", floor {move['level']}" if move["level"] > 1 else ""
        lines.append(f"    {k}) {x} on ({r1},{c1}), {y} on ({r2},{c2}){floor}{points(move)}")
    return moves, lines


def board_text(env: DominoEnv, seat: int, names: list[str]) -> str:
    """The table as ``seat`` sees it, from its view: only tiles of its own hand that it can name
    (blind variants), others' hands only where they are open, no recent events (the running
    commentary gave them), and the variant's extras in words, not Python reprs."""
    view = env.view(seat)
    lines = env.seat_text(seat, names).splitlines()
    extra = {key: value for key, value in view.public.items() if key not in TABLE_KEYS}
    whole = len(view.hand) == view.hand_sizes[seat]
    if "rows" in extra:  # Blind and Blind blitz: the rows say what the seat knows of its own tiles
        lines += row_lines(view, names, extra, env.rules.tile_set.tiles)
    elif not whole:
        tiles = env.rules.tile_set.tiles
        known = " ".join(format_tile(tiles[t]) for t in sorted(view.hand)) or "none"
        lines.append(f"  your tiles you know: {known}")
    words = env.rules.extra_words  # the variant's words for its extras
    for key, value in extra.items():
        line = words[key](value, names) if key in words else f"{key.replace('_', ' ')}: {value_text(value)}"
        if line:
            lines.append(f"  {line}")
    return "\n".join(lines)


def row_lines(
    view: SeatView, names: list[str], extra: dict[str, Any], tiles: list[tuple[int, int]]
) -> list[str]:
    """Blind rows in words, consuming their entries of ``extra``. The seat's own row shows the tiles
    it can name (Blind blitz: what it arranged; Blind: what was turned up), others' rows only
    what everybody saw; ``??`` marks a face-down tile."""
    rows, opened, up = extra.pop("rows"), extra.pop("open_hands"), extra.pop("turned_up")
    quiet, arranging = extra.pop("quiet_turns"), extra.pop("arranging")
    own_row = view.private["row"]  # as the seat knows it: None where it cannot name the tile
    lines = ["  rows, left to right (the rightmost tile is turned up next):"]
    for s, row in enumerate(rows):
        shown = ["??" if tile is None else format_tile(tile) for tile in (own_row if s == view.seat else row)]
        size = view.hand_sizes[s]
        if opened[s]:
            text = "open hand, face up: " + " ".join(sorted(shown))
        elif arranging and len(row) < size:
            text = f"arranging ({len(row)} of {size} placed)" if row else "not arranged yet"
            if s == view.seat:
                placed = set(own_row)
                rest = [tiles[t] for t in sorted(view.hand) if tiles[t] not in placed]
                rest_text = " ".join(format_tile(tile) for tile in rest)
                text = f"{' '.join(shown) or 'none yet'}  (still to place: {rest_text})"
        else:
            text = " ".join(shown) or "empty"
        lines.append(f"    {names[s]}: {text}")
    if arranging:
        lines.append("  arranging: tiles go in right to left; the first one placed is turned up first")
    if up is not None and view.current_player == view.seat:
        lines.append(f"  turned up: {format_tile(up)}")
    if quiet:
        blocked = f"the round is blocked at {view.num_players}"
        lines.append(f"  turns in a row with nothing laid or drawn: {quiet} ({blocked})")
    return lines


def totals_text(env: DominoEnv, names: list[str], totals: list[int]) -> str:
    """``penalty points, lower wins: P0 76, P1 14`` where the lower total wins (``rules.
    lower_score_wins``: Classic, Osel, Domino-Metro ...), else ``scores: P0 76, P1 14``: the
    words of the table's own text and picture."""
    label = "penalty points, lower wins" if env.rules.lower_score_wins else "scores"
    return f"{label}: {per_seat_text(totals, names)}"


def final_totals(env: DominoEnv, names: list[str]) -> str:
    """The totals at the end of an episode, each said for what it is: ``penalty points, lower
    wins: P0 76, P1 14`` where the lower total wins (``scores: ...`` where the higher does),
    after Domino-Metro's places in a single game (they rank it) and before Osel's remembered
    points where there are any (they break ties)."""
    public = env.public_state()
    said = []
    places = public.get("places")  # (Domino-Metro's, in its words)
    placed = env.rules.extra_words["places"](places, names) if env.episode == "round" and places else None
    if placed:
        said.append(placed)
    said.append(totals_text(env, names, public["scores"]))
    remembered = public.get("remembered")
    if remembered and any(remembered):
        said.append(f"remembered, not written yet: {per_seat_text(remembered, names)}")
    return "; ".join(said)


def result_text(env: DominoEnv, seat: int, names: list[str]) -> str:
    """Who won the episode (the round or the match), ranked as the env's outcome reward ranks it,
    and the totals (:func:`final_totals`)."""
    outcomes = env.outcomes()
    best = max(outcomes)
    firsts = {env.rules.side_of[s] for s, value in enumerate(outcomes) if value == best}
    verdict = "you lose" if outcomes[seat] < best else "you win" if len(firsts) == 1 else "first place shared"
    return f"{env.episode} over: {verdict} ({final_totals(env, names)})"


def check_seat(env: DominoEnv, seat: int) -> None:
    n = env.rules.num_players
    if not 0 <= seat < n:
        raise ValueError(f"the seat must be in 0..{n - 1} at a table of {n}, got {seat}")


def play(
    env: DominoEnv,
    seat: int,
    *,
    opponent: Agent,
    opponent_label: str,
    seed: int | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    recorder: GameRecorder | None = None,
) -> bool:
    """One episode with a person in ``seat`` and ``opponent`` in every other seat; False if they quit.
    Reads ``stdin`` and writes ``stdout`` (default: the process's, looked up at the call); every
    move goes through ``recorder`` (a recorder of ``env``) when there is one."""
    reader, out = stdin or sys.stdin, stdout or sys.stdout
    check_seat(env, seat)
    n = env.rules.num_players
    names = [f"P{s} (you)" if s == seat else f"P{s} ({opponent_label})" for s in range(n)]
    move = start_game(env, seed, recorder)
    feed = EventFeed(env, seat, names)
    me = env.possible_agents[seat]

    def say(lines: list[str]) -> None:
        for line in lines:
            out.write(line + "\n")

    say(feed.news())
    try:
        while not all(env.terminations.values()):
            agent = env.agent_selection
            if agent == me:
                moves, menu = move_menu(env)
                say(["", board_text(env, seat, names), "your moves:", *menu])
                choice = ask(len(moves), reader, out)
                if choice is None:
                    say(["quit"])
                    return False
                move(moves[choice]["action"])
            else:
                move(opponent(env, env.observe(agent)))
            say(feed.news())
    except KeyboardInterrupt:  # Ctrl-C, at the prompt too: end the prompt's line, then the caller exits 130
        say(["", "interrupted: bye"])
        out.flush()
        raise
    final = env.table_text(names)
    say(["", final, result_text(env, seat, names)])
    return True
