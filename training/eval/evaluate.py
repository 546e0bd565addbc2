"""How good is a trained policy? Pairings of agents on a checked table, and the final check of a run.

    python -m training evaluate runs/all_fives-1 greedy random --games 200

Every pairing is played by :func:`training.matches.play_match`, as ``head_to_head`` plays
it: seeded games with the seats rotated, so neither side keeps the lead or a seat. Agents are
what :func:`training.agents.resolve_agent` takes: a baseline name, a checkpoint file, or a
run folder (its ``checkpoints/latest.pt``). A result's table (:func:`format_results`) is
here, ratings are in :mod:`training.eval.ratings`, files and paths in :mod:`training.eval.report`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from domino_env import VARIANTS, DominoEnv, preset_options, raw_env, spec
from domino_env.agents import AGENTS, Agent
from training.agents import checkpoint_file, resolve_agent
from training.eval.report import table_text, write_rows
from training.matches import EDGE_DEALS, Match, RecordFolder, mean_interval, play_match, whole_deals
from training.model import checkpoint
from training.model.config import Config, load_config, yaml_value
from training.model.names import parse_guided_name

BASELINES = tuple(AGENTS)


@dataclass
class Contestant:
    """An agent named once and resolved once: a baseline, or a checkpoint with what it was trained on."""

    spec: str  # what resolve_agent takes: a baseline name or a checkpoint path
    label: str
    config: Config | None = None  # the checkpoint's training config; None for baselines
    iteration: int | None = None
    steps: int | None = None

    def agent(self, env: DominoEnv, seed: int) -> Agent:
        """A fresh agent for one pairing, so a baseline's random stream never depends on earlier pairings."""
        return resolve_agent(self.spec, env, seed)


def contestant(spec: str, label: str | None = None) -> Contestant:
    """Resolve a command-line agent; unknown names and unreadable checkpoints raise ValueError."""
    path = checkpoint_file(spec)
    if path is None:
        return Contestant(spec, label or spec)
    data = checkpoint.load(path)
    if parse_guided_name(spec) is not None:  # a policy-guided search: named as given
        return Contestant(spec, label or spec, data["config"], data.get("iteration"), data.get("steps"))
    if label is None:  # <run>/checkpoints/iter_00010.pt -> <run>/iter_00010
        label = f"{path.parent.parent.name}/{path.stem}" if path.parent.name == "checkpoints" else path.stem
    return Contestant(str(path), label, data["config"], data.get("iteration"), data.get("steps"))


def parse_options(texts: list[str] | None) -> dict[str, Any]:
    """``key=value`` pairs, values read as YAML (``teams=true`` is a bool, ``num_players=4`` an int);
    a key given twice is refused rather than the last one winning unsaid."""
    options: dict[str, Any] = {}
    for text in texts or []:
        key, sep, raw = text.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"option {text!r} must look like key=value, e.g. num_players=4")
        if key in options:
            raise ValueError(f"option {key} is given twice ({options[key]!r} and {raw!r}): give it once")
        options[key] = yaml_value(raw, f"option {text!r}", "num_players=4 or teams=true")
    return options


def evaluation_table(config: Config) -> tuple[str, dict[str, Any]]:
    """The table a run is evaluated on: its training table, with the episode its own evaluations
    use (``eval.episode``, e.g. whole matches for a policy trained on single rounds)."""
    options = dict(config.env.options)
    episode = getattr(config.eval, "episode", None)
    if episode is not None:
        options["episode"] = episode
    return config.env.variant, options


