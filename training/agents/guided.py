"""Policy-guided search: ``search:<checkpoint>`` and ``search:N:<checkpoint>`` (N worlds; default
:data:`~domino_env.agents.search.DEFAULT_WORLDS`), e.g. ``search:agents/all_fives.pt``.

``search``'s fair determinization with a trained policy in two roles:

* **prior** - the policy's probabilities over the legal actions, read from the seat's own
  observation, choose which actions are searched: the most probable ones until they hold
  :data:`PRIOR_MASS` of the probability, at least two and at most :data:`MOST_ACTIONS`;
* **rollout policy** - every seat of every sampled world plays the policy's most probable
  legal action, reading its own observation *of that world* (an encoder per rollout), to the
  end of the round; all rollouts of a decision step in lockstep, one batched forward per step.

Worlds are sampled from the seat's view by the same sampler, the rules' ``sample_world``,
and a rollout is valued as ``search`` values it (the round's score change against the other
sides, plus ``match_target`` times the match outcome when the round ends the match). The
policy's favourite is played unless another searched action beats it in the same worlds by
more than :data:`CONFIDENCE` standard errors of the paired differences (then the best such
one by its mean): the search corrects the policy where the worlds agree, and leaves it alone
where a handful of worlds cannot tell. So the decision is a function
of the seat's information, its observation and the agent's seed only, as ``search``'s is
(``tests/training/test_guided.py`` checks it the same way). It plays every table, 3D dominoes too: there
the prior picks the few placements worth searching out of hundreds, and a rollout plays the rest
of the game (the match), as ``search``'s does.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch

from domino_env import DominoEnv
from domino_env.agents import DEFAULT_WORLDS, legal_actions
from domino_env.agents.search import rollout_value, standing
from training.model.names import GUIDED_PREFIX
from training.model.networks import ActorCritic

PRIOR_MASS = 0.95  # the searched actions hold at least this much of the policy's probability
MOST_ACTIONS = 4  # and are at most this many
CONFIDENCE = 1.0  # standard errors by which a searched action must beat the policy's favourite


class GuidedSearchAgent:
    """Search with a policy as prior and rollout policy (see the module docstring)."""

    def __init__(
        self,
        model: ActorCritic,
        worlds: int = DEFAULT_WORLDS,
        *,
        seed: int | None = None,
        name: str = "",
        confidence: float = CONFIDENCE,
    ) -> None:
        if worlds < 1:
            raise ValueError(f"worlds must be a positive integer, got {worlds!r}")
        self.model, self.worlds, self.confidence = model.eval(), worlds, confidence
        self.name = name or f"{GUIDED_PREFIX}{worlds}:policy"
        self.rng = random.Random(seed)
        self._encoders: list[Any] = []  # reused across decisions: each forgets its world first

    def __call__(self, env: DominoEnv, observation: dict[str, np.ndarray]) -> int:
        legal = legal_actions(observation).tolist()
        if len(legal) == 1:
            return int(legal[0])
        rules, game, rng = env.rules, env.game, self.rng
        prior = self.prior(observation)
        ranked = sorted(legal, key=lambda a: -prior[a])  # (stable: ties keep the action order)
        searched: list[int] = []
        mass = 0.0
        for action in ranked:
            if len(searched) >= 2 and (mass >= PRIOR_MASS or len(searched) == MOST_ACTIONS):
                break
            searched.append(action)
            mass += prior[action]
        view = env.view(env.agent_selection)
        side = rules.side_of[view.seat]
        sims, seeds, before = [], [], []
        for _ in range(self.worlds):
            world, seed = rules.sample_world(game, view, rng), rng.getrandbits(64)
            start = standing(rules, world)
            for action in searched:
                sim = world.clone()
                rules.apply(sim, action)
                sims.append(sim)
                seeds.append(seed)
                before.append(start)
        self.play_out(env, sims)
        values = np.array(
            [
                rollout_value(rules, sim, side, before[i], random.Random(seeds[i]))
                for i, sim in enumerate(sims)
            ]
        ).reshape(self.worlds, len(searched))
        return int(searched[self.pick(values)])

    def pick(self, values: np.ndarray) -> int:
        """The column of ``values`` (worlds x searched actions, the policy's favourite first) to
        play: the favourite, unless another action beats it in the same worlds by more than
        ``confidence`` standard errors of the paired differences (then the best such by its
        mean). Eight worlds cannot tell actions a few points apart; without this gate their
        noise overrules the policy as often as it corrects it."""
        gains = values[:, 1:] - values[:, :1]
        means = gains.mean(axis=0)
        errors = gains.std(axis=0, ddof=1) / np.sqrt(len(values)) if len(values) > 1 else np.zeros_like(means)
        sure = means - self.confidence * errors > 0.0
        if not sure.any():
            return 0
        return 1 + int(np.argmax(np.where(sure, means, -np.inf)))

    @torch.no_grad()
    def prior(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        """The policy's probability of every action id (0 for the illegal ones)."""
        device = self.model.device
        obs = torch.from_numpy(observation["observation"][None]).to(device)
        mask = torch.from_numpy(observation["action_mask"][None].astype(bool)).to(device)
        distribution, _ = self.model.distribution(obs, mask)
        return distribution.probs[0].cpu().numpy()

    @torch.no_grad()
    def play_out(self, env: DominoEnv, sims: list[Any]) -> None:
        """Play every sim to the end of its round by the policy, all in lockstep."""
        rules = env.rules
        while len(self._encoders) < len(sims):
            self._encoders.append(env.encoder_class(rules, env.observer))
        encoders = self._encoders[: len(sims)]
        for encoder in encoders:
            encoder.forget()
        obs = np.zeros((len(sims), env.encoder.size), dtype=np.float32)
        masks = np.zeros((len(sims), rules.num_actions), dtype=bool)
        active = [i for i, sim in enumerate(sims) if not sim.round_over]
        while active:
            asked = []
            for i in active:
                sim = sims[i]
                if len(sim.legal) == 1:
                    rules.apply(sim, sim.legal[0])
                    continue
                obs[i] = encoders[i].observe(sim, sim.current)
                masks[i] = False
                masks[i, sim.legal] = True
                asked.append(i)
            if asked:
                chosen = self.model.greedy(obs[asked], masks[asked])
                for i, action in zip(asked, chosen.tolist(), strict=True):
                    rules.apply(sims[i], action)
            active = [i for i in active if not sims[i].round_over]
