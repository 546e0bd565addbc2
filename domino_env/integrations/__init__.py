"""Bridges to other RL libraries, each an optional extra.

* :mod:`domino_env.integrations.rllib` (``pip install domino-env[ray]``): every variant as an
  RLlib multi-agent env with action masks, and a masked PPO config for a shared policy.
* :mod:`domino_env.integrations.torchrl` (``pip install domino-env[torchrl]``): every variant
  as a TorchRL env (one group of seats, action masks), and a masked policy for it.
* :mod:`domino_env.integrations.openspiel` (``pip install domino-env[openspiel]``): every variant
  and table as a ``pyspiel`` game, with chance nodes and perfect-recall information states, for
  OpenSpiel's algorithms (CFR, NFSP, exact exploitability on tiny tables).
* :class:`domino_env.wrappers.SingleAgentEnv` (no extra): a Gymnasium single-agent view for
  sb3-contrib's ``MaskablePPO`` and other single-agent libraries.

Importing this package imports none of those libraries.
"""
