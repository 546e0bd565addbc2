"""Train, export and measure an agent that ships with the project (``agents/``).

``python -m training ship configs/<variant>.yaml`` trains the config, exports the final
checkpoint weights-only to ``agents/<variant>.pt`` (with its config, also written as
``agents/<variant>.yaml``) and measures it: against each of ``--opponents`` (default
``random`` and ``greedy``; any agent name, ``search`` too) on whole matches and duplicate
deals (each deal once per seating), ``--games`` matches against a baseline and
``--search-games`` against a search agent (whose games cost about a hundred times more).
``--from RUN`` ships a run trained before (a checkpoint, or a run folder's latest: a long
``train`` run, say) instead of training the config again; its steps and wall time are the run's.
``--measure-only`` skips the training and measures the agent already shipped, adding or
replacing the columns of the opponents named; ``--guided`` measures the policy-guided search
``search:agents/<variant>.pt`` instead, in a row of its own, where the opponent ``policy`` is
the shipped policy it searches with (and every pairing costs ``--search-games``).
``agents/results.csv`` has one row per variant and agent (``policy`` or ``guided``) and four
columns per opponent (``vs_<name>``, its 95% interval, its matches), empty where not
measured; ``agents/README.md`` is the same table for people.

Shipping is all or nothing: a new agent is measured from a copy outside ``agents/``, and only
once every measurement is done are the agent, its yaml, ``results.csv`` and ``README.md``
written, each as a file beside it that then replaces it (a failure, or Ctrl-C, before then
leaves the shipped files as they were; ``--measure-only`` and ``--guided`` never rewrite the
agent). A config trains into its own folder (``ship-<run name>``, or ``run.name``), which ship
starts over each time if ship made it; a run it did not make there (a ``train`` run, say) is
refused unless ``--overwrite``.
"""

from __future__ import annotations

import csv
import fcntl
import functools
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import yaml

from domino_env.agents import parse_search_name, parse_tier_name
from training.eval import evaluate, report
from training.model import checkpoint
from training.model.config import ConfigError, load_config
from training.model.names import parse_guided_name
from training.rl.train import Trainer, check_own_run, mark_own_run

BASE_COLUMNS = ("variant", "agent", "players", "steps", "train_minutes")
ENDS = ("", "_low", "_high", "_games")  # an opponent's columns: vs_<name>, its interval, its matches
POLICY, GUIDED = "policy", "guided"  # the agents of a variant's rows: its policy, the guided search
TRAINING = ("steps", "train_minutes", "players")  # a guided row shows its policy's
Writer = Callable[[Path], object]  # what writes a file at the path it is given


def opponents_of(rows: list[dict[str, Any]]) -> list[str]:
    """The opponents the rows were measured against: the baselines first, then the others in
    the order they first appear."""
    names = [key[3:] for row in rows for key in row if key.startswith("vs_") and not key.endswith(ENDS[1:])]
    first = {name: i for i, name in enumerate(evaluate.BASELINES)}
    return sorted(dict.fromkeys(names), key=lambda n: first.get(n, len(first)))


