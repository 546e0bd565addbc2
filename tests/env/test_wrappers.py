"""SingleAgentEnv: Gymnasium conformance, rewards that match the AEC game, opponents per seat,
and (when sb3-contrib is installed) MaskablePPO training on it."""

from __future__ import annotations

import subprocess
import sys
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import domino_env
from domino_env.agents import RandomAgent
from domino_env.envs.base import DominoEnv
from domino_env.wrappers import ActionMasks, LegalDiscrete, SingleAgentEnv
from tests.support.extras import load_example
from tests.support.variant_configs import configs

TABLES = [
    ("classic", {"num_players": 2}, 0),
    ("classic", {"num_players": 3, "draw": False}, 2),
    ("all_fives", {"num_players": 2}, 1),
    ("all_fives", {"num_players": 4, "teams": True}, 1),
]
TABLE_IDS = [f"{name}-{opts['num_players']}p-seat{seat}" for name, opts, seat in TABLES]


# --- Gymnasium conformance -----------------------------------------------------------------------


@configs
def test_check_env(name: str, n: int, teams: bool) -> None:
    # check_env steps with actions sampled before a reset (stale masks), so an illegal action
    # must end the episode rather than raise; everything else is the default configuration.
    env = SingleAgentEnv(name, illegal_action="penalize", num_players=n, teams=teams)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a checker warning fails the test
        check_env(env, skip_render_check=True)


@pytest.mark.filterwarnings("ignore:.*render fps:UserWarning")  # text rendering has no frame rate
def test_check_env_with_spec_and_render_modes() -> None:
    env_id = "domino_test/AllFives-v0"
    if env_id not in gym.registry:
        gym.register(
            env_id,
            entry_point="domino_env.wrappers:SingleAgentEnv",
            kwargs={"variant": "all_fives", "num_players": 2, "illegal_action": "penalize"},
        )
    env = gym.make(env_id, render_mode="ansi")
    check_env(env.unwrapped)
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and "player_0" in text


