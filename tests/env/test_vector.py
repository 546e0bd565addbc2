"""The vector engine plays exactly the scalar game: a differential harness any backend runs through.

For a table (variant and options) and a backend, ``vector.make(name, B, backend=...)`` and B
scalar envs (``domino_env.make``, table ``i``'s ``k``-th episode seeded ``s + i + k * B``) are
dealt with the same seed and stepped with the same random legal actions; every step's
observations (bit for bit), masks, seats to move, every seat's rewards, ``done``, the rounds
that ended, the sides' scores and the ended episodes' outcomes must agree, and the global state
every few steps. Every variant's tables run on the scalar backend, and on
the kernel wherever ``vector.kernel_refusal`` says one supports them (skipped with its reason
otherwise), so a new kernel's tables are tested without editing this file.
"""

from __future__ import annotations

import pickle
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import domino_env
from domino_env import vector
from domino_env.vector import episode_seed

NUM_ENVS = 8
STEPS = 300
STATE_EVERY = 25
BACKENDS = ("scalar", "kernel")

# Every variant's tables, one round an episode (many autoresets), then the episode and reward
# modes on Classic, All Fives (which scores during a round), Cross (a new opening every round),
# Blitz (multi-tile turns), Osel (face-down doubles, remembered points across a match) and Metro
# (places, live ends, Metros cleared by a domino-Metro: a small set plays every ending often).
TABLES: list[tuple[str, dict[str, Any]]] = [
    (name, {**table, "episode": "round"})
    for name, spec in domino_env.SPECS.items()
    for table in spec.tables()
]
TABLES += [
    ("classic", {"num_players": 2, "episode": episode, "reward": reward})
    for episode in ("round", "match")
    for reward in ("outcome", "points")
]
TABLES += [
    ("classic", {"num_players": 4, "teams": True, "episode": "match", "reward": "points"}),
    ("all_fives", {"num_players": 2, "episode": "match", "reward": "points"}),
    ("all_fives", {"num_players": 4, "teams": True, "episode": "round", "reward": "points"}),
    ("all_fives", {"num_players": 3, "episode": "match", "reward": "outcome"}),
    ("cross", {"num_players": 4, "episode": "match", "reward": "points"}),
    ("cross", {"num_players": 4, "teams": True, "episode": "match", "reward": "outcome"}),
    ("blitz", {"num_players": 2, "episode": "match", "reward": "points"}),
    ("blitz", {"num_players": 4, "teams": True, "episode": "match", "reward": "outcome"}),
    ("blitz", {"num_players": 3, "draw": False, "episode": "round", "reward": "points"}),
    ("osel", {"num_players": 2, "episode": "match", "reward": "points"}),
    ("osel", {"num_players": 3, "episode": "match", "reward": "outcome"}),
    ("osel", {"num_players": 4, "episode": "round", "reward": "points"}),
    ("metro", {"num_players": 2, "episode": "match", "reward": "points"}),
    ("metro", {"num_players": 3, "episode": "match", "reward": "points", "metro_penalty": 2}),
    ("metro", {"num_players": 3, "episode": "match", "reward": "outcome"}),
    ("metro", {"num_players": 3, "max_pip": 4, "hand_size": 3, "episode": "match", "reward": "points"}),
    ("metro", {"num_players": 2, "max_pip": 2, "hand_size": 2, "episode": "round", "reward": "outcome"}),
    # Larger sets than the standard tables' (double-nine: 55 tiles, ten suits, hands of up to
    # 55 bits in the 64-bit masks; Cross's double-seven), and every preset, the small tables the
    # solvers read.
    ("classic", {"num_players": 2, "max_pip": 9, "episode": "match", "reward": "points"}),
    ("classic", {"num_players": 4, "teams": True, "max_pip": 9, "episode": "round", "reward": "outcome"}),
    ("all_fives", {"num_players": 3, "max_pip": 9, "episode": "match", "reward": "points"}),
    ("cross", {"num_players": 4, "max_pip": 7, "episode": "match", "reward": "points"}),
    ("blitz", {"num_players": 2, "max_pip": 9, "episode": "round", "reward": "points"}),
    ("osel", {"num_players": 2, "max_pip": 9, "episode": "match", "reward": "points"}),
]
TABLES += [
    (name, {"num_players": 2, "preset": preset, "episode": "round"})
    for name, spec in domino_env.SPECS.items()
    for preset in spec.presets
]


