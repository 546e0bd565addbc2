"""``python -m training ladder``: the fit recovers known strengths (Bradley-Terry at two sides,
Luce's choice alone against copies at 3-4 single seats), a real small ladder orders its rungs
with honest intervals, a new agent is rated with the rungs fixed, Cross's ladder reads the
benchmark's games, the files, and bad input in one line."""

from __future__ import annotations

import csv
import itertools
import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image

from training.__main__ import main
from training.eval import benchmark, ladder
from training.eval.evaluate import prepare

# Whole All Fives matches (the default table's): a 20-game ladder of these rungs takes seconds.
TABLE = ["--variant", "all_fives"]
RUNGS = ["random", "greedy", "search:1"]


def first_wins(elo_first: float, elo_second: float, copies: int) -> float:
    """The model's chance that the first comes first: alone against ``copies`` of the second,
    Luce's choice w1 / (w1 + copies w2) (Bradley-Terry at 1)."""
    w1, w2 = 10 ** (elo_first / 400), 10 ** (elo_second / 400)
    return w1 / (w1 + copies * w2)


def outcomes(elo: list[float], games: float, copies: int, rng: np.random.Generator | None) -> ladder.Outcomes:
    """Every pairing of agents of known Elo (one order at two sides, both alone against copies),
    its games won drawn from the model (``rng``) or the expected counts themselves (None)."""
    n = len(elo)
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j and (i < j or copies > 1)]
    chances = [first_wins(elo[i], elo[j], copies) for i, j in pairs]
    won = [games * c if rng is None else rng.binomial(int(games), c) for c in chances]
    return ladder.Outcomes(
        first=np.array([i for i, _ in pairs]),
        second=np.array([j for _, j in pairs]),
        won=np.array(won, dtype=float),
        games=np.full(len(pairs), float(games)),
        copies=np.full(len(pairs), float(copies)),
    )


@pytest.mark.parametrize("copies", [1, 2, 3])
def test_the_fit_recovers_known_strengths(copies: int) -> None:
    elo = [0.0, 120.0, 300.0, 550.0, -80.0]
    drawn = outcomes(elo, 20_000, copies, np.random.default_rng(1))
    fitted = ladder.to_elo(ladder.fit_strengths(len(elo), drawn))
    assert fitted == pytest.approx(elo, abs=20)  # a pairing's standard error here: about 5 Elo
    # the expected counts themselves: the maximum likelihood is the truth, but for the virtual game
    exact = ladder.to_elo(ladder.fit_strengths(len(elo), outcomes(elo, 1e6, copies, None)))
    assert exact == pytest.approx(elo, abs=0.1)


def test_even_play_alone_against_copies_rates_even() -> None:
    """At Cross's table a seat that wins a quarter of its games alone against three is as strong
    as they are: no pairwise reading (a quarter would be 191 Elo below) but Luce's choice."""
    even = ladder.Outcomes(
        np.array([0, 1]),
        np.array([1, 0]),
        np.array([50.0, 50.0]),
        np.array([200.0, 200.0]),
        np.array([3.0, 3.0]),
    )
    assert ladder.to_elo(ladder.fit_strengths(2, even)) == pytest.approx([0, 0], abs=1e-6)


@pytest.mark.parametrize("copies", [1, 3])
def test_a_sweep_is_held_finite_by_one_virtual_game(copies: int) -> None:
    sweep = ladder.Outcomes(
        np.array([0]), np.array([1]), np.array([10.0]), np.array([10.0]), np.array([copies])
    )
    gap = ladder.to_elo(ladder.fit_strengths(2, sweep), anchor=1)[0]
    even = 1 / (1 + copies)  # 10 games of 10 read as 10 + even of 11
    assert gap == pytest.approx(ladder.ELO * math.log((10 + even) / (1 - even) * copies), rel=1e-6)


def test_one_agent_against_fixed_rungs_is_fitted_alone() -> None:
    rungs = np.array([0.0, 200.0, 400.0])
    rng = np.random.default_rng(2)
    games = np.full(3, 20_000.0)
    wins = np.array([rng.binomial(20_000, 1 / (1 + 10 ** ((r - 290) / 400))) for r in rungs])
    assert ladder.fit_one(rungs, wins, games) == pytest.approx(290, abs=15)
    # the same ratings with every rung shifted: the agent shifts with them
    assert ladder.fit_one(rungs + 100, wins, games) == pytest.approx(ladder.fit_one(rungs, wins, games) + 100)


