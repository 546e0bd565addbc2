"""Typed run configuration: YAML files in ``configs/`` plus dotted command-line overrides.

    cfg = load_config("configs/all_fives.yaml", ["ppo.learning_rate=1e-3", "run.total_steps=20000"])

Every key is checked against the dataclasses below: an unknown key or a value of the wrong
type raises :class:`ConfigError` naming the key and what is allowed.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import yaml

from domino_env import DominoEnv, raw_env
from domino_env.agents import make_agent
from training.model.names import parse_guided_name, policy_path


class ConfigError(ValueError):
    """A configuration file or override that does not fit the schema."""


@dataclass
class EnvConfig:
    variant: str = "all_fives"
    options: dict[str, Any] = field(default_factory=lambda: {"num_players": 2})


@dataclass
class NetworkConfig:
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    action_blocks: bool = True  # add the observation blocks the rules align with actions to the logits
    action_traits: bool = True  # tell the policy each action's tile pips, double and face (rules' table)
    play_outlook: bool = True  # tell the policy what each play exposes and covers (chain games)
    board_channels: int = 0  # >0: a convolutional network with this many channels for board tables
    oracle_critic: bool = False  # the value reads the env's global state() (every hand); the policy never


@dataclass
class PPOConfig:
    learning_rate: float = 3e-4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_coef: float = 0.2
    clip_vloss: bool = True
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    update_epochs: int = 4
    num_minibatches: int = 4
    target_kl: float = 0.03
    norm_adv: bool = True


@dataclass
class MMDConfig:
    """Magnetic mirror descent's settings (``algorithm: mmd``; Sokota et al., 2023): PPO's update
    plus ``magnet_coef`` times the KL of the new policy to a *magnet* policy over the legal
    actions. The defaults are a starting point, not tuned."""

    magnet_coef: float = 0.05  # the weight of KL(policy || magnet) in the loss
    # updates between replacing the magnet by the current policy (a moving magnet: its fixed
    # point is a Nash equilibrium, not a regularised one); 0: the magnet stays uniform play
    # over the legal actions
    magnet_every: int = 10


@dataclass
class DMCConfig:
    """Deep Monte Carlo's settings (``algorithm: dmc``; DouZero, Zha et al., 2021): the policy
    head's logits read as Q(s, a), regressed on the Monte Carlo returns of finished episodes,
    acting epsilon-greedily on them (:func:`acting_epsilon`)."""

    epsilon: float = 0.01  # the share of decisions played uniformly at random over the legal actions


@dataclass
class NFSPConfig:
    """Neural fictitious self-play's settings (``algorithm: nfsp``; Heinrich and Silver, 2016;
    the names and defaults of OpenSpiel's ``nfsp.NFSP`` where it has them): a best-response
    network (Q values, learned by DQN from a replay memory) and the average policy (the
    checkpoint's network, learned by imitating the best response's own plays, kept in a
    reservoir). The defaults are a starting point, not tuned."""

    anticipatory: float = 0.1  # each seat plays a whole episode by its best response with this probability
    epsilon_start: float = 0.06  # the best response's epsilon-greedy exploration, at the run's start
    epsilon_end: float = 0.001  # ... falling linearly to this at the run's last decision
    replay_size: int = 200_000  # the RL memory: the newest transitions (circular)
    reservoir_size: int = 200_000  # the SL memory: a uniform sample of every best-response play
    batch_size: int = 128  # transitions per gradient step, of each network
    learn_every: int = 64  # decisions collected per gradient step of each network
    min_memory: int = 1_000  # neither network learns before its memory holds this many
    # the Q network's Adam step (OpenSpiel's 0.01 is plain SGD's); the average policy's: ppo.learning_rate
    rl_learning_rate: float = 1e-3
    target_every: int = 300  # the Q network's gradient steps between refreshing its target copy


@dataclass
class CFRConfig:
    """CFR+'s settings (``algorithm: cfr``): tabular CFR+ over the table's whole game tree
    (``domino_env.gametree``; tables whose tree fits, the ``tiny``, ``small`` and ``medium``
    presets), its average policy then fitted into the checkpoint's network."""

    iterations: int = 1024  # CFR+ iterations (every checkpoint: a power of two, and the last)
    fit_epochs: int = 100  # passes over the information states fitting the network to the average policy
    batch_size: int = 512  # information states per Adam step of the fit (at ppo.learning_rate)


