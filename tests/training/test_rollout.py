"""Self-play rollouts: turn-based transitions, rewards that arrive after the other seats' moves,
open transitions at a rollout's end, and the opponent pool."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from domino_env import raw_env
from tests.support.helpers import deal, laid
from tests.support.training_helpers import tiny_config
from training.model.networks import ActorCritic, Architecture
from training.rl.rollout import EpisodeStats, LocalCollector, Transitions


class ScriptedModel:
    """Stands in for the ActorCritic: plays scripted tiles (the lowest legal action laying
    that tile) and reports a value that identifies the observation (its sum)."""

    def __init__(self, tiles: list[str], rules: Any) -> None:
        self.tiles, self.rules, self.calls = list(tiles), rules, 0

    def act(
        self, obs: np.ndarray, mask: np.ndarray, state: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        assert len(obs) == 1
        tile = self.tiles[self.calls]
        legal = np.flatnonzero(mask[0])
        fitting = [a for a in legal if laid(self.rules, a) == tile]
        assert fitting, f"{tile} is not playable at decision {self.calls}"
        self.calls += 1
        return np.array([fitting[0]]), np.array([-0.5], dtype=np.float32), obs.sum(axis=1)


# Block Classic, 2 players. P0 leads 0-0, P1 plays 0-1, P0 plays 0-2 and then holds nothing
# matching 1, 2 or 3: it passes (the env plays the passes) while P1 lays its six other tiles
# one after another and goes out with 1-3. The -1 for P0 arrives only with P1's last move.
BLOCK_DEAL = deal(["0-0 0-2 4-4 5-5 6-6 4-5 5-6", "0-1 1-1 1-2 2-2 2-3 3-3 1-3"], leader=0)
BLOCK_SCRIPT = ["0-0", "0-1", "0-2", "1-1", "1-2", "2-2", "2-3", "3-3", "1-3"]
BLOCK_SEATS = [0, 1, 0, 1, 1, 1, 1, 1, 1]


def scripted_collector(*overrides: str) -> LocalCollector:
    config = tiny_config(
        None,
        "run.num_envs=1",
        *overrides,
        options="{num_players: 2, episode: round, draw: false}",
    )
    collector = LocalCollector(config, np.random.default_rng(0))
    collector.envs[0].reset(seed=0, options={"deal": BLOCK_DEAL})
    return collector


def test_final_reward_after_the_opponents_move_reaches_the_loser_transition(
    gae_calls: list[dict[str, np.ndarray]],
) -> None:
    collector = scripted_collector("run.zero_sum=false", "run.reward_scale=1.0")
    env = collector.envs[0]
    hand = env.observation_layout["hand"]
    seat_hands = [env.observe(agent)["observation"][hand].copy() for agent in env.possible_agents]
    model = ScriptedModel(BLOCK_SCRIPT, collector.envs[0].rules)

    batch, stats = collector.collect(model, len(BLOCK_SCRIPT))  # type: ignore[arg-type]

    (arrays,) = gae_calls
    assert model.calls == 9 and len(batch.actions) == 9
    # P0: 0 -> 2 (its last decision: done, with the -1 that came after P1 went out)
    # P1: 1 -> 3 -> 4 -> 5 -> 6 -> 7 -> 8 (consecutive decisions while P0 passes; +1 at the end)
    assert arrays["successor"].tolist() == [2, 3, -1, 4, 5, 6, 7, 8, -1]
    assert arrays["done"].tolist() == [False, False, True, False, False, False, False, False, True]
    assert all(BLOCK_SEATS[j] == BLOCK_SEATS[i] for i, j in enumerate(arrays["successor"]) if j >= 0)
    assert arrays["rewards"].tolist() == [0, 0, -1, 0, 0, 0, 0, 0, 1]
    assert stats.self_play == 1 and stats.lengths == [9]
    # each transition holds its own seat's observation (the first one of each seat: full hand)
    assert np.array_equal(batch.obs[0, hand].numpy(), seat_hands[0])
    assert np.array_equal(batch.obs[1, hand].numpy(), seat_hands[1])
    assert all(batch.masks[i, batch.actions[i]] for i in range(9))
    assert [laid(collector.envs[0].rules, int(a)) for a in batch.actions] == BLOCK_SCRIPT
    # done transitions are not bootstrapped: the return of P0's last move is exactly -1
    assert batch.returns[2].item() == pytest.approx(-1.0)
    assert batch.returns[8].item() == pytest.approx(1.0)


def test_open_transitions_at_the_rollout_end_lend_their_value_and_stay_out_of_the_batch(
    gae_calls: list[dict[str, np.ndarray]],
) -> None:
    """Stopped before P1's winning move: P0's last move (2) and P1's (7) have no next decision
    yet. Their predecessors' returns end with their values - each its seat's value at a real
    decision, never an idle seat's view - and they themselves are not learned from."""
    collector = scripted_collector("run.zero_sum=false")
    model = ScriptedModel(BLOCK_SCRIPT, collector.envs[0].rules)  # its value of an observation: the sum of it
    batch, stats = collector.collect(model, 8)  # type: ignore[arg-type]

    (arrays,) = gae_calls
    assert stats.decisions == 8
    assert arrays["successor"].tolist() == [2, 3, -1, 4, 5, 6, 7, -1]
    assert not arrays["done"].any() and not arrays["rewards"].any()
    values = arrays["values"]
    assert len(batch.actions) == 6  # all but the open 2 and 7
    assert [laid(collector.envs[0].rules, int(a)) for a in batch.actions] == [
        BLOCK_SCRIPT[i] for i in (0, 1, 3, 4, 5, 6)
    ]
    gamma = collector.config.ppo.gamma
    assert batch.returns[0].item() == pytest.approx(gamma * values[2])  # P0's 0-0: on to its 0-2
    assert batch.returns[-1].item() == pytest.approx(gamma * values[7])  # P1's 3-3: on to its 1-3
    assert values[2] != values[7]


