"""The tables' pictures (``render_mode="rgb_array"``): PettingZoo's render test on every variant,
one frame size all game, what the chain tables' picture draws (tiles laid, face-down
doubles as backs, closed ends, a long line turning before the edge, a spinner's four arms),
what 3D dominoes' frame shows around its board (the seat to move, the hands, the last
events, the board on the felt at every size); then the ``record`` command's GIF."""

from __future__ import annotations

import random
import re
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import render_test
from PIL import Image

import domino_env
from domino_env.agents import make_agent
from domino_env.core.grid import DOWN
from domino_env.render import chain_image
from domino_env.render import frame as frame_render
from domino_env.render import grid as grid_render
from domino_env.render.drawing import BACK, FELT, IVORY
from domino_env.render.frame import HIGHLIGHT, LABEL_WIDTH, SEAT_ROW, Frame
from domino_env.render.scores import score_event_text
from domino_env.rules.grid import BOARD_SIZES
from domino_env.variants import blind as blind_variant
from domino_env.variants import metro as metro_variant
from tests.support.helpers import deal, play, play_random, tiles
from training.__main__ import main

CHAIN_VARIANTS = [name for name, spec in domino_env.SPECS.items() if spec.table == "chain"]
FRAME = (chain_image.FRAME_HEIGHT, chain_image.FRAME_WIDTH, 3)


def pieces(env) -> list[tuple[tuple[int, int, int, int], chain_image.Piece]]:
    """Each tile the frame draws on the felt, with its rectangle in pixels."""
    u = env.unwrapped
    layout, half, centre = chain_image.table_layout(u.rules, u.game)
    return [(chain_image.pixel_rect(piece.rect, half, centre), piece) for piece in layout.pieces]


def piece_of(env, values: tuple[int, int]) -> tuple[tuple[int, int, int, int], chain_image.Piece]:
    (found,) = [(rect, piece) for rect, piece in pieces(env) if sorted(piece.values) == sorted(values)]
    return found


def colour(image: np.ndarray, rect: tuple[int, int, int, int]) -> np.ndarray:
    """The colour most of a rectangle shows (the median: a tile's face or back, not its pips)."""
    left, top, right, bottom = rect
    return np.median(image[top:bottom, left:right].reshape(-1, 3), axis=0)


def inside(rect: tuple[int, int, int, int], box: tuple[int, int, int, int]) -> bool:
    return box[0] <= rect[0] and rect[2] <= box[2] and box[1] <= rect[1] and rect[3] <= box[3]


# --- every variant --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(domino_env.SPECS))
def test_pettingzoo_render_test_with_one_frame_size(name: str) -> None:
    shapes: set[tuple[int, ...]] = set()

    def one_size(frame: np.ndarray) -> bool:
        shapes.add(frame.shape)
        return len(shapes) == 1

    render_test(partial(domino_env.make, name), custom_tests={"rgb_array": one_size})
    assert "rgb_array" in domino_env.make(name).metadata["render_modes"]


@pytest.mark.parametrize(
    ("name", "options"),
    [(name, {"episode": "round"}) for name in CHAIN_VARIANTS]
    + [("classic", {"num_players": 4, "teams": True})],  # a whole match: the frames of several deals
    ids=[*CHAIN_VARIANTS, "classic-match"],
)
def test_frame_size_is_constant_over_a_whole_game(name: str, options: dict) -> None:
    env = domino_env.make(name, render_mode="rgb_array", **options)
    env.reset(seed=1)
    rnd = random.Random(1)
    frames, rounds = [env.render()], {env.unwrapped.round_index}
    while play_random(env, 1, rnd):
        frames.append(env.render())
        rounds.add(env.unwrapped.round_index)
    assert all(frame.shape == FRAME and frame.dtype == np.uint8 for frame in frames)
    assert len(frames) > 10 and not np.array_equal(frames[0], frames[-1])
    assert len(rounds) > 1 if options.get("episode", "match") == "match" else rounds == {0}


# --- what a chain table's picture shows -----------------------------------------------------------


def test_laying_a_tile_changes_the_felt() -> None:
    env = domino_env.make("classic", render_mode="rgb_array", episode="round")
    env.reset(seed=0, options={"deal": deal(["0-0 0-1 0-2 0-3 0-4 0-5 0-6", "1-1 1-2 1-3 1-4 1-5 1-6 2-2"])})
    empty = env.render()
    play(env, "0-5", seat=0)
    laid = env.render()
    ((rect, piece),) = pieces(env)
    assert piece.values == (0, 5) and not piece.vertical  # the lead lies across the middle
    assert (colour(empty, rect) == FELT).all()  # (the words "empty table" cover a little of it)
    assert (colour(laid, rect) == IVORY).all()
    felt = chain_image.felt_box(2)
    changed = np.any(empty[felt[1] : felt[3]] != laid[felt[1] : felt[3]], axis=2)
    assert changed.sum() > (rect[2] - rect[0]) * (rect[3] - rect[1]) * 0.8
    play(env, "1-5", seat=1)
    assert not np.array_equal(laid, env.render())  # the next tile too


