"""``python -m training new-variant NAME --like VARIANT``: the files of a tenth variant, written
from an existing one's, so that the generic tests run on it from the start.

It writes, under the root (the repository by default):

* ``domino_env/variants/NAME.py``: the ``--like`` variant's module with its declaration renamed
  (its classes, ``name``, the spec's name and title; ``shipped=False``) and a module docstring
  to fill in (the rule book, ``Decisions``, ``Version history`` with ``NAME_v0``);
* ``docs/rules/NAME.md``: the ``--like`` page's headings, its options table (the same options)
  and a placeholder under each other heading;
* ``tests/rules/test_NAME_rules.py``: the scenario tests' file, with one real test (a round starts and
  a legal move is played);
* ``configs/NAME.yaml``: the ``--like`` variant's training config on the new variant;
* the new rules page's line in ``mkdocs.yml``'s nav, after the other rules pages.

The sources (the ``--like`` module, its rules page and config) are read from the repository this
package runs from. Nothing is written when anything is refused (:class:`ScaffoldError`). The
recipe that follows is in docs/guides/architecture.md ("Adding a variant").
"""

from __future__ import annotations

import ast
import inspect
import keyword
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import domino_env

REPOSITORY = Path(__file__).resolve().parents[2]  # where the sources are read
NAV_LINE = re.compile(r"^(?P<indent>\s+)- [^:\n]+: rules/\w+\.md$", re.MULTILINE)  # a rules page in the nav


class ScaffoldError(ValueError):
    """A refusal, in one line; nothing was written."""


@dataclass(frozen=True)
class Written:
    """What :func:`scaffold` wrote: the files under the root, and the nav line added."""

    root: Path
    files: tuple[Path, ...]
    nav: str


def likeable() -> list[str]:
    """The variants a new one may start from: each alone in its module (a module declaring two,
    such as Blind's, cannot be copied as one)."""
    return [
        name
        for name, spec in domino_env.SPECS.items()
        if len(getattr(sys.modules[spec.rules.__module__], "SPECS", ())) == 1
    ]


def title_of(name: str) -> str:
    """How people would write a new name, until its module says otherwise: ``my_game`` -> ``My game``."""
    return name.replace("_", " ").capitalize()


def camel(name: str) -> str:
    """The prefix of the new module's classes, as the Gymnasium id spells the name: ``MyGame``."""
    return name.title().replace("_", "")


def wrap(paragraph: str) -> str:
    """A docstring's paragraph in lines of at most 96 characters (names and paths kept whole)."""
    return textwrap.fill(paragraph, 96, break_long_words=False, break_on_hyphens=False)


def check_name(name: str) -> None:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise ScaffoldError(
            f"{name!r} is not a valid variant name: a Python identifier in lowercase letters, digits "
            "and _, starting with a letter (it names the module, e.g. my_game)"
        )
    if name in domino_env.SPECS:
        raise ScaffoldError(f"a variant {name!r} exists already: choose another name")


def module_text(name: str, like: str) -> str:
    """The ``--like`` module's source with the declaration renamed and a docstring to fill in."""
    spec = domino_env.spec(like)
    source = Path(inspect.getfile(sys.modules[spec.rules.__module__])).read_text()
    tree = ast.parse(source)
    first = tree.body[0]
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)):
        raise ScaffoldError(f"{spec.rules.__module__} has no module docstring to replace")
    body = source.splitlines(keepends=True)[first.end_lineno or 1 :]
    code = "".join(body)
    prefix = spec.rules.__name__.removesuffix("Rules")
    code = re.sub(rf"\b{prefix}(?=[A-Z])", camel(name), code)  # ClassicRules -> MyGameRules ...
    replacements = [
        (rf'^(\s+)name = "{like}"$', rf'\1name = "{name}"'),  # the rules' name
        (rf'^(\s+)name="{like}",$', rf'\1name="{name}",'),  # the spec's
        (rf'^(\s+)title="{re.escape(spec.title)}",$', rf'\1title="{title_of(name)}",'),
        (
            r"^(\s+)shipped=True,$",
            r"\1shipped=False,  # True once released: docs/guides/architecture.md, Adding a variant",
        ),
    ]
    for pattern, replacement in replacements:
        code, count = re.subn(pattern, replacement, code, flags=re.MULTILINE)
        if count != 1:
            raise ScaffoldError(
                f"{spec.rules.__module__}: expected one line matching {pattern!r}, found {count}"
            )
    # A new variant plays on scalar tables until its rules are the batched kernel's again
    # (tests/env/test_vector.py says so table by table): its module does not claim one.
    code = re.sub(r'^\s+batched_kernel = "\w+"\n', "", code, flags=re.MULTILINE)
    path = f"docs/rules/{name}.md"
    paragraphs = [
        f"{title_of(name)} ({path}): TODO - the game in one line.",
        "TODO: the rule book in brief - the set and the players, the deal, the opening, a turn, the "
        f"end of a round, scoring and the match - as {path} gives it at length. Until then the "
        f"rules are {spec.title}'s, copied from {like}'s module (``python -m training new-variant "
        f"{name} --like {like}``): change what differs, declare the rule parts, delete the rest.",
        f"Decisions (also in {path}): TODO - each choice the rule books leave open, and the "
        "observation's own blocks, if any.",
        "Version history:",
        f"- ``{name}_v0``: the first release (the rules as in {path}).",
    ]
    docstring = '"""' + "\n\n".join(map(wrap, paragraphs)) + '\n"""\n'
    return docstring + code


