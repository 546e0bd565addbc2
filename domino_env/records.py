"""Game records: a whole episode as versioned JSON a person can read, and its exact replay.

A record (``format_version`` 1) is a dict of plain JSON types, written by :func:`write_record`
one field a line, a hand and a move to a line::

    {
      "format": "domino-env/record",
      "format_version": 1,
      "package_version": "0.1.0",
      "variant": "classic",
      "version": 0,
      "options": {"num_players": 2},
      "seed": 7,
      "agents": ["greedy", "random"],
      "deals": [
        {
          "hands": [
            ["0-3", "0-4", "1-6", "2-2", "2-3", "2-6", "5-6"],
            ["0-0", "1-4", "3-3", "3-4", "4-4", "4-5", "5-5"]
          ],
          "boneyard": ["1-2", "1-1", "0-1", "2-4", "0-6", "2-5", "3-5", "0-5", "6-6", ...],
          "leader": 1,
          "opening": "0-0"
        }, ...
      ],
      "actions": [
        [1, 0, "0-0 lead"],
        [0, 8, "0-4 on east (end 0)"],
        [1, 20, "1-4 on east (end 4)"], ...
      ],
      "result": {
        "scores": [76, 105],
        "outcomes": [1.0, -1.0],
        "rounds": 14
      }
    }

``options`` are those the env was made with (``make(variant, **options)``, ``render_mode``
left out), ``version`` the variant's ``spec.version``, ``seed`` the reset's (null for none),
``agents`` a name per seat. ``deals`` holds every round's deal as reset's ``deal`` option
takes it, whole: every hand (Blind's rows left to right), the boneyard in draw order, the
leader, the tile it must open with where there is one, 3D dominoes' start tile as it lies.
``actions`` are the agents' moves, ``[seat, action id, the move in words]`` (the words of
:func:`~domino_env.move_text`); the forced moves the env plays itself (draws, passes, turning
up) are not in it, the replay makes them again. ``result`` is the episode's end as
``public_state()["scores"]``, :meth:`~domino_env.DominoEnv.outcomes` and the rounds played;
null for a game left unfinished.

**Replay by the deals, not the seed.** :func:`replay` resets the env with the recorded deals
(reset's ``deals`` option) and the seed, then steps the recorded moves. A deal fixed whole
leaves nothing to chance: what a round draws at random is its deal (All Fives', Metro's and
Blind's random opener, 3D dominoes' start tile and its flip are parts of it; Blind blitz's
arrangement is the players' moves), so the replay is the same game whatever the random
generator makes of a seed, on any numpy, and a game dealt without a seed or from a fixed deal
replays as well. The seed is kept as a note of where the deals came from. At every round's
start the replay compares the env's deal with the recorded one, so a dealer that reads a deal
otherwise refuses the record instead of replaying another game.

**Exact.** At every step a replay's observations, action masks, ``public_state()``,
``agent_selection``, rewards and flags are the original's. What is not carried over: the
env's random generator (nothing of a replayed game draws from it), and with 3D dominoes'
``sets > 1`` which physical copy of a tile is where (the tile ids of ``view()`` and of
events; copies are alike in everything a seat observes). An env replayed to a step and played
on differently keeps the record's deals for the rounds after it, leaders included.

**Refused** with a ``ValueError`` saying what is wrong: a record of another ``format_version``,
package version or variant version, a missing, unknown or mistyped field, a deal that is not
one of the table, a move that is not legal where it is recorded (or whose words are not its
words), a deal the env does not deal again, a result the moves do not reach; a file that is
not JSON (:func:`load_record`). The record given is never changed.

Recording costs nothing where it is not used: the env knows nothing of it; a
:class:`GameRecorder` resets and steps the env in the player's place.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from domino_env.envs.base import DominoEnv, action_id_of
from domino_env.envs.order import OrderEnforcing
from domino_env.registry import make, spec
from domino_env.render.moves import move_text

FORMAT = "domino-env/record"
FORMAT_VERSION = 1
PACKAGE = "domino-env"  # the distribution whose version a record names
# Each field and the JSON types it may hold (None: null).
FIELDS: dict[str, tuple[type, ...]] = {
    "format": (str,),
    "format_version": (int,),
    "package_version": (str,),
    "variant": (str,),
    "version": (int,),
    "options": (dict,),
    "seed": (int, type(None)),
    "agents": (list,),
    "deals": (list,),
    "actions": (list,),
    "result": (dict, type(None)),
}
RESULT_FIELDS = ("scores", "outcomes", "rounds")
SHOWN_LEGAL = 8  # legal moves an error message names before "and N more"


def package_version() -> str:
    """This package's version, as its records name it."""
    return version(PACKAGE)


