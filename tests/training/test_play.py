"""Terminal play: every variant's screen in words, what the seat cannot know kept off it, input, Ctrl-C."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any

import pytest

from domino_env import SPECS, raw_env
from domino_env.core.tiles import format_tile, iter_bits
from domino_env.envs.base import DominoEnv
from domino_env.envs.chain import ChainEnv
from training.__main__ import main
from training.apps.play import ask, final_totals, move_text, play
from training.eval import evaluate

TABLES: list[tuple[str, dict[str, Any]]] = [
    (name, {"num_players": spec.player_counts[0]}) for name, spec in SPECS.items()
] + [("blind", {"num_players": 3}), ("blind_blitz", {"num_players": 3})]
RAW = ("None", "[(", "True", "False", "{'", "_this_", "_turns", "rows: [")  # Python reprs and key names


def hidden_tiles(env: DominoEnv, seat: int) -> list[str]:
    """Tiles the seat cannot name: others' hands but what everybody saw (Blind rows, open hands),
    and in Blind the tiles of its own row it never saw (the turned-up tile it does see)."""
    game, rules = env.game, env.rules
    if not isinstance(env, ChainEnv):  # 3D dominoes: a kind may come twice, so only kinds the seat lacks
        mine = set(rules.kinds_in(game.hands[seat]))
        theirs = [k for s, hand in enumerate(game.hands) if s != seat for k in rules.kinds_in(hand)]
        return [format_tile(kind) for kind in theirs if kind not in mine]
    tiles = rules.tile_set.tiles
    if "rows" not in rules.public_extra(game):
        masks = [hand for s, hand in enumerate(game.hands) if s != seat]
    else:
        x = game.extra
        masks = [hand & ~x.seen[s] for s, hand in enumerate(game.hands) if s != seat]
        masks.append(game.hands[seat] & ~x.known[seat] & ~(1 << x.up if x.up >= 0 else 0))
    return [format_tile(tiles[t]) for mask in masks for t in iter_bits(mask)]


class Person(io.StringIO):
    """Stdin that answers from a script (then the first move, ``1``), checking each screen before it
    answers: no hidden tile and no Python repr on the board the seat sees."""

    def __init__(self, env: DominoEnv, seat: int, out: io.StringIO, script: str = "") -> None:
        super().__init__()
        self.env, self.seat, self.out = env, seat, out
        self.script = script.splitlines(keepends=True)
        self.screens: list[str] = []
        self.read_to = 0

    def readline(self, size: int | None = -1) -> str:
        written = self.out.getvalue()
        screen, self.read_to = written[self.read_to :], len(written)
        if "\n\n" in screen:  # a new board (a re-prompt shows none)
            board = screen[screen.rindex("\n\n") : screen.rindex("\nyour move (")]  # (the prompt says 1-2)
            self.screens.append(board)
            words = "\n".join(line for line in board.splitlines() if not re.match(r"\s*\d", line))  # no grid
            for tile in hidden_tiles(self.env, self.seat):
                assert tile not in words, f"{tile} is hidden from P{self.seat}:\n{board}"
            for raw in RAW:
                assert raw not in board, f"{raw!r} on the screen:\n{board}"
        return self.script.pop(0) if self.script else "1\n"


class Chooser(Person):
    """A person who reads each new board and answers ``choose(board)`` (the checks still run)."""

    def __init__(self, env: DominoEnv, seat: int, out: io.StringIO, choose: Callable[[str], int]) -> None:
        super().__init__(env, seat, out)
        self.choose = choose

    def readline(self, size: int | None = -1) -> str:
        seen = len(self.screens)
        answer = super().readline(size)
        return f"{self.choose(self.screens[-1])}\n" if len(self.screens) > seen else answer


def session(
    variant: str,
    options: dict[str, Any],
    seed: int,
    seat: int = 0,
    script: str = "",
    choose: Callable[[str], int] | None = None,
) -> tuple[Person, str]:
    """One episode against greedy, the person laying its first legal move unless ``script`` (or
    ``choose``, from each board) says."""
    env = raw_env(variant, **options)
    out = io.StringIO()
    person = Person(env, seat, out, script) if choose is None else Chooser(env, seat, out, choose)
    agent = evaluate.contestant("greedy").agent(env, 1)
    finished = play(env, seat, opponent=agent, opponent_label="greedy", seed=seed, stdin=person, stdout=out)
    assert finished == ("q\n" not in script)
    return person, out.getvalue()


@pytest.mark.parametrize(("variant", "options"), TABLES, ids=[f"{v}-{o}" for v, o in TABLES])
def test_every_screen_is_in_words_and_hides_what_the_seat_cannot_know(
    variant: str, options: dict[str, Any]
) -> None:
    for seed, seat in ((1, 0), (2, 1)):
        person, text = session(variant, options, seed, seat)
        assert person.screens and "over: " in text.splitlines()[-1]
        assert "pips left [" not in text and " 1 tiles" not in text


@pytest.mark.parametrize("variant", list(SPECS))
def test_each_variant_words_only_the_extras_it_publishes(variant: str) -> None:
    """``rules.extra_words``: the variant's words for its own ``public_state()`` extras (none
    for a key it does not publish), each a line or None (left out)."""
    env = raw_env(variant)
    env.reset(seed=0)
    public, names = env.public_state(), env.possible_agents
    words = env.rules.extra_words
    assert set(words) <= set(public)
    for key, say in words.items():
        line = say(public[key], names)
        assert line is None or (line and not any(raw in line for raw in RAW)), (key, line)


@pytest.mark.parametrize("variant", ["blind", "blind_blitz"])
def test_blind_rows_read_as_words(variant: str) -> None:
    person, _ = session(variant, {}, seed=3)
    screens = "".join(person.screens)
    assert "rows, left to right (the rightmost tile is turned up next):" in screens
    assert re.search(r"\n    P1 \(greedy\): (\?\? )*\?\?", screens)  # a face-down row
    assert re.search(r"\n  turned up: \d-\d\n", screens)
    assert "open_hands" not in screens and "arranging: True" not in screens


def test_blind_shows_its_own_row_only_where_it_saw_the_tiles() -> None:
    """In Blind the seat never looked at its row: only misses (turned up, sent left) are named."""
    person, _ = session("blind", {}, seed=3)
    own = [
        line for screen in person.screens for line in screen.splitlines() if line.startswith("    P0 (you): ")
    ]
    assert own and all("??" in line or "open hand" in line for line in own)
    assert own[0] == "    P0 (you): 3-3 ?? ?? ?? ?? ?? ?? ??"  # 3-3 turned up, no fit, to the left end


def test_blind_blitz_shows_the_row_as_it_is_arranged() -> None:
    person, _ = session("blind_blitz", {}, seed=3)
    first, second = person.screens[:2]
    assert "    P0 (you): none yet  (still to place: " in first
    chosen = re.search(r"\n  1\) arrange (\d-\d)\n", first)
    assert chosen
    assert f"    P0 (you): {chosen[1]}  (still to place: " in second  # the first tile placed: rightmost
    assert chosen[1] not in second.split("still to place: ")[1].splitlines()[0]
    arranged = next(s for s in person.screens if "arrange " not in s)  # the row once play starts
    row = re.search(r"\n    P0 \(you\): ([\d\- ]+)\n", arranged)
    assert row and "??" not in row[1]  # the seat knows the row it arranged


@pytest.mark.parametrize(
    ("variant", "options"), [("all_fives", {}), ("osel", {}), ("cross", {"num_players": 4})]
)
def test_spinner_tables_name_the_spinner(variant: str, options: dict[str, Any]) -> None:
    person, _ = session(variant, options, seed=1)
    with_arms = [s for s in person.screens if "north of spinner" in s]
    assert with_arms
    for screen in with_arms:
        named = re.search(r"\n {0,2}spinner: (\d)-(\d)\b", screen)
        assert named and named[1] == named[2]
        assert f"[{named[1]}|{named[1]}]" in screen.strip().splitlines()[1]  # on the line of play


def test_a_digit_int_refuses_reprompts() -> None:
    out = io.StringIO()
    assert ask(3, io.StringIO("²\n 2 \n"), out) == 1
    assert "'²' is not one of the moves" in out.getvalue()
    out = io.StringIO()
    env = raw_env("all_fives", num_players=2)
    agent = evaluate.contestant("greedy").agent(env, 1)
    assert not play(
        env, 0, opponent=agent, opponent_label="greedy", seed=3, stdin=io.StringIO("²\n³\nq\n"), stdout=out
    )
    assert "'²' is not one of the moves" in out.getvalue() and "'³' is not" in out.getvalue()


class Interrupted(io.StringIO):
    def readline(self, size: int | None = -1) -> str:
        raise KeyboardInterrupt


def test_ctrl_c_at_the_prompt_ends_the_line_and_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = raw_env("classic", num_players=2)
    out = io.StringIO()
    with pytest.raises(KeyboardInterrupt):
        play(
            env,
            0,
            opponent=evaluate.contestant("greedy").agent(env, 1),
            opponent_label="greedy",
            seed=0,
            stdin=Interrupted(),
            stdout=out,
        )
    assert re.search(r"your move \(1-\d+, q quits\): \ninterrupted: bye\n$", out.getvalue())
    monkeypatch.setattr("sys.stdin", Interrupted())
    assert main(["play", "--seed", "0"]) == 130
    assert capsys.readouterr().out.endswith("q quits): \ninterrupted: bye\n")


def test_extras_of_osel_and_metro_read_as_words() -> None:
    _, osel = session("osel", {}, seed=1, script="1\nq\n")
    assert "remembered penalty points (not written yet): P0 (you) 0, P1 (greedy) 0" in osel
    assert "scores opened: nobody yet" in osel
    _, metro = session("metro", {}, seed=1, script="1\n1\nq\n")
    assert "live ends: east " in metro and "the first double is laid as an ordinary tile" in metro
    assert "doubles are laid open (two new ends) or face down (closing the end)" in metro


PENALTY_TABLES = [(v, o) for v, o in TABLES if SPECS[v].rules.lower_score_wins]


@pytest.mark.parametrize(("variant", "options"), PENALTY_TABLES, ids=[f"{v}-{o}" for v, o in PENALTY_TABLES])
def test_penalty_tables_say_their_numbers_are_penalties_where_the_lower_wins(
    variant: str, options: dict[str, Any]
) -> None:
    """Classic and the other tables where the lower total wins never call a penalty a score: the
    log says "gets penalty N", every header and the result say the lower penalty wins."""
    _, text = session(variant, {**options, "episode": "round"}, seed=1)
    names = ", ".join(f"P{s} \\((?:you|greedy)\\) \\d+" for s in range(options["num_players"]))
    result = text.splitlines()[-1]
    assert re.fullmatch(
        rf"round over: (you win|you lose|first place shared) \((places: [^;]+; )?"
        rf"penalty points, lower wins: {names}(; remembered, not written yet: .+)?\)",
        result,
    ), result
    headers = [line for line in text.splitlines() if line.startswith(f"{variant} - round ")]
    assert headers and all(" - scores (penalty points, lower wins): " in line for line in headers)
    if variant != "osel":  # (Osel's first round points of 12 or fewer are only remembered)
        assert re.search(r"\nP\d \((you|greedy)\) gets penalty [1-9]\d* \([a-z ]+\)\n", text)
    assert not re.search(r" scores \d", text) and "(scores: " not in text


def test_classic_terminal_play_says_penalty_and_lower_wins() -> None:
    """The reported transcript: Classic said "P0 (you) scores 76 (pips in hand)", then "you lose
    (scores: ...)" - now the penalty and which total wins."""
    _, text = session("classic", {"episode": "round"}, seed=1)
    assert "\nP0 (you) gets penalty 50 (pips in hand)\n" in text
    assert text.endswith("round over: you lose (penalty points, lower wins: P0 (you) 50, P1 (greedy) 0)\n")
    _, match = session("classic", {}, seed=1)
    assert match.endswith("match over: you lose (penalty points, lower wins: P0 (you) 139, P1 (greedy) 0)\n")