def test_zero_sum_and_scale_apply_to_the_final_reward() -> None:
    collector = scripted_collector("run.zero_sum=true", "run.reward_scale=10.0")
    batch, _ = collector.collect(ScriptedModel(BLOCK_SCRIPT, collector.envs[0].rules), 9)  # type: ignore[arg-type]
    # outcome rewards are zero-sum already: only the scale changes them
    assert batch.returns[2].item() == pytest.approx(-10.0)
    assert batch.returns[8].item() == pytest.approx(10.0)


@pytest.mark.parametrize(
    ("variant", "options", "extra"),
    [
        ("classic", "{num_players: 2, episode: round}", ["run.zero_sum=false"]),
        ("all_fives", "{num_players: 3, episode: round, reward: points}", ["run.reward_scale=10.0"]),
    ],
)
def test_rewards_successors_and_done_match_an_independent_replay(
    gae_calls: list[dict[str, np.ndarray]], variant: str, options: str, extra: list[str]
) -> None:
    """Random self-play in 2 lockstep envs: every decision, every reward, every end is logged
    as it happens and the transitions are rebuilt from the log the simple way."""
    config = tiny_config(None, "run.num_envs=2", *extra, variant=variant, options=options)
    collector = LocalCollector(config, np.random.default_rng(5))
    log: list[list[tuple[int, list[float], bool]]] = [[] for _ in collector.envs]
    for e, env in enumerate(collector.envs):
        original = env.step

        def step(action: Any, env: Any = env, original: Any = original, e: int = e) -> None:
            seat = env.possible_agents.index(env.agent_selection)
            original(action)
            rewards = [env.rewards[a] for a in env.possible_agents]
            log[e].append((seat, rewards, all(env.terminations.values())))

        env.step = step  # type: ignore[method-assign]
    torch.manual_seed(0)
    model = ActorCritic(Architecture(collector.obs_size, collector.num_actions, hidden=[32]))
    steps = 60
    collector.collect(model, steps)
    (arrays,) = gae_calls

    n, scale = collector.num_players, config.run.reward_scale
    expected_rewards = np.zeros(2 * steps)
    expected_successor = np.full(2 * steps, -1)
    expected_done = np.zeros(2 * steps, dtype=bool)
    for e in range(2):
        pending: dict[int, int] = {}
        for t, (seat, rewards, over) in enumerate(log[e]):
            i = t * 2 + e  # no pool: every env adds one transition per step, env order
            if seat in pending:
                expected_successor[pending[seat]] = i
            pending[seat] = i
            offset = sum(rewards) / n if config.run.zero_sum else 0.0
            for s, j in pending.items():
                expected_rewards[j] += (rewards[s] - offset) * scale
            if over:
                for j in pending.values():
                    expected_done[j] = True
                pending = {}
    assert any(over for e in range(2) for _, _, over in log[e])  # games ended within the rollout
    assert arrays["successor"].tolist() == expected_successor.tolist()
    assert arrays["done"].tolist() == expected_done.tolist()
    assert arrays["rewards"] == pytest.approx(expected_rewards, abs=1e-5)
    if variant == "all_fives":  # points arrive mid-round, and to seats other than the mover
        assert np.count_nonzero(arrays["rewards"][~arrays["done"]]) > 0


