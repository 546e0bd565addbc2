"""Self-play PPO."""