def table_id(table: tuple[str, dict[str, Any]]) -> str:
    name, options = table
    teams = "-teams" if options.get("teams") else ""
    small = f"-pip{options['max_pip']}" if "max_pip" in options else ""
    penalty = f"-penalty{options['metro_penalty']}" if "metro_penalty" in options else ""
    preset = f"-{options['preset']}" if "preset" in options else ""
    return (
        f"{name}-{options['num_players']}p{teams}{small}{penalty}{preset}-{options['episode']}-"
        f"{options.get('reward', 'outcome')}"
    )


class Reference:
    """B scalar envs played as the vector engine promises, one table after another."""

    def __init__(self, name: str, num_envs: int, options: dict[str, Any]) -> None:
        self.tables = [domino_env.make(name, **options) for _ in range(num_envs)]
        self.agents = list(self.tables[0].possible_agents)
        self.seed = 0
        self.episodes = [0] * num_envs

    def reset(self, seed: int) -> tuple[np.ndarray, ...]:
        self.seed, self.episodes = seed, [0] * len(self.tables)
        for i, env in enumerate(self.tables):
            env.reset(seed=episode_seed(seed, i, 0, len(self.tables)))
        return self.shown()

    def shown(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The seat to move's observation and mask at every table, and that seat."""
        seen = [env.observe(env.agent_selection) for env in self.tables]
        return (
            np.stack([s["observation"] for s in seen]),
            np.stack([s["action_mask"] for s in seen]).astype(bool),
            np.array([self.agents.index(env.agent_selection) for env in self.tables], np.int64),
        )

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        rewards, dones, rounds, scores, outcomes = [], [], [], [], []
        for i, env in enumerate(self.tables):
            table = env.unwrapped
            round_index = table.round_index
            env.step(int(actions[i]))
            rewards.append([env.rewards[agent] for agent in self.agents])
            over = all(env.terminations[a] or env.truncations[a] for a in self.agents)
            rounds.append(over or table.round_index != round_index)
            scores.append(table.side_scores)
            outcomes.append(table.outcomes() if over else [0.0] * len(self.agents))
            if over:
                self.episodes[i] += 1
                env.reset(seed=episode_seed(self.seed, i, self.episodes[i], len(self.tables)))
            dones.append(over)
        obs, mask, player = self.shown()
        return (
            obs,
            mask,
            np.array(rewards, np.float32),
            np.array(dones),
            player,
            np.array(rounds),
            np.array(scores, np.int64),
            np.array(outcomes, np.float64),
        )

    def state(self) -> np.ndarray:
        return np.stack([env.state() for env in self.tables])


def legal_choice(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    """One action per table, uniform among its legal ones."""
    return np.array([rng.choice(np.flatnonzero(row)) for row in mask], np.int64)


def assert_same(what: str, got: np.ndarray, want: np.ndarray, dtype: type, when: str) -> None:
    """``got`` has the promised dtype and equals ``want`` exactly; else say which table differs."""
    assert got.dtype == dtype, f"{what} has dtype {got.dtype}, not {np.dtype(dtype)} ({when})"
    assert got.shape == want.shape, f"{what} has shape {got.shape}, not {want.shape} ({when})"
    if not np.array_equal(got, want):
        table = next(i for i in range(len(want)) if not np.array_equal(got[i], want[i]))
        raise AssertionError(f"{what} of table {table} differs {when}: {got[table]} != {want[table]}")


# What reset and step show (the info entries from "player" on), with the dtypes the interface promises.
RESET_OUTPUTS = (("obs", np.float32), ("mask", bool), ("player", np.int64))
STEP_OUTPUTS = (
    ("obs", np.float32),
    ("mask", bool),
    ("reward", np.float32),
    ("done", bool),
    ("player", np.int64),
    ("round_over", bool),
    ("side_scores", np.int64),
    ("outcome", np.float64),
)
STEP_INFO = tuple(name for name, _ in STEP_OUTPUTS[4:])


def assert_all_same(
    outputs: tuple[tuple[str, type], ...],
    got: tuple[np.ndarray, ...],
    want: tuple[np.ndarray, ...],
    when: str,
) -> None:
    for (what, dtype), mine, theirs in zip(outputs, got, want, strict=True):
        assert_same(what, mine, theirs, dtype, when)


def play_both(
    name: str, options: dict[str, Any], backend: str, num_envs: int = NUM_ENVS, **run: int
) -> tuple[int, int]:
    """Step the vector engine and the scalar reference together, comparing everything (``run``:
    ``steps`` and ``seed``); the number of episodes that ended, and of rounds that ended inside
    a match."""
    steps, seed = run.get("steps", STEPS), run.get("seed", 0)
    venv = vector.make(name, num_envs, backend=backend, **options)
    reference = Reference(name, num_envs, options)
    obs, mask, info = venv.reset(seed=seed)
    want = reference.reset(seed)
    assert_all_same(RESET_OUTPUTS, (obs, mask, info["player"]), want, "after reset")
    rng = np.random.default_rng(seed)
    ended = rounds = 0
    kept = (obs, mask, info["player"])
    for t in range(steps):
        copies = tuple(array.copy() for array in kept)
        actions = legal_choice(rng, want[1])
        obs, mask, reward, done, info = venv.step(actions)
        want = reference.step(actions)
        when = f"at step {t} (seed {seed}, actions {actions.tolist()})"
        shown = (obs, mask, reward, done, *(info[name] for name in STEP_INFO))
        assert_all_same(STEP_OUTPUTS, shown, want, when)
        for old, copy in zip(kept, copies, strict=True):  # what a step returned stays the caller's
            assert np.array_equal(old, copy), f"step {t} overwrote the arrays the step before returned"
        kept = (obs, mask, info["player"])
        ended += int(done.sum())
        rounds += int((info["round_over"] & ~done).sum())
        if t % STATE_EVERY == 0 or t == steps - 1:
            assert_same("state", venv.state(), reference.state(), np.float32, when)
    return ended, rounds


def kernel_or_skip(name: str, options: dict[str, Any], backend: str) -> None:
    if backend == "kernel":
        refusal = vector.kernel_refusal(name, **options)
        if refusal is not None:
            pytest.skip(f"no kernel: {refusal}")


# --- the differential harness --------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("table", TABLES, ids=[table_id(t) for t in TABLES])
def test_every_table_plays_exactly_the_scalar_game(table: tuple[str, dict[str, Any]], backend: str) -> None:
    name, options = table
    kernel_or_skip(name, options, backend)
    ended, rounds = play_both(name, options, backend)
    if options["episode"] == "round":
        assert ended > 0, "no episode ended: the autoreset went untested"
    else:
        assert rounds > 0, "no round ended inside a match: round_over went untested there"


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**40))
def test_any_seed_plays_exactly_the_scalar_game(seed: int) -> None:
    play_both("classic", {"num_players": 2, "episode": "round"}, "auto", num_envs=3, steps=40, seed=seed)


