"""The network's shape as a typed value: decided from a table and the ``network`` config, stored
in checkpoints as the dict the format has always held."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from domino_env import raw_env
from tests.support.training_helpers import ROOT
from training.model import checkpoint
from training.model.config import ConfigError, NetworkConfig
from training.model.networks import ActorCritic, Architecture, BoardShape, play_outlook_spec

SHIPPED = sorted((ROOT / "agents").glob("*.pt"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: Path(p).stem)
def test_a_shipped_checkpoint_loads_and_its_architecture_reads_back_as_stored(path: Path) -> None:
    stored = checkpoint.load(path)["architecture"]
    architecture = Architecture.from_dict(stored)
    written = architecture.to_dict()
    assert {key: written[key] for key in stored if key != "board"} == {
        key: value for key, value in stored.items() if key != "board"
    }
    assert written["board"] == (None if stored["board"] is None else {"action_planes": 0, **stored["board"]})
    model, _ = checkpoint.load_model(path)
    assert model.architecture == architecture


def test_a_chain_table_gets_its_action_blocks_traits_and_outlook() -> None:
    env = raw_env("all_fives")
    layout = env.observation_layout
    architecture = Architecture.for_table(env, NetworkConfig(hidden=[64, 32]))
    assert (architecture.obs_size, architecture.num_actions) == (env.encoder.size, env.rules.num_actions)
    assert architecture.hidden == (64, 32)
    assert architecture.action_blocks == ((layout["points_now"].start, layout["points_now"].stop),)
    assert architecture.action_traits == tuple(map(tuple, env.rules.action_traits().tolist()))
    assert architecture.outlook == play_outlook_spec(env.rules, layout)
    assert architecture.board is None and architecture.state_size is None
    bare = NetworkConfig(action_blocks=False, action_traits=False, play_outlook=False, oracle_critic=True)
    plain = Architecture.for_table(env, bare)
    assert (plain.action_blocks, plain.action_traits, plain.outlook) == ((), None, None)
    assert plain.state_size == env.state_space.shape[0]


def test_a_board_table_gets_a_board_network_and_a_chain_table_refuses_one() -> None:
    env = raw_env("domino3d", board_size=8)
    architecture = Architecture.for_table(env, NetworkConfig(board_channels=4))
    assert architecture.board == BoardShape(*env.encoder.board_shape, channels=4, action_planes=2)
    assert (architecture.action_blocks, architecture.action_traits, architecture.outlook) == ((), None, None)
    without = Architecture.for_table(env, NetworkConfig(board_channels=4, action_blocks=False))
    assert without.board is not None and without.board.action_planes == 0
    with pytest.raises(ConfigError, match="board_channels needs a table with a board"):
        Architecture.for_table(raw_env("classic"), NetworkConfig(board_channels=4))


def test_an_architecture_is_frozen_and_equal_from_lists_or_tuples() -> None:
    listed = Architecture(6, 3, hidden=[16], action_blocks=[[0, 3]], action_traits=[[1, 0], [0, 1], [0, 0]])
    assert listed == Architecture(
        6, 3, hidden=(16,), action_blocks=((0, 3),), action_traits=listed.action_traits
    )
    assert listed.action_traits == ((1.0, 0.0), (0.0, 1.0), (0.0, 0.0))
    with pytest.raises(dataclasses.FrozenInstanceError):
        listed.hidden = (8,)  # type: ignore[misc]
    assert Architecture.from_dict(listed.to_dict()) == listed
    assert ActorCritic(listed).copy().architecture == listed


def test_a_dict_that_describes_no_architecture_is_refused() -> None:
    old_board = {
        "obs_size": 69,
        "num_actions": 96,
        "hidden": [16],
        "board": {"planes": 4, "size": 4, "channels": 8},
    }
    assert Architecture.from_dict(old_board).board == BoardShape(4, 4, 8, 0)
    with pytest.raises(TypeError):
        Architecture.from_dict({"obs_size": 6, "num_actions": 3, "hidden": [16], "layers": 2})
    with pytest.raises(TypeError):
        Architecture.from_dict([6, 3])  # type: ignore[arg-type]
