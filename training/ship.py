"""Train, export and measure an agent that ships with the project (``agents/``).

``python -m training ship configs/<variant>.yaml`` trains the config, exports the final
checkpoint weights-only to ``agents/<variant>.pt`` (with its config, also written as
``agents/<variant>.yaml``), plays it against ``--opponents`` (default ``random`` and
``greedy``; any agent name, ``search`` too) on whole matches with seats rotated, and records
the result in ``agents/results.csv`` (one row per variant, replaced when a variant is shipped
again; three columns per opponent, ``vs_<name>`` and its interval, empty where a variant was
not measured against it); ``agents/README.md`` is the same table for people.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

import yaml

from training import checkpoint, evaluate, report
from training.config import load_config
from training.train import Trainer

BASE_COLUMNS = ("variant", "players", "steps", "train_minutes", "games")
ENDS = ("", "_low", "_high")  # an opponent's columns: vs_<name>, vs_<name>_low, vs_<name>_high


def opponents_of(rows: list[dict[str, Any]]) -> list[str]:
    """The opponents the rows were measured against: the baselines first, then the others in
    the order they first appear."""
    names = [key[3:] for row in rows for key in row if key.startswith("vs_") and not key.endswith(ENDS[1:])]
    first = {name: i for i, name in enumerate(evaluate.BASELINES)}
    return sorted(dict.fromkeys(names), key=lambda n: first.get(n, len(first)))


def ship(
    config_path: str,
    overrides: list[str],
    agents_dir: str | Path = "agents",
    games: int = 2000,
    seed: int = 0,
    progress: bool = True,
    opponents: tuple[str, ...] | list[str] = evaluate.BASELINES,
) -> dict[str, Any]:
    """Train, export, evaluate; returns the row written to ``results.csv``. ``agents_dir`` is
    checked (and made) before training, so a bad path does not throw the training away;
    ``progress`` shows bars while training and evaluating (the final table is printed anyway)."""
    config = load_config(config_path, overrides)
    folder = report.writable_folder(agents_dir)
    for name in opponents:  # an unknown name fails here, before training
        evaluate.contestant(name)
    config.run.name = config.run.name or f"ship-{config.run_name}"  # never a `train` run's folder
    trainer = Trainer(config, overwrite=True)  # shipping retrains from scratch, in a folder of its own
    start = time.perf_counter()
    final = trainer.train(progress=progress)
    minutes = (time.perf_counter() - start) / 60
    agent = checkpoint.export(final, folder / f"{config.env.variant}.pt")
    (folder / f"{config.env.variant}.yaml").write_text(yaml.safe_dump(config.to_dict(), sort_keys=False))
    plan = evaluate.prepare([str(agent), *opponents])
    results = {
        r.opponent: r for r in evaluate.evaluate(plan, games, seed, first_only=True, progress=progress)
    }
    print(plan.header(games, seed))
    print(report.format_results(list(results.values()), plan.score_label))
    row: dict[str, Any] = {
        "variant": config.env.variant,
        "players": players_text(plan.env().rules),
        "steps": trainer.steps,
        "train_minutes": round(minutes, 1),
        "games": games,
    }
    for name, result in results.items():
        low, high = result.interval()
        row |= {f"vs_{name}": result.win_rate, f"vs_{name}_low": low, f"vs_{name}_high": high}
    record(folder, row)
    return row


def record(folder: Path, row: dict[str, Any]) -> None:
    """Put ``row`` into ``results.csv`` (replacing its variant's row) and rewrite ``README.md``."""
    path = folder / "results.csv"
    rows = []
    if path.exists():
        with path.open(newline="") as handle:
            rows = [  # rows of an older layout (without the base columns) are dropped, not fatal
                {key: value for key, value in r.items() if value}
                for r in csv.DictReader(handle)
                if set(BASE_COLUMNS) <= set(r) and r["variant"] != row["variant"]
            ]
    rows = sorted([*rows, row], key=lambda r: str(r["variant"]))
    columns = (*BASE_COLUMNS, *(f"vs_{name}{end}" for name in opponents_of(rows) for end in ENDS))
    report.write_rows(path, columns, rows)
    (folder / "README.md").write_text(markdown_table(rows))


def players_text(rules: Any) -> str:
    return f"{rules.num_players}{', partners' if rules.teams else ''}"


def percent(row: dict[str, Any], name: str) -> str:
    """A win rate with its interval, or empty where the row was not measured against ``name``."""
    if f"vs_{name}" not in row:
        return ""
    rate, low, high = (float(row[f"vs_{name}{end}"]) for end in ENDS)
    return f"{rate:.1%} [{low:.1%}, {high:.1%}]"


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """The shipped agents as a Markdown table (win rates with 95% Wilson intervals)."""
    opponents = opponents_of(rows)
    lines = [
        "# Shipped agents",
        "",
        "Made by `python -m training ship configs/<variant>.yaml`; load one with "
        "`python -m training evaluate agents/<variant>.pt random greedy`.",
        "",
        "Whole matches, seats rotated; win rates with 95% Wilson intervals.",
        "",
        "| variant | players | training steps | training time | matches | "
        + " | ".join(f"vs {name}" for name in opponents)
        + " |",
        "|---|---|---:|---:|---:|" + "---|" * len(opponents),
    ]
    for row in rows:
        lines.append(
            f"| {row['variant']} | {row['players']} | {int(row['steps']):,} | "
            f"{float(row['train_minutes']):.1f} min | {int(row['games']):,} | "
            + " | ".join(percent(row, name) for name in opponents)
            + " |"
        )
    return "\n".join(lines) + "\n"
