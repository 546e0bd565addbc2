"""A game between agents, recorded as an animated GIF: ``python -m training record``.

    python -m training record classic greedy random --out game.gif --seed 3
    python -m training record cross search greedy --option episode=match --fps 4 --out cross.gif

One episode on the table's ``render_mode="rgb_array"`` picture (``env.table_image``): a round
by default, a whole match with ``--option episode=match``; a frame for the deal and one after
every move, the seats named by their agents (``P0 greedy``). Agents are named as the other
commands name them (``random``, ``greedy``, ``search[:N]``, a checkpoint file or a run folder)
and take the seats in turn: one agent plays every seat, two alternate (partners at a table of
four), and so on. The game depends on ``--seed`` alone: it deals the tiles, and seat ``s``'s
agent is seeded ``seed + 1 + s``. Frames are written by Pillow's GIF writer, the last one held
a while.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from domino_env import DominoEnv, raw_env
from domino_env.agents import Agent
from training.eval.evaluate import prepare
from training.eval.report import table_text

DEFAULT_OPTIONS = ("episode=round",)  # one round, unless --option episode=match
LAST_FRAME_HOLD = 4  # the final position stays this many frames' time
MOST_FPS = 50  # a GIF frame lasts 20 ms at least where browsers show it as told


@dataclass
class Recording:
    """A checked table, its seats (the agent playing each seat and its name in the picture) and
    the deal's seed."""

    env: DominoEnv
    agents: list[Agent]
    names: list[str]
    seed: int
    header: str


def prepare_recording(
    variant: str, agent_specs: list[str], option_texts: list[str] | None, seed: int = 0
) -> Recording:
    """Resolve the table and the agents before any move; raises ValueError (unknown variant,
    agent or option, a checkpoint of another table, more agents than seats) for a person."""
    given = list(option_texts or [])
    keys = {text.partition("=")[0].strip() for text in given}
    if "render_mode" in keys:  # (the table's header would name a mode the frames are not drawn in)
        raise ValueError(
            "record draws its frames itself (render_mode rgb_array): leave out --option render_mode"
        )
    defaults = [text for text in DEFAULT_OPTIONS if text.partition("=")[0] not in keys]
    plan = prepare(
        agent_specs,
        variant,
        [*defaults, *given],
        advice="record a checkpoint on the variant it was trained on, without --option for other rules",
    )
    env = raw_env(plan.variant, **{**plan.options, "render_mode": "rgb_array"})
    seats = env.rules.num_players
    if len(agent_specs) > seats:
        raise ValueError(
            f"{len(agent_specs)} agents for a table of {seats} seats: give 1 to {seats} "
            "(they take the seats in turn)"
        )
    contestants = [plan.contestants[seat % len(agent_specs)] for seat in range(seats)]
    agents = [c.agent(env, seed + 1 + seat) for seat, c in enumerate(contestants)]
    names = [f"P{seat} {c.label}" for seat, c in enumerate(contestants)]
    header = f"{table_text(plan.variant, plan.options)}, seed {seed}: {', '.join(names)}"
    return Recording(env, agents, names, seed, header)


def frames(recording: Recording, max_frames: int | None = None) -> Iterator[np.ndarray]:
    """The episode's pictures: after the deal, then after every move, at most ``max_frames`` of
    them (the game stops there)."""
    env, agents, names = recording.env, recording.agents, recording.names
    env.reset(seed=recording.seed)
    yield env.table_image(names)
    shown = 1
    while not all(env.terminations.values()) and (max_frames is None or shown < max_frames):
        agent = env.agent_selection
        env.step(agents[env.possible_agents.index(agent)](env, env.observe(agent)))
        yield env.table_image(names)
        shown += 1


def record(recording: Recording, path: str | Path, fps: float = 2.0, max_frames: int | None = None) -> int:
    """Play the recording's episode and write it to ``path`` as a looping GIF of ``fps``
    frames a second; returns the number of frames."""
    if not 0 < fps <= MOST_FPS:
        raise ValueError(f"fps must be above 0 and at most {MOST_FPS} frames a second, got {fps}")
    if max_frames is not None and max_frames < 1:
        raise ValueError(f"max_frames must be at least 1, got {max_frames}")
    # Each frame goes to a palette image at once: a match holds hundreds of them.
    pictures = [
        Image.fromarray(frame).quantize(method=Image.Quantize.FASTOCTREE)
        for frame in frames(recording, max_frames)
    ]
    milliseconds = round(1000 / fps)
    durations = [milliseconds] * (len(pictures) - 1) + [milliseconds * LAST_FRAME_HOLD]
    first, *rest = pictures
    first.save(path, format="GIF", save_all=True, append_images=rest, duration=durations, loop=0)
    return len(pictures)