def test_one_agent_is_fitted_alone_at_single_seats() -> None:
    """Alone against three copies of each rung (offset -ln 3) and filling three seats against
    each rung alone (+ln 3): its side's wins, drawn from Luce's choice, give back its rating."""
    rungs = np.array([0.0, 200.0, 400.0, 0.0, 200.0, 400.0])
    alone = np.array([True, True, True, False, False, False])
    chances = [
        first_wins(290, r, 3) if a else 1 - first_wins(r, 290, 3) for r, a in zip(rungs, alone, strict=True)
    ]
    rng = np.random.default_rng(3)
    wins = np.array([rng.binomial(20_000, c) for c in chances], dtype=float)
    offsets = np.where(alone, -math.log(3), math.log(3))
    assert ladder.fit_one(rungs, wins, np.full(6, 20_000.0), offsets) == pytest.approx(290, abs=15)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A real ladder of random, greedy and search:1 (20 single rounds a pairing), and its report
    (as printed; a module fixture cannot read capsys)."""
    out = tmp_path_factory.mktemp("ladder")
    args = ["ladder", *RUNGS, *TABLE, "--games", "20", "--out", str(out), "--no-progress", "--workers", "1"]
    assert main(args) == 0
    return out, json.loads((out / "ladder.json").read_text())["report"]


def test_a_real_ladder_orders_its_rungs_with_intervals(built: tuple[Path, list[str]]) -> None:
    out, _ = built
    data = json.loads((out / "ladder.json").read_text())
    ratings, intervals = data["ratings"], data["intervals"]
    assert data["rungs"] == RUNGS and data["anchor"] == "random" and ratings["random"] == 0
    assert ratings["random"] < ratings["greedy"]
    for rung in ("greedy", "search:1"):  # relative to the anchor, which has none
        low, high = intervals[rung]
        assert low <= ratings[rung] <= high and high - low > 0
    assert data["games"] == 20 and data["seed"] == 0 and "Bradley-Terry" in data["method"]
    assert data["variant"] == "all_fives" and data["table"].startswith("all_fives (")
    assert len(data["pairings"]) == 3 and all(len(p["shares"]) == 20 for p in data["pairings"])
    for p in data["pairings"]:
        assert p["ci_low"] <= p["win_rate"] <= p["ci_high"]
    # each rung over the next one down, with the gap's own interval from the same resamples
    gaps = data["gaps"]
    assert [(g["upper"], g["lower"]) for g in gaps] == list(
        itertools.pairwise(sorted(RUNGS, key=lambda r: -ratings[r]))
    )
    for g in gaps:
        assert g["elo"] == pytest.approx(ratings[g["upper"]] - ratings[g["lower"]])
        assert g["interval"][0] <= g["elo"] <= g["interval"][1]
    assert ladder.Ladder.load(out / "ladder.json").gaps[0][:2] == (gaps[0]["upper"], gaps[0]["lower"])


def test_the_ladder_files_are_written(built: tuple[Path, list[str]]) -> None:
    out, report = built
    with (out / "ladder.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["rung"] for r in rows] == RUNGS
    assert float(rows[1]["vs random"]) == pytest.approx(1 - float(rows[0]["vs greedy"]))
    with Image.open(out / "ladder.png") as png:
        assert png.width > 600 and png.height > 200
        assert "Bradley-Terry" in png.info["Description"]
    assert report[0].split()[:2] == ["rung", "Elo"] and "(anchor)" in report[1]
    loaded = ladder.Ladder.load(out / "ladder.json")
    assert loaded.rungs == RUNGS and loaded.games == 20 and loaded.pairings[0].per_deal == 2


def test_a_ladder_is_not_replaced_without_overwrite(
    built: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = built
    before = (out / "ladder.json").read_bytes()
    assert main(["ladder", "random", "greedy", *TABLE, "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "already holds a ladder" in err and err.count("\n") == 1
    assert (out / "ladder.json").read_bytes() == before


def test_overwrite_replaces_a_ladder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["ladder", "random", "greedy", *TABLE, "--games", "4", "--out", str(tmp_path), "--no-progress"]
    assert main([*args, "--workers", "1"]) == 0
    assert main([*args, "--workers", "1", "--overwrite", "--seed", "5"]) == 0
    assert json.loads((tmp_path / "ladder.json").read_text())["seed"] == 5
    assert "written:" in capsys.readouterr().out


def test_a_new_agent_is_rated_with_the_rungs_fixed(
    built: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = built
    before = (out / "ladder.json").read_bytes()
    assert main(["ladder", "--rate", "greedy", "--against", str(out / "ladder.json"), "--no-progress"]) == 0
    assert (out / "ladder.json").read_bytes() == before  # the rungs are not refitted
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("  vs ") for line in lines) == 3
    rated = json.loads((out / "rating-greedy.json").read_text())
    fixed = json.loads(before)["ratings"]
    assert rated["rungs"] == fixed and rated["games"] == 20
    assert rated["rating"] > fixed["random"]  # greedy above random
    low, high = rated["interval"]
    assert low <= rated["rating"] <= high and high > low
    assert lines[-1].startswith("written:") and lines[-2].startswith("greedy: ")
    # a second rating of the same agent is refused without --overwrite
    assert main(["ladder", "--rate", "greedy", "--against", str(out / "ladder.json")]) == 2
    assert "already holds a rating" in capsys.readouterr().err


def test_a_ladder_reads_the_benchmark_reference_where_it_holds_the_same_games(tmp_path: Path) -> None:
    """The shipped reference's Blitz pairing is the games a ladder on the benchmark's deals
    plays (its rungs seated in the benchmark's order): read, it rates as played; other deals
    read nothing."""
    rungs, seed = ["random", "greedy"], str(benchmark.DEAL_SEED)
    common = [*rungs, "--variant", "blitz", "--games", "200", "--no-progress", "--workers", "1"]
    read = ladder.prepare_ladder(
        rungs, "blitz", games=200, seed=benchmark.DEAL_SEED, out=tmp_path / "r", reference=benchmark.REFERENCE
    )
    assert set(read.stored) == set(read.pairs) and "1 read from the reference" in read.header()
    assert (
        main(
            [
                "ladder",
                *common,
                "--seed",
                seed,
                "--reference",
                str(benchmark.REFERENCE),
                "--out",
                str(tmp_path / "r"),
            ]
        )
        == 0
    )
    assert main(["ladder", *common, "--seed", seed, "--out", str(tmp_path / "p")]) == 0
    from_file, played = (json.loads((tmp_path / d / "ladder.json").read_text()) for d in ("r", "p"))
    assert from_file["pairings"] == played["pairings"] and from_file["ratings"] == played["ratings"]
    other = ladder.prepare_ladder(
        rungs, "blitz", games=200, seed=0, out=tmp_path / "o", reference=benchmark.REFERENCE
    )
    assert other.stored == {}
    assert ladder.is_standard_table("blitz", {}) and not ladder.is_standard_table("blitz", {"num_players": 4})


def test_the_workers_play_what_one_process_plays() -> None:
    plan = prepare(["random", "greedy", "search:1"], "all_fives")
    pairs = plan.pairs()
    here = ladder.play_pairings(plan, pairs, games=4, seed=3, workers=1)
    pooled = ladder.play_pairings(plan, pairs, games=4, seed=3, workers=2)
    assert [r.shares for r in pooled] == [r.shares for r in here]
    assert [(r.agent, r.opponent) for r in pooled] == [
        ("random", "greedy"),
        ("random", "search:1"),
        ("greedy", "search:1"),
    ]


def test_an_interrupt_exits_130_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(ladder, "play_pairings", interrupted)
    assert main(["ladder", "random", "greedy", *TABLE, "--out", str(tmp_path), "--no-progress"]) == 130
    assert "nothing written" in capsys.readouterr().err
    assert not any((tmp_path / name).exists() for name in ladder.LADDER_FILES)


def bad_json(folder: Path) -> str:
    path = folder / "ladder.json"
    path.write_text("{not json")
    return str(path)


def wrong_json(folder: Path) -> str:
    path = folder / "other.json"
    path.write_text(json.dumps({"format": "domino-env/ladder", "format_version": 1, "rungs": ["random"]}))
    return str(path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nobody", "greedy", *TABLE], "agent 'nobody' is not"),
        (["greedy", *TABLE], "needs two rungs or more, got 1"),
        (["greedy", "greedy", *TABLE], "give each rung once"),
        (["random", "greedy", "--variant", "nope"], "nope"),
        (["--rate", "greedy"], "--rate needs --against"),
        (["--against", "x.json"], "--against goes with --rate"),
        (["--rate", "greedy", "--against", "{tmp}/missing.json"], "is not a ladder file"),
        (["--rate", "greedy", "--against", "BAD"], "is not a ladder file"),
        (["--rate", "greedy", "--against", "WRONG"], "is not a ladder file"),
        (["random", "--rate", "greedy", "--against", "WRONG"], "leave out random"),
        (["--rate", "greedy", "--against", "x.json", "--reference", "r.json"], "--seed and --reference"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    given = [
        bad_json(tmp_path) if a == "BAD" else wrong_json(tmp_path) if a == "WRONG" else a.format(tmp=tmp_path)
        for a in args
    ]
    assert main(["ladder", *given, "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out" / "ladder.json").exists()


def test_without_scipy_the_command_says_how_to_install_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "scipy", None)  # (find_spec reads it as not installed)
    assert main(["ladder", "random", "greedy", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no module scipy" in err and 'pip install -e ".[train]"' in err


def test_cross_ladder_reads_the_benchmark_games_in_both_orders(tmp_path: Path) -> None:
    """At Cross's four single seats each rung sits alone against three of the other, in both
    orders, as the benchmark plays them: the shipped reference holds both pairings, read they
    rate as played, and an even share there is a quarter."""
    rungs, seed = ["random", "greedy"], str(benchmark.DEAL_SEED)
    read = ladder.prepare_ladder(
        rungs, "cross", games=200, seed=benchmark.DEAL_SEED, out=tmp_path / "r", reference=benchmark.REFERENCE
    )
    assert read.pairs == [(0, 1), (1, 0)] and set(read.stored) == set(read.pairs)
    common = [
        *rungs,
        "--variant",
        "cross",
        "--games",
        "200",
        "--no-progress",
        "--workers",
        "1",
        "--seed",
        seed,
    ]
    assert (
        main(["ladder", *common, "--reference", str(benchmark.REFERENCE), "--out", str(tmp_path / "r")]) == 0
    )
    assert main(["ladder", *common, "--out", str(tmp_path / "p")]) == 0
    from_file, played = (json.loads((tmp_path / d / "ladder.json").read_text()) for d in ("r", "p"))
    assert from_file["pairings"] == played["pairings"] and from_file["ratings"] == played["ratings"]
    pairings = played["pairings"]
    assert [(p["first"], p["second"], p["copies"]) for p in pairings] == [
        ("random", "greedy", 3),
        ("greedy", "random", 3),
    ]
    assert played["ratings"]["greedy"] > 200 and "Luce" in played["method"]
    assert any(line.startswith("  greedy vs 3 random") for line in played["report"])
    loaded = ladder.Ladder.load(tmp_path / "p" / "ladder.json")
    assert loaded.copies == 3 and loaded.win_rate("greedy", "random") == pytest.approx(
        pairings[1]["win_rate"]
    )


def test_a_new_agent_is_rated_in_both_orders_at_single_seats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "ladder",
        "random",
        "greedy",
        "--variant",
        "cross",
        "--games",
        "8",
        "--no-progress",
        "--workers",
        "1",
    ]
    assert main([*args, "--out", str(tmp_path)]) == 0
    assert (
        main(["ladder", "--rate", "greedy", "--against", str(tmp_path / "ladder.json"), "--workers", "1"])
        == 0
    )
    rated = json.loads((tmp_path / "rating-greedy.json").read_text())
    assert [(p["first"], p["second"]) for p in rated["pairings"]] == [
        ("greedy", "random"),
        ("random", "greedy"),
        ("greedy", "greedy"),
        ("greedy", "greedy"),
    ]
    assert all(p["copies"] == 3 for p in rated["pairings"])
    assert [(p["rung"], p["agent_first"]) for p in rated["pairings"]] == [
        ("random", True),
        ("random", False),
        ("greedy", True),
        ("greedy", False),
    ]
    low, high = rated["interval"]
    assert low <= rated["rating"] <= high and rated["rating"] > rated["rungs"]["random"]
    out = capsys.readouterr().out
    assert "  greedy vs 3 random" in out and "  random vs 3 greedy" in out and "even 1/4" in out


def test_fit_one_agrees_with_the_ladder_fit_in_both_orders() -> None:
    """Two rungs at Cross's table: the second's strength from the whole fit, and from
    :func:`ladder.fit_one` with the first held at 0 and each pairing's side taken by its order."""
    alone = ladder.Pairing("x", "r", [1.0] * 30 + [0.0] * 70, 4, 3)  # x alone against three r
    held = ladder.Pairing("r", "x", [1.0] * 15 + [0.0] * 85, 4, 3)  # r alone against three x
    whole = ladder.to_elo(ladder.fit_strengths(2, ladder.outcomes_of([alone, held], {"r": 0, "x": 1})))
    sides = [alone.side(True), held.side(False)]
    wins = np.array([float(w.sum()) for w, _ in sides])
    offsets = np.array([o for _, o in sides])
    one = ladder.fit_one(np.zeros(2), wins, np.full(2, 100.0), offsets)
    assert one == pytest.approx(whole[1], abs=1e-4) and one > 0


def test_a_rating_does_not_depend_on_the_agents_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At single seats the agent's side is read from the order played, not from its label: an
    agent named like a rung gets the rating an agent of another name gets from the same games."""
    shares = {
        (0, 1): [1.0, 0.0, 0.0, 1.0],
        (1, 0): [0.0] * 4,
        (0, 2): [1.0, 0.0, 0.0, 0.0],
        (2, 0): [1.0, 0, 0, 0],
    }
    rungs = ladder.Ladder(
        "cross",
        {},
        ["random", "greedy"],
        ["random", "greedy"],
        ["random", "greedy"],
        0,
        4,
        [
            ladder.Pairing("random", "greedy", [0.0] * 4, 4, 3),
            ladder.Pairing("greedy", "random", [1.0] * 4, 4, 3),
        ],
        [0.0, 300.0],
        [(0.0, 0.0), (250.0, 350.0)],
    )
    (tmp_path / "ladder.json").write_text(json.dumps(rungs.to_json()))

    def played(
        plan: ladder.Evaluation, pairs: list[tuple[int, int]], **kwargs: object
    ) -> list[SimpleNamespace]:
        labels = [c.label for c in plan.contestants]
        return [
            SimpleNamespace(agent=labels[i], opponent=labels[j], shares=shares[i, j], per_deal=4)
            for i, j in pairs
        ]

    monkeypatch.setattr(ladder, "play_pairings", played)
    ratings = []
    for agent in ("greedy", "search:1"):
        plan = ladder.prepare_rating(agent, tmp_path / "ladder.json", out=tmp_path / agent, workers=1)
        rated = ladder.play_rating(plan, resamples=20)
        assert rated.first == [True, False, True, False] and rated.rungs == [
            "random",
            "random",
            "greedy",
            "greedy",
        ]
        ratings.append(rated.rating)
    assert ratings[0] == pytest.approx(ratings[1])


def test_an_older_ladder_file_reads_as_two_sides(built: tuple[Path, list[str]], tmp_path: Path) -> None:
    out, _ = built
    data = json.loads((out / "ladder.json").read_text())
    for p in data["pairings"]:
        del p["copies"]  # (written before 3-4 single seats were rated)
    (tmp_path / "ladder.json").write_text(json.dumps(data))
    loaded = ladder.Ladder.load(tmp_path / "ladder.json")
    assert loaded.copies == 1 and all(p.copies == 1 for p in loaded.pairings)
    data["pairings"][1]["copies"] = 3  # one pairing of another table: not one ladder
    (tmp_path / "mixed.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"is not a ladder file.*the same copies"):
        ladder.Ladder.load(tmp_path / "mixed.json")


@pytest.mark.parametrize("copies", [1, 3])
def test_the_report_sets_the_ratings_rate_beside_each_pairings(copies: int) -> None:
    """Two rungs and one pairing: the fitted gap gives back the games' rate (with the virtual
    game), which the report prints beside it; a pairing the scale cannot fit is named."""
    first = ladder.Pairing("a", "b", [1.0] * 14 + [0.0] * 6, 2, copies)
    two = ladder.Ladder(
        "cross" if copies > 1 else "classic", {}, ["a", "b"], ["a", "b"], ["a", "b"], 0, 20, [first]
    )
    two.fit(resamples=20)
    even = 1 / (1 + copies)
    assert two.model_rate(first) == pytest.approx((14 + even) / 21, abs=1e-6)
    assert any(line.endswith(f"model {two.model_rate(first):6.1%}") for line in ladder.report_lines(two))
    assert two.to_json()["pairings"][0]["model_win_rate"] == pytest.approx(two.model_rate(first))
    if copies > 1:  # both orders: a seat that wins alone in both cannot be fitted by one gap
        back = ladder.Pairing("b", "a", [1.0] * 14 + [0.0] * 6, 2, copies)
        both = ladder.Ladder("cross", {}, ["a", "b"], ["a", "b"], ["a", "b"], 0, 20, [first, back])
        both.fit(resamples=20)
        assert any(
            "lies outside the games' interval for a vs 3 b, b vs 3 a" in line
            for line in ladder.report_lines(both)
        )
