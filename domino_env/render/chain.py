"""Text rendering of a chain game: the line of play as a person would lay it out (its picture,
``render_mode="rgb_array"``, is drawn by :mod:`domino_env.render.chain_image`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from domino_env.core.events import DRAW, LAY, PASS, SCORE
from domino_env.core.line import CLOSED, EAST, NORTH, OPEN, SOUTH, UNUSED, WEST, Line
from domino_env.core.state import RoundResult, State
from domino_env.core.tiles import format_tile, iter_bits
from domino_env.core.view import HIDDEN, SeatView
from domino_env.render.scores import score_event_text, totals_label
from domino_env.rules.chain import LineRules


def tile_text(a: int, b: int) -> str:
    return f"[{a}|{b}]"


def line_text(rules: LineRules, line: Line) -> list[str]:
    """The layout, west to east, with spinner arms and extra ends listed below."""
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


def side_name(rules: LineRules, side: int, agent_names: list[str]) -> str:
    if rules.teams:
        return "team " + "+".join(agent_names[s] for s in rules.members[side])
    return agent_names[side]


def event_text(rules: LineRules, event: tuple[Any, ...], agent_names: list[str]) -> str | None:
    """A line of the game log for an event (any ``Event``) of any chain variant: the shared
    kinds here, a variant's own in its words (``rules.describe_event``); None for the events it
    does not show (the header names the round and the scores say how it ended)."""
    kind = event[0]
    if kind == LAY:
        _, seat, tile, slot, end_value = event
        name = format_tile(rules.tile_set.tiles[tile])
        if end_value < 0:
            return f"{agent_names[seat]} leads {name}"
        return f"{agent_names[seat]} plays {name} on {rules.slot_names[slot]} ({end_value})"
    if kind == DRAW:  # the tile named where the event names it (a view's: to the drawer only)
        drawn = "" if event[2] == HIDDEN else f" {format_tile(rules.tile_set.tiles[event[2]])}"
        return f"{agent_names[event[1]]} draws{drawn}"
    if kind == PASS:
        return f"{agent_names[event[1]]} passes"
    if kind == SCORE:  # a penalty where the lower total wins (Classic), else a score (All Fives)
        return score_event_text(rules, side_name(rules, event[1], agent_names), event[2], event[3])
    return rules.describe_event(event, agent_names)


def tiles_text(count: int) -> str:
    """``no tiles``, ``1 tile``, ``5 tiles``."""
    return "no tiles" if count == 0 else "1 tile" if count == 1 else f"{count} tiles"


def players_text(
    current: int | None,
    boneyard: int,
    agent_names: list[str],
    hands: list[str],
    recent: Sequence[str | None],
) -> list[str]:
    """A line per player with its hand (``current``, the one to move, starred), the boneyard,
    the last events."""
    out = []
    for seat, tiles in enumerate(hands):
        out.append(f"{'*' if seat == current else ' '} {agent_names[seat]}: {tiles}")
    out.append(f"  boneyard: {tiles_text(boneyard)}")
    said = [text for text in recent if text]
    if said:
        out.append("  last: " + "; ".join(said))
    return out


def hand_texts(rules: LineRules, hands: list[int], shown: Collection[int]) -> list[str]:
    """Each seat's hand: its tiles where ``shown``, else how many it holds."""
    tiles = rules.tile_set.tiles
    return [
        (" ".join(format_tile(tiles[t]) for t in iter_bits(hand)) or "no tiles")
        if seat in shown
        else tiles_text(hand.bit_count())
        for seat, hand in enumerate(hands)
    ]


def table_lines(
    rules: LineRules,
    agent_names: list[str],
    round_index: int,
    side_scores: list[int],
    line: Line,
    hands: list[str],
    current: int | None,
    boneyard: int,
    recent: Sequence[str | None],
    result: RoundResult | None,
) -> list[str]:
    """Scores (penalty points, said so, where the lower total wins), layout, hands, the boneyard,
    recent events and how the round ended: the picture both the whole table (``render_text``)
    and one seat's view (``seat_text``) draw."""
    scores = ", ".join(
        f"{side_name(rules, side, agent_names)}: {score}" for side, score in enumerate(side_scores)
    )
    what = f"scores ({totals_label(rules)}):" if rules.lower_score_wins else "scores"
    out = [f"{rules.name} - round {round_index + 1} - {what} {scores}"]
    out += line_text(rules, line)
    out += players_text(current, boneyard, agent_names, hands, recent)
    if result is not None:
        how = "blocked" if result.blocked else "domino"
        who = "no winner (tie)" if result.winner is None else f"{agent_names[result.winner]} wins"
        left = ", ".join(f"{agent_names[seat]} {pips}" for seat, pips in enumerate(result.hand_pips))
        out.append(f"  round over ({how}): {who}; pips left: {left}")
    return out


def render_text(
    rules: LineRules, state: State, agent_names: list[str], hands_of: list[int] | None = None
) -> str:
    """A full view: scores, layout, hands (all, or only ``hands_of``) and recent events."""
    shown = range(rules.num_players) if hands_of is None else hands_of
    return "\n".join(
        table_lines(
            rules,
            agent_names,
            state.round_index,
            state.scores,
            state.line,
            hand_texts(rules, state.hands, shown),
            None if state.round_over else state.current,
            len(state.stock),
            [event_text(rules, e, agent_names) for e in state.events[-6:]],
            state.result if state.round_over else None,
        )
    )


def spinner_text(rules: LineRules, line: Line) -> str | None:
    """Which tile is the spinner (the layout names its arms "north/south of spinner", never the
    tile), and when its arms open; None without a spinner."""
    value = line.spinner_value()
    if value < 0:
        return None
    text = f"spinner: {value}-{value}"
    if line.state[NORTH] == UNUSED:
        text += "; north and south open once a tile lies on each of its sides"
    return text


def seat_text(rules: LineRules, view: SeatView, agent_names: list[str]) -> str:
    """The table as one seat sees it, from its view (no recent events: a running commentary
    says them): its own tiles where it can name them all, the others' as counts, the spinner."""
    line = view.layout
    assert isinstance(line, Line)
    own = sum(1 << t for t in view.hand)
    whole = len(view.hand) == view.hand_sizes[view.seat]
    hands = [
        hand_texts(rules, [own], [0])[0] if seat == view.seat and whole else tiles_text(size)
        for seat, size in enumerate(view.hand_sizes)
    ]
    side_scores = [view.scores[members[0]] for members in rules.members]
    lines = table_lines(
        rules,
        agent_names,
        view.round,
        side_scores,
        line,
        hands,
        None if view.round_over else view.current_player,
        view.boneyard_size,
        [],
        view.result,
    )
    spinner = spinner_text(rules, line)
    if spinner:
        lines.insert(2, spinner)  # after the header and the line of play
    return "\n".join(lines)
