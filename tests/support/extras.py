"""Optional extras in tests: skipped where the extra is not installed, required where it must be.

``make test-extras`` runs the extras' tests in ``.venv-extras`` with ``DOMINO_REQUIRE_EXTRAS=1``, so a
missing or broken install fails there instead of skipping quietly.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest


def extra(module: str) -> ModuleType:
    """Import ``module``; skip the test if it is missing, unless DOMINO_REQUIRE_EXTRAS is set."""
    if os.environ.get("DOMINO_REQUIRE_EXTRAS"):
        return importlib.import_module(module)
    return pytest.importorskip(module)


def load_example(name: str) -> ModuleType:
    """``examples/<name>.py`` as a module (the examples folder is not a package)."""
    path = Path(__file__).resolve().parents[2] / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