@pytest.mark.filterwarnings("ignore:.*render fps:UserWarning")  # text and frames on demand: no frame rate
def test_gym_make_offers_each_tables_render_modes() -> None:
    env_id = "domino_test/Domino3D-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point="domino_env.wrappers:SingleAgentEnv", kwargs={"variant": "domino3d"})
    env = gym.make(env_id, render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.ndim == 3
    assert env.unwrapped.metadata["render_modes"] == ["human", "ansi", "rgb_array"]
    chain = SingleAgentEnv("classic", render_mode="rgb_array")  # the chain tables draw pictures too
    chain.reset(seed=0)
    assert chain.render().shape == (600, 800, 3)
    with pytest.raises(
        ValueError, match=r"render_mode must be one of 'human', 'ansi', 'rgb_array', got 'rgb'"
    ):
        SingleAgentEnv("classic", render_mode="rgb")


def test_copies_and_pickles_play_on_independently() -> None:
    """A deep copy or an unpickled copy of the wrapper (the AEC table inside, the opponents'
    random streams, the action space's link to its own env) continues exactly as the original."""
    import copy
    import pickle

    env = SingleAgentEnv("blind", opponents="random", num_players=2)
    env.reset(seed=4)
    env.step(env.action_space.sample())
    twins = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    space = twins[0].action_space
    assert isinstance(space, LegalDiscrete)
    assert np.array_equal(twins[0].action_masks(), env.action_masks())
    for _ in range(200):
        action = int(np.flatnonzero(env.action_masks())[0])
        results = [e.step(action) for e in (env, *twins)]
        for obs, reward, done, *_ in results[1:]:
            assert np.array_equal(obs, results[0][0]) and (reward, done) == results[0][1:3]
        assert space.sample() in np.flatnonzero(twins[0].action_masks()) or results[0][2]
        if results[0][2]:
            break
    assert results[0][2]


def test_spaces_and_masks() -> None:
    env = SingleAgentEnv("all_fives", num_players=2)
    assert isinstance(env.action_space, gym.spaces.Discrete) and env.action_space.n == 112
    assert env.observation_space.shape == (env.aec.encoder.size,)
    assert not env.action_masks().any()  # before reset: nothing is legal
    obs, info = env.reset(seed=3)
    assert obs in env.observation_space
    mask = env.action_masks()
    assert mask.dtype == bool and mask.any()
    assert np.array_equal(info["action_mask"], mask)
    assert sorted(np.flatnonzero(mask)) == sorted(env.aec.game.legal)
    for _ in range(20):  # action_space.sample() draws legal actions
        assert mask[env.action_space.sample()]


def test_illegal_action_raises_and_changes_nothing() -> None:
    env = SingleAgentEnv("all_fives", num_players=2)
    obs, _ = env.reset(seed=5)
    mask = env.action_masks()
    illegal = int(np.flatnonzero(~mask)[0])
    with pytest.raises(ValueError, match="illegal action"):
        env.step(illegal)
    assert np.array_equal(env.action_masks(), mask)
    assert np.array_equal(env._observation(), obs)
    env.step(int(np.flatnonzero(mask)[0]))  # a legal action still works


def test_step_outside_an_episode_raises() -> None:
    env = SingleAgentEnv("all_fives", num_players=2, episode="round")
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    terminated = False
    while not terminated:
        _, _, terminated, _, info = env.step(env.action_space.sample())
    assert not info["action_mask"].any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_a_negative_seed_is_a_value_error_and_the_env_plays_on() -> None:
    env = SingleAgentEnv("classic", opponents="random")
    obs, _ = env.reset(seed=3)
    with pytest.raises(ValueError, match="seed must be a non-negative integer or None, got -1"):
        env.reset(seed=-1)
    assert np.array_equal(env.reset(seed=3)[0], obs)


def test_seeded_reset_is_reproducible() -> None:
    def episode(env: SingleAgentEnv, seed: int) -> list[tuple[bytes, float]]:
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        out, terminated = [(obs.tobytes(), 0.0)], False
        while not terminated:
            obs, reward, terminated, _, _ = env.step(env.action_space.sample())
            out.append((obs.tobytes(), reward))
        return out

    env = SingleAgentEnv("all_fives", opponents="random", num_players=3, episode="round")
    first = episode(env, 11)
    episode(env, 12)
    assert episode(env, 11) == first
    assert episode(SingleAgentEnv("all_fives", num_players=3, episode="round"), 11) == first


def test_no_torch_import() -> None:
    code = "import sys, domino_env.wrappers; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# --- rewards and terminations agree with the AEC game --------------------------------------------


class Recorder:
    """Wraps an agent and logs every action it takes into a log shared by the whole table."""

    def __init__(self, agent: Any, log: list[int]) -> None:
        self.agent, self.log = agent, log

    def __call__(self, env: DominoEnv, observation: dict[str, np.ndarray]) -> int:
        action = self.agent(env, observation)
        self.log.append(action)
        return action


def replay(
    variant: str, options: dict[str, Any], seed: int, actions: list[int], seat: int
) -> tuple[list[float], int]:
    """The same game through the ordinary AEC loop: the learner's reward at each of its turns
    after its first decision (and at the end), and its number of decisions."""
    env = domino_env.make(variant, **options)
    env.reset(seed=seed)
    me = env.possible_agents[seat]
    moves = iter(actions)
    rewards: list[float] = []
    decisions = 0
    for agent in env.agent_iter():
        _, reward, terminated, truncated, _ = env.last()
        if agent == me and decisions:
            rewards.append(reward)
        if terminated or truncated:
            env.step(None)
            continue
        decisions += agent == me
        env.step(next(moves))
    assert next(moves, None) is None, "the replay used fewer actions than the wrapper's game"
    return rewards, decisions


@pytest.mark.parametrize(("variant", "options", "seat"), TABLES, ids=TABLE_IDS)
@pytest.mark.parametrize(("episode", "reward"), [("round", "outcome"), ("match", "points")])
def test_rewards_match_the_aec_game(
    variant: str, options: dict[str, Any], seat: int, episode: str, reward: str
) -> None:
    options = {**options, "episode": episode, "reward": reward}
    log: list[int] = []
    n = options["num_players"]
    opponents = [Recorder(RandomAgent(seed=s), log) for s in range(n - 1)]
    env = SingleAgentEnv(variant, opponents=opponents, seat=seat, **options)
    seeds: list[int | None] = []  # the seeds the wrapper resets the AEC env with, to replay its games
    aec_reset = env.aec.reset

    def spy_reset(seed: int | None = None, options: Any = None) -> None:
        seeds.append(seed)
        aec_reset(seed, options)

    env.aec.reset = spy_reset  # type: ignore[method-assign]
    learner = Recorder(RandomAgent(seed=99), log)
    games = 4 if episode == "round" else 1
    for game in range(games):
        log.clear()
        seeds.clear()
        obs, info = env.reset(seed=1000 + game)
        assert len(seeds) == 1 and seeds[0] is not None, "no episode may be skipped here"
        step_rewards: list[float] = []
        terminated = False
        while not terminated:
            assert obs in env.observation_space
            action = learner(
                env.aec, {"observation": obs, "action_mask": info["action_mask"].astype(np.int8)}
            )
            obs, r, terminated, truncated, info = env.step(action)
            assert not truncated
            step_rewards.append(r)
        expected, decisions = replay(variant, options, seeds[0], list(log), seat)
        assert len(step_rewards) == decisions
        assert step_rewards == pytest.approx(expected)
        if reward == "outcome":  # one reward, at the very end: the learner's place in the round
            assert step_rewards[:-1] == [0.0] * (decisions - 1)
            assert step_rewards[-1] == env.aec.rewards[env.aec.possible_agents[seat]]
        assert env.aec.terminations[env.aec.possible_agents[seat]]


# --- opponents -------------------------------------------------------------------------------------


class SeatSpy:
    """An agent that records the seats it was asked to play."""

    def __init__(self) -> None:
        self.seats: set[int] = set()
        self.inner = RandomAgent(seed=0)

    def __call__(self, env: DominoEnv, observation: dict[str, np.ndarray]) -> int:
        self.seats.add(env.possible_agents.index(env.agent_selection))
        return self.inner(env, observation)


def play(env: SingleAgentEnv, games: int = 3) -> None:
    for game in range(games):
        env.reset(seed=game)
        terminated = False
        while not terminated:
            _, _, terminated, _, _ = env.step(env.action_space.sample())


def test_opponents_per_seat() -> None:
    spies = [SeatSpy() for _ in range(4)]
    env = SingleAgentEnv("all_fives", opponents=[spies[0], None, spies[2], spies[3]], seat=1, num_players=4)
    play(env)
    assert [s.seats for s in spies] == [{0}, set(), {2}, {3}]

    short = [SeatSpy() for _ in range(3)]  # num_players - 1 entries: the other seats in order
    play(SingleAgentEnv("all_fives", opponents=short, seat=1, num_players=4))
    assert [s.seats for s in short] == [{0}, {2}, {3}]

    shared = SeatSpy()  # one callable for every other seat
    play(SingleAgentEnv("classic", opponents=shared, seat=2, num_players=3))
    assert shared.seats == {0, 1}


def test_partner_plays_the_partner_seat() -> None:
    partner, others = SeatSpy(), SeatSpy()
    play(SingleAgentEnv("all_fives", opponents=others, partner=partner, seat=1, num_players=4, teams=True))
    assert partner.seats == {3}
    assert others.seats == {0, 2}


def test_named_opponents_are_separate_agents() -> None:
    env = SingleAgentEnv("all_fives", opponents=["greedy", "random", "random"], num_players=4)
    assert env.agents[0] is None
    assert [type(a).__name__ for a in env.agents[1:]] == ["GreedyAgent", "RandomAgent", "RandomAgent"]
    assert env.agents[2] is not env.agents[3]
    play(env, games=1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seat": 2}, "seat must be"),
        ({"opponents": 3}, "opponents must be an agent or a list"),
        ({"opponents": [3]}, "an agent must be"),
        ({"opponents": ["random", "random", "random"]}, "opponents must be one agent"),
        ({"opponents": ["random", "random", "random"], "num_players": 3}, "learner's seat"),
        ({"opponents": ["random", None, None], "num_players": 3, "seat": 1}, "no agent for seat"),
        ({"partner": "random"}, "no partner"),
    ],
)
def test_bad_opponents(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SingleAgentEnv("all_fives", **{"num_players": 2, **kwargs})


def test_unknown_agent_name() -> None:
    with pytest.raises(ValueError, match="neither a baseline"):
        SingleAgentEnv("all_fives", opponents="nobody", num_players=2)


def test_checkpoint_opponent(tmp_path: Any) -> None:
    pytest.importorskip("torch")
    from training.agents import resolve_agent
    from training.model.config import load_config
    from training.rl.train import Trainer

    config = load_config("configs/all_fives.yaml", [f"run.out_dir={tmp_path}", "run.num_envs=2"])
    trainer = Trainer(config)
    path = trainer.save(trainer.payload())
    for given in (str(path), path):  # loaded by the trainer's agent loader, through make_agent
        env = SingleAgentEnv("all_fives", opponents=given, num_players=2, episode="round")
        assert type(env.agents[1]).__name__ == "PolicyAgent"
        play(env, games=2)
    agent = resolve_agent(path, domino_env.raw_env("all_fives", num_players=2, episode="round"))
    env = SingleAgentEnv("all_fives", opponents=agent, num_players=2, episode="round")
    assert type(env.agents[1]).__name__ == "PolicyAgent"


# --- MaskablePPO -----------------------------------------------------------------------------------


def test_maskable_ppo_learns_without_masked_actions() -> None:
    sb3_contrib = pytest.importorskip("sb3_contrib")

    class Checked(SingleAgentEnv):
        """Counts the learner's actions and asserts each was legal (the env would raise anyway)."""

        actions = 0

        def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
            assert self.action_masks()[int(action)], f"masked action {action}"
            self.actions += 1
            return super().step(action)

    env = Checked("all_fives", opponents="random", num_players=2, episode="round")
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", env, n_steps=512, batch_size=128, n_epochs=2, seed=0, device="cpu", verbose=0
    )
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    assert env.actions >= 2048
    obs, _ = env.reset(seed=1)
    for _ in range(50):
        mask = env.action_masks()
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert mask[int(action)]
        obs, _, terminated, _, _ = env.step(action)
        if terminated:
            obs, _ = env.reset()


