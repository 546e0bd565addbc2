"""PettingZoo's order checks, made cheap on the attributes every step reads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pettingzoo.utils.wrappers import OrderEnforcingWrapper


class OrderEnforcing(OrderEnforcingWrapper):
    """PettingZoo's order checks without ``__getattr__`` on the hot attributes.

    The stock wrapper forwards every attribute read through ``__getattr__``, which cost
    about two thirds of a step; these properties read the inner env directly.
    """

    # Before reset the inner env lacks these attributes; the AttributeError then falls back
    # to OrderEnforcingWrapper.__getattr__, which raises its "before reset" message.
    agent_selection = property(lambda self: self.env.agent_selection)
    agents = property(lambda self: self.env.agents)
    rewards = property(lambda self: self.env.rewards)
    terminations = property(lambda self: self.env.terminations)
    truncations = property(lambda self: self.env.truncations)
    infos = property(lambda self: self.env.infos)
    _cumulative_rewards = property(lambda self: self.env._cumulative_rewards)

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        self.env.reset(seed=seed, options=options)  # a bad deal raises here: still not reset
        self._has_reset = True
        self._has_updated = True
        # from now on last() has nothing to check: call the env's directly
        self.last = self.env.last  # type: ignore[method-assign]

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("last() cannot be called before reset")
        return self.env.last(observe)

    def step(self, action: Any) -> None:
        env = self.env
        if self._has_reset and env.agents:
            self._has_updated = True
            env.step(action)
        else:
            super().step(action)
