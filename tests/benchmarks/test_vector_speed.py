"""benchmarks/vector_speed.py's random pick: one legal action a table, uniform among them."""

from __future__ import annotations

import numpy as np

from tests.support.helpers import load_script

vector_speed = load_script("vector_speed")


def test_the_pick_is_legal_and_uniform_per_row() -> None:
    rng = np.random.default_rng(0)
    mask = np.zeros((4, 7), bool)
    mask[0, [0, 3, 6]] = mask[1, 2] = mask[2, :] = mask[3, [1, 5]] = True
    picks = np.stack([vector_speed.random_legal(rng, mask) for _ in range(7000)])
    assert mask[np.arange(4), picks].all()  # every pick legal for its own row
    for row in range(4):
        legal = np.flatnonzero(mask[row])
        counts = np.bincount(picks[:, row], minlength=7)[legal]
        assert np.allclose(counts / 7000, 1 / len(legal), atol=0.03)
