"""Each variant's facts live in its module: the library code (``domino_env/``, ``training/``)
names a variant only in that variant's own module in ``domino_env/variants/``.

A string equal to a registered variant's name anywhere else is a fact about that variant kept
away from it, unless it is a default (a parameter's or a dataclass field's, such as
``variant: str = "all_fives"``) or a docstring. A module outside the registry and the variants
that imports a variant module, or names one in a string (``import_module``), reads a variant
past the registry. Documentation, tests, configurations and benchmarks are not scanned.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import domino_env

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ("domino_env", "training")
VARIANTS_PACKAGE = "domino_env.variants"
# The modules that may import the variant modules: the registry finds them, and a variant
# builds on another (Blitz on Classic).
IMPORTERS = ("domino_env/registry.py", "domino_env/variants/")


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module and its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def is_dataclass(node: ast.ClassDef) -> bool:
    """Whether a class is decorated with ``dataclass`` (bare, called or as an attribute)."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if (isinstance(target, ast.Name) and target.id == "dataclass") or (
            isinstance(target, ast.Attribute) and target.attr == "dataclass"
        ):
            return True
    return False


def defaults(tree: ast.AST) -> set[int]:
    """The ids of the default values in a tree: of the parameters of functions and lambdas,
    and of the fields of dataclasses (not their ``ClassVar`` attributes)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            found.update(id(d) for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None)
        elif isinstance(node, ast.ClassDef) and is_dataclass(node):
            for statement in node.body:
                if (
                    isinstance(statement, ast.AnnAssign)
                    and statement.value is not None
                    and "ClassVar" not in ast.unparse(statement.annotation)
                ):
                    found.add(id(statement.value))
    return found


def imported(node: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    """The modules an import statement in ``package`` (dotted: the module's package) names,
    relative ones resolved."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parent = package.rsplit(".", node.level - 1)[0]
        base = f"{parent}.{base}" if base else parent
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def is_variant_module(name: str) -> bool:
    """Whether a dotted name is ``domino_env.variants`` or a module in it."""
    return name == VARIANTS_PACKAGE or name.startswith(VARIANTS_PACKAGE + ".")


def findings(path: str, source: str, names: dict[str, str]) -> list[str]:
    """``path:line: what`` for each place of ``source`` (the file at ``path``, relative to the
    root) that names a variant outside its module: ``names`` maps each variant to its module's
    path."""
    tree = ast.parse(source, filename=path)
    allowed = docstrings(tree) | defaults(tree)
    may_import = path.startswith(IMPORTERS)
    package = path.rsplit("/", 1)[0].replace("/", ".")
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in allowed:
            home = names.get(node.value)
            if home is not None and home != path:
                found.append(f"{path}:{node.lineno}: the variant name {node.value!r} (its module: {home})")
            elif not may_import and is_variant_module(node.value.split(":")[0]):
                found.append(f"{path}:{node.lineno}: names the variant module {node.value!r}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and not may_import:
            for name in imported(node, package):
                if is_variant_module(name):
                    found.append(f"{path}:{node.lineno}: imports {name} (ask the rules or the registry)")
                    break
    return found


def variant_homes() -> dict[str, str]:
    """Each registered variant's name -> the path of the module that declares its rules."""
    homes = {}
    for name, spec in domino_env.SPECS.items():
        module = sys.modules[spec.rules.__module__]
        assert module.__name__.startswith(VARIANTS_PACKAGE + "."), (name, module.__name__)
        homes[name] = Path(str(module.__file__)).resolve().relative_to(ROOT).as_posix()
    return homes


def test_variant_names_appear_only_in_their_modules():
    names = variant_homes()
    assert names["blind_blitz"] == names["blind"] == "domino_env/variants/blind.py"
    found = []
    for package in LIBRARY:
        for file in sorted((ROOT / package).rglob("*.py")):
            path = file.relative_to(ROOT).as_posix()
            found += findings(path, file.read_text(encoding="utf-8"), names)
    assert not found, "a variant's fact outside its module:\n" + "\n".join(found)


PLANTED = '''"""A docstring may say metro."""
import domino_env.variants.classic
from domino_env import variants
from ..variants import metro
import importlib

def tier(variant: str = "classic", *, other: str = "osel") -> dict[str, int]:
    """So may a function's: metro."""
    importlib.import_module("domino_env.variants.metro")
    return {"metro": 96, "other": len(f"{variant}-classic")}

@dataclass(frozen=True)
class Config:
    variant: str = "osel"
    cost: ClassVar[str] = "metro"
    pick = lambda name="classic": name

class Plain:
    variant: str = "osel"
'''


def test_the_check_finds_names_and_imports_but_not_defaults_or_docstrings():
    names = {"classic": "domino_env/variants/classic.py", "metro": "m.py", "osel": "o.py"}
    found = findings("domino_env/agents/planted.py", PLANTED, names)
    assert sorted(int(line.split(":")[1]) for line in found) == [2, 3, 4, 9, 10, 15, 19], found
    # a variant's own module names itself and may import the others
    found = findings("domino_env/variants/classic.py", 'NAME = "classic"\n' + PLANTED, names)
    assert sorted(int(line.split(":")[1]) for line in found) == [11, 16, 20], found
