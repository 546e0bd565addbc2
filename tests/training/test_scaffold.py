"""``python -m training new-variant NAME --like VARIANT``: a variant written from the scaffold into a
temporary root is a working variant (registered through ``domino_env.registry.register``, it passes
PettingZoo's API and parallel tests, its own scenario test, its config loads, its rules page names
its options), unmarked; and every refusal writes nothing."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import gymnasium as gym
import pettingzoo
import pytest
from pettingzoo.test import api_test, parallel_api_test

import domino_env
from domino_env import registry
from training.apps import scaffold
from training.cli import main
from training.model.config import load_config

ROOT = Path(__file__).resolve().parents[2]
NAME = "test_scaffolded"


def new_variant_command(argv: list[str]) -> int:
    """The command as ``python -m training new-variant ...`` runs it (a refusal: exit 2)."""
    return main(["new-variant", *argv])


def load(path: Path, name: str) -> ModuleType:
    """A Python file as a module named ``name`` (in ``sys.modules``, as dataclasses and the
    registry need)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A temporary root with the repository's mkdocs.yml (the nav the scaffold adds to)."""
    (tmp_path / "mkdocs.yml").write_text((ROOT / "mkdocs.yml").read_text())
    return tmp_path


@pytest.fixture(params=["classic", "domino3d"])
def scaffolded(request: pytest.FixtureRequest, root: Path) -> Iterator[Path]:
    """A variant scaffolded like a line game and like the grid, loaded from the temporary root
    and registered for the test (and removed after it)."""
    assert new_variant_command([NAME, "--like", request.param, "--root", str(root)]) == 0
    module_name = f"scaffolded_{NAME}"
    try:
        registry.register(load(root / "domino_env" / "variants" / f"{NAME}.py", module_name))
        yield root
    finally:
        if NAME in registry.SPECS:
            registry.unregister(NAME)
        sys.modules.pop(module_name, None)