def test_score_tables_keep_saying_score() -> None:
    """All Fives and 3D dominoes count points, the more the better: score, no penalty."""
    for variant in ("all_fives", "domino3d"):
        _, text = session(variant, {"episode": "round"}, seed=1)
        assert "penalty" not in text and "lower wins" not in text
        assert re.search(r"round over: [a-z ]+ \(scores: P0 \(you\) \d+, P1 \(greedy\) \d+\)\n$", text)
    _, text = session("all_fives", {"episode": "round"}, seed=1)
    assert re.search(r"\nP\d \((you|greedy)\) scores \d+ \(count\)\n", text)


def test_metro_and_osel_results_name_what_decides_them() -> None:
    """Domino-Metro's single game is ranked by places, said first; Osel's remembered points (the
    tie-break) follow the written penalties where there are any."""
    _, metro = session("metro", {"num_players": 3, "episode": "round"}, seed=1)
    assert metro.endswith(
        "round over: you win (places: P0 (you) 1st, P1 (greedy) 2nd, P2 (greedy) 3rd; "
        "penalty points, lower wins: P0 (you) 0, P1 (greedy) 0, P2 (greedy) 1)\n"
    )
    env = raw_env("osel", episode="round")
    env.reset(seed=0)
    env.game.extra.remembered[:] = [3, 0]
    assert final_totals(env, ["P0", "P1"]) == (
        "penalty points, lower wins: P0 0, P1 0; remembered, not written yet: P0 3, P1 0"
    )


