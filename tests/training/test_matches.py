"""The match loop: seats rotated, duplicate deals (every deal under every seating), intervals."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

import domino_env
from domino_env.agents import make_agent
from training import matches
from training.__main__ import main
from training.eval import evaluate
from training.matches import EDGE_DEALS, Match, mean_interval, play_match, seatings, wilson_interval


def first_hands(env: domino_env.DominoEnv, games: int, seed: int, duplicate: bool) -> list[list[int]]:
    """Each game's dealt hands (per seat), as the match loop deals them."""
    seen: list[list[int]] = []
    original = env.reset

    def reset(seed=None, options=None):
        original(seed=seed, options=options)
        seen.append(list(env.game.hands))

    env.reset = reset  # type: ignore[method-assign]
    play_match(
        env, make_agent("random", 0), make_agent("random", 1), games=games, seed=seed, duplicate=duplicate
    )
    return seen


@pytest.mark.parametrize(
    ("variant", "options", "k"),
    [
        ("classic", {}, 2),
        ("classic", {"num_players": 3}, 3),
        ("all_fives", {"num_players": 4, "teams": True}, 2),
    ],
)
def test_duplicate_plays_every_deal_under_every_seating(variant, options, k) -> None:
    env = domino_env.raw_env(variant, episode="round", **options)
    assert seatings(env.rules.num_players, env.rules.teams) == k
    hands = first_hands(env, 3 * k, seed=9, duplicate=True)
    for deal in range(3):
        games = hands[deal * k : (deal + 1) * k]
        assert all(g == games[0] for g in games), "a deal's seatings share its shuffle"
    assert hands[0] != hands[k], "consecutive deals differ"
    independent = first_hands(env, 3 * k, seed=9, duplicate=False)
    assert len({tuple(h) for h in independent}) == 3 * k  # one deal per game without duplicate


@pytest.mark.parametrize(
    ("options", "seats"),
    [
        ({"num_players": 3}, [[0], [1], [2]]),
        ({"num_players": 4, "teams": True}, [[0, 2], [1, 3]]),
    ],
)
def test_duplicate_seats_the_first_agent_once_per_seating(options, seats, monkeypatch) -> None:
    env = domino_env.raw_env("classic", episode="round", **options)
    first, second = make_agent("random", 0), make_agent("random", 1)
    calls: list[tuple[list[int], int]] = []
    real = matches.play_game

    def spy(env, agents, seed, recorder=None):
        calls.append(([s for s, agent in enumerate(agents) if agent.agent is first], seed))  # (timed)
        return real(env, agents, seed, recorder)

    monkeypatch.setattr(matches, "play_game", spy)
    k = len(seats)
    match = play_match(env, first, second, games=2 * k, seed=4, duplicate=True)
    assert match.per_deal == k and len(match.margins) == 2 * k
    assert sum(match.decisions) == match.steps and min(match.seconds) > 0  # each agent's stopwatch
    assert match.ms_per_decision(0) == pytest.approx(1000 * match.seconds[0] / match.decisions[0])
    assert calls == [(seat, 4) for seat in seats] + [(seat, 5) for seat in seats]
    calls.clear()
    play_match(env, first, second, games=2 * k, seed=4)  # independent deals: one deal a game
    assert [seed for _, seed in calls] == list(range(4, 4 + 2 * k))


def test_duplicate_needs_whole_deals() -> None:
    env = domino_env.raw_env("classic", num_players=3)
    with pytest.raises(ValueError, match="multiple of 3"):
        play_match(env, make_agent("random", 0), make_agent("random", 1), games=4, seed=0, duplicate=True)


def test_intervals_on_hand_made_matches() -> None:
    # twelve deals, two seatings each: the deals' mean shares are 1, .5, .5, .5, .5, 0, twice
    shares = [1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0] * 2
    margins = [10.0, 6.0, 4.0, 0.0, 1.0, -1.0, 2.0, -2.0, -4.0, 0.0, -6.0, -10.0] * 2  # 8 2 0 0 -2 -8
    paired = Match(24, 12.0, 0.0, 1.0, 0, shares=shares, margins=margins, per_deal=2)
    t11 = 2.2009852  # Student's t, 97.5%, 11 degrees of freedom
    half = t11 * math.sqrt(1 / 11) / math.sqrt(12)  # the deal means' sd is sqrt(1/11)
    assert paired.interval() == pytest.approx((0.5 - half, 0.5 + half))
    assert paired.margin == 0.0
    spread = t11 * math.sqrt(272 / 11 / 12)  # the deal margins' squares sum to 272
    assert paired.margin_interval() == pytest.approx((-spread, spread))
    single = Match(24, 12.0, 0.0, 1.0, 0, shares=shares, margins=margins)
    assert single.interval() == wilson_interval(12.0, 24)
    assert single.margin_interval() == mean_interval(margins)
    assert all(math.isnan(x) for x in mean_interval([1.0]))
    swept = Match(10, 10.0, 0.0, 1.0, 0, shares=[1.0] * 10, margins=[5.0] * 10, per_deal=2)
    low, high = swept.interval()  # every deal won: not a certainty, Wilson's over the 5 deals
    assert (low, high) == wilson_interval(5.0, 5) and high == 1.0 and low < 0.6


