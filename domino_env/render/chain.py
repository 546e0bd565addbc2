"""Text rendering of a chain game: the line of play as a person would lay it out."""

from __future__ import annotations

from typing import Any

from domino_env.core.events import DRAW, LAY, MISS, PASS, PLACE, REVEAL, SCORE, UP
from domino_env.core.line import CLOSED, EAST, NORTH, OPEN, SOUTH, WEST
from domino_env.core.state import State
from domino_env.core.tiles import format_tile, iter_bits
from domino_env.rules.chain import ChainRules


def tile_text(a: int, b: int) -> str:
    return f"[{a}|{b}]"


def line_text(rules: ChainRules, state: State) -> list[str]:
    """The layout, west to east, with spinner arms and extra ends listed below."""
    line = state.line
    if line.empty:
        return ["(empty table)"]
    west = [tile_text(outer, inner) for inner, outer in reversed(line.arms[WEST])]
    a, b = rules.tile_set.tiles[line.lead_tile]
    lead = tile_text(a, b)
    east = [tile_text(inner, outer) for inner, outer in line.arms[EAST]]
    lines = ["".join(west) + lead + "".join(east)]
    names = rules.slot_names
    for slot in range(line.num_slots):
        if slot in (EAST, WEST) or line.state[slot] == 0:
            continue
        arm = "".join(tile_text(i, o) for i, o in line.arms[slot]) or "(empty)"
        label = (
            names[slot] if slot not in (NORTH, SOUTH) or line.num_slots != 4 else f"{names[slot]} of spinner"
        )
        lines.append(f"{label}: {arm}")
    ends = []
    for slot in range(line.num_slots):
        if line.state[slot] == OPEN:
            ends.append(f"{names[slot]} {line.value[slot]}")
        elif line.state[slot] == CLOSED:
            ends.append(f"{names[slot]} closed")
    lines.append("open ends: " + ", ".join(ends))
    return lines


def side_name(rules: ChainRules, side: int, agent_names: list[str]) -> str:
    if rules.teams:
        return "team " + "+".join(agent_names[s] for s in rules.members[side])
    return agent_names[side]


# How a Domino-Metro player took its place (a ``place`` event's ``how``), in words.
PLACE_HOW = {
    "out": "went out",
    "domino_metro": "domino-Metro",
    "mole": "the mole, left holding tiles",
    "pips": "by pips in hand",
    "metro": "made a Metro",
}


def event_text(rules: ChainRules, event: tuple[Any, ...], agent_names: list[str]) -> str | None:
    """A line of the game log for an event (any ``Event``) of any chain variant; None for the
    events it does not show (the header names the round and the scores say how it ended; an arranged tile says
    nothing anybody else may know)."""
    kind = event[0]
    if kind == LAY:
        _, seat, tile, slot, end_value = event
        name = format_tile(rules.tile_set.tiles[tile])
        if end_value < 0:
            return f"{agent_names[seat]} leads {name}"
        return f"{agent_names[seat]} plays {name} on {rules.slot_names[slot]} ({end_value})"
    if kind == DRAW:
        return f"{agent_names[event[1]]} draws"
    if kind == PASS:
        return f"{agent_names[event[1]]} passes"
    if kind == SCORE:
        return f"{side_name(rules, event[1], agent_names)} scores {event[2]} ({event[3]})"
    if kind == PLACE:
        _, seat, place, how = event
        return f"{agent_names[seat]} takes place {place} ({PLACE_HOW[how]})"
    if kind in (UP, MISS, REVEAL):
        name, tiles = agent_names[event[1]], rules.tile_set.tiles
        if kind == REVEAL:
            shown = " ".join(format_tile(tiles[t]) for t in iter_bits(event[2]))
            return f"{name} turns the last three tiles face up: {shown}"
        turned = f"{name} turns up {format_tile(tiles[event[2]])}"
        return turned if kind == UP else turned + ": no fit, to the left end of the row"
    return None


def tiles_text(count: int) -> str:
    """``no tiles``, ``1 tile``, ``5 tiles``."""
    return "no tiles" if count == 0 else "1 tile" if count == 1 else f"{count} tiles"


def players_text(state: Any, agent_names: list[str], hands: list[str], recent: list[str | None]) -> list[str]:
    """A line per player with its hand (the one to move starred), the boneyard, the last events."""
    out = []
    for seat, tiles in enumerate(hands):
        marker = "*" if seat == state.current and not state.round_over else " "
        out.append(f"{marker} {agent_names[seat]}: {tiles}")
    out.append(f"  boneyard: {tiles_text(len(state.stock))}")
    said = [text for text in recent if text]
    if said:
        out.append("  last: " + "; ".join(said))
    return out


def render_text(
    rules: ChainRules, state: State, agent_names: list[str], hands_of: list[int] | None = None
) -> str:
    """A full view: scores, layout, hands (all, or only ``hands_of``) and recent events."""
    n = rules.num_players
    scores = ", ".join(
        f"{side_name(rules, side, agent_names)}: {score}" for side, score in enumerate(state.scores)
    )
    out = [f"{rules.name} - round {state.round_index + 1} - scores {scores}"]
    out += line_text(rules, state)
    shown = range(n) if hands_of is None else hands_of
    hands = [
        (" ".join(format_tile(rules.tile_set.tiles[t]) for t in iter_bits(hand)) or "no tiles")
        if seat in shown
        else tiles_text(hand.bit_count())
        for seat, hand in enumerate(state.hands)
    ]
    out += players_text(
        state, agent_names, hands, [event_text(rules, e, agent_names) for e in state.events[-6:]]
    )
    if state.round_over and state.result is not None:
        r = state.result
        how = "blocked" if r.blocked else "domino"
        who = "no winner (tie)" if r.winner is None else f"{agent_names[r.winner]} wins"
        left = ", ".join(f"{agent_names[seat]} {pips}" for seat, pips in enumerate(r.hand_pips))
        out.append(f"  round over ({how}): {who}; pips left: {left}")
    return "\n".join(out)
