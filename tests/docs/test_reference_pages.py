"""The protocol-v2 page's ladders are what ``ladder`` fits from the shipped reference today: each
section's command, run on the reference alone (every pairing read, no game played), gives the
ratings and intervals its table prints, and the ladder CSVs beside the pictures hold them too."""

from __future__ import annotations

import csv
import re
import shlex
from pathlib import Path

import pytest

from training.eval import benchmark, ladder

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
        reference=ROOT / "training" / "eval" / "benchmark_reference_v2.json",
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
