"""The vector collector: on the same deals it builds the local collector's batches, field by
field; snapshots act in one forward per step; what it refuses; its checkpoints."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from domino_env import vector
from tests.support.training_helpers import resumed_halfway, tiny_config
from training.agents.loader import PolicyAgent
from training.model import checkpoint
from training.model.config import ConfigError, acting_epsilon, load_config
from training.model.networks import ActorCritic
from training.rl.rollout import LocalCollector
from training.rl.train import Trainer
from training.rl.vector_collect import VectorCollector, vector_collector


class VectorDeals(LocalCollector):
    """A local collector that deals env ``j``'s ``k``-th game as the vector engine deals table
    ``j``'s after ``reset(seed=base)`` (the local one draws each deal's seed from the run's RNG
    instead, so the two never share deals by themselves)."""

    def __init__(self, config: Any, rng: np.random.Generator, base: int) -> None:
        self.base, self.dealt = base, [0] * config.run.num_envs
        super().__init__(config, rng)

    def _new_game(self, e: int) -> None:
        super()._new_game(e)
        self.envs[e].reset(seed=vector.episode_seed(self.base, e, self.dealt[e], len(self.envs)))
        self.dealt[e] += 1


def both_collect(config: Any, calls: int, steps: int, epsilon: float | None = None) -> list[tuple[Any, Any]]:
    """(local batch and stats, vector batch and stats) for ``calls`` collect()s of ``steps``, each
    collector from torch seed 0 with the same model (``epsilon``: acting epsilon-greedily on its
    logits, as ``algorithm: dmc`` does)."""
    base = int(np.random.default_rng(3).integers(2**31))  # the vector collector's first draw
    local = VectorDeals(config, np.random.default_rng(3), base)
    batched = VectorCollector(config, np.random.default_rng(3), backend="scalar")
    assert batched.base == base and batched.venv.backend == "scalar"
    torch.manual_seed(1)
    model = ActorCritic(local.architecture)
    model.epsilon = epsilon
    results: dict[str, list[Any]] = {"local": [], "vector": []}
    for name, collector in (("local", local), ("vector", batched)):
        torch.manual_seed(0)
        for _ in range(calls):
            results[name].append(collector.collect(model, steps))
    return list(zip(results["local"], results["vector"], strict=True))


FIELDS = ("obs", "masks", "actions", "logprobs", "values", "advantages", "returns", "states")


@pytest.mark.parametrize(
    ("variant", "options", "extra", "steps"),
    [
        ("classic", "{num_players: 2, episode: round}", [], 24),
        (
            "classic",
            "{num_players: 2, episode: round}",
            ["network.oracle_critic=true", "run.zero_sum=false"],
            24,
        ),
        ("classic", "{num_players: 4, episode: round}", ["run.num_envs=3"], 24),  # partners
        # the tables and settings the shipped agents were trained with on this collector
        ("all_fives", "{num_players: 2, episode: match}", ["run.num_envs=2"], 120),
        ("blitz", "{num_players: 2, episode: match}", ["run.num_envs=2"], 120),  # multi-tile turns
        ("osel", "{num_players: 2, episode: match}", ["run.num_envs=2", "network.oracle_critic=true"], 120),
        ("metro", "{num_players: 2, episode: round}", [], 24),
        ("cross", "{num_players: 4, episode: round}", ["run.num_envs=3"], 24),
    ],
)
def test_on_the_same_deals_the_batches_equal_the_local_collectors_field_by_field(
    gae_calls: list[dict[str, np.ndarray]], variant: str, options: str, extra: list[str], steps: int
) -> None:
    config = tiny_config(None, *extra, variant=variant, options=options)
    pairs = both_collect(config, calls=3, steps=steps)
    for (local, local_stats), (batched, batched_stats) in pairs:
        for name in FIELDS:
            mine, theirs = getattr(batched, name), getattr(local, name)
            if theirs is None:
                assert mine is None, name
            else:
                assert torch.equal(mine, theirs), name
        assert batched_stats == local_stats
    ended = sum(len(s.lengths) for _, (_, s) in pairs)  # games ended (and new chains began)
    assert ended >= (1 if "match" in options else 4)
    # the arrays gae() saw: the local collector's three calls, then the vector one's
    assert len(gae_calls) == 6
    for local_arrays, vector_arrays in zip(gae_calls[:3], gae_calls[3:], strict=True):
        for key, array in local_arrays.items():
            assert np.array_equal(vector_arrays[key], array), key
    if "network.oracle_critic=true" in extra:
        assert pairs[0][1][0].states is not None


def test_dmc_batches_equal_the_local_collectors_field_by_field() -> None:
    """``algorithm: dmc`` (epsilon-greedy acting, Monte Carlo returns) on All Fives matches, as
    its full-table runs collect: every field of every batch equal on the same deals."""
    config = tiny_config(
        None, "algorithm=dmc", "run.num_envs=2", variant="all_fives", options="{num_players: 2}"
    )
    pairs = both_collect(config, calls=3, steps=96, epsilon=acting_epsilon(config))
    assert 0 < acting_epsilon(config) < 1
    for (local, local_stats), (batched, batched_stats) in pairs:
        for field in dataclasses.fields(local):
            mine, theirs = getattr(batched, field.name), getattr(local, field.name)
            assert torch.equal(mine, theirs) if isinstance(theirs, torch.Tensor) else mine == theirs, (
                field.name
            )
        assert batched_stats == local_stats
    assert sum(len(s.lengths) for _, (_, s) in pairs) >= 1  # a match ended: its returns were read


def test_match_value_rewards_each_round_as_the_local_collector_does(
    gae_calls: list[dict[str, np.ndarray]],
) -> None:
    """``run.match_value`` on whole Classic matches: on the same deals every transition's reward
    (the change in the side's match value at each round's end, the match's outcome at its end)
    and every round's cut equal the local collector's."""
    config = tiny_config(None, "run.match_value=true", options="{num_players: 2, episode: match}")
    pairs = both_collect(config, calls=3, steps=64)
    for (local, local_stats), (batched, batched_stats) in pairs:
        for name in FIELDS[:-1]:  # (no states: no oracle critic)
            assert torch.equal(getattr(batched, name), getattr(local, name)), name
        assert batched_stats == local_stats
    assert sum(len(s.lengths) for _, (_, s) in pairs) > 0  # matches ended (outcome rewards)
    assert len(gae_calls) == 6
    for local_arrays, vector_arrays in zip(gae_calls[:3], gae_calls[3:], strict=True):
        for key, array in local_arrays.items():
            assert np.array_equal(vector_arrays[key], array), key
    rounds = sum(int(arrays["done"].sum()) for arrays in gae_calls[3:])
    assert rounds > 2 * sum(len(s.lengths) for _, (_, s) in pairs)  # rounds cut inside matches
    assert all(np.abs(arrays["rewards"]).sum() > 0 for arrays in gae_calls[3:])


def test_points_rewards_agree_to_float32() -> None:
    """The engine reports float32 rewards (the scalar env's are Python floats): a points table's
    rewards agree to float32 precision, everything the network computed exactly."""
    config = tiny_config(
        None,
        "run.reward_scale=10.0",
        variant="all_fives",
        options="{num_players: 3, episode: round, reward: points}",
    )
    for (local, _), (batched, _) in both_collect(config, calls=2, steps=20):
        for name in ("obs", "masks", "actions", "logprobs", "values"):
            assert torch.equal(getattr(batched, name), getattr(local, name)), name
        assert torch.allclose(batched.returns, local.returns, atol=1e-5)
        assert local.returns.abs().sum() > 0


def test_snapshots_play_the_other_side_in_one_forward_per_step_and_are_not_learned_from() -> None:
    config = tiny_config(None, "pool.share=1.0", "run.num_envs=8")
    collector = VectorCollector(config, np.random.default_rng(0), backend="scalar")
    torch.manual_seed(0)
    model = ActorCritic(collector.architecture)
    for _ in range(2):
        collector.add_snapshot(model)
        model = ActorCritic(collector.architecture)
    collector.collect(model, 40)  # the games dealt before the pool had members end
    assert all(o is not None for o in collector.opponent)
    rows: list[int] = []
    for snapshot in collector.pool:
        act = snapshot.act

        def counting(obs: np.ndarray, mask: np.ndarray, state: Any = None, act: Any = act) -> Any:
            rows.append(len(obs))
            return act(obs, mask, state)

        snapshot.act = counting  # type: ignore[method-assign]
    steps = 30
    _, stats = collector.collect(model, steps)
    assert stats.pool_games and not stats.self_play
    assert len(rows) <= 2 * steps  # one forward per snapshot and step at most
    assert sum(rows) + stats.decisions == steps * config.run.num_envs  # every other move a snapshot's
    assert 0 < stats.decisions < steps * config.run.num_envs
    assert 0.0 <= stats.pool_wins <= stats.pool_games


def test_the_random_baseline_plays_legal_moves_that_never_enter_the_batch() -> None:
    config = tiny_config(None, "pool.share=1.0", "pool.size=0", "pool.baselines=[random]", "run.num_envs=6")
    collector = VectorCollector(config, np.random.default_rng(0), backend="scalar")
    assert all(o is collector.baselines["random"] for o in collector.opponent)  # every table seated
    assert sorted(set(collector.learner_side.tolist())) == [0, 1]
    drawn: list[np.ndarray] = []
    moves = collector._random_moves

    def spying(mask: np.ndarray) -> np.ndarray:
        chosen = moves(mask)
        assert mask[np.arange(len(mask)), chosen].all()  # legal (the engine would refuse others too)
        drawn.append(chosen)
        return chosen

    collector._random_moves = spying  # type: ignore[method-assign]
    torch.manual_seed(0)
    model = ActorCritic(collector.architecture)
    steps = 40
    batch, stats = collector.collect(model, steps)
    assert len(drawn) <= steps  # one draw a step at most, for every table the baseline moves at
    assert sum(map(len, drawn)) + stats.decisions == steps * config.run.num_envs
    assert 0 < stats.decisions < steps * config.run.num_envs and len(batch.actions) <= stats.decisions
    assert stats.pool_games and not stats.self_play


@pytest.mark.parametrize("sample", [False, True])
def test_a_trained_policy_among_the_baselines_moves_as_it_plays_alone(tmp_path: Path, sample: bool) -> None:
    """A checkpoint in ``pool.baselines`` plays its tables in one forward pass a step, each move
    the one its agent would make at that table alone (greedy, or sampled from its own stream)."""
    trainer = Trainer(tiny_config(tmp_path))  # (a real checkpoint of this table: two iterations)
    trainer.train(progress=False)
    checkpoint_path = str(trainer.run_dir / "checkpoints" / "latest.pt")
    config = tiny_config(None, "pool.share=1.0", "pool.size=0", f"pool.baselines=[{checkpoint_path}]")
    collector = VectorCollector(config, np.random.default_rng(0), backend="scalar")
    agent = collector.baselines[checkpoint_path]
    assert isinstance(agent, PolicyAgent)
    agent.sample = sample
    twin = PolicyAgent(agent.model, sample=sample)
    twin.rng.setstate(agent.rng.getstate())
    moved: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    moves = agent.moves

    def spying(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        chosen = moves(obs, masks)
        moved.append((obs, masks, chosen))
        return chosen

    agent.moves = spying  # type: ignore[method-assign]
    _, stats = collector.collect(ActorCritic(collector.architecture), 20)
    assert moved and sum(len(c) for _, _, c in moved) + stats.decisions == 20 * config.run.num_envs
    for obs, masks, chosen in moved:
        rows = zip(obs, masks, strict=True)
        # (a policy reads only its observation: no env)
        alone = [twin(None, {"observation": o, "action_mask": m}) for o, m in rows]  # type: ignore[arg-type]
        assert chosen.tolist() == alone


def test_random_moves_are_uniform_over_the_legal_actions() -> None:
    collector = VectorCollector(tiny_config(None, "pool.baselines=[random]"), np.random.default_rng(0))
    mask = np.zeros((4000, 6), bool)
    mask[:, [1, 2, 5]] = True
    counts = np.bincount(collector._random_moves(mask), minlength=6)
    assert counts[[0, 3, 4]].sum() == 0 and counts[[1, 2, 5]].min() > 1200


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["run.collector=ray"], "run.collector must be one of local, vector"),
        (
            ["run.collector=vector", "pool.baselines=[random, greedy]"],
            r"seats only random and trained policies .* not \['greedy'\].*run\.collector=local",
        ),
    ],
)
def test_what_the_vector_collector_cannot_do_is_refused_in_the_config(
    overrides: list[str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(None, ["env.variant=classic", *overrides])


def test_the_vector_collector_takes_match_value_and_the_random_baseline() -> None:
    overrides = [
        "run.match_value=true",
        "env.options={num_players: 2, episode: match}",
        "pool.baselines=[random]",
    ]
    assert load_config(None, ["env.variant=classic", "run.collector=vector", *overrides]).run.match_value


def test_a_vector_collector_refuses_baselines_whatever_run_collector_says() -> None:
    config = tiny_config(None, "pool.baselines=[greedy]")  # run.collector: local
    with pytest.raises(ConfigError, match=r"seats only random and trained policies"):
        VectorCollector(config, np.random.default_rng(0), backend="scalar")


@pytest.mark.parametrize("backend", ["scalar", "auto"])
def test_a_checkpoint_keeps_the_pool_seating_and_games_in_progress(backend: str) -> None:
    """Restored from a checkpoint (and the run's RNG state), a collector finishes the games in
    progress and builds the batches the uninterrupted one builds."""
    config = tiny_config(None, "pool.share=0.5", "run.num_envs=6")
    collector = VectorCollector(config, np.random.default_rng(0), backend=backend)
    torch.manual_seed(0)
    model = ActorCritic(collector.architecture)
    collector.add_snapshot(model)
    collector.collect(model, 40)
    state = pickle.loads(pickle.dumps(collector.state_dict()))
    rng_state = collector.rng.bit_generator.state
    resumed = VectorCollector(config, np.random.default_rng(9), backend=backend)
    resumed.load_state_dict(state, model)
    resumed.rng.bit_generator.state = rng_state
    assert [o is None for o in resumed.opponent] == [o is None for o in collector.opponent]
    assert resumed.learner_side.tolist() == collector.learner_side.tolist()
    assert len(resumed.pool) == 1 and torch.equal(
        next(iter(resumed.pool[0].state_dict().values())), next(iter(collector.pool[0].state_dict().values()))
    )
    assert np.array_equal(resumed.obs, collector.obs) and np.array_equal(resumed.mask, collector.mask)
    for _ in range(2):
        torch.manual_seed(5)
        want, want_stats = collector.collect(model, 24)
        torch.manual_seed(5)
        got, got_stats = resumed.collect(model, 24)
        for name in FIELDS[:-1]:
            assert torch.equal(getattr(got, name), getattr(want, name)), name
        assert got_stats == want_stats
    with pytest.raises(ValueError, match="collected by the local collector"):
        resumed.load_state_dict({**state, "collector": "local"}, model)


def test_a_checkpoint_without_the_engines_snapshot_deals_unplayed_games() -> None:
    config = tiny_config(None, "pool.share=0.5", "run.num_envs=6")
    collector = VectorCollector(config, np.random.default_rng(0), backend="scalar")
    torch.manual_seed(0)
    model = ActorCritic(collector.architecture)
    collector.collect(model, 40)
    state = {key: value for key, value in collector.state_dict().items() if key != "engine"}
    played = {
        vector.episode_seed(collector.base, e, k, 6)
        for e in range(6)
        for k in range(int(collector.episodes[e]) + 1)
    }
    resumed = VectorCollector(config, np.random.default_rng(9), backend="scalar")
    resumed.load_state_dict(state, model)
    assert resumed.learner_side.tolist() == collector.learner_side.tolist()
    fresh = {vector.episode_seed(resumed.base, e, k, 6) for e in range(6) for k in range(50)}
    assert not fresh & played  # the resumed run's deals are new ones


def test_a_resumed_vector_run_ends_with_the_uninterrupted_runs_weights(tmp_path: Path) -> None:
    """Four iterations straight, against two, a checkpoint and two more in a fresh trainer
    resumed from it (the games in progress finished, the pool and seating kept): bitwise-identical
    weights, as the local collector's resume (tests/training/test_checkpoint.py)."""
    overrides = [
        "run.collector=vector",
        "run.total_steps=256",  # four iterations of 4 envs x 16 decisions
        "run.checkpoint_every=2",
        "pool.share=0.5",
        "pool.snapshot_every=1",
        "pool.size=2",
    ]
    options = "{num_players: 2, episode: match, reward: points}"  # (games outlive an iteration)
    straight, resumed = resumed_halfway(tmp_path, overrides, "all_fives", options)
    assert isinstance(straight.collector, VectorCollector) and isinstance(resumed.collector, VectorCollector)


def test_a_resumed_match_value_run_against_random_ends_with_the_uninterrupted_runs_weights(
    tmp_path: Path,
) -> None:
    """As above with run.match_value (the rounds in progress keep their starting scores) and the
    random baseline (its moves drawn from the run's collection RNG, which the checkpoint keeps)."""
    overrides = [
        "run.collector=vector",
        "run.total_steps=256",
        "run.checkpoint_every=2",
        "run.match_value=true",
        "pool.share=0.7",
        "pool.snapshot_every=1",
        "pool.size=1",
        "pool.baselines=[random]",
    ]
    straight, _ = resumed_halfway(tmp_path, overrides, "classic", "{num_players: 2, episode: match}")
    collector = straight.collector
    assert isinstance(collector, VectorCollector) and collector.match_value is not None
    assert collector.round_start.any()  # rounds in progress after the first of a match (resumed)
    assert any(o is collector.baselines["random"] for o in collector.opponent)


def test_a_vector_run_trains_and_resumes_only_as_a_vector_run(tmp_path: Path) -> None:
    config = tiny_config(tmp_path, "run.collector=vector")
    trainer = Trainer(config, collector=vector_collector("scalar"))
    assert isinstance(trainer.collector, VectorCollector)
    path = trainer.train(progress=False)
    assert trainer.steps == config.run.total_steps
    Trainer(tiny_config(tmp_path, "run.collector=vector", "run.total_steps=192"), resume=path).train(
        progress=False
    )
    with pytest.raises(checkpoint.CheckpointError, match=r"run\.collector=vector"):
        Trainer(tiny_config(tmp_path), resume=path)


def test_the_default_engine_builds_the_same_batches_as_scalar_tables() -> None:
    """backend auto (the kernel where the variant has one) against scalar tables: the same."""
    config = tiny_config(None, options="{num_players: 2}")
    if vector.kernel_refusal(config.env.variant, **config.env.options) is not None:
        pytest.skip("no kernel steps this table yet")
    batches, model = [], None
    for backend in ("auto", "scalar"):
        collector = VectorCollector(config, np.random.default_rng(4), backend=backend)
        torch.manual_seed(1)
        model = model or ActorCritic(collector.architecture)
        torch.manual_seed(0)
        batches.append([collector.collect(model, 16)[0] for _ in range(2)])
    for kernel, scalar in zip(*batches, strict=True):
        for name in FIELDS[:-1]:
            assert torch.equal(getattr(kernel, name), getattr(scalar, name)), name
