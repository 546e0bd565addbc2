"""Measuring agents: matches between contestants (:mod:`.evaluate`), ratings, reports, the
duplicate-deal benchmark and its ladder, exploitation and exact exploitability, and shipping a
policy with its measured strength."""
