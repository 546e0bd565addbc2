"""The policy networks PPO trains: an MLP actor-critic over the flat observation, or, for a
table with a board, a small convolutional network over its planes.

Illegal actions get zero probability, both when acting and when the update re-evaluates the
stored actions. Acting and the update score only the legal actions (:class:`LegalPolicy`): a
softmax over those is the masked softmax over every action id, and 3D dominoes has about 40
legal placements among 25,088 ids. What each action *is* reaches the policy from the rules
(action blocks, action traits, the play outlook), never from formulas of action ids.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

from domino_env import DominoEnv
from training.model.config import ConfigError, NetworkConfig

MASKED_LOGIT = -1e8


def layer(inputs: int, outputs: int, std: float = float(np.sqrt(2))) -> nn.Linear:
    """A linear layer with orthogonal weights (CleanRL's init)."""
    linear = nn.Linear(inputs, outputs)
    nn.init.orthogonal_(linear.weight, std)
    nn.init.constant_(linear.bias, 0.0)
    return linear


def mlp(inputs: int, hidden: Sequence[int], outputs: int = 0, std: float = 0.01) -> nn.Sequential:
    """Tanh layers of the ``hidden`` sizes, then (``outputs`` > 0) a linear output layer."""
    layers: list[nn.Module] = []
    width = inputs
    for size in hidden:
        layers += [layer(width, size), nn.Tanh()]
        width = size
    if outputs:
        layers.append(layer(width, outputs, std=std))
    return nn.Sequential(*layers)


class BoardNet(nn.Module):
    """Policy and value for a grid game (3D dominoes), convolutional so that what it learns
    about one cell holds on every cell.

    The observation starts with ``planes`` board planes of ``size`` x ``size`` cells; the rest
    (hand, scores, counts) is a flat vector, projected and added to every cell after the first
    convolution. Action ids are ``channel * cells + cell`` (``num_actions / cells`` channels),
    so a 1x1 convolution gives every action's logit at its anchor cell; three 3x3 layers see
    three cells around it, enough for both halves' neighbours.

    The last ``action_planes`` board planes may describe the actions themselves (3D dominoes'
    ``points_now``: a plane per direction, 1 where a placement on that edge scores): action
    ``channel * cells + cell`` then also adds plane ``channel % action_planes`` at its cell,
    times a gain the network computes from the state - as the MLP's ``action_blocks``.
    """

    def __init__(self, obs_size: int, num_actions: int, board: BoardShape) -> None:
        super().__init__()
        planes, size, channels, action_planes = board.planes, board.size, board.channels, board.action_planes
        self.planes, self.size, self.action_planes = planes, size, action_planes
        self.cells = cells = size * size
        if num_actions % cells:
            raise ValueError(f"{num_actions} actions are not whole channels of {cells} cells")
        if action_planes and (num_actions // cells) % action_planes:
            channels_out = num_actions // cells
            raise ValueError(f"{channels_out} action channels do not cycle over {action_planes} planes")
        self.first = nn.Conv2d(planes, channels, 3, padding=1)
        self.flat = layer(obs_size - planes * cells, channels)
        self.convs = nn.Sequential(
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1),
            nn.ReLU(),
        )
        self.policy = nn.Conv2d(channels, num_actions // cells, 1)
        self.value = nn.Sequential(layer(channels, channels), nn.ReLU(), layer(channels, 1, std=1.0))
        self.gains = layer(channels, action_planes, std=0.01) if action_planes else None

    def trunk(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(features per cell (batch, channels, size, size), their mean over the board)."""
        n, board_end = self.size, self.planes * self.cells
        board = obs[:, :board_end].reshape(-1, self.planes, n, n)
        x = self.convs(self.first(board) + self.flat(obs[:, board_end:])[:, :, None, None])
        return x, x.mean((2, 3))

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits of every action id, value) for a batch."""
        x, pooled = self.trunk(obs)
        logits = self.policy(x).flatten(2)  # (batch, channel, cell)
        if self.gains is not None:
            first = (self.planes - self.action_planes) * self.cells
            described = obs[:, first : self.planes * self.cells].reshape(len(obs), self.action_planes, -1)
            scaled = self.gains(pooled)[:, :, None] * described  # channel k reads plane k % P
            logits = logits + scaled.repeat(1, logits.shape[1] // self.action_planes, 1)
        return logits.flatten(1), self.value(pooled).squeeze(-1)

    def legal_logits(
        self, obs: torch.Tensor, rows: torch.Tensor, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(the logits of the given (row, action) pairs only, value per row): each is the features
        at the action's anchor cell dotted with its channel's 1x1 weights - as ``forward``
        reads them, without computing the other 25,000 logits of a row."""
        x, pooled = self.trunk(obs)
        channel, cell = actions // self.cells, actions % self.cells
        features = x.flatten(2)[rows, :, cell]  # (pairs, channels)
        weight, bias = self.policy.weight.flatten(1), self.policy.bias
        assert bias is not None  # the 1x1 convolution has one
        logits = (features * weight[channel]).sum(-1) + bias[channel]
        if self.gains is not None:
            plane = channel % self.action_planes
            described = obs[rows, (self.planes - self.action_planes + plane) * self.cells + cell]
            logits = logits + self.gains(pooled)[rows, plane] * described
        return logits, self.value(pooled).squeeze(-1)


class PlayOutlook(nn.Module):
    """What each play of a chain game would leave, read from the observation.

    A tile a-b laid on an end showing a exposes b and covers a. Six facts per play action: for
    the exposed value and for the covered one, how many of its tiles are unseen (neither in
    hand nor on the table), whether the next player was seen void in it, and how many the
    player keeps after this play (a face-down double exposes nothing). They are a fixed
    function of the observation (no weights), added to the plays' logits with gains the policy
    computes from the state. Why: each fact joins two observation blocks per action (this
    end's value, that tile's halves), which an MLP over the flat vector learns slowly.

    The facts are computed on a (face, tile, slot) grid of the plays (:meth:`grid`), so the
    weighed facts are a (tiles x values) table times the value each end shows: a few small
    matmuls, no per-action indexing. :func:`play_outlook_spec` checks that the rules number
    their plays in that order before a network is built on them.
    """

    features = 6  # (unseen, void, kept) of the exposed value, then of the covered one
    read: torch.Tensor  # buffers, registered in __init__
    base: torch.Tensor
    exposes: torch.Tensor
    shows: torch.Tensor

    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__()
        self.spec = spec
        values, slots, tile_values = spec["values"], spec["slots"], spec["tile_values"]
        self.values, self.slots, self.tiles = values, slots, len(tile_values)
        self.num_plays = spec["plays"]
        self.faces = self.faces_of(self.num_plays, self.tiles, slots)
        # per value (unseen, void, kept) = obs @ read + base: all three are affine in the observation
        read = torch.zeros(spec["obs_size"], 3 * values)
        base = torch.zeros(3 * values)
        # exposes[u, t * values + v] = 1 where tile t laid on an end showing v exposes u
        exposes = torch.zeros(values, self.tiles * values)
        hand, table, voids = spec["hand"], spec["table"], spec["voids"]  # voids: the next player's first
        for t, (a, b) in enumerate(tile_values):
            exposes[b, t * values + a] = exposes[a, t * values + b] = 1.0
            for v in {a, b}:
                read[hand + t, v] = read[table + t, v] = -1.0 / values
                base[v] += 1.0 / values
                read[hand + t, 2 * values + v] = 1.0 / values
        for v in range(values):
            read[voids + v, values + v] = 1.0
        base[2 * values :] = -1.0 / values  # the laid tile carries the exposed value too
        self.register_buffer("read", read, persistent=False)
        self.register_buffer("base", base, persistent=False)
        self.register_buffer("exposes", exposes, persistent=False)
        ends, width = spec["ends"], spec["slot_width"]
        shows = [ends + s * width + v for v in range(values) for s in range(slots)]  # value-major
        self.register_buffer("shows", torch.tensor(shows), persistent=False)

    @staticmethod
    def faces_of(plays: int, tiles: int, slots: int) -> int:
        """How many faces (1, or 2 with face-down plays) ``plays`` actions make with ``tiles`` x
        ``slots``; any other count is refused."""
        faces = plays // (tiles * slots)
        if faces * tiles * slots != plays or faces not in (1, 2):
            raise ValueError(f"{plays} play actions are not (1 or 2 faces) x tiles x slots")
        return faces

    @staticmethod
    def grid(faces: int, tiles: int, slots: int) -> list[tuple[bool, int, int]]:
        """(face down, tile, slot) of each play action, in the order :meth:`add_to` reads the
        logits: face-major, then tile, then slot."""
        return [(face == 1, t, s) for face in range(faces) for t in range(tiles) for s in range(slots)]

    def add_to(self, logits: torch.Tensor, obs: torch.Tensor, gains: torch.Tensor) -> None:
        """Add the facts weighed by ``gains`` (batch, features) to the plays' ``logits`` in place.
        The gains weigh the per-value facts first; then the exposed value's go through the
        (tile, shown value) -> exposed value table, and both meet what each end shows."""
        batch, values, slots, tiles = len(obs), self.values, self.slots, self.tiles
        per_value = torch.addmm(self.base, obs, self.read).view(batch, 3, values)
        weighed = gains.view(batch, 2, 3) @ per_value  # (batch, [exposed, covered], values)
        shown = obs[:, self.shows].view(batch, values, slots)  # one-hot of each end's value
        by_tile = (weighed[:, 0] @ self.exposes).view(batch, tiles, values)
        covered = weighed[:, 1:] @ shown  # (batch, 1, slots)
        face_up = logits[:, : tiles * slots].view(batch, tiles, slots)
        face_up += by_tile @ shown + covered
        if self.faces == 2:
            logits[:, tiles * slots : 2 * tiles * slots].view(batch, tiles, slots).add_(covered)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """The facts themselves, (batch, play actions, features): each one added alone to zeros."""
        unit = torch.eye(self.features, device=obs.device)
        facts = torch.zeros(self.features, len(obs), self.num_plays, device=obs.device)
        for f in range(self.features):
            self.add_to(facts[f], obs, unit[f].expand(len(obs), -1))
        return facts.permute(1, 2, 0)


def play_outlook_spec(rules: Any, layout: dict[str, slice]) -> dict[str, Any] | None:
    """:class:`PlayOutlook`'s spec for a chain game's flat observation (None for a table
    without one, such as 3D dominoes' grid): where its blocks lie, the tiles, the play actions.

    The plays are described by the rules' per-action ``action_face_down``, ``action_tile`` and
    ``action_slot``; a table whose plays are not :meth:`PlayOutlook.grid`'s order is refused
    (ValueError), since the outlook would add each fact to another play's logit."""
    if "ends" not in layout:
        return None
    tiles, slots, plays = rules.tile_set.tiles, rules.num_slots, rules.num_play_actions
    described = [
        (bool(rules.action_face_down[a]), rules.action_tile[a], rules.action_slot[a]) for a in range(plays)
    ]
    if described != PlayOutlook.grid(PlayOutlook.faces_of(plays, len(tiles), slots), len(tiles), slots):
        raise ValueError(
            "the play outlook needs play actions ordered by face (up, then down), tile, then slot; "
            f"{type(rules).__name__} numbers its {plays} plays otherwise (network.play_outlook=false)"
        )
    return {
        "obs_size": max(block.stop for block in layout.values()),
        "values": rules.tile_set.num_values,
        "slots": slots,
        "slot_width": (layout["ends"].stop - layout["ends"].start) // slots,
        "hand": layout["hand"].start,
        "table": layout["table"].start,
        "ends": layout["ends"].start,
        "voids": layout["voids"].start,
        "tile_values": [list(tile) for tile in tiles],
        "plays": plays,
    }


class LegalPolicy:
    """The masked policy of a batch, kept to each row's legal actions.

    Slot ``j`` of row ``i`` is action ``actions[i, j]``; a row with fewer legal actions than
    the widest row pads with slots of probability zero. Probabilities, log-probabilities and
    entropy are those of the masked softmax over every action id (which puts exactly zero on
    the illegal ones), computed on about 40 numbers a row instead of 25,088 for 3D dominoes.
    """

    def __init__(self, rows: torch.Tensor, actions: torch.Tensor, logits: torch.Tensor, batch: int) -> None:
        counts = torch.bincount(rows, minlength=batch)
        if batch and int(counts.min()) == 0:
            raise ValueError("every row needs a legal action")
        device = logits.device
        slot = torch.arange(len(rows), device=device) - (counts.cumsum(0) - counts)[rows]  # rows come sorted
        width = int(counts.max()) if batch else 0
        self.actions = torch.full((batch, width), -1, dtype=torch.long, device=device).index_put(
            (rows, slot), actions
        )
        padded = torch.full((batch, width), MASKED_LOGIT, dtype=logits.dtype, device=device).index_put(
            (rows, slot), logits
        )
        self.scores = padded  # the logits as the network gave them (dmc reads them as Q values)
        self.dist = Categorical(logits=padded, validate_args=False)

    def sample(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(sampled actions, their log-probabilities)."""
        slot = self.dist.sample()
        return self.actions.gather(1, slot[:, None]).squeeze(1), self.dist.log_prob(slot)

    def epsilon_greedy(self, epsilon: float) -> tuple[torch.Tensor, torch.Tensor]:
        """(actions, their log-probabilities) of epsilon-greedy play on the logits read as Q
        values (``algorithm: dmc``): with probability ``epsilon`` a uniform legal action, else
        the best one (:meth:`mode`'s). The log-probability is that policy's: log(1 - epsilon +
        epsilon / #legal) for the best action, log(epsilon / #legal) for another. Draws two
        uniforms a row from torch's generator on the logits' device, as :meth:`sample` does."""
        logits = self.dist.logits
        counts = (self.actions >= 0).sum(1)
        explore = torch.rand(len(counts), device=logits.device) < epsilon
        uniform = (torch.rand(len(counts), device=logits.device) * counts).long().clamp(max=counts - 1)
        best = logits.argmax(-1)
        slot = torch.where(explore, uniform, best)
        share = epsilon / counts.to(logits.dtype)
        probability = torch.where(slot == best, 1.0 - epsilon + share, share)
        return self.actions.gather(1, slot[:, None]).squeeze(1), probability.log()

    def mode(self) -> torch.Tensor:
        """The most probable legal action of each row (the lowest id among ties)."""
        return self.actions.gather(1, self.dist.logits.argmax(-1, keepdim=True)).squeeze(1)

    def slots(self, actions: torch.Tensor) -> torch.Tensor:
        """Each row's slot of its action (one per row); an illegal one is refused."""
        found = self.actions == actions[:, None]
        if not bool(found.any(1).all()):
            raise ValueError("an action that is not legal in its row")
        return found.int().argmax(1)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        """Log-probabilities of legal actions (one per row); an illegal one is refused."""
        return self.dist.log_prob(self.slots(actions))

    def logit(self, actions: torch.Tensor) -> torch.Tensor:
        """The logits of legal actions (one per row), unnormalised: ``algorithm: dmc``'s Q(s, a)."""
        return self.scores.gather(1, self.slots(actions)[:, None]).squeeze(1)

    def entropy(self) -> torch.Tensor:
        return self.dist.entropy()

    def log_probs(self) -> torch.Tensor:
        """Every slot's log-probability, (rows, widest row); a padding slot's is about -1e8 (its
        probability is exactly zero)."""
        return self.dist.logits


@dataclass(frozen=True)
class BoardShape:
    """A :class:`BoardNet`'s board: ``planes`` planes of ``size`` x ``size`` cells at the start of
    the observation, ``channels`` per convolution, and how many of the last planes describe the
    actions (``action_planes``, 0: none)."""

    planes: int
    size: int
    channels: int
    action_planes: int = 0


@dataclass(frozen=True)
class Architecture:
    """What an :class:`ActorCritic` is built from: with the weights, all a checkpoint needs.

    :meth:`for_table` decides it from a table and the ``network`` config; a checkpoint stores
    it as :meth:`to_dict`'s dict (the format ``domino-ppo/1`` has always held) and
    :meth:`from_dict` reads it back. The fields are :class:`ActorCritic`'s options.
    """

    obs_size: int
    num_actions: int
    _: KW_ONLY
    hidden: tuple[int, ...]
    action_blocks: tuple[tuple[int, int], ...] = ()  # observation slices aligned with actions
    action_traits: tuple[tuple[float, ...], ...] | None = None  # (num_actions, K) facts per action
    board: BoardShape | None = None  # a BoardNet instead of the MLP
    outlook: dict[str, Any] | None = None  # a PlayOutlook spec (play_outlook_spec)
    state_size: int | None = None  # the perfect-information critic's input size

    def __post_init__(self) -> None:  # lists (a config's, a checkpoint's) as tuples: equal either way
        set_field = object.__setattr__
        set_field(self, "hidden", tuple(int(size) for size in self.hidden))
        set_field(self, "action_blocks", tuple((int(start), int(stop)) for start, stop in self.action_blocks))
        if self.action_traits is not None:
            set_field(self, "action_traits", tuple(tuple(map(float, row)) for row in self.action_traits))

    @classmethod
    def for_table(cls, env: DominoEnv, network: NetworkConfig) -> Architecture:
        """The network ``network`` describes, sized for ``env``'s table: what a model trained
        there is built with. A board network reads the planes itself: no action blocks, traits
        or outlook (its action blocks are the board's action planes). ``board_channels`` on a
        table without a board is refused (ConfigError)."""
        rules, layout, encoder = env.rules, env.observation_layout, env.encoder
        board = None
        if network.board_channels:
            shape = getattr(encoder, "board_shape", None)
            if shape is None:
                raise ConfigError(
                    f"network.board_channels needs a table with a board (domino3d); {rules.name} has none"
                )
            planes, size = shape
            # the board's action blocks: the last planes, about each edge's placements
            action_planes = getattr(encoder, "action_planes", 0) if network.action_blocks else 0
            board = BoardShape(planes, size, network.board_channels, action_planes)
        flat = board is None
        blocks = [(layout[name].start, layout[name].stop) for name in rules.action_blocks]
        return cls(
            encoder.size,
            rules.num_actions,
            hidden=tuple(network.hidden),
            action_blocks=tuple(blocks) if network.action_blocks and flat else (),
            action_traits=rules.action_traits().tolist() if network.action_traits and flat else None,
            board=board,
            outlook=play_outlook_spec(rules, layout) if network.play_outlook and flat else None,
            state_size=env.state_space.shape[0] if network.oracle_critic else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """As a checkpoint stores it: plain lists and dicts, the keys :meth:`from_dict` reads."""
        return {
            "obs_size": self.obs_size,
            "num_actions": self.num_actions,
            "hidden": list(self.hidden),
            "action_blocks": list(self.action_blocks),
            "action_traits": None if self.action_traits is None else list(map(list, self.action_traits)),
            "board": None if self.board is None else dataclasses.asdict(self.board),
            "outlook": self.outlook,
            "state_size": self.state_size,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Architecture:
        """The architecture a checkpoint stores (:meth:`to_dict`; a board saved without
        ``action_planes`` has none). A dict that describes none raises TypeError or ValueError."""
        if not isinstance(data, dict):
            raise TypeError(f"an architecture is a dict, not a {type(data).__name__}")
        board = data.get("board")
        return cls(**{**data, "board": None if board is None else BoardShape(**board)})


class ActorCritic(nn.Module):
    """Shared trunk, a policy head over every action id and a value head; with a ``board``
    (:class:`BoardShape`) a :class:`BoardNet` instead of the MLP. Built from an
    :class:`Architecture`.

    Three optional ways to tell the policy what an action *is*, so that what it learns about one
    action carries over to similar ones (each scaled by gains the trunk computes from the state):

    * ``action_blocks``: (start, stop) slices of the observation whose entry ``k`` describes
      action ``k`` now (All Fives' ``points_now``), added to the logits - the policy weighs
      "this play scores 10" at once instead of routing each entry through the hidden layers.
    * ``action_traits``: a fixed (num_actions, K) table of facts about each action id (the
      rules' tile pips, double, face down), so "lay heavy tiles" is one weight, not one per id.
    * ``outlook``: a :class:`PlayOutlook` spec (a chain game's blocks and tiles): what each
      play exposes and covers, so "expose a value the next player lacks" is one weight.

    With ``state_size`` the value comes from a **perfect-information critic** (as in
    PerfectDou): its own MLP over the env's global ``state()`` (every hand, the boneyard), while
    the policy reads only the seat's observation. Acting never needs the state (without one the
    value reads 0), so a trained policy plays from what its seat knows; only training's value
    targets see more.
    """

    traits: torch.Tensor | None  # a buffer (registered in __init__): the action traits, transposed

    def __init__(self, architecture: Architecture) -> None:
        super().__init__()
        self.architecture = architecture
        obs_size, num_actions, hidden = architecture.obs_size, architecture.num_actions, architecture.hidden
        # how act() picks: None samples the policy (ppo, mmd); a number is the epsilon of
        # epsilon-greedy play on the logits read as Q values (dmc: config.acting_epsilon). Not
        # saved with the weights: the trainer (and each Ray worker) sets it; copy() keeps it
        self.epsilon: float | None = None
        self.state_size = state_size = architecture.state_size
        self.critic = mlp(state_size, hidden, 1, std=1.0) if state_size else None
        self.outlook = PlayOutlook(architecture.outlook) if architecture.outlook else None
        self.action_blocks = list(architecture.action_blocks)
        self.register_buffer("traits", None, persistent=False)  # (a buffer: it follows .to(device))
        self.trait_gains: nn.Linear | None = None
        board = architecture.board
        self.board_net = BoardNet(obs_size, num_actions, board) if board else None
        if self.board_net is not None:
            return
        self.trunk = mlp(obs_size, hidden)
        width = hidden[-1] if hidden else obs_size
        self.policy = layer(width, num_actions, std=0.01)
        self.value = layer(width, 1, std=1.0) if self.critic is None else None  # (the critic's instead)
        self.gains = layer(width, len(self.action_blocks), std=0.01) if self.action_blocks else None
        if architecture.action_traits is not None:
            traits = torch.tensor(architecture.action_traits, dtype=torch.float32).T  # (K, num_actions)
            self.register_buffer("traits", traits, persistent=False)
            self.trait_gains = layer(width, traits.shape[0], std=0.01)
        self.outlook_gains = layer(width, PlayOutlook.features, std=0.01) if self.outlook else None

    @property
    def device(self) -> torch.device:
        """Where the weights live (``run.device``'s, for a learner): :meth:`act` and :meth:`greedy`
        move their numpy inputs there and bring their outputs back to the CPU. (Read once per
        move, :meth:`_apply`: looking it up costs more than a one-row forward pass's moves.)"""
        device: torch.device | None = self.__dict__.get("_device")
        if device is None:
            device = self.__dict__["_device"] = next(self.parameters()).device
        return device

    def _apply(self, fn: Any, recurse: bool = True) -> ActorCritic:
        """``nn.Module``'s (what ``.to(device)``, ``.cuda()`` and ``.cpu()`` go through), then
        :attr:`device` is read afresh."""
        moved = super()._apply(fn, recurse)
        self.__dict__.pop("_device", None)
        return moved

    def copy(self) -> ActorCritic:
        """A frozen copy (an opponent-pool snapshot), on this model's device."""
        twin = ActorCritic(self.architecture).to(self.device)
        twin.load_state_dict(self.state_dict())
        twin.epsilon = self.epsilon  # (a dmc snapshot plays as the policy did: epsilon-greedy)
        return twin.eval()

    def logits(self, obs: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
        logits = self.policy(features)
        if self.gains is not None:
            gains = self.gains(features)
            for k, (start, stop) in enumerate(self.action_blocks):
                logits[:, : stop - start] += gains[:, k : k + 1] * obs[:, start:stop]
        if self.trait_gains is not None and self.traits is not None:
            logits = logits + self.trait_gains(features) @ self.traits
        if self.outlook is not None and self.outlook_gains is not None:
            self.outlook.add_to(logits, obs, self.outlook_gains(features))
        return logits

    def heads(
        self, obs: torch.Tensor, state: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits before masking, state value) for a batch (the critic's value from ``state``)."""
        if self.board_net is not None:
            logits, value = self.board_net(obs)
            return logits, self.critic_value(state, value)
        features = self.trunk(obs)
        logits = self.logits(obs, features)
        if self.value is not None:
            return logits, self.value(features).squeeze(-1)
        return logits, self.critic_value(state, obs.new_zeros(len(obs)))

    def critic_value(self, state: torch.Tensor | None, own: torch.Tensor) -> torch.Tensor:
        """The value: ``own`` (the network's), or the perfect-information critic's of ``state``
        (zeros shaped like ``own`` without one: acting needs no value)."""
        if self.critic is None:
            return own
        return torch.zeros_like(own) if state is None else self.critic(state).squeeze(-1)

    def distribution(
        self, obs: torch.Tensor, mask: torch.Tensor, state: torch.Tensor | None = None
    ) -> tuple[Categorical, torch.Tensor]:
        """(masked action distribution over every action id, state value) for a batch."""
        logits, value = self.heads(obs, state)
        return Categorical(logits=logits.masked_fill(~mask, MASKED_LOGIT), validate_args=False), value

    def legal(
        self, obs: torch.Tensor, mask: torch.Tensor, state: torch.Tensor | None = None
    ) -> tuple[LegalPolicy, torch.Tensor]:
        """(the same masked distribution over each row's legal actions only, state value): what
        acting and the update use; a board network computes only the legal actions' logits."""
        rows, actions = mask.nonzero(as_tuple=True)
        if self.board_net is not None:
            logits, value = self.board_net.legal_logits(obs, rows, actions)
            value = self.critic_value(state, value)
        else:
            every, value = self.heads(obs, state)
            logits = every[rows, actions]
        return LegalPolicy(rows, actions, logits, len(obs)), value

    @torch.no_grad()
    def act(
        self, obs: np.ndarray, mask: np.ndarray, state: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Sample actions for a batch: (actions, log-probabilities, values) as numpy arrays;
        ``state`` feeds only the perfect-information critic's values. With :attr:`epsilon` set
        (``algorithm: dmc``) the actions are epsilon-greedy on the logits instead
        (:meth:`LegalPolicy.epsilon_greedy`). The inputs go to the model's :attr:`device` (the
        sampling draws from that device's generator) and the outputs come back to the CPU (on
        the CPU neither moves)."""
        device = self.device
        states = None if state is None else torch.from_numpy(state).to(device)
        policy, value = self.legal(
            torch.from_numpy(obs).to(device), torch.from_numpy(mask).to(device).bool(), states
        )
        action, logprob = policy.sample() if self.epsilon is None else policy.epsilon_greedy(self.epsilon)
        return action.cpu().numpy(), logprob.cpu().numpy(), value.cpu().numpy()

    @torch.no_grad()
    def greedy(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The most probable legal action for each row (for evaluation), as :meth:`act` moves them."""
        device = self.device
        policy = self.legal(torch.from_numpy(obs).to(device), torch.from_numpy(mask).to(device).bool())[0]
        return policy.mode().cpu().numpy()
