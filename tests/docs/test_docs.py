"""The documentation follows the code: a rules page per variant naming every option, a version
history entry per variant version, and generated pages whose tables are the environment's own.
(The strict site build itself is ``make docs``, part of ``make test``.)"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import domino_env

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
    rows = list(itertools.takewhile(lambda line: line.startswith("|"), lines[start:]))
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