def test_move_and_end_texts() -> None:
    assert move_text({"kind": "turn_up", "tile": None}) == "turn up"


def test_all_fives_moves_say_what_they_score() -> None:
    """Every move the menu says scores N scores N at once (its count), and the others score none."""
    promised: list[int] = []

    def first_scoring(board: str) -> int:
        menu = re.findall(r"\n  (\d+)\) [^\n]*?(?:, scores (\d+))?(?=\n|$)", board)
        choice, points = next(((k, p) for k, p in menu if p), menu[0])
        promised.append(int(points or 0))
        return int(choice)

    _, text = session("all_fives", {}, seed=1, choose=first_scoring)
    after = re.findall(
        r"your move \(1-\d+, q quits\): \d+\nP0 \(you\) (?:leads|plays) [^\n]+\n([^\n]*)", text
    )
    counted = [
        int(m[1]) if (m := re.match(r"P0 \(you\) scores (\d+) \(count\)$", line)) else 0 for line in after
    ]
    assert counted == promised and sum(p > 0 for p in promised) >= 3


@pytest.mark.parametrize("variant", ["all_fives", "domino3d"])
def test_the_log_names_the_tiles_you_draw_and_not_the_others(variant: str) -> None:
    _, text = session(variant, {}, seed=1)
    assert re.search(r"\nP0 \(you\) draws \d-\d\n", text)
    assert re.search(r"\nP1 \(greedy\) draws\n", text)
    assert not re.search(r"P1 \(greedy\) draws \d", text)


