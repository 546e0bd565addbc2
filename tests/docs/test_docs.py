"""The documentation follows the code: a rules page per variant naming every option, a version
history entry per variant version, generated pages whose tables are the environment's own, and
strength tables (the README's, the guides') whose numbers are their results files' rows.
(The strict site build itself is ``make docs``, part of ``make test``.)"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import importlib.util
import itertools
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import domino_env
from domino_env.registry import shipped

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "rules"


def load_hooks() -> ModuleType:
    """docs/hooks.py, the MkDocs hooks that generate the variant pages (not a package module)."""
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def markdown_table(page: str, heading: str) -> list[list[str]]:
    """The cells of the first table after ``heading`` (header and rule rows left out)."""
    lines = page.split(f"\n{heading}\n", 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    return table_cells(lines[start:])


def table_under(page: str, header: str) -> list[list[str]]:
    """The cells of the table whose header row starts with ``header`` (header and rule rows
    left out)."""
    assert header in page, header
    return table_cells(page[page.index(header) :].splitlines())


def table_cells(lines: list[str]) -> list[list[str]]:
    """The cells of the table that starts at ``lines[0]``, below its header and rule rows."""
    rows = list(itertools.takewhile(lambda line: line.startswith("|"), lines))
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[2:]]


@pytest.mark.parametrize("name", domino_env.SPECS)
def test_every_variant_has_a_rules_page_naming_every_option(name):
    page = RULES / f"{name}.md"
    assert page.is_file(), f"{name} has no rules page docs/rules/{name}.md"
    text = page.read_text()
    missing = [o.name for o in domino_env.spec(name).options if f"`{o.name}`" not in text]
    assert not missing, f"docs/rules/{name}.md does not describe the option(s) {missing}"


@pytest.mark.parametrize("name", domino_env.SPECS)
def test_every_variant_module_docstring_has_its_version_history_entry(name):
    spec = domino_env.spec(name)
    doc = importlib.import_module(spec.rules.__module__).__doc__ or ""
    history = doc.split("Version history:", 1)
    assert len(history) == 2, f"{spec.rules.__module__}'s docstring has no 'Version history:' section"
    assert re.search(rf"^- ``{spec.module_name}``: \S", history[1], re.M), (
        f"{spec.rules.__module__}'s version history has no entry '- ``{spec.module_name}``: ...'"
    )


def test_generated_page_tables_are_the_environments_layouts():
    hooks = load_hooks()
    spec = domino_env.spec("osel")  # common blocks and the variant's own
    env = domino_env.make(spec.name, **spec.benchmark_tables[0]).unwrapped
    page = hooks.variant_page(spec)
    for heading, layout in (("## Observation", env.observation_layout), ("## State", env.state_layout)):
        rows = [(name, part, int(size)) for name, part, size, _ in markdown_table(page, heading)]
        expected = [(f"`{k}`", f"`{s.start}:{s.stop}`", s.stop - s.start) for k, s in layout.items()]
        assert rows == expected, heading
    options = [row[0] for row in markdown_table(page, "## Rules options")]
    assert options == [f"`{o.name}`" for o in spec.options]
    assert f"`from domino_env import {spec.module_name}`" in page
    assert f"[docs/rules/{spec.name}.md](../rules/{spec.name}.md)" in page  # the version history


def test_a_missing_version_entry_fails_the_page():
    hooks = load_hooks()
    spec = domino_env.spec("classic")
    ahead = dataclasses.replace(spec, version=spec.version + 1)
    with pytest.raises(ValueError, match=f"no {ahead.module_name}"):
        hooks.version_history(ahead)


def test_readme_points_only_inside_the_repository() -> None:
    """A clone has no rule book beside it: nothing may send a reader outside the repository."""
    for path in [ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("domino_env/**/*.py")]:
        text = path.read_text()
        assert "../shared" not in text and "RULES.md" not in text, path


def stated_rate(cell: str) -> tuple[float, float, float, int | None]:
    """``68.9% [66.1, 71.7]`` or ``76.2% [72.2, 80.3] (400)``: the rate, its interval (in
    percent) and the matches where the cell names them."""
    found = re.fullmatch(r"\*{0,2}([\d.]+)% \[([\d.]+), ([\d.]+)\]\*{0,2}(?: \(([\d,]+)\))?", cell)
    assert found, f"not a win rate with its interval: {cell!r}"
    rate, low, high, games = found.groups()
    return float(rate), float(low), float(high), int(games.replace(",", "")) if games else None


def page_table(page: Path, header: str) -> list[tuple[str, list[str]]]:
    """The rows of ``page``'s table whose header row starts with ``header``: each row's variant
    (named by its title at the start of the first cell) and its other cells."""
    titles = sorted(((s.title, name) for name, s in domino_env.SPECS.items()), key=lambda t: -len(t[0]))
    return [
        (next(name for title, name in titles if first.startswith(title)), cells)
        for first, *cells in table_under(page.read_text(), header)
    ]


def same_rate(cell: str, stored: tuple[float, float, float, int]) -> bool:
    """Whether a cell states ``stored`` (a CSV's rate, interval and matches; the cell may
    leave the matches to its column or text): 4 digits in the CSV, 3 in the docs, either side
    of a rounding."""
    rate, low, high, games = stated_rate(cell)
    close = all(abs(a - 100 * b) <= 0.051 for a, b in zip((rate, low, high), stored[:3], strict=True))
    return close and games in (None, stored[3])


def results_rate(row: dict[str, str], column: str) -> tuple[float, float, float, int]:
    """An ``agents/results.csv`` row's rate, interval and matches in ``column`` (``vs_search``)."""
    return (
        float(row[column]),
        float(row[f"{column}_low"]),
        float(row[f"{column}_high"]),
        int(row[f"{column}_games"]),
    )


