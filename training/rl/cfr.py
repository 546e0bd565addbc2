"""``algorithm: cfr``: tabular CFR+ over the table's whole game tree, its average policy fitted
into the checkpoint's network; ``algorithm: mccfr``: the same with external-sampling Monte Carlo
CFR instead of CFR+.

    python -m training train configs/classic_small.yaml algorithm=cfr
    python -m training train configs/classic_small.yaml algorithm=mccfr

No games are played. The table's one-round game tree (:class:`domino_env.gametree.GameTree`:
every history and information state, as arrays) is solved by CFR+
(:meth:`GameTree.cfr_plus_averages`, the arithmetic of :meth:`GameTree.cfr_plus` and OpenSpiel's
``CFRPlusSolver``) for ``cfr.iterations``. At the checkpoint iterations
(:func:`checkpoint_iterations`: the powers of two and the last) the average policy so far, a
probability per legal (information state, action) pair, is fitted into an
:class:`~training.model.networks.ActorCritic` (the ``network`` section's, as for every other
algorithm), which is saved as ``checkpoints/iter_NNNNN.pt`` (NNNNN: the CFR+ iteration) and
``checkpoints/latest.pt`` in every run's checkpoint format: ``evaluate``, ``benchmark``,
``exploitability``, ``exploit`` and ``play`` load it as any other.

**The fit** (:meth:`CFRSolver.fit`): supervised, minimising the cross-entropy from the target
distribution to the network's distribution over the legal actions (the KL divergence up to the
target's entropy, a constant), ``cfr.fit_epochs`` passes of Adam at ``ppo.learning_rate`` over
every information state in shuffled minibatches of ``cfr.batch_size``, each checkpoint's fit
starting from the previous one's network (and its optimizer's state). The information states
are **weighted uniformly**, not by how often the average policy reaches them: NashConv is what a
best response gains, and a best response goes where the policy itself rarely does, so a policy
fitted only where it plays itself is exploitable where it does not; and reach weights of an
equilibrium are near zero in whole subtrees, which the network would then not learn at all.
The value head is not trained (nothing here needs it).

**Observation aliasing.** The network reads a seat's observation (``observe_all``: one
position of each information state), not its information state: two information states whose
observations are equal (the observation is a summary, not everything the seat saw) get one
distribution, the fit's compromise between their targets (with uniform weights, their
mean). So the network's NashConv (``nash_conv/network``) stays above the tabular policy's
(``nash_conv/tabular``), however long it is fitted: on Classic's small table, whose 13,630
information states share 4,771 observations, the mean targets of CFR+'s 1024th average policy
have NashConv 0.028, the tabular policy 6e-7. Both are logged to TensorBoard (``tb/``, against
``steps``) and printed at every checkpoint.

**Steps.** A checkpoint's ``steps`` (every other algorithm's decisions played) counts the
decision nodes CFR+ has visited: each iteration walks the whole tree once per seat (alternating
updates), so ``steps = iteration x players x decision nodes``, the work in the other
algorithms' unit (a decision) and the honest x axis of ``benchmarks/algorithms.py``. The
checkpoint also holds ``nash_conv``: {``tabular``, ``network``}.

**algorithm: mccfr** runs external-sampling MCCFR (:meth:`GameTree.external_sampling_averages`:
Lanctot et al. 2009, OpenSpiel's ``ExternalSamplingSolver``'s updates, seeded by ``run.seed``)
for ``mccfr.iterations`` (default 2**17), an iteration being one sampled traversal per seat,
and fits as above (``mccfr.fit_epochs``, ``mccfr.batch_size``) at the powers of two from 2**6
(:data:`FIRST_MCCFR_CHECKPOINT`: earlier averages are a few dozen sampled traversals, not worth
a fit) and the last. Its ``steps`` are the decision nodes its traversals touched so far (the
sampled ones: a few dozen per traversal, not iterations x players x decision nodes), the same
unit as CFR+'s.

The tree's observations and a network's policy over the tree are read by
``training.eval.exploitability`` (``observe_all``, ``network_policy``), a layer above this
one: the caller passes them in (:meth:`CFRSolver.train`'s ``observed`` and ``read_policy``;
``training.cli.train`` does). A run cannot be resumed (CFR+'s regrets are not saved): it
starts over, in seconds on the small tables.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from domino_env import raw_env
from domino_env.gametree import GameTree
from training.model import checkpoint
from training.model.config import TREE_ALGORITHMS, Config, ConfigError, resolve_device
from training.model.networks import ActorCritic, Architecture
from training.rl.train import claim_run_dir, network_payload, save_checkpoint

FLOOR = 1e-12  # a network probability below this counts as this in the fit's reported KL


class Observations(Protocol):
    """Every information state's observation and action mask (``training.eval.exploitability.
    Observed``, from ``observe_all``): row ``k`` is information state ``ids[k]``."""

    ids: np.ndarray  # int64[N]
    obs: np.ndarray  # float32[N, D]
    mask: np.ndarray  # bool[N, A]


PolicyReader = Callable[[ActorCritic], np.ndarray]  # a network's policy over the tree, float64[M]


FIRST_MCCFR_CHECKPOINT = 2**6  # mccfr's first checkpoint (when it runs that many iterations)


def checkpoint_iterations(iterations: int, first: int = 1) -> list[int]:
    """The iterations a run checkpoints after: the powers of two from ``first`` up to
    ``iterations``, and ``iterations`` itself."""
    return [t for t in range(1, iterations + 1) if (t & (t - 1) == 0 and t >= first) or t == iterations]


def build_tree(config: Config) -> GameTree:
    """The game tree of the config's table, or a one-line ConfigError saying which tables have
    one (a tree the walk refuses: a whole-match table, a game whose seats do not name their own
    tiles, too many nodes)."""
    try:
        return GameTree.build(config.env.variant, **config.env.options)
    except ValueError as err:
        reason = " ".join(str(err).split())
        raise ConfigError(
            f"algorithm={config.algorithm} solves the table's whole game tree, which only one round "
            f"of a small line-of-play table has (env.options preset: tiny, small or medium): {reason}"
        ) from None


class CFRSolver:
    """One ``algorithm: cfr`` or ``algorithm: mccfr`` run: the tree, the network and its
    optimizer, the run folder."""

    def __init__(self, config: Config, *, overwrite: bool = False, tree: GameTree | None = None) -> None:
        """``tree``: the config's table's, when the caller has built it already. The run folder
        is refused when it holds an earlier run unless ``overwrite`` (its files deleted first,
        last of all: nothing is deleted for a run that cannot start)."""
        if config.algorithm not in TREE_ALGORITHMS:
            raise ConfigError(f"CFRSolver runs algorithm=cfr or mccfr, not {config.algorithm}")
        self.config = config
        self.settings = config.cfr if config.algorithm == "cfr" else config.mccfr  # (its section)
        self.device = resolve_device(config.run.device)
        self.run_dir = Path(config.run.out_dir) / config.run_name
        torch.set_num_threads(config.run.torch_threads)
        torch.manual_seed(config.run.seed)
        self.rng = np.random.default_rng(config.run.seed)  # the fit's minibatches
        self.tree = build_tree(config) if tree is None else tree
        self.env = raw_env(config.env.variant, **config.env.options)
        self.model = ActorCritic(Architecture.for_table(self.env, config.network)).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config.ppo.learning_rate, eps=1e-5)
        self.iteration = 0
        self.steps = 0
        self.nash_conv: dict[str, float] = {}
        claim_run_dir(self.run_dir, overwrite=overwrite, resumable=False)

    @property
    def steps_per_iteration(self) -> int:
        """Decision nodes one CFR+ iteration visits: every one, once per seat."""
        return self.tree.num_players * self.tree.size.decisions

    def targets(self, observed: Observations) -> tuple[np.ndarray, np.ndarray]:
        """Where each row's legal actions are in a tree policy: (int64[N, W] pair indices,
        bool[N, W] which slots are real; W: the most legal actions of any state), slot ``j``
        of row ``k`` the ``j``-th legal action in increasing order, as
        :class:`~training.model.networks.LegalPolicy` lays them out; checked against the masks."""
        tree = self.tree
        first = tree.starts[observed.ids]
        counts = tree.starts[observed.ids + 1] - first
        width = int(counts.max())
        real = np.arange(width) < counts[:, None]
        pairs = np.where(real, first[:, None] + np.arange(width), 0)
        _, actions = np.nonzero(observed.mask)  # (row-major: each row's actions increasing)
        if len(actions) != real.sum() or not np.array_equal(tree.actions[pairs[real]], actions):
            raise ValueError("the observations' action masks are not the tree's legal actions")
        return pairs, real

    def checkpoint_iterations(self) -> list[int]:
        """The iterations this run checkpoints after (:func:`checkpoint_iterations`)."""
        first = FIRST_MCCFR_CHECKPOINT if self.config.algorithm == "mccfr" else 1
        return checkpoint_iterations(self.settings.iterations, first)

    def averages(self, marks: set[int]) -> Iterator[tuple[int, np.ndarray, int]]:
        """The solver's run: after each iteration in ``marks``, (the iteration, its average
        policy, the decision nodes visited so far: the checkpoint's ``steps``)."""
        tree, iterations = self.tree, self.settings.iterations
        if self.config.algorithm == "mccfr":
            yield from tree.external_sampling_averages(iterations, marks, self.config.run.seed)
            return
        for t, average in tree.cfr_plus_averages(iterations, marks):
            yield t, average, t * self.steps_per_iteration

    def fit(self, observed: Observations, target: np.ndarray) -> float:
        """``cfr.fit_epochs`` (or ``mccfr.fit_epochs``) passes of Adam over every information
        state (``target``: float[N, W], each row's distribution by slot), minimising the mean
        cross-entropy from the target to the network's legal distribution; returns the last
        pass's mean loss."""
        model = self.model
        device = self.device
        obs = torch.from_numpy(observed.obs).to(device)
        mask = torch.from_numpy(observed.mask).to(device).bool()
        goal = torch.from_numpy(target).to(device, torch.float32)
        size = min(self.settings.batch_size, len(goal))
        model.train()
        loss_sum, rows = 0.0, 0
        for _ in range(self.settings.fit_epochs):
            order = torch.from_numpy(self.rng.permutation(len(goal))).to(device)
            loss_sum, rows = 0.0, 0
            for start in range(0, len(order), size):
                batch = order[start : start + size]
                policy, _ = model.legal(obs[batch], mask[batch])
                log_probs = policy.log_probs()
                wanted = goal[batch, : log_probs.shape[1]]
                loss = -(wanted * log_probs.clamp(min=-1e4)).sum(1).mean()  # (padding: -1e8, weight 0)
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                self.optimizer.step()
                loss_sum += float(loss.detach()) * len(batch)
                rows += len(batch)
        model.eval()
        return loss_sum / max(rows, 1)

    def kl(self, average: np.ndarray, fitted: np.ndarray) -> float:
        """The mean over information states of KL(average policy || network's policy)."""
        terms = np.where(
            average > 0, average * (np.log(np.maximum(average, FLOOR)) - np.log(np.maximum(fitted, FLOOR))), 0
        )
        return float(np.add.reduceat(terms, self.tree.starts[:-1]).mean())

    def payload(self) -> dict[str, Any]:
        """Every run's checkpoint format (:meth:`training.rl.train.Trainer.payload`'s keys but
        ``collector``: no games in progress), and the two NashConvs."""
        return {
            **network_payload(self.model, self.optimizer, self.config, self.iteration, self.steps),
            "rng": checkpoint.rng_states({"fit": self.rng}),
            "nash_conv": dict(self.nash_conv),
        }

    def train(self, observed: Observations, read_policy: PolicyReader, progress: bool = True) -> Path:
        """Run CFR+ (or MCCFR) and checkpoint its fitted average policy at
        :meth:`checkpoint_iterations`; returns the last checkpoint. ``observed``: every
        information state's observation and mask; ``read_policy``: a network's policy over the
        tree from them (``network_policy``)."""
        tree, iterations = self.tree, self.settings.iterations
        pairs, real = self.targets(observed)
        writer = SummaryWriter(str(self.run_dir / "tb"))
        label = "CFR+" if self.config.algorithm == "cfr" else "MCCFR"
        bar = tqdm(total=iterations, unit="it", desc=label, disable=not progress)
        path = self.run_dir / "checkpoints" / "latest.pt"
        started = time.perf_counter()
        saved = set(self.checkpoint_iterations())
        shown = range(0, iterations + 1, max(1, iterations // 100))  # (the bar's: about 1% apart)
        try:
            for t, average, steps in self.averages(saved.union(shown)):
                bar.update(t - bar.n)
                if t not in saved:
                    continue
                self.iteration, self.steps = t, steps
                bar.set_postfix_str("fitting", refresh=True)
                loss = self.fit(observed, np.where(real, average[pairs], 0.0))
                fitted = read_policy(self.model)
                self.nash_conv = {"tabular": tree.nash_conv(average), "network": tree.nash_conv(fitted)}
                stats = {
                    "nash_conv/tabular": self.nash_conv["tabular"],
                    "nash_conv/network": self.nash_conv["network"],
                    "fit/cross_entropy": loss,
                    "fit/kl": self.kl(average, fitted),
                    "charts/iteration": t,
                    "speed/seconds": time.perf_counter() - started,
                }
                for key, value in stats.items():
                    writer.add_scalar(key, value, self.steps)
                path = save_checkpoint(self.run_dir, self.payload())
                bar.set_postfix_str(f"NashConv tabular {stats['nash_conv/tabular']:.3g}", refresh=False)
                bar.write(
                    f"iteration {t}: NashConv tabular {stats['nash_conv/tabular']:.6g}, "
                    f"network {stats['nash_conv/network']:.6g} (fit KL {stats['fit/kl']:.3g}) -> {path.name}"
                )
        finally:
            bar.close()
            writer.close()
        return path