def test_gymnasium_make_env_has_action_masks_equal_to_the_info_mask() -> None:
    """``gymnasium.make`` wraps the env in Gymnasium's checks, which forward no attribute: the
    registered ``ActionMasks`` wrapper, outermost, gives ``action_masks()`` back, and it is the
    mask ``info`` carries. The observation is the flat vector, not the AEC dict."""
    env = gym.make("domino_env/AllFives-v0", opponents=["greedy"])
    assert isinstance(env, ActionMasks) and isinstance(env.unwrapped, SingleAgentEnv)
    obs, info = env.reset(seed=2)
    assert isinstance(obs, np.ndarray) and obs.shape == env.observation_space.shape
    done, steps = False, 0
    while not done:
        mask = env.action_masks()
        assert mask.dtype == bool and mask.any()
        assert np.array_equal(mask, info["action_mask"])
        assert np.array_equal(env.get_wrapper_attr("action_masks")(), mask)  # MaskablePPO's lookup
        assert np.array_equal(env.unwrapped.action_masks(), mask)
        obs, _, terminated, truncated, info = env.step(int(np.flatnonzero(mask)[0]))
        done, steps = terminated or truncated, steps + 1
    assert steps > 1 and not env.action_masks().any() and not info["action_mask"].any()
    again = gym.make(env.spec)  # recreated from its spec: the wrapper comes back too
    again.reset(seed=2)
    assert isinstance(again, ActionMasks) and again.action_masks().any()