def results_rows() -> dict[str, list[tuple[float, float, float, int]]]:
    """Per variant, every measured win rate of the results files: the 50-million-decision
    curves' (``benchmarks/results/long_<variant>_vec.csv``), the search tiers'
    (``benchmarks/results/tiers.csv``) and the shipped agents' (``agents/results.csv``)."""
    found: dict[str, list[tuple[float, float, float, int]]] = {}
    results = ROOT / "benchmarks" / "results"
    for path in [*results.glob("long_*_vec.csv"), results / "tiers.csv"]:
        for r in csv.DictReader(path.read_text().splitlines()):
            variant = r.get("variant") or path.stem.removeprefix("long_").removesuffix("_vec")
            stored = (float(r["win_rate"]), float(r["ci_low"]), float(r["ci_high"]), int(r["games"]))
            found.setdefault(variant, []).append(stored)
    for r in csv.DictReader((ROOT / "agents" / "results.csv").read_text().splitlines()):
        for column in r:
            if re.fullmatch(r"vs_[a-z]+", column) and r[column]:
                found.setdefault(r["variant"], []).append(results_rate(r, column))
    return found


def test_the_readmes_table_against_search_is_agents_results_csv() -> None:
    """The README's table of the shipped agents against ``search`` says what
    ``agents/results.csv`` (written by ``ship``) holds: reshipping an agent without restating
    the README fails here."""
    with (ROOT / "agents" / "results.csv").open() as handle:
        rows = {(r["variant"], r["agent"]): r for r in csv.DictReader(handle)}
    columns = [("policy", "search"), ("guided", "search"), ("guided", "policy")]
    table = page_table(ROOT / "README.md", "| variant | the shipped policy vs `search` (1,000 matches) |")
    for variant, cells in table:
        for cell, (agent, opponent) in zip(cells, columns, strict=True):
            stored = results_rate(rows[(variant, agent)], f"vs_{opponent}")
            assert same_rate(cell, stored), (variant, cell, stored)
        assert int(rows[(variant, "policy")]["vs_search_games"]) == 1000
    assert {variant for variant, _ in table} == set(shipped())


@pytest.mark.parametrize(
    ("page", "heading"),
    [
        ("README.md", "| variant (the shipped policy's training) | the policy alone |"),
        ("docs/guides/agents.md", "| variant | `expert` vs `search` | `expert` vs `advanced` |"),
        ("docs/guides/agents.md", "| variant | `search:agents/<variant>.pt` (8 worlds) against `expert` |"),
        ("docs/guides/agents.md", "| variant, tier | against `greedy` | against the shipped policy |"),
    ],
)
def test_the_strength_tables_have_a_results_row_behind_every_win_rate(page: str, heading: str) -> None:
    """Every win rate in the README's table against ``expert`` and the agents guide's tables of
    the search tiers is a row of its variant in the results files (:func:`results_rows`)."""
    found = results_rows()
    table = page_table(ROOT / page, heading)
    assert len(table) >= 3
    for variant, cells in table:
        for cell in cells:
            if re.match(r"\*{0,2}[\d.]+% \[", cell):  # (not "not measured", nor a margin)
                plain = re.sub(r" \(([\d,]+), [^)]*\)$", r" (\1)", cell)  # ("(200, `ship`'s deals)")
                assert any(same_rate(plain, s) for s in found.get(variant, [])), (page, variant, cell)


