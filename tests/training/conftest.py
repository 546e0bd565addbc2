"""Fixtures the training tests share."""

from __future__ import annotations

import numpy as np
import pytest

import training.rl.rollout as rollout


@pytest.fixture
def gae_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, np.ndarray]]:
    """The arrays the LocalCollector hands to gae(), copied, one dict per collect()."""
    calls: list[dict[str, np.ndarray]] = []
    real = rollout.gae

    def spy(rewards, values, *, successor, done, gamma, lam):  # type: ignore[no-untyped-def]
        calls.append(
            {
                "rewards": rewards.copy(),
                "values": values.copy(),
                "successor": successor.copy(),
                "done": done.copy(),
            }
        )
        return real(rewards, values, successor=successor, done=done, gamma=gamma, lam=lam)

    monkeypatch.setattr(rollout, "gae", spy)
    return calls