def test_3d_placements_are_grouped_by_tile_then_by_cells() -> None:
    chosen: list[str] = []

    def last(board: str) -> int:
        menu = board.split("\nyour moves:\n", 1)[1].splitlines()
        groups: list[tuple[str, list[tuple[list[int], str]]]] = []
        numbers = []
        for line in menu:
            if header := re.fullmatch(r"  (\d-\d):", line):
                groups.append((header[1], []))
                continue
            item = re.fullmatch(r"    (\d+)\) (\d) on \((\d+),(\d+)\), (\d) on \((\d+),(\d+)\)(.*)", line)
            assert item, line
            numbers.append(int(item[1]))
            cells = [int(item[i]) for i in (3, 4, 6, 7)]
            groups[-1][1].append((cells, line.split(") ", 1)[1]))
        assert numbers == list(range(1, len(numbers) + 1))
        tiles = [tile for tile, _ in groups]
        assert tiles == sorted(set(tiles))  # each tile once, in order
        for _, placements in groups:
            assert [cells for cells, _ in placements] == sorted(cells for cells, _ in placements)
        chosen.append(f"{groups[-1][0]}: {groups[-1][1][-1][1]}")
        return numbers[-1]

    _, text = session("domino3d", {}, seed=2, choose=last)
    laid = re.findall(r"your move \(1-\d+, q quits\): \d+\nP0 \(you\) lays ([^\n]+)", text)
    # the label read is the placement made (the menu says "scores 1" where the log says "(+1)")
    assert laid == [label.replace(", scores 1", " (+1)") for label in chosen] and len(laid) > 3