# --- seeds ---------------------------------------------------------------------------------------


def stream(venv: vector.VectorEnv, seed: int | None, steps: int) -> list[np.ndarray]:
    """Everything a run of ``steps`` random legal steps shows, flattened into one list."""
    obs, mask, info = venv.reset(seed=seed)
    shown = [obs, mask, info["player"]]
    rng = np.random.default_rng(0)
    for _ in range(steps):
        obs, mask, reward, done, info = venv.step(legal_choice(rng, mask))
        shown += [obs, mask, reward, done, info["player"]]
    return shown


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reset_with_the_same_seed_replays_the_same_stream(backend: str) -> None:
    options = {"num_players": 2, "episode": "round"}
    kernel_or_skip("classic", options, backend)
    venv = vector.make("classic", 4, backend=backend, **options)
    first = stream(venv, 7, 80)  # (episodes end on the way: their counts start again at the reset)
    again = stream(venv, 7, 80)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    other = stream(venv, 8, 80)
    assert not all(np.array_equal(a, b) for a, b in zip(first, other, strict=True))


def test_seed_none_deals_from_entropy() -> None:
    venv = vector.make("classic", 4, num_players=2)
    shown = stream(venv, None, 20)
    assert shown[0].shape == (4, venv.observation_size) and shown[1].any(axis=1).all()


@pytest.mark.parametrize("seed", [-1, 1.5, "0", True])
def test_a_bad_seed_is_refused(seed: Any) -> None:
    with pytest.raises(ValueError, match="seed must be"):
        vector.make("classic", 2).reset(seed=seed)


