"""Session fixtures shared by several test modules."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest

from tests.support.extras import extra


@pytest.fixture(scope="session")
def ray_local() -> Iterator[ModuleType]:
    """One local Ray instance with 2 CPUs for every Ray test of the session (started on first use)."""
    ray = extra("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()