def test_pool_snapshots_play_the_other_side_and_are_not_learned_from() -> None:
    config = tiny_config(None, "pool.share=1.0", "pool.size=2")
    collector = LocalCollector(config, np.random.default_rng(2))
    torch.manual_seed(0)
    model = ActorCritic(Architecture(collector.obs_size, collector.num_actions, hidden=[32]))
    snapshots = []
    for _ in range(3):
        collector.add_snapshot(model)
        snapshots.append(collector.pool[-1])
        with torch.no_grad():
            model.policy.bias.add_(1.0)
    assert collector.pool == snapshots[1:]  # the newest pool.size kept
    assert collector.pool[-1] is not model
    assert torch.equal(collector.pool[-1].policy.bias, model.policy.bias - 1.0)  # a frozen copy
    assert not collector.pool[-1].training

    learner_seats = opponent_seats = 0
    opponent_calls = 0
    for e, env in enumerate(collector.envs):
        original = env.step

        def step(action: Any, env: Any = env, original: Any = original, e: int = e) -> None:
            nonlocal learner_seats, opponent_seats
            seat = env.possible_agents.index(env.agent_selection)
            opponent = collector.opponent[e]
            if opponent is None or collector.side_of[seat] == collector.learner_side[e]:
                learner_seats += 1
            else:
                opponent_seats += 1
            original(action)

        env.step = step  # type: ignore[method-assign]
    for snapshot in collector.pool:
        act = snapshot.act

        def counted(obs: np.ndarray, mask: np.ndarray, act: Any = act) -> Any:
            nonlocal opponent_calls
            assert len(obs) == 1
            opponent_calls += 1
            return act(obs, mask)

        snapshot.act = counted  # type: ignore[method-assign]
    for e in range(len(collector.envs)):  # new games now draw opponents from the pool
        collector._new_game(e)
    assert all(o in collector.pool for o in collector.opponent)

    batch, stats = collector.collect(model, 60)
    assert learner_seats + opponent_seats == 4 * 60
    # every learner decision is in the batch but the last of each env, still open (one seat learns)
    assert 0 < learner_seats - len(batch.actions) <= len(collector.envs)
    assert opponent_calls == opponent_seats > 0
    assert stats.pool_games > 0 and stats.self_play == 0
    assert 0 <= stats.pool_wins <= stats.pool_games


@pytest.mark.parametrize("name", ["greedy", "search:2"])
def test_pool_baselines_play_the_other_side_and_are_not_learned_from(name: str) -> None:
    config = tiny_config(None, "pool.share=1.0", f"pool.baselines=['{name}']")
    collector = LocalCollector(config, np.random.default_rng(4))
    baseline = collector.baselines[name]
    assert baseline.name == name
    calls = 0

    def counted(env: Any, observation: dict[str, np.ndarray]) -> int:
        nonlocal calls
        calls += 1
        return baseline(env, observation)

    collector.baselines[name] = counted  # type: ignore[assignment]
    for e in range(len(collector.envs)):
        collector._new_game(e)
    assert all(o is counted for o in collector.opponent)  # no snapshots yet: the baseline plays
    torch.manual_seed(0)
    batch, stats = collector.collect(
        ActorCritic(Architecture(collector.obs_size, collector.num_actions, hidden=[32])), 40
    )
    assert calls > 0 and 0 < 4 * 40 - calls - len(batch.actions) <= len(collector.envs)  # (open ones)
    assert stats.pool_games > 0 and stats.self_play == 0