def test_the_scaffold_writes_every_file_and_says_what_next(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (root / "mkdocs.yml").read_text()
    assert new_variant_command([NAME, "--like", "blitz", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    written = [
        f"domino_env/variants/{NAME}.py",
        f"docs/rules/{NAME}.md",
        f"tests/rules/test_{NAME}_rules.py",
        f"configs/{NAME}.yaml",
    ]
    assert set(tree(root)) == {*written, "mkdocs.yml"}
    for path in written:
        assert f"  {path}\n" in out
    assert "make release-check" in out and "python -m training ship" in out
    nav = (root / "mkdocs.yml").read_text()
    line = f"      - Test scaffolded: rules/{NAME}.md"
    assert nav.replace(line + "\n", "", 1) == before  # one line added, after the last rules page
    assert re.search(r"rules/\w+\.md\n" + re.escape(line) + "\n", nav)
    module = (root / "domino_env" / "variants" / f"{NAME}.py").read_text()
    assert "\nDecisions (also in" in module and f"- ``{NAME}_v0``: the first release" in module
    assert "class TestScaffoldedRules(ClassicRules):" in module and "shipped=False," in module
    assert "batched_kernel" not in module  # a new variant starts on scalar tables
    page = (root / "docs" / "rules" / f"{NAME}.md").read_text()
    headings = re.findall(r"^## .*$", (ROOT / "docs" / "rules" / "blitz.md").read_text(), re.M)
    assert re.findall(r"^## .*$", page, re.M) == headings
    assert not [p for p in written if (ROOT / p).exists()]  # nothing in the repository itself
    assert f"rules/{NAME}.md" not in (ROOT / "mkdocs.yml").read_text()


def test_a_scaffolded_variant_is_a_working_unreleased_variant(scaffolded: Path) -> None:
    spec = domino_env.spec(NAME)
    assert spec.title == "Test scaffolded" and not spec.shipped and NAME not in registry.shipped()
    assert domino_env.VARIANTS[NAME] is spec.rules and spec.rules.name == NAME
    for table in spec.benchmark_tables:
        api_test(domino_env.make(NAME, **table), num_cycles=200)
        parallel_api_test(pettingzoo.make("parallel", registry.pettingzoo_id(spec), **table))
    assert getattr(domino_env, spec.module_name).env(**spec.benchmark_tables[0]).unwrapped.rules.name == NAME
    env = gym.make(registry.gymnasium_id(spec), opponents="greedy", **spec.benchmark_tables[0])
    env.reset(seed=0)
    assert env.action_masks().any()


def test_a_scaffolded_variants_own_files_pass(scaffolded: Path) -> None:
    """Its scenario test passes, its config loads on it, its rules page names every option and
    its docstring has the version history entry the docs tests read."""
    rules_tests = load(scaffolded / "tests" / "rules" / f"test_{NAME}_rules.py", f"scaffolded_test_{NAME}")
    try:
        tests = [value for key, value in vars(rules_tests).items() if key.startswith("test_")]
        assert tests
        for test in tests:
            test()
    finally:
        sys.modules.pop(f"scaffolded_test_{NAME}", None)
    assert load_config(scaffolded / "configs" / f"{NAME}.yaml").env.variant == NAME
    page = (scaffolded / "docs" / "rules" / f"{NAME}.md").read_text()
    assert all(f"`{option.name}`" in page for option in domino_env.spec(NAME).options)
    doc = sys.modules[domino_env.spec(NAME).rules.__module__].__doc__ or ""
    assert re.search(rf"^- ``{NAME}_v0``: \S", doc.split("Version history:", 1)[1], re.M)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["classic", "--like", "blitz"], "a variant 'classic' exists already"),
        (["My-Game", "--like", "blitz"], "'My-Game' is not a valid variant name"),
        (["2fast", "--like", "blitz"], "'2fast' is not a valid variant name"),
        (["class", "--like", "blitz"], "'class' is not a valid variant name"),
        ([NAME, "--like", "checkers"], "unknown --like variant 'checkers'; allowed: all_fives, blitz,"),
        ([NAME, "--like", "blind"], "unknown --like variant 'blind'; allowed:"),  # its module holds two
    ],
)
def test_the_scaffold_refuses_in_one_line_and_writes_nothing(
    root: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree(root)
    assert new_variant_command([*argv, "--root", str(root)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(f"error: {message}")
    assert captured.err.count("\n") == 1
    assert tree(root) == before


def test_the_release_checks_ask_only_the_variants_marked_shipped(
    scaffolded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A variant being written (unmarked) passes the release checks without any artifact; marked
    shipped, it fails them for want of its agent and its benchmark pairings."""
    release = ROOT / "tests" / "release"
    agents = load(release / "test_shipped_agents.py", "release_shipped_agents")
    reference = load(release / "test_benchmark_reference.py", "release_benchmark_reference")
    try:
        agents.test_the_shipped_agents_are_those_of_the_shipped_variants()
        reference.test_the_reference_holds_every_shipped_variant()
        monkeypatch.setitem(registry.SPECS, NAME, dataclasses.replace(domino_env.spec(NAME), shipped=True))
        assert NAME in registry.shipped()
        with pytest.raises(AssertionError, match=rf"marked shipped without agents/<name>.pt: \['{NAME}'\]"):
            agents.test_the_shipped_agents_are_those_of_the_shipped_variants()
        with pytest.raises(AssertionError, match=rf"has no pairings of \['{NAME}'\]"):
            reference.test_the_reference_holds_every_shipped_variant()
    finally:
        sys.modules.pop("release_shipped_agents", None)
        sys.modules.pop("release_benchmark_reference", None)


def test_the_scaffold_refuses_a_file_that_exists(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (root / "configs").mkdir()
    (root / "configs" / f"{NAME}.yaml").write_text("mine\n")
    before = tree(root)
    assert new_variant_command([NAME, "--like", "classic", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: configs/{NAME}.yaml exists already under {root}: nothing written\n"
    assert tree(root) == before


@pytest.mark.parametrize("blocker", ["configs", "domino_env", "domino_env/variants", "tests/rules"])
def test_the_scaffold_refuses_a_file_where_a_folder_must_be(
    root: Path, blocker: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file named like one of the folders it writes in: refused before any file is written."""
    (root / blocker).parent.mkdir(parents=True, exist_ok=True)
    (root / blocker).write_text("mine\n")
    before, folders = tree(root), sorted(p for p in root.rglob("*") if p.is_dir())
    assert new_variant_command([NAME, "--like", "classic", "--root", str(root)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"error: {blocker} under {root} is a file, not a folder: ")
    assert captured.err.endswith(": nothing written\n")
    assert tree(root) == before
    assert sorted(p for p in root.rglob("*") if p.is_dir()) == folders  # no folder made either


def test_a_failed_write_removes_what_the_scaffold_wrote(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The system refuses the third file (a full disk, say): the two written and the folders made
    for them are removed, mkdocs.yml is untouched, and the refusal is one line."""
    before = tree(root)
    real = Path.write_text

    def full_disk(self: Path, text: str, *args: object, **kwargs: object) -> int:
        if self.name == f"test_{NAME}_rules.py":
            real(self, text[:10])  # (cut off part way)
            raise OSError(28, "No space left on device")
        return real(self, text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", full_disk)
    assert new_variant_command([NAME, "--like", "classic", "--root", str(root)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        f"error: could not write tests/rules/test_{NAME}_rules.py under {root} (No space left on "
        "device): nothing written (what this call had written is removed)\n"
    )
    assert tree(root) == before and sorted(p.name for p in root.iterdir()) == ["mkdocs.yml"]


def test_a_failed_nav_write_gives_mkdocs_back_its_text(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tree(root)
    real = Path.write_text
    tries: list[str] = []

    def refused_once(self: Path, text: str, *args: object, **kwargs: object) -> int:
        if self.name == "mkdocs.yml" and not tries:
            tries.append(text)
            real(self, "")  # (truncated, then refused)
            raise PermissionError(13, "Permission denied")
        return real(self, text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", refused_once)
    assert new_variant_command([NAME, "--like", "classic", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: could not write mkdocs.yml under {root} (Permission denied)")
    assert err.count("\n") == 1
    assert tree(root) == before


def test_the_scaffold_needs_the_nav_it_adds_to(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert new_variant_command([NAME, "--like", "classic", "--root", str(tmp_path)]) == 2
    assert "no mkdocs.yml under" in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_the_cli_module_imports_no_torch() -> None:
    import subprocess

    code = "import sys, training.cli.new_variant; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "False", result.stderr


def test_register_refuses_a_taken_name_and_unregister_a_found_variant() -> None:
    taken = ModuleType("taken")
    taken.SPECS = (domino_env.spec("classic"),)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match=r"\['classic'\] are already registered"):
        registry.register(taken)
    with pytest.raises(ValueError, match="declares no SPECS"):
        registry.register(ModuleType("empty"))
    with pytest.raises(ValueError, match="'classic' was not added by register"):
        registry.unregister("classic")
    assert "classic" in domino_env.SPECS


def test_scaffold_lists_the_variants_alone_in_their_module() -> None:
    likeable = scaffold.likeable()
    assert set(likeable) < set(domino_env.SPECS) and "classic" in likeable
    assert not {"blind", "blind_blitz"} & set(likeable)