def test_the_tier_rows_played_the_agents_shipped_now() -> None:
    """A row of ``tiers.csv`` that played a shipped agent (as the opponent, or as the network of
    a guided search) names that file's digest, and it is the file's digest now: reshipping an
    agent without measuring its rows again fails here (two rows once compared the tiers
    with an agent since replaced)."""
    with (ROOT / "benchmarks" / "results" / "tiers.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    played = 0
    for r in rows:
        named = set(re.findall(r"agents/\w+\.pt", f"{r['agent']} {r['opponent']}"))
        if not named:
            assert r["shipped_sha256"] == "", r
            continue
        (path,) = named
        digest = "sha256:" + hashlib.sha256((ROOT / path).read_bytes()).hexdigest()
        assert r["shipped_sha256"] == digest, (r["variant"], r["agent"], r["opponent"], path)
        played += 1
    assert played >= 10


@pytest.mark.parametrize("variant", ["classic", "all_fives"])
def test_the_algorithms_guides_full_table_results_are_full_tables_csv(variant: str) -> None:
    """The algorithms guide's table for a full table says what ``benchmarks/full_tables.py``
    wrote to ``benchmarks/results/full_tables.csv``: each algorithm's IQM and interval, every
    seed's score and exploiter's win rate, and no algorithm left out."""
    with (ROOT / "benchmarks" / "results" / "full_tables.csv").open() as handle:
        rows = {r["algorithm"]: r for r in csv.DictReader(handle) if r["variant"] == variant}
    title = domino_env.SPECS[variant].title
    page = (ROOT / "docs" / "guides" / "algorithms.md").read_text()
    section = page.split(f"## Results: the full {title} table", 1)[1].split("\n## ", 1)[0]
    shown = set()
    for name, iqm, scores, _, exploiters in table_under(section, "| algorithm | benchmark IQM [95% CI] |"):
        row = rows[name.lower()]
        shown.add(name.lower())
        stated = re.fullmatch(r"\*\*([\d.-]+)\*\* \[([\d.-]+), ([\d.-]+)\]", iqm)
        assert stated, iqm
        stored = (row["iqm"], row["ci_low"], row["ci_high"])
        assert all(abs(float(a) - float(b)) <= 0.0051 for a, b in zip(stated.groups(), stored, strict=True))
        seeds = [float(x) for x in row["scores"].split()]
        assert [float(x) for x in scores.split(", ")] == pytest.approx(seeds, abs=0.0051), name
        rates = [100 * float(x) for x in row["exploiter_win_rates"].split()]
        assert [float(x.rstrip("%")) for x in exploiters.split(", ")] == pytest.approx(rates, abs=0.051), name
    assert shown == set(rows)


def test_the_home_page_leads_to_every_guide() -> None:
    """The home page's "Where to go next" names every page of the site's Guides section."""
    nav = (ROOT / "mkdocs.yml").read_text().split("  - Guides:\n", 1)[1].split("\n  - ", 1)[0]
    guides = re.findall(r"^\s+- (\S+\.md)$", nav, flags=re.MULTILINE)
    assert len(guides) >= 9, guides
    next_steps = (ROOT / "docs" / "index.md").read_text().split("## Where to go next", 1)[1]
    for guide in guides:
        assert f"]({guide})" in next_steps, guide


def test_the_test_summary_says_why_a_test_was_skipped(tmp_path: Path) -> None:
    """``make test`` runs pytest with the project's settings: a skip shows its reason in the
    summary (a missing chromium must not pass unnoticed)."""
    test = tmp_path / "test_skipping.py"
    test.write_text("import pytest\n\ndef test_needs_a_browser():\n    pytest.skip('no chromium here')\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "-p", "no:cacheprovider", test],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout
    assert "SKIPPED [1]" in result.stdout and "no chromium here" in result.stdout