def rules_page(name: str, like: str) -> str:
    """The ``--like`` rules page's headings, its options table, and a placeholder under the rest."""
    source = (REPOSITORY / "docs" / "rules" / f"{like}.md").read_text()
    sections = re.split(r"^(?=## )", source, flags=re.MULTILINE)
    title = title_of(name)
    parts = [
        f"# {title}\n\nTODO: the game in a paragraph. The [common ground](index.md) (tiles, seats, "
        "drawing, rewards) applies.\n\n"
    ]
    for section in sections[1:]:
        heading = section.splitlines()[0]
        if heading == "## Options":  # the same options as the variant it was copied from
            parts.append(section.rstrip("\n") + "\n\n")
        else:
            parts.append(f"{heading}\n\nTODO (as [{domino_env.spec(like).title}]({like}.md) has it).\n\n")
    return "".join(parts).rstrip("\n") + "\n"


def test_text(name: str, like: str) -> str:
    title = title_of(name)
    doc = [
        f"Scenario tests for {title} (docs/rules/index.md and docs/rules/{name}.md).",
        "Every scenario uses a fixed deal (hands, boneyard order, optional leader/opening) and a "
        "scripted sequence of plays, so each test is deterministic and checks one rule: write one "
        f"per rule of docs/rules/{name}.md, as tests/rules/test_{like}_rules.py does for "
        f"{domino_env.spec(like).title}. The generic tests (PettingZoo's API, the parallel API, "
        "seeding, observations, views, pictures) run on every table of the spec already.",
    ]
    wrapped = "\n\n".join(map(wrap, doc))
    return f'''"""{wrapped}
"""

from __future__ import annotations

import numpy as np

import domino_env

NAME = "{name}"


def new_env(seed: int = 0):
    """The variant's first standard table, dealt."""
    env = domino_env.make(NAME, **domino_env.spec(NAME).benchmark_tables[0])
    env.reset(seed=seed)
    return env


def test_a_round_starts_and_a_legal_move_is_played() -> None:
    env = new_env()
    seat = env.agent_selection
    before = {{key: value.copy() for key, value in env.observe(seat).items()}}
    legal = np.flatnonzero(before["action_mask"])
    assert env.unwrapped.rules.name == NAME and len(legal)
    env.step(int(legal[0]))
    assert not any(env.terminations.values())
    assert not np.array_equal(before["observation"], env.observe(seat)["observation"])
'''


def config_text(name: str, like: str) -> str:
    """The ``--like`` config with the variant renamed (its comments, about that variant, left out)."""
    source = (REPOSITORY / "configs" / f"{like}.yaml").read_text()
    body = "".join(line for line in source.splitlines(keepends=True) if not line.startswith("#"))
    body, count = re.subn(rf"^(\s+variant:) {like}$", rf"\1 {name}", body, flags=re.MULTILINE)
    if count != 1:
        raise ScaffoldError(f"configs/{like}.yaml: no 'variant: {like}' line to rename")
    return (
        f"# {title_of(name)}: configs/{like}.yaml's settings (new-variant --like {like}); tune them, then\n"
        f"# python -m training train configs/{name}.yaml, and ship with python -m training ship.\n" + body
    )


def nav_text(name: str, mkdocs: str) -> tuple[str, str]:
    """``mkdocs.yml`` with the new rules page after the last one in the nav, and that line."""
    found = list(NAV_LINE.finditer(mkdocs))
    if not found:
        raise ScaffoldError("mkdocs.yml: no rules page in the nav ('- Title: rules/<name>.md') to follow")
    last = found[-1]
    line = f"{last.group('indent')}- {title_of(name)}: rules/{name}.md"
    return mkdocs[: last.end()] + "\n" + line + mkdocs[last.end() :], line.strip()


