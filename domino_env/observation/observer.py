"""A variant's own observation blocks, beside its rules (as OpenSpiel's Observer is).

A variant module declares an :class:`Observer` subclass in its ``VariantSpec``: the blocks it
adds (``blocks``: name and size, after the common layout of its kind of table) and
:meth:`Observer.write`, which fills them for one seat. The encoder owns the observation
vector and hands ``write`` a :class:`Blocks`: one writable view per block name, so a variant
writes ``out["points_now"][action] = ...`` and never computes offsets into a combined row.
The rules import no observer: what is a fact of the game state (``phase_flags``,
``known_hands``) stays with them; how it is shown to a policy lives here and in the encoders.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from domino_env.rules.table import TableRules

# A float32 block of the observation, written through a memoryview: item and slice writes
# cost a third of numpy's (typeshed types memoryview items as int, hence Any).
FloatRow = Any


class Blocks(dict[str, FloatRow]):
    """One seat's variant blocks by name (a float32 memoryview each, made once by the encoder);
    they keep what the last write for that seat put there this round (zeros at first)."""

    def __init__(self, views: dict[str, FloatRow], whole: FloatRow) -> None:
        super().__init__(views)
        self._whole = whole
        self._zeros = np.zeros(len(whole), dtype=np.float32).data

    def zero(self) -> None:
        """Zero every block at once (one write: the encoder keeps them side by side)."""
        self._whole[:] = self._zeros


class Observer:
    """A variant's observation blocks; a subclass sets ``blocks`` (an instance may size them by
    the rules' options) and implements :meth:`write`."""

    blocks: tuple[tuple[str, int], ...] = ()

    def __init__(self, rules: TableRules) -> None:
        self.rules = rules

    def write(self, state: Any, seat: int, out: Blocks) -> None:
        """Write ``seat``'s blocks (seat-relative) for ``state``; called when the round's events
        moved on since the last write for that seat."""
        raise NotImplementedError