def ship(
    config_path: str | None,
    overrides: list[str],
    *,
    source: str | Path | None = None,
    agents_dir: str | Path = "agents",
    games: int = 2000,
    seed: int = 0,
    progress: bool = True,
    opponents: tuple[str, ...] | list[str] = evaluate.BASELINES,
    search_games: int = 1000,
    measure_only: bool = False,
    guided: bool = False,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Train, export, measure (or export the trained checkpoint ``source``; or only measure:
    ``measure_only``; the guided search: ``guided``); returns the row written to
    ``results.csv``. ``agents_dir`` is checked (and made) before training, so a bad path does
    not throw the training away; ``progress`` shows bars while training and evaluating (the
    final table is printed anyway); ``overwrite``: a config's run folder may hold a run ship did
    not make, which is deleted (:func:`check_own_run`). A new agent is measured from a copy
    outside ``agents_dir``, which changes only once every measurement is done (:func:`record`)."""
    if overwrite and (source is not None or measure_only or guided):
        raise ConfigError(
            "--overwrite is for the run ship trains from a config: not with --from, --measure-only "
            "or --guided"
        )
    trained_run = None if source is None else from_run(source, config_path, overrides, measure_only or guided)
    config = trained_run[1] if trained_run is not None else load_config(str(config_path), overrides)
    # the config's threads for the measuring too, not only the training: agents act one decision
    # at a time, where torch's default threads fight over the cores (a policy decision took 105
    # ms with two threads against 1.2 ms with one, on a busy 2-core machine)
    torch.set_num_threads(config.run.torch_threads)
    for name in opponents:  # an unknown name fails here, before training (and before agents_dir)
        if name == POLICY and not guided:
            raise ConfigError("the opponent 'policy' (the shipped policy) is for --guided rows only")
        if name != POLICY:
            evaluate.contestant(name)
    if trained_run is None and not (measure_only or guided):  # before agents_dir, and training
        config.run.name = config.run.name or f"ship-{config.run_name}"  # never a `train` run's folder
        check_own_run(Path(config.run.out_dir) / config.run_name, "ship", overwrite, "run.name")
    folder = report.writable_folder(agents_dir)
    read_rows(folder)  # an unreadable results.csv is refused here, before any training or game
    variant = config.env.variant
    shipped = folder / f"{variant}.pt"
    agent = GUIDED if guided else POLICY
    measured = functools.partial(
        measure, opponents=opponents, games=games, search_games=search_games, seed=seed, progress=progress
    )
    if measure_only or guided:
        if not shipped.is_file():
            raise ConfigError(f"{shipped} does not exist: ship {variant} first (without --measure-only)")
        trained = earlier_row(folder, variant, POLICY)
        row = {**earlier_row(folder, variant, agent), **{k: v for k, v in trained.items() if k in TRAINING}}
        row |= {"variant": variant, "agent": agent}
        measured(row, f"search:{shipped}" if guided else str(shipped), policy=str(shipped))
        record(folder, row)
        return row
    if trained_run is not None:
        final, _, row = trained_run
        config.run.name = f"ship-{config.run_name}"  # (its reproduction: never the trained run's folder)
    else:
        # shipping retrains from scratch, in a folder of its own (checked above: no run there, ship's
        # own, or --overwrite)
        trainer = Trainer(config, overwrite=True)
        mark_own_run(trainer.run_dir, "ship")
        start = time.perf_counter()
        final = trainer.train(progress=progress)
        row = {"steps": trainer.steps, "train_minutes": round((time.perf_counter() - start) / 60, 1)}
    row |= {"variant": variant, "agent": agent}
    # measured from a copy outside agents_dir (named as the shipped one, so the tables read the
    # same): agents_dir changes only once every measurement is done
    with tempfile.TemporaryDirectory(prefix="ship-") as scratch:
        candidate = checkpoint.export(final, Path(scratch) / shipped.name)
        measured(row, str(candidate), policy=str(candidate))
        settings = yaml.safe_dump(config.to_dict(unread=False), sort_keys=False)
        record(
            folder,
            row,
            new_agent=True,
            files={
                shipped: lambda path: shutil.copyfile(candidate, path),
                folder / f"{variant}.yaml": lambda path: path.write_text(settings),
            },
        )
    return row


def from_run(
    source: str | Path, config_path: str | None, overrides: list[str], measuring: bool
) -> tuple[Path, Any, dict[str, Any]]:
    """The checkpoint of ``source`` (a run folder: its latest), its config and its row's
    training columns (``train_minutes`` left out where the checkpoint predates the trainer's
    count of its wall time). A config or overrides given too, or ``measuring`` the agent
    already shipped, is a ConfigError: the run's own config is what ships."""
    if config_path is not None or overrides or measuring:
        raise ConfigError(
            "--from ships a trained run as it is: give no config, no overrides, no "
            "--measure-only and no --guided with it"
        )
    path = checkpoint.resolve(source)
    data = checkpoint.load(path)
    row: dict[str, Any] = {"steps": data["steps"]}
    if "seconds" in data:
        row["train_minutes"] = round(data["seconds"] / 60, 1)
    else:
        print(f"{path} predates the trainer's count of its wall time: the training time stays empty")
    return path, data["config"], row


def measure(
    row: dict[str, Any],
    spec: str,
    *,
    opponents: tuple[str, ...] | list[str],
    games: int,
    search_games: int,
    seed: int,
    progress: bool,
    policy: str,
) -> None:
    """Play ``spec`` against each opponent (``policy``: that checkpoint) on duplicate deals and
    put the results in ``row``; a pairing with a search agent on either side plays
    ``search_games``."""
    for name in opponents:
        plan = evaluate.prepare([spec, policy if name == POLICY else name])
        count = search_games if searches(spec) or searches(name) else games
        (result,) = evaluate.evaluate_pairings(
            plan, count, seed=seed, first_only=True, progress=progress, duplicate=True
        )
        print(plan.header(result.games, seed, duplicate=True))
        print(evaluate.format_results([result], plan.score_label))
        low, high = result.interval()
        row["players"] = players_text(plan.env().rules)
        row |= {f"vs_{name}": result.win_rate, f"vs_{name}_low": low, f"vs_{name}_high": high}
        row[f"vs_{name}_games"] = result.games


def searches(name: str) -> bool:
    """Whether an agent name is a search (``search``, ``search:N``, ``advanced``, ``expert``,
    ``search:<checkpoint>``): its games cost a hundred baseline games each or more."""
    return (
        parse_search_name(name) is not None
        or parse_tier_name(name) is not None
        or parse_guided_name(name) is not None
    )


def read_rows(folder: Path) -> list[dict[str, Any]]:
    """The rows of ``results.csv`` (none if absent or empty); rows of an older layout (a table
    whose first column is ``variant``, without the other base columns) are dropped, not fatal.
    A file that is no such table (unreadable, not text, another header, a row longer than the
    header, a folder) is a ConfigError, so that ship never replaces what it cannot read."""
    path = folder / "results.csv"
    if not path.exists():
        return []
    try:
        with path.open(newline="") as handle:
            reader = csv.DictReader(handle)
            rows = list(reader)
            header = reader.fieldnames
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise unreadable(path, str(getattr(err, "strerror", None) or err)) from None
    if header is None:  # an empty file
        return []
    first = header[0] if header else ""
    if first != BASE_COLUMNS[0]:
        raise unreadable(path, f"its header starts {first[:40]!r}, not {BASE_COLUMNS[0]!r}")
    if any(None in r for r in rows):
        raise unreadable(path, "a row has more fields than the header")
    kept = [{key: value for key, value in r.items() if value} for r in rows if set(BASE_COLUMNS) <= set(r)]
    if any(not r.get("variant") or not r.get("agent") for r in kept):
        raise unreadable(path, "a row names no variant or no agent")
    return kept


def unreadable(path: Path, why: str) -> ConfigError:
    """The error for a ``results.csv`` that ship cannot read (and so will not replace)."""
    return ConfigError(
        f"{path} is not a results table ship can read ({why}); ship leaves it as it is: move it "
        "away (ship then writes a new one) or mend it"
    )


def earlier_row(folder: Path, variant: str, agent: str) -> dict[str, Any]:
    """The row already recorded for ``variant``'s ``agent``, or {}."""
    return next((r for r in read_rows(folder) if (r["variant"], r["agent"]) == (variant, agent)), {})


def record(
    folder: Path,
    row: dict[str, Any],
    new_agent: bool = False,
    files: dict[Path, Writer] | None = None,
) -> None:
    """Put ``row`` into ``results.csv`` (replacing the row of its variant and agent; a
    ``new_agent`` replaces every row of the variant: its guided search is another one now) and
    rewrite ``README.md``, with the other ``files`` (the new agent and its yaml: each path with
    what writes it), all at once (:func:`replace_files`). A lock file serialises the
    read-modify-write, so that several ``ship`` runs (one variant each) can measure at once."""
    with (folder / ".results.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            replace_files({**(files or {}), **results_files(folder, row, new_agent)})
        except OSError as err:  # (a full disk, a file made read-only meanwhile)
            raise ConfigError(
                f"could not write the results into {folder} ({err.strerror or err}): nothing in it changed"
            ) from None


def results_files(folder: Path, row: dict[str, Any], new_agent: bool) -> dict[Path, Writer]:
    """``results.csv`` and ``README.md`` with ``row`` in (:func:`record`), as what writes them."""
    stale = (
        (lambda r: r["variant"] == row["variant"])
        if new_agent
        else (lambda r: (r["variant"], r["agent"]) == (row["variant"], row["agent"]))
    )
    rows = [r for r in read_rows(folder) if not stale(r)]
    rows = sorted([*rows, row], key=lambda r: (str(r["variant"]), r["agent"] != POLICY))
    columns = (*BASE_COLUMNS, *(f"vs_{name}{end}" for name in opponents_of(rows) for end in ENDS))
    table = markdown_table(rows)
    return {
        folder / "results.csv": lambda path: report.write_rows(path, columns, rows),
        folder / "README.md": lambda path: path.write_text(table),
    }


def replace_files(files: dict[Path, Writer]) -> None:
    """Write each file (the path, and what writes it there) to a temporary file beside it, and
    only once all are written replace each file with its own (``os.replace``, in order): a
    failure or Ctrl-C while writing leaves every file as it was, and the temporary ones go."""
    written: list[tuple[Path, Path]] = []
    try:
        for path, write in files.items():
            partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
            written.append((partial, path))
            write(partial)
        for partial, path in written:
            os.replace(partial, path)
    finally:
        for partial, _ in written:
            partial.unlink(missing_ok=True)


def players_text(rules: Any) -> str:
    return f"{rules.num_players}{', partners' if rules.teams else ''}"


def percent(row: dict[str, Any], name: str) -> str:
    """A win rate with its interval and matches, or empty where the row was not measured
    against ``name``."""
    if f"vs_{name}" not in row:
        return ""
    rate, low, high, games = (float(row[f"vs_{name}{end}"]) for end in ENDS)
    return f"{rate:.1%} [{low:.1%}, {high:.1%}] ({games:,.0f})"


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """The shipped agents as a Markdown table."""
    opponents = opponents_of(rows)
    lines = [
        "# Shipped agents",
        "",
        "Made by `python -m training ship configs/<variant>.yaml`; load one with "
        "`python -m training evaluate agents/<variant>.pt random greedy`. A `guided` row is the "
        "policy-guided search `search:agents/<variant>.pt` (`ship --guided`).",
        "",
        "Whole matches on duplicate deals (each deal once per seating): win rate, its 95% "
        "interval over the deals, and (matches).",
        "",
        "| variant | agent | players | training steps | training time | "
        + " | ".join(f"vs {name}" for name in opponents)
        + " |",
        "|---|---|---|---:|---:|" + "---|" * len(opponents),
    ]
    for row in rows:
        steps = f"{int(row['steps']):,}" if "steps" in row else ""
        minutes = f"{float(row['train_minutes']):.1f} min" if "train_minutes" in row else ""
        lines.append(
            f"| {row['variant']} | {row['agent']} | {row.get('players', '')} | {steps} | {minutes} | "
            + " | ".join(percent(row, name) for name in opponents)
            + " |"
        )
    return "\n".join(lines) + "\n"