class GameRecorder:
    """Records the episodes of ``env`` as they are played: reset and step through it.

    ``options`` are those ``env`` was made with (``make(variant, **options)``: the record
    rebuilds the table from them), ``agents`` a name per seat::

        recorder = GameRecorder(env, {"num_players": 2}, ["greedy", "random"])
        recorder.reset(seed=7)
        while not all(env.terminations.values()):
            recorder.step(my_agent(env.unwrapped, env.observe(env.agent_selection)))
        record = recorder.record()

    A deal is read when it is dealt (at the reset, and after the move that starts a new
    round); each move is kept with its seat and its words. A record holds legal moves only:
    an illegal one raises ValueError and is not played, whatever ``illegal_action`` says.
    """

    def __init__(self, env: Any, options: Mapping[str, Any], agents: Sequence[str]) -> None:
        raw: DominoEnv = env.unwrapped
        seats = raw.rules.num_players
        if isinstance(agents, str) or len(agents) != seats or not all(isinstance(a, str) for a in agents):
            raise ValueError(f"agents must name each of the {seats} seats with a string, got {agents!r}")
        self.env, self._raw = env, raw
        self.variant = raw.rules.name
        self.options = {key: value for key, value in options.items() if key != "render_mode"}
        self.agents = list(agents)
        self.seed: int | None = None
        self._deals: list[dict[str, Any]] = []
        self._actions: list[list[Any]] = []
        self._round = 0
        self._ended = False

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        """Reset the env (as ``env.reset``) and start a new record with its deal."""
        self.env.reset(seed=seed, options=options)
        raw = self._raw
        self.seed = None if seed is None else int(seed)  # (a numpy integer too: JSON writes ints)
        self._deals = [raw.rules.dealt(raw.game)]
        self._actions = []
        self._round = raw.round_index
        self._ended = False

    def step(self, action: Any) -> None:
        """Play a legal move of the agent to move and record it (and the next round's deal)."""
        raw = self._raw
        if not self._deals:
            raise ValueError("reset() the recorder before its first step()")
        if self._ended:
            raise ValueError("the episode is over: nothing more to record (reset() starts the next)")
        agent = raw.agent_selection
        action_id = action_id_of(action)
        mask = raw.infos[agent]["action_mask"]
        if action_id is None or not 0 <= action_id < len(mask) or not mask[action_id]:
            raise ValueError(f"a record holds legal moves only: {action!r} is not one for {agent}")
        words = move_text(raw.describe_action(action_id))
        self.env.step(action_id)
        self._actions.append([raw.possible_agents.index(agent), action_id, words])
        self._ended = all(raw.terminations.values())
        if raw.round_index != self._round:
            self._round = raw.round_index
            self._deals.append(raw.rules.dealt(raw.game))

    def record(self) -> dict[str, Any]:
        """The record of the episode so far, a new dict (``result`` null until it ends)."""
        if not self._deals:
            raise ValueError("nothing recorded yet: reset() the recorder first")
        raw = self._raw
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "package_version": package_version(),
            "variant": self.variant,
            "version": spec(self.variant).version,
            "options": copy.deepcopy(self.options),
            "seed": self.seed,
            "agents": list(self.agents),
            "deals": copy.deepcopy(self._deals),
            "actions": [list(action) for action in self._actions],
            "result": result_of(raw) if self._ended else None,
        }


def start_game(env: Any, seed: int | None, recorder: GameRecorder | None = None) -> Callable[[Any], None]:
    """Reset ``env`` for a new episode, through ``recorder`` when there is one, and return the
    function that plays a move (``env.step`` itself when nothing is recorded: no cost)."""
    if recorder is None:
        env.reset(seed=seed)
        return env.step
    recorder.reset(seed=seed)
    return recorder.step


def result_of(env: DominoEnv) -> dict[str, Any]:
    """A finished episode's ``result``: final scores per seat, outcomes, rounds played."""
    return {"scores": env.public_state()["scores"], "outcomes": env.outcomes(), "rounds": env.round_index + 1}


# --- reading and checking -----------------------------------------------------------------------


def _is(value: Any, types: tuple[type, ...]) -> bool:
    """``isinstance`` as JSON sees it: a bool is not an int, an int is a number."""
    if isinstance(value, bool):
        return bool in types
    return isinstance(value, types)


def _type_names(types: tuple[type, ...]) -> str:
    names = {str: "a string", int: "an int", dict: "an object", list: "a list", type(None): "null"}
    return " or ".join(names[t] for t in types)