def test_maskable_ppo_learns_on_the_gymnasium_make_env() -> None:
    """MaskablePPO finds the masks of the env ``gymnasium.make`` returns and takes only legal
    actions (the env's default ``illegal_action="raise"`` would stop it at the first other)."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    env = gym.make("domino_env/AllFives-v0", opponents=["greedy"])
    inner = env.unwrapped
    assert isinstance(inner, SingleAgentEnv)
    taken: list[bool] = []
    step = inner.step

    def checked(action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        taken.append(bool(inner.action_masks()[int(action)]))
        return step(action)

    inner.step = checked  # type: ignore[method-assign]
    assert is_masking_supported(env)
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0, device="cpu", verbose=0
    )
    model.learn(total_timesteps=384)
    assert model.num_timesteps >= 384 and len(taken) >= 384 and all(taken)
    vec = model.get_env()
    assert vec is not None
    assert np.array_equal(get_action_masks(vec)[0], inner.action_masks())
    assert 0 < get_action_masks(vec)[0].sum() < inner.aec.rules.num_actions  # a real mask
    obs, info = env.reset(seed=1)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert info["action_mask"][int(action)]


def test_sb3_example_trains_and_plays() -> None:
    pytest.importorskip("sb3_contrib")
    example = load_example("sb3_maskable_ppo")
    model = example.train("classic", opponents="greedy", steps=1024, num_players=3)  # one rollout + update
    assert model.num_timesteps >= 1024
    env = SingleAgentEnv("classic", opponents="greedy", num_players=3, episode="round")
    reward, wins = example.play(model, env, games=5)  # asserts every action was legal
    assert -1.0 <= reward <= 1.0 and 0.0 <= wins <= 1.0
