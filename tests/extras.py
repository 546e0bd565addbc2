"""Optional extras in tests: skipped where the extra is not installed, required where it must be.

``make test-ray`` runs the extras' tests in ``.venv-ray`` with ``DOMINO_REQUIRE_EXTRAS=1``, so a
missing or broken install fails there instead of skipping quietly.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def extra(module: str) -> ModuleType:
    """Import ``module``; skip the test if it is missing, unless DOMINO_REQUIRE_EXTRAS is set."""
    if os.environ.get("DOMINO_REQUIRE_EXTRAS"):
        return importlib.import_module(module)
    return pytest.importorskip(module)