def check_record(record: Any) -> None:
    """Raise ValueError unless ``record`` is a record of this format: every field there (and no
    other) with its type. Versions and the game itself are :func:`replay`'s to check."""
    if not isinstance(record, Mapping):
        raise ValueError(f"a game record is a JSON object, got {type(record).__name__}")
    if record.get("format") != FORMAT:
        raise ValueError(
            f"not a domino-env game record: its 'format' is {record.get('format')!r}, "
            f"a record's is {FORMAT!r}"
        )
    found = record.get("format_version", FORMAT_VERSION)  # (missing: said with the other fields)
    if found != FORMAT_VERSION or isinstance(found, bool):
        raise ValueError(
            f"the record has format_version {found!r}; this domino-env "
            f"({package_version()}) reads format_version {FORMAT_VERSION}"
        )
    missing = [name for name in FIELDS if name not in record]
    unknown = sorted(set(record) - set(FIELDS), key=str)
    if missing or unknown:
        wrong = [f"lacks the field(s) {missing}"] if missing else []
        wrong += [f"has unknown field(s) {unknown}"] if unknown else []
        raise ValueError(f"the record {' and '.join(wrong)}; a record has exactly {', '.join(FIELDS)}")
    for name, types in FIELDS.items():
        if not _is(record[name], types):
            raise ValueError(f"the record's {name!r} must be {_type_names(types)}, got {record[name]!r}")
    if record["seed"] is not None and record["seed"] < 0:
        raise ValueError(f"the record's 'seed' must be a non-negative int or null, got {record['seed']!r}")
    if not all(isinstance(name, str) for name in record["agents"]):
        raise ValueError(f"the record's 'agents' must be a list of names (strings), got {record['agents']!r}")
    if not record["deals"] or not all(isinstance(deal, dict) for deal in record["deals"]):
        raise ValueError(f"the record's 'deals' must be a non-empty list of objects, got {record['deals']!r}")
    for k, action in enumerate(record["actions"]):
        if not (
            isinstance(action, list)
            and len(action) == 3
            and _is(action[0], (int,))
            and _is(action[1], (int,))
            and isinstance(action[2], str)
        ):
            raise ValueError(f"the record's action {k} must be [seat, action id, words], got {action!r}")
    result = record["result"]
    if result is not None:
        number = (int, float)
        if (
            set(result) != set(RESULT_FIELDS)
            or not (isinstance(result["scores"], list) and all(_is(s, (int,)) for s in result["scores"]))
            or not (isinstance(result["outcomes"], list) and all(_is(o, number) for o in result["outcomes"]))
            or not _is(result["rounds"], (int,))
        ):
            raise ValueError(
                "the record's 'result' must be null or {'scores': [int per seat], 'outcomes': "
                f"[number per seat], 'rounds': int}}, got {result!r}"
            )