def scaffold(name: str, like: str, root: Path | None = None) -> Written:
    """Write the new variant's files under ``root`` (default: the repository); refuses (and
    writes nothing) a bad or taken name, an unknown ``like``, a file that exists already and a
    file where a folder must be; a write the system refuses is undone (:func:`write_all`)."""
    root = Path(root) if root is not None else REPOSITORY
    check_name(name)
    allowed = likeable()
    if like not in allowed:
        raise ScaffoldError(f"unknown --like variant {like!r}; allowed: {', '.join(allowed)}")
    mkdocs = root / "mkdocs.yml"
    if not mkdocs.is_file():
        raise ScaffoldError(f"no mkdocs.yml under {root}: the rules page's nav line goes there")
    files = {
        Path("domino_env", "variants", f"{name}.py"): module_text(name, like),
        Path("docs", "rules", f"{name}.md"): rules_page(name, like),
        Path("tests", "rules", f"test_{name}_rules.py"): test_text(name, like),
        Path("configs", f"{name}.yaml"): config_text(name, like),
    }
    for relative in files:
        check_target(root, relative)
    before = mkdocs.read_text()
    nav, line = nav_text(name, before)
    write_all(root, {root / relative: text for relative, text in files.items()}, mkdocs, before, nav)
    return Written(root, tuple(files), line)


def check_target(root: Path, relative: Path) -> None:
    """Refuse (:class:`ScaffoldError`) a file to write that exists already (a folder or a link
    too), or one whose folder cannot be made: a part of the way to it that is a file."""
    target = root / relative
    if target.exists() or target.is_symlink():
        raise ScaffoldError(f"{relative.as_posix()} exists already under {root}: nothing written")
    for part in reversed(relative.parents[:-1]):  # domino_env, then domino_env/variants
        if (root / part).exists() and not (root / part).is_dir():
            raise ScaffoldError(
                f"{part.as_posix()} under {root} is a file, not a folder: {relative.as_posix()} "
                "cannot be written there (move it away or choose another --root): nothing written"
            )


def write_all(root: Path, files: dict[Path, str], mkdocs: Path, before: str, nav: str) -> None:
    """Write ``files`` and then ``mkdocs`` (``before`` -> ``nav``); a write the system refuses
    (permissions, a full disk) undoes this call's writes: the files and folders it made are
    removed, mkdocs.yml given back its text, and a :class:`ScaffoldError` says what failed."""
    made: list[Path] = []  # files and folders this call made, in order
    target = mkdocs
    try:
        for path, text in files.items():
            target = path
            missing = [p for p in reversed(path.parents) if not p.exists()]
            for folder in missing:
                folder.mkdir()
                made.append(folder)
            made.append(path)  # (before writing: a write cut off leaves a file to remove)
            path.write_text(text)
        target = mkdocs
        mkdocs.write_text(nav)
    except OSError as err:
        undo(made, mkdocs, before, mkdocs_touched=target == mkdocs)
        where = target.relative_to(root).as_posix() if target.is_relative_to(root) else str(target)
        raise ScaffoldError(
            f"could not write {where} under {root} ({err.strerror or err}): nothing written "
            "(what this call had written is removed)"
        ) from err


def undo(made: list[Path], mkdocs: Path, before: str, *, mkdocs_touched: bool) -> None:
    """Remove what :func:`write_all` made (files, then the folders it made, deepest first) and
    give mkdocs.yml back its text when its write was tried; best effort, nothing raised."""
    for path in reversed(made):
        try:
            if path.is_dir() and not path.is_symlink():
                path.rmdir()  # (only folders this call made, empty once their files are gone)
            else:
                path.unlink(missing_ok=True)
        except OSError:
            pass
    if mkdocs_touched:
        try:
            if mkdocs.read_text() != before:
                mkdocs.write_text(before)
        except OSError:
            pass


def next_steps(name: str, like: str) -> str:
    """The recipe after the scaffold, in short (at length in docs/guides/architecture.md)."""
    return f"""next steps (docs/guides/architecture.md, "Adding a variant"):
  1. write the rules: the docstring and the code of domino_env/variants/{name}.py (copied from
     {like}: change what differs), docs/rules/{name}.md, and a scenario test per rule in
     tests/rules/test_{name}_rules.py (ruff format them: the renamed classes may lengthen lines)
  2. test it: python -m pytest tests/rules/test_{name}_rules.py tests/env/test_api.py \\
     tests/env/test_parallel.py tests/env/test_registry.py tests/docs/test_docs.py -q
     (the generic tests run on every table of it)
  3. release it: python -m training ship configs/{name}.yaml (agents/{name}.pt, its results row);
     python -m training benchmark random greedy search advanced expert shipped --games 200 \\
       --out runs/reference
     and copy runs/reference/pairings.json to training/eval/benchmark_reference_v2.json;
     python docs/hooks.py (its picture) and a README row; then shipped=True in its spec,
     python benchmarks/behaviour_digest.py --save tests/env/behaviour_digest.json \\
       --rounds 100 --matches 10
     (its tables join the digest) and
     make release-check"""
