"""Domino games as PettingZoo AEC environments with action masks.

``domino_env.make(name, **options)`` builds any variant in ``VARIANTS``; each variant also
has a PettingZoo-style module, e.g. ``domino_env.classic_v0.env(num_players=4, teams=True)``.
``domino_env.SPECS`` describes every variant (title, tables, options with their types and
defaults), as :class:`~domino_env.rules.spec.VariantSpec`.

Importing the package also registers every variant with PettingZoo and Gymnasium (details
and the version policy in :mod:`domino_env.registry`)::

    pettingzoo.make("aec", "domino/all_fives-v0", num_players=4)       # = domino_env.make(...)
    pettingzoo.make("parallel", "domino/all_fives-v0", num_players=4)  # the parallel API
    gymnasium.make("domino_env/AllFives-v0", opponents=["greedy"])     # one seat, wrappers.SingleAgentEnv

The parallel API is PettingZoo's ``turn_based_aec_to_parallel`` over the AEC env (also
``domino_env.<name>_v0.parallel_env(**options)``): each ``step`` plays the action of the seat
to move (``infos[agent]["active_agent"]``; the others' action masks are all zero) and ignores
the others'.

Game records (:mod:`domino_env.records`): a :class:`GameRecorder` writes an episode down as
versioned JSON (``write_record``, ``load_record``), and ``replay(record, step)`` rebuilds the
env at any step of it exactly.
"""

import sys

from domino_env.core import events
from domino_env.core.tiles import format_tile
from domino_env.core.view import SeatView
from domino_env.envs.base import DominoEnv
from domino_env.records import GameRecorder, load_record, replay, write_record
from domino_env.registry import (
    SPECS,
    VARIANTS,
    make,
    preset_options,
    raw_env,
    spec,
    state_classes,
    variant_module,
)
from domino_env.render.moves import move_text
from domino_env.render.words import per_seat_text, value_text
from domino_env.rules.spec import Option, VariantSpec

# The <name>_v0 modules, made from the specs: `from domino_env import classic_v0` and
# `import domino_env.classic_v0` both find them.
for _variant in SPECS.values():
    _module = variant_module(_variant)
    sys.modules[_module.__name__] = _module
    globals()[_variant.module_name] = _module

__all__ = [
    "SPECS",
    "VARIANTS",
    "DominoEnv",
    "GameRecorder",
    "SeatView",
    "events",
    "format_tile",
    "load_record",
    "Option",
    "VariantSpec",
    "make",
    "move_text",
    "per_seat_text",
    "preset_options",
    "raw_env",
    "replay",
    "spec",
    "state_classes",
    "value_text",
    "write_record",
    *(variant.module_name for variant in SPECS.values()),
]