# Osel at four: the lowest double (1-1, seat 0) leads, then 1-2 east; seat 1 may lay 2-2 either face.
OSEL_4P = [
    ["1-1", "1-2", "5-5", "6-6", "5-6", "4-6", "3-6"],
    ["2-2", "1-3", "0-0", "0-1", "0-2", "0-3", "0-4"],
    ["3-3", "1-4", "0-5", "0-6", "1-6", "2-3", "2-4"],
    ["4-4", "1-5", "2-5", "2-6", "3-4", "3-5", "4-5"],
]


@pytest.mark.parametrize("face_down", [True, False])
def test_osel_face_down_double_is_drawn_as_a_back(face_down: bool) -> None:
    env = domino_env.make("osel", num_players=4, render_mode="rgb_array")
    env.reset(seed=0, options={"deal": deal(OSEL_4P, leader=None)})
    play(env, "1-1", "lead", seat=0)
    play(env, "1-2", "east", seat=0)
    play(env, "2-2", "east", seat=1, face_down=face_down)
    image = env.render()
    rect, piece = piece_of(env, (2, 2))
    assert piece.face_down == face_down and piece.vertical  # a double across the east arm
    assert (colour(image, rect) == (BACK if face_down else IVORY)).all()
    lead_rect, lead = piece_of(env, (1, 1))
    assert not lead.face_down and (colour(image, lead_rect) == IVORY).all()


# Domino-Metro at two (double-nine, 10 tiles each): 0-1 leads, 1-1 is the first double (an
# ordinary tile), and seat 0's 4-4 face down closes east.
METRO_HANDS = [
    ["0-1", "0-2", "4-4", "5-5", "6-6", "7-7", "8-8", "9-9", "5-6", "6-7"],
    ["1-1", "1-4", "2-3", "3-5", "5-7", "7-8", "8-9", "2-9", "3-9", "5-9"],
]


def test_metro_closed_end_is_capped() -> None:
    env = domino_env.make("metro", render_mode="rgb_array", episode="round")
    env.reset(seed=0, options={"deal": {"hands": METRO_HANDS, "leader": 0, "opening": "0-1"}})
    for seat, (move, arm) in enumerate([("0-1", "lead"), ("1-1", "east"), ("0-2", "west"), ("1-4", "east")]):
        play(env, move, arm, seat=seat % 2)
    felt = chain_image.felt_box(2)

    def capped(image: np.ndarray) -> int:
        table = image[felt[1] : felt[3]]
        return int(np.all(table == chain_image.CAP, axis=2).sum())

    assert capped(env.render()) == 0
    play(env, "4-4", "east", seat=0, face_down=True)
    image = env.render()
    u = env.unwrapped
    layout, half, centre = chain_image.table_layout(u.rules, u.game)
    ((x, y, heading),) = layout.caps  # east, beyond the face-down 4-4
    assert heading == chain_image.RIGHT
    px, py, _, _ = chain_image.pixel_rect((x, y, x, y), half, centre)
    assert capped(image) > 20 and (image[py, px + 1] == chain_image.CAP).all()
    rect, piece = piece_of(env, (4, 4))
    assert piece.face_down and rect[2] == px  # the cap touches the back's outer side


