"""Self-play PPO, evaluation, ratings and terminal play on top of :mod:`domino_env`; needs the
train extra (``pip install -e ".[train]"``), which ``python -m training`` says when it is missing."""