@dataclass
class MCCFRConfig(CFRConfig):
    """External-sampling MCCFR's settings (``algorithm: mccfr``): CFR's, an iteration being
    one sampled traversal per seat (``GameTree.external_sampling_averages``) rather than a
    pass over the whole tree, so many more of them."""

    iterations: int = 2**17  # traversals per seat (checkpoints: the powers of two from 64, and the last)


@dataclass
class DistillConfig:
    """Search distilled into the policy (expert iteration; ``algorithm: ppo`` or ``mmd``, the
    local collector): on a share of the learner's decisions the policy-guided search
    (``training.agents.guided``, guided by the policy as it plays) also decides, and the update
    adds ``coef`` times the cross-entropy of the policy to that choice. The games are played by
    the policy as before; the search only labels."""

    share: float = 0.0  # the learner's decisions the search labels (0: off)
    worlds: int = 8  # the guided search's sampled worlds a label
    coef: float = 1.0  # the weight of the cross-entropy to the search's choice in the loss


@dataclass
class PoolConfig:
    share: float = 0.2  # share of games with frozen earlier snapshots in the other seats
    snapshot_every: int = 10  # iterations between snapshots
    size: int = 5  # snapshots kept (0: none, the baselines alone)
    # agents that join the snapshots: baselines, search[:N], checkpoints, run folders
    baselines: list[str] = field(default_factory=list)


@dataclass
class EvalConfig:
    every: int = 10  # iterations between evaluations (0: never); also at step 0 and iterations 1, 4, 16, ...
    games: int = 100  # per baseline, on the same duplicate deals at every evaluation
    search_games: int = 20  # per search opponent (a search game costs about 100 baseline games)
    opponents: list[str] = field(default_factory=lambda: ["random", "greedy", "search"])
    episode: str = "match"  # evaluation games are whole matches, whatever the training episode


@dataclass
class RunConfig:
    total_steps: int = 200_000  # decisions (env steps) collected in all
    num_envs: int = 32
    rollout_steps: int = 64  # decisions per env per iteration
    seed: int = 1
    torch_threads: int = 1
    checkpoint_every: int = 10  # iterations
    out_dir: str = "runs"
    name: str = ""  # run folder name; default <variant>-<seed>
    # a checkpoint (file or run folder) whose weights start the network, to fine-tune a trained
    # policy (its network must be this run's); the optimizer, counters and random streams start
    # fresh; "": a new network. A resumed run takes its checkpoint's weights instead
    init: str = ""
    zero_sum: bool = True  # learn from each seat's reward minus the table's mean reward
    reward_scale: float = 1.0  # learned rewards are multiplied by this (points rewards are small)
    # play whole matches, learn each round as an episode rewarded by the change in the side's
    # match value (training/rl/match_value.py; the env's own rewards are not used): two sides only
    match_value: bool = False
    # who plays the games: "local" (scalar envs, training/rl/rollout.py) or "vector" (one
    # domino_env.vector batch, training/rl/vector_collect.py: of pool.baselines only random and
    # trained policies, batched_baseline)
    collector: str = "local"
    # where the learner (the model, its optimizer and the PPO update) lives: "cpu", "cuda",
    # "cuda:N" or "auto" (cuda where this torch sees a CUDA device, else cpu); the games are
    # played on the CPU cores whatever it is (resolve_device)
    device: str = "cpu"