def test_a_long_line_turns_before_the_edge_and_stays_on_the_table() -> None:
    for name in ("classic", "metro"):
        env = domino_env.make(name, render_mode="rgb_array", episode="round")
        felt = chain_image.felt_box(2)
        longest: list = []
        for seed in range(3):
            env.reset(seed=seed)
            rnd = random.Random(seed)
            while play_random(env, 1, rnd):
                laid = pieces(env)
                assert all(inside(rect, felt) for rect, _ in laid), f"{name} seed {seed}: off the felt"
                longest = max(longest, laid, key=len)
        straight = sum(max(r[2] - r[0], r[3] - r[1]) for r, _ in longest)  # end to end in one row
        assert straight > felt[2] - felt[0], f"{name}: the longest line would fit in one row"
        rows = {(r[1] + r[3]) // 2 for r, piece in longest if not piece.vertical}
        assert len(rows) > 1  # it turned and came back


CROSS_HANDS = [  # 6-6 leads; seat 1 starts north with 5-6, seat 2 south with 4-6
    "6-6 0-0 0-1 0-2 0-3 0-4 0-5",
    "5-6 1-1 1-2 1-3 1-4 1-5 0-6",
    "4-6 2-2 2-3 2-4 2-5 1-6 3-3",
    "3-6 3-4 3-5 4-4 4-5 5-5 2-6",
]


def test_spinner_arms_go_up_and_down() -> None:
    env = domino_env.make("cross", render_mode="rgb_array")
    env.reset(seed=0, options={"deal": deal(CROSS_HANDS, leader=None)})
    play(env, "6-6", seat=0)
    play(env, "5-6", "north", seat=1)
    play(env, "4-6", "south", seat=2)
    spinner, _ = piece_of(env, (6, 6))
    north, north_piece = piece_of(env, (5, 6))
    south, south_piece = piece_of(env, (4, 6))
    assert north_piece.vertical and south_piece.vertical
    assert north[3] == spinner[1] and south[1] == spinner[3]  # on its top and bottom ends
    assert north_piece.values == (5, 6) and south_piece.values == (6, 4)  # 6 against the spinner
    middle = (spinner[0] + spinner[2]) // 2
    assert north[0] < middle < north[2] and south[0] < middle < south[2]
    image = env.render()
    assert (colour(image, north) == IVORY).all() and (colour(image, south) == IVORY).all()


# --- what 3D dominoes' picture shows ----------------------------------------------------------------


def seat_part(image: np.ndarray, frame: Frame, seat: int, hand: bool) -> np.ndarray:
    """A seat's row on the rail: its hand (right of the label), or its label (marker and name)."""
    top = frame.seat_top(seat)
    row = image[top : top + SEAT_ROW]
    return row[:, LABEL_WIDTH:] if hand else row[:, :LABEL_WIDTH]


def marked(image: np.ndarray, frame: Frame) -> list[int]:
    """The seats whose label shows the gold of the seat to move."""
    return [
        seat
        for seat in range(frame.num_players)
        if np.all(seat_part(image, frame, seat, hand=False) == HIGHLIGHT, axis=2).any()
    ]


def test_domino3d_frame_marks_the_seat_to_move_and_redraws_the_hand_laid_from() -> None:
    env = domino_env.make("domino3d", render_mode="rgb_array")
    hands = [tiles("3-6 0-0 0-1 1-1"), tiles("5-6 2-5 1-2 2-2")]  # 3-6 fits under the start's 3
    env.reset(seed=0, options={"deal": {"hands": hands, "start": (3, 5), "boneyard": tiles("6-6 4-4")}})
    rules = env.unwrapped.rules
    frame = grid_render.frame_of(rules)
    before = env.render()
    assert marked(before, frame) == [0]
    env.step(rules.action(3, 6, 9, 7, DOWN))  # seat 0 lays 3-6 and draws 6-6; seat 1 can lay 5-6
    after = env.render()
    assert marked(after, frame) == [1]
    assert not np.array_equal(seat_part(before, frame, 0, hand=True), seat_part(after, frame, 0, hand=True))
    np.testing.assert_array_equal(
        seat_part(before, frame, 1, hand=True), seat_part(after, frame, 1, hand=True)
    )
    top, left = grid_render.board_origin(rules)
    s = grid_render.cell_pixels(rules.board_size)
    laid = (left + 7 * s, top + 9 * s, left + 8 * s, top + 11 * s)  # on (9, 7) and (10, 7)
    assert (colour(before, laid) == FELT).all() and (colour(after, laid) == IVORY).all()
    status = grid_render.status_lines(rules, env.unwrapped.game, env.possible_agents)
    assert status[-2:] == ["player_0 lays 3-6: 3 on (9,7), 6 on (10,7)", "player_0 draws 6-6"]


@pytest.mark.parametrize(("num_players", "board_size"), [(2, 16), (4, 32)])
def test_domino3d_frame_size_is_constant_over_a_whole_game(num_players: int, board_size: int) -> None:
    env = domino_env.make("domino3d", render_mode="rgb_array", num_players=num_players, board_size=board_size)
    env.reset(seed=2)
    frame = grid_render.frame_of(env.unwrapped.rules)
    rnd = random.Random(2)
    frames = [env.render()]
    while play_random(env, 1, rnd):
        frames.append(env.render())
    assert len(frames) > 10 and all(f.shape == (frame.height, frame.width, 3) for f in frames)
    assert marked(frames[-1], frame) == []  # the game is over: nobody to move
    status = grid_render.status_lines(env.unwrapped.rules, env.unwrapped.game, env.possible_agents)
    assert len(status) == grid_render.STATUS_LINES and status[-1].startswith("game over: ")


def test_domino3d_board_fits_its_felt_at_every_board_size() -> None:
    for board_size in BOARD_SIZES:
        rules = domino_env.raw_env("domino3d", board_size=board_size).rules
        frame = grid_render.frame_of(rules)
        top, left = grid_render.board_origin(rules)
        n, s = board_size, grid_render.cell_pixels(board_size)
        assert inside((left, top, left + n * s + 1, top + n * s + 1), frame.felt_box), board_size
        assert frame.width >= grid_render.MIN_WIDTH


# --- what the numbers are -------------------------------------------------------------------------


def words_drawn(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the frame draws from now on (header, status bar, seat rows), in order."""
    said: list[str] = []
    real = frame_render.draw_text

    def spy(image: np.ndarray, x: int, y: int, text: str, size: int, colour: tuple[int, int, int]) -> None:
        said.append(text)
        real(image, x, y, text, size, colour)

    monkeypatch.setattr(frame_render, "draw_text", spy)
    return said


def finished(name: str, seed: int = 3, **options: object) -> domino_env.DominoEnv:
    env = domino_env.raw_env(name, episode="round", **options)
    env.reset(seed=seed)
    play_random(env, 10**4, random.Random(seed))
    return env


@pytest.mark.parametrize("name", list(domino_env.SPECS))
def test_the_picture_says_whether_its_numbers_are_penalties_or_scores(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Classic's picture put "score 19" under the seat that lost: where the lower total wins the
    seat rows say "penalty N" and the header that the lower wins; All Fives and 3D dominoes keep
    "score"."""
    env = finished(name, **({"board_size": 8} if name == "domino3d" else {}))
    said = words_drawn(monkeypatch)
    env.table_image()
    scores, sides = env.public_state()["scores"], env.rules.side_of
    rows = [text for text in said if " - score " in text or " - penalty " in text]
    word = "penalty" if env.rules.lower_score_wins else "score"
    assert len(rows) == env.rules.num_players
    assert [row.split(" - ")[1] for row in rows] == [f"{word} {scores[seat]}" for seat in range(len(sides))]
    header = said[2]  # after the title and the stock's count: the sides' totals
    assert header.startswith("penalty points, lower wins:") == env.rules.lower_score_wins, header
    assert ("penalty" in " ".join(said)) == env.rules.lower_score_wins


def test_classic_text_says_penalty_and_lower_wins() -> None:
    env = finished("classic")
    names = ["P0 greedy", "P1 random"]
    text = env.table_text(names)
    scores = env.public_state()["scores"]
    header = f"classic - round 1 - scores (penalty points, lower wins): P0 greedy: {scores[0]}, "
    assert text.startswith(f"{header}P1 random: {scores[1]}\n")
    loser = max(range(2), key=lambda seat: scores[seat])
    assert f"{names[loser]} gets penalty {scores[loser]} (pips in hand)" in text
    assert not re.search(r" scores \d", text)
    assert (
        env.event_text(("score", 0, 76, "pips in hand"), names) == "P0 greedy gets penalty 76 (pips in hand)"
    )
    all_fives = domino_env.raw_env("all_fives")
    assert all_fives.event_text(("score", 0, 10, "count"), names) == "P0 greedy scores 10 (count)"
    metro = domino_env.raw_env("metro", num_players=3).rules
    assert score_event_text(metro, "P1", -2, "domino-metro clears metros") == (
        "P1 has penalty 2 taken off (domino-metro clears metros)"
    )


def test_a_variants_own_events_are_said_in_its_words() -> None:
    """Blind's and Domino-Metro's event kinds live in their modules and are said there
    (``rules.describe_event``); the renderer says the shared kinds and asks the rules for the rest."""
    names = ["P0", "P1", "P2"]
    blind = domino_env.raw_env("blind_blitz")
    tid = blind.rules.tile_set.ids
    assert blind_variant.ARRANGED == blind_variant.ARRANGE  # the event names the action's kind
    said = {
        (blind_variant.UP, 0, tid[(0, 1)]): "P0 turns up 0-1",
        (blind_variant.MISS, 1, tid[(2, 4)]): "P1 turns up 2-4: no fit, to the left end of the row",
        (blind_variant.REVEAL, 1, 1 << tid[(1, 1)] | 1 << tid[(5, 6)]): (
            "P1 turns the last three tiles face up: 1-1 5-6"
        ),
        (blind_variant.ARRANGED, 0): None,  # which tile: the arranger's secret
    }
    for event, text in said.items():
        assert blind.rules.describe_event(event, names) == text
        assert blind.event_text(event, names) == text
    metro = domino_env.raw_env("metro", num_players=3)
    place = (metro_variant.PLACE, 2, 3, "mole")
    assert metro.event_text(place, names) == "P2 takes place 3 (the mole, left holding tiles)"
    assert metro.rules.describe_event(place, names) == "P2 takes place 3 (the mole, left holding tiles)"
    classic = domino_env.raw_env("classic").rules  # a kind a variant does not declare: not said
    assert classic.describe_event(place, names) is None
    assert classic.describe_event((blind_variant.UP, 0, 1), names) is None


def test_the_recorded_gif_says_penalty_under_classic_seats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    said = words_drawn(monkeypatch)
    assert (
        main(["record", "classic", "greedy", "random", "--out", str(tmp_path / "g.gif"), "--seed", "3"]) == 0
    )
    rows = [text for text in said if text.startswith(("7 tiles", "no tiles", "1 tile", "2 tiles"))]
    assert rows and all(" - penalty " in row for row in rows) and not any(" - score " in t for t in said)
    assert any(text.startswith("penalty points, lower wins:") for text in said)


# --- the record command ------------------------------------------------------------------------------


def moves_of(variant: str, specs: list[str], seed: int, **options: object) -> int:
    """The moves of the game ``record`` plays: the deal from ``seed``, seat s's agent seeded
    ``seed + 1 + s`` (the agents taking the seats in turn)."""
    env = domino_env.raw_env(variant, episode="round", **options)
    agents = [make_agent(specs[s % len(specs)], seed + 1 + s) for s in range(env.rules.num_players)]
    env.reset(seed=seed)
    moves = 0
    while not all(env.terminations.values()):
        agent = env.agent_selection
        env.step(agents[env.possible_agents.index(agent)](env, env.observe(agent)))
        moves += 1
    return moves


def test_record_writes_a_frame_per_move(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "game.gif"
    assert main(["record", "classic", "greedy", "random", "--out", str(out), "--seed", "3"]) == 0
    frames = moves_of("classic", ["greedy", "random"], 3) + 1  # the deal, then every move
    assert f"({frames} frames)" in capsys.readouterr().out
    with Image.open(out) as gif:
        assert gif.n_frames == frames and gif.size == (FRAME[1], FRAME[0])
    short = tmp_path / "short.gif"
    args = ["record", "cross", "greedy", "--out", str(short), "--max-frames", "4", "--fps", "5"]
    assert main(args) == 0
    with Image.open(short) as gif:
        assert gif.n_frames == 4 and gif.info["duration"] == 200


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["checkers", "greedy"], "unknown variant 'checkers'"),
        (["classic", "nobody"], "agent 'nobody' is not random or greedy"),
        (["classic", "greedy", "--option", "colour=red"], "unknown option(s) ['colour']"),
        (["classic", "greedy", "random", "greedy"], "3 agents for a table of 2 seats"),
    ],
    ids=["variant", "agent", "option", "seats"],
)
def test_record_bad_input_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], words: str
) -> None:
    out = tmp_path / "game.gif"
    assert main(["record", *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and len(err.strip().splitlines()) == 1 and words in err
    assert not out.exists()


@pytest.mark.parametrize("name", ["classic", "all_fives"])
def test_a_seats_picture_shows_nothing_it_cannot_know(name: str) -> None:
    """``table_image(seat=...)`` is what a person at that seat may see: two deals that differ
    only in the other hand and the boneyard draw the same picture, unless ``reveal`` (or the
    whole table) shows them."""
    mine = "0-0 0-1 0-2 0-3 0-4 0-5 0-6"
    theirs = ["1-1 1-2 1-3 1-4 1-5 1-6 2-2", "3-3 3-4 3-5 3-6 4-4 4-5 4-6"]
    pictures = {}
    for k, other in enumerate(theirs):
        env = domino_env.make(name, num_players=2)
        env.reset(seed=k, options={"deal": deal([mine, other], leader=0)})
        raw = env.unwrapped
        pictures[k] = (raw.table_image(seat=0), raw.table_image(seat=0, reveal=True), raw.table_image())
    assert np.array_equal(pictures[0][0], pictures[1][0])
    assert not np.array_equal(pictures[0][1], pictures[1][1])  # revealed: the hidden hand, dimmed
    assert not np.array_equal(pictures[0][2], pictures[1][2])  # the whole table shows every hand