@pytest.mark.parametrize("learner_side", [0, 1])
def test_pool_win_rate_counts_the_learner_sides_first_places(learner_side: int) -> None:
    """With points rewards the last step's reward is a points change, not the result: the pool's
    win count reads the match outcome (checked against an outcome-reward twin of the game)."""
    options = "{num_players: 4, teams: true, episode: match, reward: points}"
    config = tiny_config(None, "pool.share=1.0", "pool.baselines=[random]", options=options)
    collector = LocalCollector(config, np.random.default_rng(7))
    env = collector.envs[0]
    twin = raw_env("classic", num_players=4, teams=True, episode="match", reward="outcome")
    wins = []
    for seed in range(6):
        for e in (env, twin):
            e.reset(seed=seed)
        while not all(env.terminations.values()):
            action = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
            for e in (env, twin):
                e.step(action)
        outcome = twin.rewards[twin.possible_agents[learner_side]]  # the final step gives the outcome
        wins.append(1.0 if outcome == 1.0 else 0.5 if outcome == 0.0 else 0.0)
        stats = EpisodeStats()
        collector.opponent[0], collector.learner_side[0] = collector.baselines["random"], learner_side
        collector._record(0, env, stats)
        assert (stats.pool_games, stats.pool_wins) == (1, wins[-1])
    assert 0.0 < sum(wins) < len(wins)  # both results were seen


def test_an_oracle_critic_gets_each_decision_s_global_state() -> None:
    config = tiny_config(None, "network.oracle_critic=true")
    collector = LocalCollector(config, np.random.default_rng(6))
    torch.manual_seed(0)
    model = ActorCritic(collector.architecture)
    batch, _ = collector.collect(model, 20)
    assert batch.states is not None and batch.states.shape == (len(batch.actions), model.state_size)
    seat_0 = collector.envs[0].state_layout["seat_0"]  # the player to move's own observation
    assert torch.equal(batch.states[:, seat_0], batch.obs)
    plain, _ = LocalCollector(tiny_config(None), np.random.default_rng(6)).collect(model, 4)
    assert plain.states is None


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("zero_sum", [True, False])
def test_rewards_credited_for_many_tables_at_once_are_the_plain_loops_float32_bits(
    players: int, zero_sum: bool
) -> None:
    """``reward`` over many tables equals the plain loop, table by table and seat by seat in
    Python floats, bit for bit: thirds and 250ths, zero rows, seats with no open transition."""
    config = tiny_config(None, f"run.zero_sum={str(zero_sum).lower()}", "run.reward_scale=0.04")
    table = raw_env("classic", num_players=players)
    chains = Transitions(
        config, Architecture.for_table(table, config.network), num_envs=64, num_players=players, steps=8
    )
    plain = chains.rewards.copy()
    rng = np.random.default_rng(players)
    for _ in range(8):
        open_ = rng.permutation(len(plain))[: 64 * players].reshape(64, players)
        chains.pending = np.where(rng.random((64, players)) < 0.2, -1, open_)
        fractions = rng.integers(-30, 30, (64, players)) / rng.choice([1, 3, 7, 250], (64, players))
        rewards = np.where(rng.random((64, players)) < 0.3, 0, fractions).astype(np.float32)
        tables = np.flatnonzero(rewards.any(axis=1))
        for e in tables.tolist():
            step = rewards[e].tolist()
            offset = sum(step) / players if zero_sum else 0.0
            for s, amount in enumerate(step):
                if chains.pending[e, s] >= 0:
                    plain[chains.pending[e, s]] += (amount - offset) * 0.04
        chains.reward(tables, rewards[tables])
    assert np.abs(plain).sum() > 0
    assert np.array_equal(plain.view(np.int32), chains.rewards.view(np.int32))