# the update's forms: training/rl/ppo.py's update (mmd adds a magnet), training/rl/dmc.py's for
# dmc, training/rl/nfsp.py's for nfsp; cfr and mccfr solve the game tree (training/rl/cfr.py) instead
ALGORITHMS = ("ppo", "mmd", "dmc", "nfsp", "cfr", "mccfr")
TREE_ALGORITHMS = ("cfr", "mccfr")  # the ones that solve the game tree rather than play games
# the ones trained by the policy-gradient update: it takes the search's labels (distill), and its
# network can start from a trained policy (run.init)
POLICY_UPDATES = ("ppo", "mmd")
COLLECTORS = ("local", "vector")
DEVICES = ("cpu", "cuda", "cuda:N", "auto")  # run.device's forms (resolve_device)
VECTOR_BASELINES = ("random",)  # the built-in pool.baselines the vector collector plays itself


@dataclass
class Config:
    # one of ALGORITHMS: "ppo", "mmd" (PPO pulled toward a magnet, MMDConfig), "dmc" (Deep Monte
    # Carlo: the logits as Q values regressed on episode returns, epsilon-greedy play, DMCConfig),
    # "nfsp" (neural fictitious self-play, NFSPConfig), "cfr" (CFR+ on the game tree, CFRConfig)
    # or "mccfr" (external-sampling Monte Carlo CFR on the game tree, MCCFRConfig)
    algorithm: str = "ppo"
    env: EnvConfig = field(default_factory=EnvConfig)
    network: NetworkConfig = field(default_factory=NetworkConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    mmd: MMDConfig = field(default_factory=MMDConfig)  # read with algorithm: mmd only
    dmc: DMCConfig = field(default_factory=DMCConfig)  # read with algorithm: dmc only
    nfsp: NFSPConfig = field(default_factory=NFSPConfig)  # read with algorithm: nfsp only
    cfr: CFRConfig = field(default_factory=CFRConfig)  # read with algorithm: cfr only
    mccfr: MCCFRConfig = field(default_factory=MCCFRConfig)  # read with algorithm: mccfr only
    distill: DistillConfig = field(default_factory=DistillConfig)  # ppo and mmd, share > 0 only
    pool: PoolConfig = field(default_factory=PoolConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    run: RunConfig = field(default_factory=RunConfig)

    def to_dict(self, *, unread: bool = True) -> dict[str, Any]:
        """Every field; ``unread=False`` leaves out the sections this run never reads (the other
        algorithms', and ``distill`` where it is off): what ``ship`` writes beside an agent."""
        out = dataclasses.asdict(self)
        if not unread:
            for name in ALGORITHMS[1:]:  # (each has a section of its name; ppo's is read by mmd too)
                if name != self.algorithm:
                    del out[name]
            if self.algorithm not in POLICY_UPDATES or not self.distill.share:
                del out["distill"]
        return out

    @property
    def run_name(self) -> str:
        return self.run.name or f"{self.env.variant}-{self.run.seed}"


def _check(value: Any, hint: Any, where: str) -> Any:
    """``value`` converted to the annotated type, or ConfigError saying what was expected."""
    origin = typing.get_origin(hint)
    if hint is Any:
        return value
    if hint is bool:
        if isinstance(value, bool):
            return value
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        number = _number(value)  # 2e6 (YAML reads it as text) or 2000000.0
        if number is not None and number.is_integer():
            return int(number)
    elif hint is float:
        number = _number(value)
        if number is not None:
            return number
    elif hint is str:
        if isinstance(value, str):
            return value
    elif origin is list:
        (item,) = typing.get_args(hint)
        if isinstance(value, list):
            return [_check(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
    elif origin is dict:
        if isinstance(value, dict):
            return dict(value)
    elif isinstance(hint, types.UnionType):  # pragma: no cover - no optional fields yet
        return value
    name = getattr(hint, "__name__", str(hint))
    raise ConfigError(f"{where} must be {name}, got {value!r}")


def _number(value: Any) -> float | None:
    """A float from an int, a float or text such as ``1e-3`` (YAML 1.1 reads that as a string)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _merge(section: Any, values: dict[str, Any], where: str) -> None:
    if not isinstance(values, dict):
        raise ConfigError(f"{where or 'a config'} must be a mapping of its keys, got {values!r}")
    hints = typing.get_type_hints(type(section))
    for key, value in values.items():
        path = f"{where}.{key}" if where else key
        if key not in hints:
            allowed = ", ".join(f.name for f in dataclasses.fields(section))
            raise ConfigError(f"unknown key {path!r}; allowed here: {allowed}")
        current = getattr(section, key)
        if dataclasses.is_dataclass(current):
            if not isinstance(value, dict):
                raise ConfigError(f"{path} must be a mapping of its keys, got {value!r}")
            _merge(current, value, path)
        elif isinstance(current, dict) and isinstance(value, dict):  # env.options: key by key
            setattr(section, key, {**current, **value})
        else:
            setattr(section, key, _check(value, hints[key], path))


def _parse_override(text: str) -> tuple[list[str], Any]:
    if "=" not in text:
        raise ConfigError(f"override {text!r} must look like section.key=value")
    key, raw = text.split("=", 1)
    return key.strip().split("."), yaml_value(
        raw, f"override {text!r}", "run.total_steps=20000 or network.hidden=[64, 64]"
    )


def yaml_value(raw: str, what: str, examples: str) -> Any:
    """The value of a ``key=value`` the command line gave (``what``: which, for the message), read
    as YAML; not YAML: a ConfigError that shows ``examples``."""
    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError as err:
        problem = getattr(err, "problem", None) or type(err).__name__
        raise ConfigError(f"{what}: the value is not valid YAML ({problem}); write e.g. {examples}") from None


def _missing_hint(path: Path) -> str:
    """What to do about a config file that is not there: a relative path whose folder is missing
    here (a default such as configs/classic.yaml, run outside the checkout) says it is relative
    to this folder and how to give one; a missing file in a folder that is there, the YAML files
    the folder holds."""
    if path.is_absolute():
        return ""
    if not path.parent.is_dir():
        return (
            f" (a path relative to this folder, {Path.cwd()}: run from the repository's root "
            "or give the config's path: --config PATH, or train's and ship's config argument)"
        )
    held = sorted(p.name for p in path.parent.glob("*.yaml"))
    where = "this folder" if path.parent == Path() else f"{path.parent}/"
    return f"; {where} holds {', '.join(held)}" if held else ""


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> Config:
    """The default config, updated from a YAML file and then from ``a.b=value`` overrides."""
    config = Config()
    if path is not None:
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except FileNotFoundError:
            raise ConfigError(f"config file {path} does not exist{_missing_hint(Path(path))}") from None
        except IsADirectoryError:
            raise ConfigError(
                f"config {path} is a folder; give a YAML file such as configs/all_fives.yaml"
            ) from None
        except UnicodeDecodeError:
            raise ConfigError(f"config file {path} is not UTF-8 text") from None
        except OSError as err:
            raise ConfigError(f"config file {path} cannot be read ({err.strerror})") from None
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            problem = getattr(err, "problem", None) or type(err).__name__
            raise ConfigError(f"config file {path} is not valid YAML: {problem}{where}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"config file {path} must hold a mapping of sections")
        _merge(config, data, "")
    for text in overrides or []:
        keys, value = _parse_override(text)
        nested: Any = value
        for key in reversed(keys):
            nested = {key: nested}
        _merge(config, nested, "")
    check_agents(config, validate(config))
    check_unused_sections(config)
    resolve_device(config.run.device)  # a device this machine lacks: refused before any work
    return config


# each algorithm's own section: refused with another algorithm where it differs from the defaults
ALGORITHM_SECTIONS: dict[str, type[Any]] = {
    "mmd": MMDConfig,
    "dmc": DMCConfig,
    "nfsp": NFSPConfig,
    "cfr": CFRConfig,
    "mccfr": MCCFRConfig,
}


def check_unused_sections(config: Config) -> None:
    """An algorithm's section (``mmd``, ``dmc``) with settings other than the defaults is refused
    unless ``algorithm`` is that one: the run would ignore them. Checked on what a user writes
    (:func:`load_config`), not on a checkpoint's saved config, which holds every section whatever
    the algorithm."""
    for name, section in ALGORITHM_SECTIONS.items():
        if config.algorithm == name:
            continue
        default, values = section(), getattr(config, name)
        changed = [
            f"{name}.{f.name}={getattr(values, f.name)}"
            for f in dataclasses.fields(section)
            if getattr(values, f.name) != getattr(default, f.name)
        ]
        if changed:
            raise ConfigError(
                f"{', '.join(changed)}: the {name} settings apply to algorithm={name} only, and this "
                f"run's algorithm is {config.algorithm}: set algorithm={name} or drop them"
            )


def acting_epsilon(config: Config) -> float | None:
    """How a model trained with ``config`` acts while collecting: None, sampling its policy
    (ppo, mmd), or the epsilon of epsilon-greedy play on its logits read as Q values (dmc)."""
    return config.dmc.epsilon if config.algorithm == "dmc" else None


def check_agents(config: Config, table: DominoEnv) -> None:
    """Every agent ``eval.opponents`` and ``pool.baselines`` name (a baseline, ``search[:N]``, a
    checkpoint file or run folder) is built for the table, so that a name nothing loads, or a
    checkpoint of another table, fails here and not after training began. Checkpoints' own
    configs are not checked so: a checkpoint they name may have moved since. ``table`` is the
    config's table (:func:`validate` returns the one it built)."""
    for key, names in (("eval.opponents", config.eval.opponents), ("pool.baselines", config.pool.baselines)):
        for name in names:
            try:
                policy_path(name)  # a name nobody takes: the trainer's own error
                make_agent(name, 0, env=table)  # (a checkpoint: through the trainer's agent loader)
            except ValueError as err:  # an unknown name, an unreadable or unfitting checkpoint
                raise ConfigError(f"{key}: {err}") from None


def config_differences(a: Config, b: Config, sections: tuple[str, ...]) -> str:
    """The keys of ``sections`` where two configs differ, as "key: a -> b" (empty: none)."""

    def flat(tree: Any, prefix: str) -> dict[str, Any]:
        if not isinstance(tree, dict):
            return {prefix: tree}
        return {k: v for key, sub in tree.items() for k, v in flat(sub, f"{prefix}.{key}").items()}

    before, after = a.to_dict(), b.to_dict()
    left = {k: v for section in sections for k, v in flat(before[section], section).items()}
    right = {k: v for section in sections for k, v in flat(after[section], section).items()}
    return "; ".join(
        f"{key}: {left.get(key, '(unset)')} -> {right.get(key, '(unset)')}"
        for key in sorted(left.keys() | right.keys())
        if left.get(key, "(unset)") != right.get(key, "(unset)")
    )


def config_from_dict(data: dict[str, Any]) -> Config:
    """A config rebuilt from ``Config.to_dict()`` (checkpoints store it that way)."""
    config = Config()
    _merge(config, data, "")
    check_agents(config, validate(config))
    return config


def check_collector(config: Config, kind: str | None = None) -> None:
    """``run.collector`` is one of :data:`COLLECTORS`, and the collector ``kind`` (default:
    ``run.collector``) is asked for nothing it cannot do (ConfigError saying what and the way out)."""
    run = config.run
    if run.collector not in COLLECTORS:
        raise ConfigError(f"run.collector must be one of {', '.join(COLLECTORS)}, got {run.collector!r}")
    if (kind or run.collector) != "vector":
        return
    if config.distill.share > 0:
        raise ConfigError(
            "distill.share needs run.collector=local: the search it distills reads each table's "
            "scalar game, which a batched engine does not have"
        )
    others = [name for name in config.pool.baselines if not batched_baseline(name)]
    if others:
        raise ConfigError(
            f"run.collector=vector seats only {', '.join(VECTOR_BASELINES)} and trained policies "
            f"(a checkpoint or run folder) in pool.baselines, not {others} (a search or rule "
            "agent plays a scalar env, which a batched engine does not have): drop them or use "
            "run.collector=local, which plays them"
        )


def batched_baseline(name: str) -> bool:
    """Whether the vector collector plays the pool baseline ``name`` itself: ``random``, or a
    trained policy (a checkpoint file or run folder; not a policy-guided search)."""
    if name in VECTOR_BASELINES:
        return True
    try:
        return parse_guided_name(name) is None and policy_path(name) is not None
    except ValueError:  # (not an agent at all: the loader says so, listing what is allowed)
        return True


def check_device(device: str) -> None:
    """``run.device`` is one of :data:`DEVICES`' forms (ConfigError listing them); whether this
    machine has that device is :func:`resolve_device`'s question (a checkpoint's config names the
    device it was trained on, and loads on any machine)."""
    index = device[len("cuda:") :] if device.startswith("cuda:") else None
    if device not in ("cpu", "cuda", "auto") and not (index and index.isdigit()):
        raise ConfigError(f"run.device must be one of {', '.join(DEVICES)}, got {device!r}")


def resolve_device(device: str) -> torch.device:
    """The torch device ``run.device`` names on this machine: ``auto`` is cuda where this torch
    sees a CUDA device, else cpu; ``cuda`` or ``cuda:N`` that it does not see is a ConfigError."""
    check_device(device)
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cpu":
        return torch.device("cpu")
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    fix = "use run.device=cpu or auto"
    if not count:
        raise ConfigError(
            f"run.device={device}, but this torch ({torch.__version__}) sees no CUDA device; {fix}"
        )
    chosen = torch.device(device)
    if chosen.index is not None and chosen.index >= count:
        seen = ", ".join(f"cuda:{i}" for i in range(count))
        raise ConfigError(f"run.device={device}, but this torch sees {count} CUDA device(s) ({seen}); {fix}")
    return chosen


def validate(config: Config) -> DominoEnv:
    """Values that type-check but make no sense, and the env options, checked up front;
    returns the config's table, built to check them."""
    run, ppo = config.run, config.ppo
    if config.algorithm not in ALGORITHMS:
        raise ConfigError(f"unknown algorithm {config.algorithm!r}; known: {', '.join(ALGORITHMS)}")
    if config.mmd.magnet_every < 0:
        raise ConfigError(
            f"mmd.magnet_every must be 0 (a uniform magnet) or more updates, got {config.mmd.magnet_every}"
        )
    positive = {
        "run.total_steps": run.total_steps,
        "run.num_envs": run.num_envs,
        "run.rollout_steps": run.rollout_steps,
        "run.torch_threads": run.torch_threads,
        "ppo.update_epochs": ppo.update_epochs,
        "ppo.num_minibatches": ppo.num_minibatches,
        "run.checkpoint_every": run.checkpoint_every,
        "pool.snapshot_every": config.pool.snapshot_every,
        "eval.games": config.eval.games,
        "eval.search_games": config.eval.search_games,
        "nfsp.replay_size": config.nfsp.replay_size,
        "nfsp.reservoir_size": config.nfsp.reservoir_size,
        "nfsp.batch_size": config.nfsp.batch_size,
        "nfsp.learn_every": config.nfsp.learn_every,
        "nfsp.target_every": config.nfsp.target_every,
        "cfr.iterations": config.cfr.iterations,
        "cfr.fit_epochs": config.cfr.fit_epochs,
        "cfr.batch_size": config.cfr.batch_size,
        "mccfr.iterations": config.mccfr.iterations,
        "mccfr.fit_epochs": config.mccfr.fit_epochs,
        "mccfr.batch_size": config.mccfr.batch_size,
        "distill.worlds": config.distill.worlds,
    }
    for key, value in positive.items():
        if value < 1:
            raise ConfigError(f"{key} must be at least 1, got {value}")
    if run.name and (Path(run.name).name != run.name or run.name in (".", "..")):
        raise ConfigError(
            f"run.name must be a plain folder name (no / and not . or ..), got {run.name!r}; "
            "run.out_dir says where the run folder goes"
        )
    if run.seed < 0:
        raise ConfigError(f"run.seed must be a non-negative integer (0 or more), got {run.seed}")
    if config.nfsp.min_memory < 0:
        raise ConfigError(f"nfsp.min_memory must be 0 or more transitions, got {config.nfsp.min_memory}")
    if config.eval.every < 0:
        raise ConfigError(f"eval.every must be 0 (never) or more iterations, got {config.eval.every}")
    # numbers by their allowed range (NaN fails every comparison, so it is refused too)
    ranges = {
        "above 0": (
            lambda v: 0.0 < v < math.inf,
            ("ppo.learning_rate", "ppo.clip_coef", "ppo.max_grad_norm", "nfsp.rl_learning_rate"),
        ),
        "0 or more": (
            lambda v: 0.0 <= v < math.inf,
            ("ppo.ent_coef", "ppo.vf_coef", "ppo.target_kl", "mmd.magnet_coef", "distill.coef"),
        ),
        "in [0, 1]": (
            lambda v: 0.0 <= v <= 1.0,
            (
                "ppo.gamma",
                "ppo.gae_lambda",
                "dmc.epsilon",
                "nfsp.anticipatory",
                "nfsp.epsilon_start",
                "nfsp.epsilon_end",
                "distill.share",
            ),
        ),
    }
    for allowed, (fits, keys) in ranges.items():
        for key in keys:
            section, name = key.split(".")
            value = getattr(getattr(config, section), name)
            if not fits(value):
                raise ConfigError(f"{key} must be {allowed}, got {value}")
    if not 0.0 < run.reward_scale < math.inf:
        raise ConfigError(f"run.reward_scale must be above 0, got {run.reward_scale}")
    if config.pool.size < 0:
        raise ConfigError(
            f"pool.size must be 0 (no snapshots: the baselines alone) or more, got {config.pool.size}"
        )
    if not 0.0 <= config.pool.share <= 1.0:
        raise ConfigError(f"pool.share must be in [0, 1], got {config.pool.share}")
    if config.network.board_channels < 0:
        raise ConfigError(
            f"network.board_channels must be 0 (an MLP) or positive, got {config.network.board_channels}"
        )
    if not config.network.hidden or min(config.network.hidden) < 1:
        raise ConfigError(f"network.hidden must list positive layer sizes, got {config.network.hidden}")
    if run.num_envs * run.rollout_steps < ppo.num_minibatches:
        raise ConfigError("run.num_envs * run.rollout_steps must be at least ppo.num_minibatches")
    if config.distill.share > 0 and config.algorithm not in POLICY_UPDATES:
        raise ConfigError(
            f"distill.share: search is distilled into the update of {' and '.join(POLICY_UPDATES)} only, "
            f"and this run's algorithm is {config.algorithm}: set distill.share=0 or change algorithm"
        )
    if run.init and config.algorithm not in POLICY_UPDATES:
        raise ConfigError(
            f"run.init: a trained policy starts the runs of {' and '.join(POLICY_UPDATES)} only, and this "
            f"run's algorithm is {config.algorithm}: leave run.init out or change algorithm"
        )
    check_collector(config)
    check_device(run.device)
    if config.eval.episode not in ("match", "round"):
        raise ConfigError(f"eval.episode must be 'match' or 'round', got {config.eval.episode!r}")
    try:
        table = raw_env(config.env.variant, **config.env.options)
    except (ValueError, TypeError) as err:
        raise ConfigError(f"env: {err}") from None
    if run.match_value:
        if config.env.options.get("episode", "match") != "match":
            raise ConfigError(
                "run.match_value plays whole matches and cuts them into rounds itself: "
                "set env.options.episode to match"
            )
        sides = table.rules.num_sides
        if sides != 2:
            raise ConfigError(
                f"run.match_value needs a table of two sides (2 players or partners); "
                f"{config.env.variant} with {config.env.options} has {sides}"
            )
    return table