# --- the batch's facts ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(domino_env.SPECS))
def test_the_batch_has_the_scalar_envs_sizes(name: str) -> None:
    options = dict(domino_env.spec(name).tables()[-1])
    venv = vector.make(name, 3, **options)
    env = domino_env.make(name, **options)
    env.reset(seed=0)
    assert venv.name == name and venv.num_envs == 3
    assert venv.num_players == len(env.possible_agents)
    assert venv.observation_size == env.observation_space("player_0")["observation"].shape[0]
    assert venv.num_actions == env.action_space("player_0").n
    assert venv.state_size == env.state().shape[0]
    assert (venv.backend == "scalar") == (vector.kernel_refusal(name, **options) is not None)


def test_every_declared_kernel_exists() -> None:
    for name, spec in domino_env.SPECS.items():
        key = getattr(spec.rules, "batched_kernel", None)
        assert key is None or key in vector.KERNELS, f"{name} declares kernel {key!r}, not in vector.KERNELS"
    for key, kernel in vector.KERNELS.items():
        assert callable(getattr(kernel, "supports", None)), f"kernel {key!r} has no supports()"


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_actions_raise_and_change_nothing(backend: str) -> None:
    options = {"num_players": 2, "episode": "round"}
    kernel_or_skip("classic", options, backend)
    venv = vector.make("classic", 4, backend=backend, **options)
    twin = vector.make("classic", 4, backend=backend, **options)  # steps only the good actions
    _, mask, _ = venv.reset(seed=3)
    twin.reset(seed=3)
    rng = np.random.default_rng(3)
    for t in range(30):
        actions = legal_choice(rng, mask)
        illegal = actions.copy()
        illegal[2] = np.flatnonzero(~mask[2])[0]
        legal = np.flatnonzero(mask[2]).tolist()
        with pytest.raises(ValueError, match=rf"table 2: {illegal[2]}, legal {re.escape(str(legal))}"):
            venv.step(illegal)
        for bad, why in [
            (actions[:3], r"shape \(4,\)"),
            (actions.reshape(4, 1), r"shape \(4,\)"),
            (actions.astype(np.float64), "integers"),
            (np.full(4, 10_000), "illegal actions at 4 of 4 tables"),
            (np.full(4, -1), "illegal"),
        ]:
            with pytest.raises(ValueError, match=why):
                venv.step(bad)
        got, want = venv.step(actions), twin.step(actions)
        for a, b in zip(got[:4], want[:4], strict=True):
            assert np.array_equal(a, b), f"a refused step changed the tables (step {t})"
        assert np.array_equal(got[4]["player"], want[4]["player"])
        mask = got[1]
    assert np.array_equal(venv.state(), twin.state())


def test_step_before_reset_is_refused() -> None:
    with pytest.raises(ValueError, match="reset"):
        vector.make("classic", 2, backend="scalar").step(np.zeros(2, np.int64))


