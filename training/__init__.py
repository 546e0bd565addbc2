"""Training and evaluation on top of :mod:`domino_env`: the baselines' arena for now."""