def resolve_table(
    contestants: list[Contestant],
    variant: str | None = None,
    option_texts: list[str] | None = None,
    config_path: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """The table to play: ``--config``'s, else the first checkpoint's, else the default config's
    (see :func:`evaluation_table`); ``--variant`` replaces the variant (and the options, when it
    differs), ``--option`` adds to them. A ``--config`` names its variant: another ``--variant``
    beside it would drop the config's options unsaid, so the pair is a ValueError."""
    if config_path is not None:
        base = load_config(config_path)
    else:
        base = next((c.config for c in contestants if c.config is not None), Config())
    base_variant, base_options = evaluation_table(base)
    if config_path is not None and variant not in (None, base_variant):
        raise ValueError(
            f"--config {config_path} plays {base_variant} (with its options), not {variant}: give "
            "--variant or --config, not both (--option adds to either's options)"
        )
    options = base_options if variant in (None, base_variant) else {}
    options.update(parse_options(option_texts))
    chosen = variant or base_variant
    raw_env(chosen, **options)  # unknown variants and options raise ValueError here, before any game
    return chosen, options


def rules_table(variant: str, options: dict[str, Any]) -> dict[str, Any]:
    """The rules options with their defaults filled in (a preset read out): what makes two
    tables the same game."""
    options = preset_options(variant, options)
    return {option.name: options.get(option.name, option.default) for option in spec(variant).options}


# What check_fits adds where --variant, --option or --config chose the table (evaluate, play, ladder)
TABLE_FLAGS_ADVICE = "leave out --variant/--option/--config to use its own table"


def table_flags_advice(variant: str | None, option_texts: list[str] | None, config_path: str | None) -> str:
    """:data:`TABLE_FLAGS_ADVICE` where a variant, an option or a config chose the table, else none."""
    given = variant is not None or bool(option_texts) or config_path is not None
    return TABLE_FLAGS_ADVICE if given else ""


def check_fits(
    contestants: list[Contestant], variant: str, options: dict[str, Any], *, advice: str = ""
) -> None:
    """A checkpoint plays only the game it was trained on (episode and reward options may differ).
    Two checkpoints of different tables are named together; else ``advice`` (how to get the
    checkpoint's own table, where the caller's flags chose another) ends the message."""
    table = rules_table(variant, options)

    def trained_on(c: Contestant) -> tuple[str, dict[str, Any]]:
        assert c.config is not None
        return c.config.env.variant, rules_table(c.config.env.variant, c.config.env.options)

    for c in contestants:
        if c.config is None or trained_on(c) == (variant, table):
            continue
        fits = [o for o in contestants if o.config is not None and trained_on(o) == (variant, table)]
        if fits:
            raise checkpoint.CheckpointError(
                f"checkpoints {fits[0].spec} and {c.spec} play different tables: {fits[0].spec} was "
                f"trained on {table_text(variant, table)}, {c.spec} on {table_text(*trained_on(c))}; "
                "a game has one table, so pair each with agents of its own table"
            )
        raise checkpoint.CheckpointError(
            f"checkpoint {c.spec} was trained on {table_text(*trained_on(c))}, not on "
            f"{table_text(variant, table)}" + (f"; {advice}" if advice else "")
        )


RESULT_COLUMNS = (  # a result's row: what Result.row gives, the CSV columns
    "agent",
    "opponent",
    "games",
    "win_rate",
    "ci_low",
    "ci_high",
    "mean_reward",
    "mean_score",
    "mean_rounds",
    "margin",
    "margin_ci_low",
    "margin_ci_high",
    "duplicate",
)


@dataclass
class Result(Match):
    """A pairing's :class:`~training.matches.Match`, with the contestants' labels."""

    agent: str = ""
    opponent: str = ""

    def row(self) -> dict[str, Any]:
        low, high = self.interval()
        margin_low, margin_high = self.margin_interval()
        return {
            "agent": self.agent,
            "opponent": self.opponent,
            "games": self.games,
            "win_rate": self.win_rate,
            "ci_low": low,
            "ci_high": high,
            "mean_reward": self.mean_reward,
            "mean_score": self.mean_score,
            "mean_rounds": self.mean_rounds,
            "margin": self.margin,
            "margin_ci_low": margin_low,
            "margin_ci_high": margin_high,
            "duplicate": self.per_deal > 1,
        }


def format_results(results: list[Result], score_label: str = "score") -> str:
    """A table a person reads: win rate with its 95% interval (:meth:`Match.interval`: Wilson's
    over independent games; with duplicate deals a t-interval over the deals' mean shares, or
    Wilson's over the deals near 0% or 100%),
    mean outcome reward, final score, rounds, and the points margin per match with its interval;
    ``score_label`` says what the score is (``penalty`` where lower is better)."""
    width = max([len("opponent"), *(len(r.agent) for r in results), *(len(r.opponent) for r in results)])
    lines = [
        f"{'agent':<{width}}  {'opponent':<{width}}  {'games':>5} {'win rate':>8} {'95% CI':>16} "
        f"{'reward':>7} {score_label:>7} {'rounds':>6} {'margin':>7} {'95% CI':>16}"
    ]
    for r in results:
        low, high = r.interval()
        margin_low, margin_high = r.margin_interval()
        lines.append(
            f"{r.agent:<{width}}  {r.opponent:<{width}}  {r.games:>5} {r.win_rate:>8.1%} "
            f"{f'[{low:.1%}, {high:.1%}]':>16} {r.mean_reward:>+7.2f} {r.mean_score:>7.1f} "
            f"{r.mean_rounds:>6.1f} {r.margin:>+7.1f} {f'[{margin_low:+.1f}, {margin_high:+.1f}]':>16}"
        )
    if results:  # (which interval: the benchmark and the ladder give Wilson's over the deals)
        if results[0].per_deal > 1:
            lines.append(
                "95% CIs over the deals: win rate, a t-interval of the deals' mean shares (Wilson's "
                f"where every deal went one way or fewer than {EDGE_DEALS} deals' worth of wins or of "
                "losses were played); margin, a t-interval"
            )
        else:
            lines.append("95% CIs over the games: win rate, Wilson's; margin, a t-interval")
    return "\n".join(lines)


def duplicate_gain(results: list[Result]) -> str:
    """How much narrower duplicate deals made the intervals than independent deals' would be at
    the same games, averaged over the pairings: each the same t-interval, unclipped, over the
    deals (paired) and over the single games as if independent - the win shares' and the
    margins'. (Against Wilson's interval at the same rate the gain would be overstated: Wilson's
    variance p(1-p) exceeds the shares' own where games are tied.)"""
    win_ratios, margin_ratios = [], []
    for r in results:
        low, high = mean_interval(r.deal_shares())
        single_low, single_high = mean_interval(r.shares)
        if single_high > single_low and high > low:
            win_ratios.append((high - low) / (single_high - single_low))
        margin_low, margin_high = r.margin_interval()
        single_low, single_high = mean_interval(r.margins)
        if single_high > single_low and margin_high > margin_low:  # (one deal: no paired interval)
            margin_ratios.append((margin_high - margin_low) / (single_high - single_low))
    if not win_ratios and not margin_ratios:
        return "duplicate deals: no interval to compare"

    def change(ratios: list[float]) -> str:
        if not ratios:
            return "not comparable"
        gain = 1 - sum(ratios) / len(ratios)
        return f"{gain:.0%} narrower" if gain >= 0 else f"{-gain:.0%} wider"

    return (
        f"duplicate deals, against independent deals at the same games: win-rate interval "
        f"{change(win_ratios)}, margin interval {change(margin_ratios)} (t-intervals paired by "
        f"deal against over single games); mean over {len(results)} pairing(s)"
    )


def play_pairing(
    env: DominoEnv,
    first: Contestant,
    second: Contestant,
    *,
    games: int,
    seed: int,
    on_game: Callable[[], object] | None = None,
    duplicate: bool = False,
    records: RecordFolder | None = None,
) -> Result:
    """``first`` against ``second`` as :func:`~training.matches.play_match` plays them (with
    ``duplicate``: each deal once per seating); the deals depend on ``seed`` only, whoever plays,
    so pairings share them. Each contestant is a fresh agent (seeded ``seed`` and ``seed + 1``),
    so no pairing depends on an earlier one. ``records``: each game is written there, the
    agents named by their labels."""
    pairing_records = None if records is None else records.pairing(first.label, second.label)
    match = play_match(
        env,
        first.agent(env, seed),
        second.agent(env, seed + 1),
        games=games,
        seed=seed,
        on_game=on_game,
        duplicate=duplicate,
        records=pairing_records,
    )
    return Result(**vars(match), agent=first.label, opponent=second.label)


def pairings(count: int, rules: Any, first_only: bool = False) -> list[tuple[int, int]]:
    """Which contestants meet: the first against each other one, or a round-robin. Heads-up and
    partnership tables are symmetric with seats rotated, so each pair plays once; at 3-4 single
    seats one agent against copies of the other is not, so both orders are played."""
    symmetric = rules.num_players == 2 or rules.teams
    pairs = [(i, j) for i in range(count) for j in range(count) if i != j and (i < j or not symmetric)]
    return [(i, j) for i, j in pairs if i == 0] if first_only else pairs


def play_all(
    env: DominoEnv,
    contestants: list[Contestant],
    *,
    pairs: list[tuple[int, int]],
    games: int,
    seed: int,
    progress: bool = False,
    duplicate: bool = False,
    records: RecordFolder | None = None,
) -> Iterator[Result]:
    """Every pairing on the same deals (common random numbers: less noise between pairings), one at
    a time, so a caller that is interrupted keeps the finished ones; ``progress`` shows a bar over
    all the games (hundreds of matches take minutes); ``records``: every game is written there."""
    with tqdm(total=len(pairs) * games, unit="game", disable=not progress, leave=False) as bar:
        for i, j in pairs:
            bar.set_description(f"{contestants[i].label} vs {contestants[j].label}")
            yield play_pairing(
                env,
                contestants[i],
                contestants[j],
                games=games,
                seed=seed,
                on_game=bar.update,
                duplicate=duplicate,
                records=records,
            )


@dataclass
class Evaluation:
    """A checked plan: the table and the agents that fit it (built before any game is played)."""

    variant: str
    options: dict[str, Any]
    contestants: list[Contestant]

    def env(self) -> DominoEnv:
        return raw_env(self.variant, **self.options)

    def pairs(self, first_only: bool = False) -> list[tuple[int, int]]:
        """The pairings played (see :func:`pairings`)."""
        return pairings(len(self.contestants), self.env().rules, first_only)

    @property
    def score_label(self) -> str:
        """The score column's name: Classic-family scores are penalty points, where lower is better."""
        return "penalty" if VARIANTS[self.variant].lower_score_wins else "points"

    def games(self, asked: int, duplicate: bool) -> int:
        """The games per pairing: ``asked``, rounded up to whole deals under duplicate deals
        (each deal is played once per seating)."""
        return whole_deals(asked, self.env().rules) if duplicate else asked

    def header(self, games: int, seed: int, duplicate: bool = False) -> str:
        how = "duplicate deals (each deal once per seating)" if duplicate else "seats rotated"
        return f"{table_text(self.variant, self.options)}: {games} games per pairing, {how}, seed {seed}"


def prepare(
    specs: list[str],
    variant: str | None = None,
    option_texts: list[str] | None = None,
    config_path: str | None = None,
    advice: str | None = None,
) -> Evaluation:
    """Resolve agents and table, and check that every checkpoint fits; raises ValueError
    (CheckpointError, ConfigError) with a message for a person. ``advice`` ends a checkpoint's
    mismatch (default: :data:`TABLE_FLAGS_ADVICE` where a variant, option or config was given)."""
    contestants = [contestant(spec) for spec in specs]
    chosen, options = resolve_table(contestants, variant, option_texts, config_path)
    if advice is None:
        advice = table_flags_advice(variant, option_texts, config_path)
    check_fits(contestants, chosen, options, advice=advice)
    env = raw_env(chosen, **options)
    for c in contestants:  # sizes too, so a mismatch fails here and not in the middle of the games
        c.agent(env, 0)
    return Evaluation(chosen, options, contestants)


def evaluate_pairings(
    plan: Evaluation,
    games: int,
    *,
    seed: int = 0,
    first_only: bool = False,
    progress: bool = False,
    duplicate: bool = False,
    record: str | Path | None = None,
) -> Iterator[Result]:
    """Play the plan's pairings (see :func:`pairings`), ``games`` each (whole deals under
    ``duplicate``: see :meth:`Evaluation.games`), yielding each as it ends; ``record``: a folder
    to write every game to as a game record (two pairings that would name their files alike,
    one agent given twice, raise ValueError before any game)."""
    env, c = plan.env(), plan.contestants  # one table serves the pairings and the games
    pairs = pairings(len(c), env.rules, first_only)
    records = None
    if record is not None:
        records = RecordFolder(Path(record), plan.variant, plan.options)
        stems = [records.pairing(c[i].label, c[j].label).stem for i, j in pairs]
        if len(set(stems)) < len(stems):
            raise ValueError(
                "the records of two pairings would have the same file names (an agent given twice?): "
                "give each agent once to record them"
            )
    games = plan.games(games, duplicate)
    return play_all(
        env, c, pairs=pairs, games=games, seed=seed, progress=progress, duplicate=duplicate, records=records
    )


def evaluate(
    plan: Evaluation, games: int, *, seed: int = 0, first_only: bool = False, progress: bool = False
) -> list[Result]:
    """Play the plan's pairings (see :func:`pairings`), ``games`` each."""
    return list(evaluate_pairings(plan, games, seed=seed, first_only=first_only, progress=progress))


def evaluate_final(
    run_dir: str | Path, games: int = 200, *, seed: int = 0, quiet: bool = False, progress: bool = False
) -> list[dict[str, Any]]:
    """The run's latest checkpoint against ``random`` and ``greedy`` on its evaluation table,
    written to ``RUN_DIR/final_evaluation.csv`` and printed (unless ``quiet``); returns the rows."""
    plan = prepare([str(checkpoint.latest(run_dir)), *BASELINES])
    results = evaluate(plan, games, seed=seed, first_only=True, progress=progress)
    rows = [r.row() for r in results]
    path = Path(run_dir) / "final_evaluation.csv"
    write_rows(path, RESULT_COLUMNS, rows)
    if not quiet:
        print(plan.header(games, seed))
        print(format_results(results, plan.score_label))
        print(f"written: {path}")
    return rows