@pytest.mark.parametrize(
    ("args", "options", "why"),
    [
        (("nope", 2), {}, "unknown variant 'nope'"),
        (("classic", 2), {"colour": "red"}, r"unknown option\(s\) \['colour'\]"),
        (("classic", 2), {"episode": "forever"}, "episode must be one of"),
        (("classic", 2), {"preset": "nope"}, "unknown preset"),
        (("classic", 0), {}, "num_envs must be a positive integer"),
        (("classic", -3), {}, "num_envs must be a positive integer"),
        (("classic", 2.0), {}, "num_envs must be a positive integer"),
        (("classic", True), {}, "num_envs must be a positive integer"),
        (("classic", 2), {"backend": "gpu"}, "backend must be one of 'auto', 'kernel', 'scalar'"),
        (("classic", 2), {"render_mode": "ansi"}, "render_mode"),
        (("classic", 2), {"illegal_action": "penalize"}, "raises on an illegal action"),
        (("blind", 2), {"backend": "kernel"}, "no kernel steps this blind table: blind has no"),
    ],
)
def test_bad_make_arguments_are_refused(args: tuple[Any, ...], options: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        vector.make(*args, **options)


def test_the_scalar_backend_is_always_there() -> None:
    for backend in ("auto", "scalar"):
        assert vector.make("blind", 2, backend=backend).backend == "scalar"
    assert vector.make("classic", 2, backend="scalar").backend == "scalar"
    assert vector.make("classic", np.int64(2), illegal_action="raise").num_envs == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_writing_into_a_returned_mask_changes_no_rule(backend: str) -> None:
    kernel_or_skip("classic", {}, backend)
    venv = vector.make("classic", 3, backend=backend)
    _, mask, _ = venv.reset(seed=0)
    illegal = np.array([np.flatnonzero(~row)[0] for row in mask])
    mask[:] = True
    with pytest.raises(ValueError, match="illegal actions at 3 of 3 tables"):
        venv.step(illegal)


# Many tables dealt at once by the compiled dealer: new episodes only, a lot after the shuffle,
# next rounds of matches, an opening every round, and seeds past 64 bits (numpy's Generators).
MANY_TABLES: list[tuple[str, dict[str, Any], int]] = [
    ("classic", {"num_players": 2, "episode": "round"}, 0),
    ("all_fives", {"num_players": 2, "episode": "match", "reward": "points"}, 0),
    ("cross", {"num_players": 4, "episode": "match", "reward": "points"}, 0),
    ("osel", {"num_players": 3, "episode": "match", "reward": "outcome"}, 0),
    ("all_fives", {"num_players": 2, "episode": "round"}, 2**64 - 400),
    ("classic", {"num_players": 2, "max_pip": 9, "episode": "round"}, 0),  # (55 tiles to shuffle)
]


MANY_IDS = [f"{name}-pip{options.get('max_pip', 6)}-seed{seed}" for name, options, seed in MANY_TABLES]


@pytest.mark.parametrize(("name", "options", "seed"), MANY_TABLES, ids=MANY_IDS)
def test_many_tables_deal_exactly_the_scalar_deals(name: str, options: dict[str, Any], seed: int) -> None:
    ended, rounds = play_both(name, options, "kernel", num_envs=160, steps=60, seed=seed)
    assert ended + rounds > 160, "too few deals after the first: later deals went untested"


# --- snapshots -----------------------------------------------------------------------------------

SNAPSHOT_TABLES: list[tuple[str, dict[str, Any]]] = [
    ("classic", {"num_players": 2, "episode": "round"}),
    ("classic", {"num_players": 4, "teams": True, "episode": "match", "reward": "points"}),
    ("all_fives", {"num_players": 3, "episode": "match", "reward": "points"}),
    ("osel", {"num_players": 3, "episode": "match", "reward": "outcome"}),
    ("metro", {"num_players": 3, "max_pip": 4, "hand_size": 3, "episode": "match", "reward": "points"}),
]


def replay(venv: vector.VectorEnv, actions: list[np.ndarray]) -> list[np.ndarray]:
    """Everything ``actions`` show, step after step (and the state at the end)."""
    shown: list[np.ndarray] = []
    for chosen in actions:
        obs, mask, reward, done, info = venv.step(chosen)
        shown += [obs, mask, reward, done, info["player"]]
    return [*shown, venv.state()]


def assert_same_stream(got: list[np.ndarray], want: list[np.ndarray], what: str) -> None:
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want, strict=True)):
        assert a.dtype == b.dtype and np.array_equal(a, b), f"{what}: output {k} (step {k // 5}) differs"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("table", SNAPSHOT_TABLES, ids=[table_id(t) for t in SNAPSHOT_TABLES])
