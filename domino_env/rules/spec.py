"""A variant as one self-describing unit: what the registry, the CLI, the tests and the docs read.

Each module in :mod:`domino_env.variants` ends with ``SPECS = (VariantSpec(...),)``; the
registry finds the modules and builds everything else from their specs: ``domino_env.make``,
the ``<name>_v0`` modules, the list of tables the generic tests run on, the CLI's choices.
What the rules class already says (player counts, partnerships, its options dataclass: names,
types, defaults) is read from it, not written twice.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from domino_env.rules.table import TableRules

TABLE_KINDS = ("chain", "grid")  # a line of play, or the 3D grid: which environment class runs it
PRESET_ENV_OPTIONS = ("episode", "reward")  # the environment's options a preset may set


@dataclass(frozen=True)
class Option:
    """One keyword option of a variant's rules."""

    name: str
    type: Any  # the annotated type (bool, int, str, or a Literal of the allowed strings)
    default: Any
    help: str

    @property
    def choices(self) -> tuple[Any, ...] | None:
        """The allowed values of a ``Literal`` option (None for any value of its type)."""
        return typing.get_args(self.type) if typing.get_origin(self.type) is typing.Literal else None


@dataclass(frozen=True)
class VariantSpec:
    """Everything the project knows about a variant beyond its rules' code."""

    name: str  # the registry key, e.g. "all_fives"
    title: str  # as people write it, e.g. "All Fives"
    rules: type[TableRules]
    table: str  # one of TABLE_KINDS
    summary: str  # one line for listings
    option_help: Mapping[str, str] = field(default_factory=dict)  # rules option -> what it does
    benchmark_tables: tuple[Mapping[str, Any], ...] = ({"num_players": 2},)  # the standard tables
    action_names: Mapping[str, str] = field(default_factory=dict)  # extra action kind -> words
    version: int = 0  # the ``<name>_v<version>`` module; raised when observations or rules change
    # Named tables people can cite (``make(name, preset="tiny")``): options of the rules and
    # of the environment (episode, reward), which options given beside the preset override.
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # The variant's observation blocks: an ``observation.observer.Observer`` subclass (a layer
    # above, so not named here), built by the environment; None for none.
    observer: type | None = None
    # Released: its artifacts are in the repository (agents/<name>.pt and its results row, its
    # pairings in the benchmark reference, its picture in the README), and the release checks
    # (tests/release, ``make release-check``) demand them. A variant being written leaves it False.
    shipped: bool = False

    def __post_init__(self) -> None:
        if self.table not in TABLE_KINDS:
            raise ValueError(f"{self.name}: table must be one of {TABLE_KINDS}, got {self.table!r}")
        names = {option.name for option in self.options}
        undocumented = names - set(self.option_help) - {"num_players", "teams", "max_pip", "hand_size"}
        unknown = set(self.option_help) - names
        if undocumented or unknown:
            raise ValueError(
                f"{self.name}: option_help must describe exactly the rules' options "
                f"(undocumented: {sorted(undocumented)}, unknown: {sorted(unknown)})"
            )
        for preset, values in self.presets.items():
            foreign = set(values) - names - set(PRESET_ENV_OPTIONS)
            if foreign:
                raise ValueError(f"{self.name}: preset {preset!r} sets unknown option(s) {sorted(foreign)}")

    @property
    def module_name(self) -> str:
        """The PettingZoo-style module, e.g. ``classic_v0``."""
        return f"{self.name}_v{self.version}"

    @property
    def player_counts(self) -> tuple[int, ...]:
        return self.rules.player_counts

    @property
    def teams_allowed(self) -> bool:
        return self.rules.teams_allowed

    @property
    def options(self) -> tuple[Option, ...]:
        """The rules' keyword options: the fields of its options dataclass that ``make`` may
        set (a field a variant fixes has ``init=False``), with their types and defaults."""
        options_type = self.rules.options_type
        hints = typing.get_type_hints(options_type)
        common = {
            "num_players": f"players at the table: {', '.join(map(str, self.player_counts))}",
            "max_pip": "a smaller or larger set: double-N, N in 1..9 (default: the variant's own)",
            "hand_size": "tiles dealt to each player (default: the variant's own)",
            "teams": "partners (seats 0+2 against 1+3), with 4 players"
            if self.teams_allowed
            else "always False: an individual game",
        }
        return tuple(
            Option(f.name, hints[f.name], f.default, self.option_help.get(f.name, common.get(f.name, "")))
            for f in dataclasses.fields(options_type)
            if f.init
        )

    def tables(self) -> list[dict[str, Any]]:
        """Every (num_players, teams) table the rules allow, in order."""
        out: list[dict[str, Any]] = []
        for n in self.player_counts:
            out.append({"num_players": n, "teams": False})
            if n == 4 and self.teams_allowed:
                out.append({"num_players": n, "teams": True})
        return out
