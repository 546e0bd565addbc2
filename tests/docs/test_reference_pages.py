"""The protocol-v2 page's numbers are the shipped reference's: each section's ladder command, run on
the reference alone (every pairing read, no game played), gives the ratings and intervals its
table prints, the ladder CSVs beside the pictures hold them too, and every cell of a section's
win-rate table is the reference's win rate with its Wilson interval."""

from __future__ import annotations

import csv
import functools
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

import domino_env
from training.eval import benchmark, ladder
from training.eval.benchmark.output import two_places
from training.eval.benchmark.store import Store, identity, key_of, swapped
from training.eval.evaluate import contestant

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "benchmark-v2.md"
COMMAND = re.compile(r"```bash\n(python -m training ladder .*?)\n```", re.S)
HEADER = "| rung | Elo | 95% interval |"


def signed(text: str) -> int:
    return int(text.replace("+", ""))


def page_ladders() -> list[tuple[list[str], str, dict[str, tuple[int, int, int] | None]]]:
    """Each ladder command on the page (its rungs and variant) and the table after it: a rung's
    label -> (Elo, low, high), None for the anchor."""
    page = PAGE.read_text()
    found = []
    for match in COMMAND.finditer(page):
        args = shlex.split(match.group(1).replace("\\\n", " "))[4:]
        given = args[: next(i for i, a in enumerate(args) if a.startswith("--"))]
        rungs = [str(ROOT / a) if a.endswith(".pt") else a for a in given]  # (whatever the cwd)
        variant = args[args.index("--variant") + 1]
        rows = page[page.index(HEADER, match.end()) :].split("\n\n", 1)[0].splitlines()[2:]
        table: dict[str, tuple[int, int, int] | None] = {}
        for row in rows:
            label, elo, interval = (cell.strip() for cell in row.strip("|").split("|"))
            shipped = re.fullmatch(r"shipped \(`(\w+)`\)", label)
            name = shipped.group(1) if shipped else label
            if interval == "(anchor)":
                table[name] = None
            else:
                low, high = interval.strip("[]").split(", ")
                table[name] = (signed(elo), signed(low), signed(high))
        found.append((rungs, variant, table))
    return found


LADDERS = page_ladders()


def test_the_page_has_a_ladder_for_every_variant_with_a_section() -> None:
    assert {variant for _, variant, _ in LADDERS} >= {
        "classic",
        "all_fives",
        "osel",
        "blitz",
        "blind",
        "blind_blitz",
        "domino3d",
        "metro",
        "cross",
    }


@pytest.mark.parametrize(("rungs", "variant", "table"), LADDERS, ids=[v for _, v, _ in LADDERS])
def test_a_ladder_on_the_page_is_its_fit_of_the_reference(
    rungs: list[str], variant: str, table: dict[str, tuple[int, int, int] | None], tmp_path: Path
) -> None:
    plan = ladder.prepare_ladder(
        rungs,
        variant,
        games=200,
        seed=benchmark.DEAL_SEED,
        out=tmp_path,
        workers=1,
        reference=benchmark.REFERENCE,
    )
    assert set(plan.stored) == set(plan.pairs)  # every pairing read: not a game played
    fitted = ladder.play_ladder(plan)
    assert set(table) == set(fitted.rungs)
    for rung, rating, (low, high) in zip(fitted.rungs, fitted.ratings, fitted.intervals, strict=True):
        expected = table[rung]
        if expected is None:
            assert rung == fitted.anchor
        else:
            assert (round(rating), round(low), round(high)) == expected, rung
    written = ROOT / "docs" / "assets" / "ladder" / f"{variant}.csv"
    if written.exists():  # (the CSV beside the picture, rounded to 0.1 Elo)
        with written.open() as handle:
            rows = {row["rung"]: row for row in csv.DictReader(handle)}
        for rung, rating, (low, high) in zip(fitted.rungs, fitted.ratings, fitted.intervals, strict=True):
            row = rows[rung]
            assert [float(row["elo"]), float(row["ci_low"]), float(row["ci_high"])] == pytest.approx(
                [rating, low, high], abs=0.051
            ), rung


