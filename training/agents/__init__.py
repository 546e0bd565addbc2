"""Agents from names: the checkpoint loader behind the ``domino_env.agents`` entry point
(:mod:`.loader`), and the policy-guided search (:mod:`.guided`)."""

from training.agents.loader import AgentName, PolicyAgent, checkpoint_file, load_agent, resolve_agent

__all__ = ["AgentName", "PolicyAgent", "checkpoint_file", "load_agent", "resolve_agent"]