def test_margins_are_signed_so_more_is_better() -> None:
    for variant in ("classic", "all_fives"):  # penalty points, then points
        env = domino_env.raw_env(variant)
        match = play_match(env, make_agent("greedy", 0), make_agent("random", 1), games=12, seed=5)
        assert match.margin > 0, variant  # greedy beats random on points too


def test_evaluate_duplicate_prints_and_writes_the_protocol(tmp_path: Path, capsys) -> None:
    out = tmp_path / "dup.csv"
    args = ["evaluate", "greedy", "random", "--variant", "classic", "--option", "num_players=3"]
    assert main([*args, "--games", "5", "--duplicate", "--no-progress", "--csv", str(out)]) == 0
    text = capsys.readouterr().out
    assert "6 games per pairing, duplicate deals (each deal once per seating)" in text  # rounded up
    assert "margin" in text and "duplicate deals, against independent deals at the same games" in text
    rows = out.read_text().splitlines()
    assert rows[0].split(",") == list(evaluate.RESULT_COLUMNS)
    assert all(row.split(",")[-1] == "True" for row in rows[1:])


def test_the_duplicate_gain_compares_like_with_like() -> None:
    """Deals whose two seatings went alike hold half the information of as many independent
    games: the same t-interval over the deals comes out wider, and the line says so (against
    Wilson's interval at the same rate it read narrower where games are tied)."""
    shares = [1.0, 1.0, 0.5, 0.5, 0.0, 0.0, 1.0, 1.0, 0.5, 0.5, 1.0, 1.0]
    alike = evaluate.Result(12, 8.0, 0.0, 1.0, 0, shares=shares, margins=[2.0, 2.0, 0.0, 0.0] * 3, per_deal=2)
    assert re.search(
        r"win-rate interval \d+% wider, margin interval \d+% wider", evaluate.duplicate_gain([alike])
    )
    low, high = mean_interval(alike.deal_shares())
    single_low, single_high = mean_interval(shares)
    assert high - low > single_high - single_low


def test_the_duplicate_gain_of_one_deal_prints_no_nan() -> None:
    """One deal has no interval over the deals: nothing to compare, never "nan% wider"."""
    one = evaluate.Result(2, 1.0, 0.0, 1.0, 0, shares=[1.0, 0.0], margins=[3.0, -5.0], per_deal=2)
    line = evaluate.duplicate_gain([one])
    assert "nan" not in line and line == "duplicate deals: no interval to compare"


def test_a_duplicate_win_rate_near_the_edge_takes_wilsons_interval_over_the_deals() -> None:
    """Fewer than EDGE_DEALS deals' worth of losses (or wins): the t-interval would reach 100%
    (99 deals won and one split: [98.5%, 100%]); Wilson's over the deals does not, and is what
    the benchmark gives for the same games. From EDGE_DEALS on, the t-interval again."""
    near = [1.0, 1.0] * 99 + [1.0, 0.0]
    match = Match(200, sum(near), 0.0, 1.0, 0, shares=near, margins=[1.0] * 200, per_deal=2)
    assert match.interval() == wilson_interval(99.5, 100)
    assert match.interval()[1] < 1.0 and mean_interval(match.deal_shares())[1] > 0.9999
    shares = [1.0, 1.0] * (100 - EDGE_DEALS) + [0.0, 0.0] * EDGE_DEALS
    enough = Match(200, sum(shares), 0.0, 1.0, 0, shares=shares, margins=[1.0] * 200, per_deal=2)
    low, high = enough.interval()  # (the fewest losses that take the t-interval: still inside [0, 1])
    assert (low, high) == mean_interval(enough.deal_shares()) and 0.0 < low < high < 1.0
    lost = [1.0 - s for s in near]  # the same near the other edge
    assert Match(200, sum(lost), 0.0, 1.0, 0, shares=lost, margins=[0.0] * 200, per_deal=2).interval() == (
        wilson_interval(0.5, 100)
    )