def page_win_rates() -> list[tuple[str, list[str], dict[str, list[str]]]]:
    """Each variant section's win-rate table: the variant (its benchmark command's
    ``--variants``), the columns' opponents, and each row's agent -> its cells."""
    found = []
    for section in PAGE.read_text().split("\n## ")[1:]:
        variant = re.search(r"--variants (\w+)", section)
        if variant is None or "| agent | vs random" not in section:
            continue
        lines = section[section.index("| agent | vs random") :].split("\n\n", 1)[0].splitlines()
        header = [cell.strip() for cell in lines[0].strip("|").split("|")]
        opponents = [cell.removeprefix("vs ") for cell in header[1:] if cell.startswith("vs ")]
        rows = {}
        for line in lines[2:]:
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows[cells[0]] = cells[1 : 1 + len(opponents)]
        found.append((variant.group(1), opponents, rows))
    return found


WIN_RATES = page_win_rates()
STORE = Store.load(benchmark.REFERENCE)


@functools.cache
def shipped_identity(variant: str) -> str:
    """What the reference files the variant's shipped agent under (its checkpoint's hash)."""
    return identity(contestant(str(ROOT / "agents" / f"{variant}.pt")))


def reference_match(variant: str, agent: str, opponent: str) -> Any:
    """The reference's pairing of ``agent`` against ``opponent`` (names of the ladder, ``shipped``
    the variant's shipped agent), read from the other side where a two-sided pairing is filed so."""
    first, second = (shipped_identity(variant) if name == "shipped" else name for name in (agent, opponent))
    match = STORE.matches.get(key_of(variant, first, second, 200))
    if match is None:
        lower = domino_env.raw_env(variant).rules.lower_score_wins
        match = swapped(STORE.matches[key_of(variant, second, first, 200)], lower)
    return match


@pytest.mark.parametrize(("variant", "opponents", "rows"), WIN_RATES, ids=[v for v, _, _ in WIN_RATES])
def test_a_win_rate_table_on_the_page_is_the_reference(
    variant: str, opponents: list[str], rows: dict[str, list[str]]
) -> None:
    """Every cell: the reference's win rate of the row against the column with its 95% Wilson
    interval over deals (a two-sided pairing read from the other side where it is filed so)."""
    assert set(rows) == set(opponents) and len(rows) == 6
    for agent, cells in rows.items():
        for opponent, cell in zip(opponents, cells, strict=True):
            if agent == opponent:
                assert cell == "mirror"
                continue
            match = reference_match(variant, agent, opponent)
            low, high = benchmark.win_rate_interval(match)
            assert cell == f"{match.wins / match.games:.1%} [{low:.1%}, {high:.1%}]", (agent, opponent)


@pytest.mark.parametrize("variant", [v for v, _, _ in WIN_RATES])
def test_a_normalized_score_on_the_page_follows_from_the_reference(variant: str) -> None:
    """(W(agent) - W(random)) / (1/sides - W(random)), W the reference's win rate against
    ``expert`` (its own: a mirror's 1/sides, a quarter at Cross's four single seats)."""
    section = PAGE.read_text().split(f"--variants {variant}", 1)[1]
    header, _, values = section[section.index("| variant | random") :].splitlines()[:3]
    agents = [cell.strip() for cell in header.strip("|").split("|")][1:]
    printed = [cell.strip() for cell in values.strip("|").split("|")]

    rules = domino_env.raw_env(variant).rules
    even = 1 / (2 if rules.teams else rules.num_players)

    def w(agent: str) -> float:
        if agent == "expert":
            return even
        match = reference_match(variant, agent, "expert")
        return float(match.wins / match.games)

    assert printed[0] == variant
    for agent, score in zip(agents, printed[1:], strict=True):
        assert score == two_places((w(agent) - w("random")) / (even - w("random"))), agent