def test_a_restored_snapshot_replays_exactly(table: tuple[str, dict[str, Any]], backend: str) -> None:
    """N steps, a snapshot, M more steps recorded; the snapshot restored into a fresh batch, into
    the same one and after a pickling round trip replays the same M actions exactly."""
    name, options = table
    kernel_or_skip(name, options, backend)
    venv = vector.make(name, 5, backend=backend, **options)
    _, mask, _ = venv.reset(seed=11)
    rng = np.random.default_rng(11)
    for _ in range(60):
        mask = venv.step(legal_choice(rng, mask))[1]
    snap = venv.snapshot()
    shown = (venv.state(), mask)
    actions = []
    for _ in range(120):
        actions.append(legal_choice(rng, mask))
        mask = venv.step(actions[-1])[1]
    venv2 = vector.make(name, 5, backend=backend, **options)
    _, mask, _ = venv2.reset(seed=99)  # (other games: the restore replaces them)
    want = None
    for target, source in [
        (venv2, snap),
        (venv, snap),
        (vector.make(name, 5, backend=backend, **options), snap),
    ]:
        obs, mask, info = target.restore(source)
        assert np.array_equal(mask, shown[1]) and np.array_equal(target.state(), shown[0])
        assert obs.dtype == np.float32 and info["player"].dtype == np.int64
        got = [obs, mask, info["player"], *replay(target, actions)]
        if want is None:
            want = got
        assert_same_stream(got, want, f"{backend} restore")
    again = pickle.loads(pickle.dumps(snap))
    fresh = vector.make(name, 5, backend=backend, **options)
    obs, mask, info = fresh.restore(again)
    assert want is not None
    assert_same_stream([obs, mask, info["player"], *replay(fresh, actions)], want, "pickled")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_restore_replays_what_the_original_goes_on_to_do(backend: str) -> None:
    """Restored, a batch shows what the uninterrupted one shows after the snapshot."""
    options = {"num_players": 2, "episode": "round"}
    kernel_or_skip("all_fives", options, backend)
    straight = vector.make("all_fives", 4, backend=backend, **options)
    _, mask, _ = straight.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(40):
        mask = straight.step(legal_choice(rng, mask))[1]
    resumed = vector.make("all_fives", 4, backend=backend, **options)
    _, mask2, _ = resumed.restore(straight.snapshot())
    assert np.array_equal(mask, mask2)
    actions = []
    for _ in range(100):
        actions.append(legal_choice(rng, mask))
        mask = straight.step(actions[-1])[1]
    for chosen in actions:
        mask2 = resumed.step(chosen)[1]
    assert np.array_equal(mask, mask2) and np.array_equal(straight.state(), resumed.state())


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_mismatched_snapshot_is_refused_and_changes_nothing(backend: str) -> None:
    options = {"num_players": 2, "episode": "round"}
    kernel_or_skip("classic", options, backend)
    venv = vector.make("classic", 3, backend=backend, **options)
    with pytest.raises(ValueError, match="reset"):
        venv.snapshot()
    venv.reset(seed=1)
    snap = venv.snapshot()
    state = venv.state()
    for other, why in [
        (vector.make("classic", 4, backend=backend, **options), "num_envs"),
        (vector.make("classic", 3, backend=backend, num_players=3, episode="round"), "options"),
        (vector.make("all_fives", 3, backend=backend, **options), "name"),
    ]:
        other.reset(seed=1)
        before = other.state()
        with pytest.raises(ValueError, match=f"another batch: its {why}"):
            other.restore(snap)
        assert np.array_equal(other.state(), before)
    other_backend = "scalar" if venv.backend != "scalar" else None
    if other_backend is not None:
        with pytest.raises(ValueError, match="its backend"):
            vector.make("classic", 3, backend=other_backend, **options).restore(snap)
    with pytest.raises(ValueError, match="not a snapshot"):
        venv.restore({"games": []})
    assert np.array_equal(venv.state(), state)


def test_a_kernel_snapshot_with_broken_random_states_is_refused_and_changes_nothing() -> None:
    options = {"num_players": 2, "episode": "round"}
    kernel_or_skip("classic", options, "kernel")
    venv = vector.make("classic", 3, backend="kernel", **options)
    venv.reset(seed=1)
    snap = venv.snapshot()
    venv.step(np.array([np.flatnonzero(row)[0] for row in venv.reset(seed=2)[1]]))
    state, rngs = venv.state(), venv.snapshot()["rngs"]
    good = snap["rngs"][0]
    words = good["state"]
    # (values no PCG64 state holds: a buffered half past 32 bits or a float, a flag of 2, words past 128 bits)
    out_of_range = [{**good, "uinteger": 1 << 40}, {**good, "has_uint32": 2}, {**good, "uinteger": 1.0}]
    out_of_range += [{**good, "state": {**words, key: 1 << 128}} for key in ("state", "inc")]
    for broken in ({"bit_generator": "PCG64"}, {**good, "bit_generator": "MT19937"}, "PCG64", *out_of_range):
        with pytest.raises(ValueError, match="not 3 PCG64 states"):
            venv.restore({**snap, "rngs": [broken, *snap["rngs"][1:]]})
        assert np.array_equal(venv.state(), state) and venv.snapshot()["rngs"] == rngs