def check_versions(record: Mapping[str, Any]) -> None:
    """Raise ValueError unless this package and its variant are the versions that wrote ``record``:
    an older game may have other rules, observations or words."""
    variant = spec(record["variant"])  # (an unknown variant: ValueError listing the known ones)
    ours = package_version()
    if (record["package_version"], record["version"]) != (ours, variant.version):
        raise ValueError(
            f"the record was written by domino-env {record['package_version']} for "
            f"{variant.name}_v{record['version']}; this is domino-env {ours} with {variant.module_name}: "
            "replay it with the version that wrote it"
        )


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a record written by :func:`write_record`; a file that cannot be read, is not JSON or
    is not a record raises ValueError naming it (versions are :func:`replay`'s to check)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"cannot read the game record {path}: {err}") from err
    try:
        record = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(
            f"{path} is not a game record: not valid JSON ({err.msg} at line {err.lineno} column {err.colno})"
        ) from err
    try:
        check_record(record)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from err
    return record


def write_record(record: Mapping[str, Any], path: str | Path) -> Path:
    """Write ``record`` to ``path`` as JSON a person reads (one field a line; a hand, a list of
    tiles and a move to a line); returns the path."""
    path = Path(path)
    path.write_text(_layout(record, 0) + "\n", encoding="utf-8")
    return path


def _layout(value: Any, depth: int) -> str:
    """JSON where an object or list holding others spreads one item a line, the rest on one."""
    nested = value.values() if isinstance(value, Mapping) else value if isinstance(value, list) else ()
    if not any(isinstance(item, (Mapping, list)) for item in nested):
        return json.dumps(value)
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, Mapping):
        items = [f"{inner}{json.dumps(key)}: {_layout(item, depth + 1)}" for key, item in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    items = [f"{inner}{_layout(item, depth + 1)}" for item in value]
    return "[\n" + ",\n".join(items) + f"\n{pad}]"


# --- replaying ----------------------------------------------------------------------------------


def replay(record: Mapping[str, Any], step: int | None = None) -> OrderEnforcing:
    """The env of ``record`` (wrapped, as :func:`~domino_env.make` returns it) after its first
    ``step`` moves (None: all of them; 0: just dealt). The whole record is checked first (see
    the module docstring); anything wrong raises ValueError. ``record`` is not changed."""
    check_record(record)
    check_versions(record)
    moves = len(record["actions"])
    if step is not None and (isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= moves):
        raise ValueError(f"step must be an int in 0..{moves} (the record's moves) or None, got {step!r}")
    env = _replayed(record, moves, check=True)
    if step is None or step == moves:
        return env
    return _replayed(record, step, check=False)


def _replayed(record: Mapping[str, Any], steps: int, check: bool) -> OrderEnforcing:
    """The record's env after ``steps`` moves; ``check``: make sure of every move, every round's
    deal and the result on the way (a record already checked replays without)."""
    try:
        env = make(record["variant"], **record["options"])
    except (ValueError, TypeError) as err:
        raise ValueError(f"the record's options {record['options']!r} make no table: {err}") from err
    raw: DominoEnv = env.unwrapped
    deals = record["deals"]
    if check:
        seats = raw.rules.num_players
        if len(record["agents"]) != seats:
            raise ValueError(
                f"the record names {len(record['agents'])} agent(s) for a table of {seats} seats"
            )
        for r, deal in enumerate(deals):
            try:
                raw.rules.parse_deal(deal)
            except ValueError as err:
                raise ValueError(
                    f"the record's deal of round {r + 1} is not a deal of this table: {err}"
                ) from err
    env.reset(seed=record["seed"], options={"deals": copy.deepcopy(deals)})
    if check:
        _check_deal(raw, deals)
    for k, (seat, action, words) in enumerate(record["actions"][:steps]):
        if check:
            _check_move(raw, k, seat, action, words)
        round_index = raw.round_index
        env.step(action)
        if check and raw.round_index != round_index:
            _check_deal(raw, deals)
    if check:
        _check_end(raw, record)
    return env


def _check_deal(env: DominoEnv, deals: list[Any]) -> None:
    """The round the env has just dealt is the record's."""
    r = env.round_index
    if r >= len(deals):
        raise ValueError(f"the moves reach round {r + 1}, but the record has deals for {len(deals)} round(s)")
    dealt = env.rules.dealt(env.game)
    if dealt != deals[r]:
        differ = [key for key in sorted(set(dealt) | set(deals[r])) if dealt.get(key) != deals[r].get(key)]
        verb = "differs" if len(differ) == 1 else "differ"
        raise ValueError(
            f"round {r + 1} is not dealt as recorded ({', '.join(differ)} {verb}): the record's deal "
            "is not whole (every hand, the boneyard, the leader) or this dealer reads it otherwise"
        )


def _check_move(env: DominoEnv, k: int, seat: int, action: int, words: str) -> None:
    """Move ``k`` of the record can be played here, by that seat, and is the move it names."""
    if all(env.terminations.values()):
        raise ValueError(f"the record's move {k} comes after the end of the {env.episode}")
    to_move = env.possible_agents.index(env.agent_selection)
    if seat != to_move:
        raise ValueError(f"the record's move {k} is seat {seat}'s, but seat {to_move} is to move there")
    legal = env.infos[env.agent_selection]["action_mask"]
    if not 0 <= action < len(legal) or not legal[action]:
        moves = [f"{move['action']} ({move_text(move)})" for move in env.legal_moves()]
        more = f" and {len(moves) - SHOWN_LEGAL} more" if len(moves) > SHOWN_LEGAL else ""
        raise ValueError(
            f"the record's move {k} ({action}, {words!r}) is not legal for seat {seat} there; legal: "
            f"{', '.join(moves[:SHOWN_LEGAL])}{more}"
        )
    said = move_text(env.describe_action(action))
    if words != said:
        raise ValueError(f"the record's move {k} says {words!r}, but action {action} is {said!r} there")


def _check_end(env: DominoEnv, record: Mapping[str, Any]) -> None:
    """The moves end where the record says: finished with its result, or unfinished without one."""
    ended = all(env.terminations.values())
    dealt, deals = env.round_index + 1, len(record["deals"])
    if dealt != deals:
        raise ValueError(f"the record has deals for {deals} round(s), but its moves play {dealt}")
    result = record["result"]
    if result is None and ended:
        raise ValueError(f"the record has no result, but its moves end the {env.episode}")
    if result is not None and not ended:
        raise ValueError(f"the record has a result, but its moves stop before the end of the {env.episode}")
    if result is not None and result_of(env) != result:
        raise ValueError(
            f"the moves end the {env.episode} with {result_of(env)}, but the record says {result}"
        )
