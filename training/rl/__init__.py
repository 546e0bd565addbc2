"""Self-play training: PPO, and beside it MMD, DMC and NFSP (and CFR+ on solved tables).

The read path, top to bottom (as CleanRL's ppo.py reads in one file):

1. **config** - :mod:`training.model.config`: :class:`~training.model.config.Config` (its
   ``algorithm``: ``ppo``, ``mmd``, ``dmc``, ``nfsp``, ``cfr`` or ``mccfr``; its ``network``,
   ``ppo``, ``mmd``, ``dmc``, ``nfsp``, ``cfr``, ``mccfr`` and ``run`` sections),
   from :func:`~training.model.config.load_config`.
2. **architecture** - :mod:`training.model.networks`:
   :meth:`Architecture.for_table(env, config.network) <training.model.networks.Architecture.for_table>`
   decides the network's shape for the table; :class:`~training.model.networks.ActorCritic`
   is built from it and acts through :meth:`~training.model.networks.ActorCritic.legal`
   (a :class:`~training.model.networks.LegalPolicy` over each row's legal actions): it samples
   the policy, or for ``algorithm: dmc`` plays epsilon-greedily on the logits read as Q values
   (:meth:`~training.model.networks.LegalPolicy.epsilon_greedy`).
3. **collect** - :mod:`training.rl.rollout`: :meth:`LocalCollector.collect(model, steps)
   <training.rl.rollout.LocalCollector.collect>` steps the envs in lockstep and links each
   seat's transitions into its own chain; the trainer sees it as a
   :class:`training.rl.collect.Collector` (``VectorCollector`` in :mod:`training.rl.vector_collect`,
   ``run.collector=vector``, plays them on one batched ``domino_env.vector`` engine;
   ``RayCollector`` in :mod:`training.rl.distributed` spreads either over Ray actors, each
   running ``run.collector``'s collector on its share of the envs).
4. **advantages** - :mod:`training.rl.ppo`: :func:`~training.rl.ppo.gae` over the per-seat
   chains, called at the end of ``collect``, which returns a :class:`~training.rl.ppo.Batch`
   (for ``algorithm: dmc``, :func:`training.rl.dmc.monte_carlo_returns` instead: the returns
   of the episodes that finished, the rest left out).
5. **update** - :mod:`training.rl.ppo`: :func:`~training.rl.ppo.update`, the clipped PPO
   epochs over shuffled minibatches; ``algorithm: mmd`` adds one marked step, the KL pull
   toward a magnet policy (magnetic mirror descent). ``algorithm: dmc``:
   :func:`training.rl.dmc.update`, the Q values (logits) of the stored actions regressed on
   the returns (Deep Monte Carlo). ``algorithm: nfsp``: :meth:`training.rl.nfsp.Learner.update`,
   a DQN best response and the model as the average policy imitating it (the collectors act
   through a :class:`training.rl.nfsp.Player`, each seat by its mode for the game).
6. **train loop** - :mod:`training.rl.train`: :meth:`Trainer.train()
   <training.rl.train.Trainer.train>`: anneal the learning rate, collect, update
   (:meth:`Trainer.learn <training.rl.train.Trainer.learn>` picks the algorithm's), refresh
   mmd's magnet, snapshot into the pool, evaluate, log, checkpoint
   (:mod:`training.model.checkpoint`).

``algorithm: cfr`` leaves this path: :class:`training.rl.cfr.CFRSolver` runs tabular CFR+ on the
table's game tree and fits its average policy into the network at each checkpoint (no games).
``algorithm: mccfr`` leaves it the same way: the same solver class runs external-sampling Monte
Carlo CFR (``GameTree.external_sampling_averages``) on the tree instead of CFR+.

Beside the path: :mod:`training.rl.match_value` (rewards of round-trained tables,
``run.match_value``) and :mod:`training.rl.distributed` (``--ray``).
"""
