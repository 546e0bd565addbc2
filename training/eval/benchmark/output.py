"""What a benchmark writes: ``benchmark.csv``, ``benchmark.md``, ``summary.json`` and
``benchmark.png``, and the check that ``out`` holds no earlier benchmark (or only the pairings an
interrupted one finished, :data:`PARTIAL`)."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path
from typing import Any

from training.eval.benchmark import protocol
from training.eval.benchmark.scores import VariantResults, win_rate_interval
from training.eval.report import refuse_earlier, write_rows

COLUMNS = (
    "agent",
    "variant",
    "opponent",
    "games",
    "win_rate",
    "ci_low",
    "ci_high",
    "margin",
    "margin_ci_low",
    "margin_ci_high",
    "score",
    "ms_per_decision",
    "source",
    "protocol",
    "version",
)
# What a benchmark writes in its ``out`` folder: an earlier benchmark's, which --overwrite replaces.
BENCHMARK_FILES = ("benchmark.csv", "benchmark.md", "summary.json", "benchmark.png", "pairings.json")
# The pairings a run has finished so far, rewritten as each one ends; gone once the run is whole.
PARTIAL = "pairings.partial.json"


def check_out(out: str | Path, overwrite: bool, resume: bool = False) -> None:
    """Refuse (ValueError) an ``out`` folder that holds an earlier benchmark's files, unless
    ``overwrite`` or ``resume``, or an interrupted run's :data:`PARTIAL` pairings, unless
    ``resume`` (go on with them) or ``overwrite``. Nothing is touched here."""
    folder = Path(out)
    if not folder.is_dir():
        return
    if (folder / PARTIAL).exists() and not (overwrite or resume):
        raise ValueError(
            f"{folder} holds an interrupted benchmark's pairings ({PARTIAL}); add --resume to go on "
            "with them or --overwrite to start again"
        )
    refuse_earlier(folder, BENCHMARK_FILES, "a benchmark", overwrite or resume)


def two_places(value: float, sign: bool = False) -> str:
    """``value`` to two places, never ``-0.00`` (a score that rounds to zero is zero)."""
    return f"{round(value, 2) + 0.0:{'+' if sign else ''}.2f}"


def write_results(folder: Path, by_variant: list[VariantResults], summary: dict[str, Any]) -> None:
    rows = []
    for v in by_variant:
        for (player, opponent), r in v.results.items():
            row = {**r.row(), "agent": player, "opponent": opponent, "variant": v.variant}
            row["ci_low"], row["ci_high"] = win_rate_interval(r)
            row.update(
                score=v.score(player),
                ms_per_decision=r.ms_per_decision(),
                source=v.sources[(player, opponent)],
                protocol=summary["protocol"] or summary["label"],
                version=summary["version"],
            )
            rows.append({column: row[column] for column in COLUMNS})
    write_rows(folder / "benchmark.csv", COLUMNS, rows)
    (folder / "benchmark.md").write_text(markdown(by_variant, summary))
    (folder / "summary.json").write_text(json.dumps(summary, indent=1, allow_nan=True) + "\n")
    plot(folder / "benchmark.png", by_variant, summary)


def markdown(by_variant: list[VariantResults], summary: dict[str, Any]) -> str:
    """The results as two tables a person reads: scores per variant, then each pairing's win rate."""
    labels = [a for a in summary["agents"] if "scores" in summary["agents"][a]]
    ladder = summary["ladder"]
    exploratory = summary["exploratory"]
    lines = [f"**{summary['label']}**", ""] if exploratory else []
    named = "" if exploratory else f", {summary['label']}"
    lines += [
        f"Normalized scores{named} (0: plays like {protocol.BOTTOM}, "
        f"1: holds its own against {protocol.TOP}):",
        "",
        "| variant | " + " | ".join(labels) + " |",
        "|---" * (len(labels) + 1) + "|",
    ]
    for v in by_variant:  # (rounded first: a score of -0.0001 reads 0.00, not -0.00)
        cells = [two_places(v.score(a)) if a in v.deal_scores else "" for a in labels]
        lines.append(f"| {v.variant} | " + " | ".join(cells) + " |")
    iqms = [two_places(summary["agents"][a]["iqm"]) for a in labels]
    lines += ["| **IQM** | " + " | ".join(iqms) + " |", ""]
    lines += [
        "Win rate of the row's agent against each opponent (95% Wilson score interval over the deals:",
        "n = the deals, p = their mean win share; a mirror match counts as 1/sides), and its time per",
        "decision:",
        "",
        "| variant | agent | " + " | ".join(f"vs {o}" for o in ladder) + " | ms/decision |",
        "|---" * (len(ladder) + 3) + "|",
    ]
    for v in by_variant:
        for a in labels:
            if a not in v.deal_scores:
                continue
            cells = []
            for o in ladder:
                r = v.results.get((a, o))
                if r is None:
                    cells.append("mirror" if (a, o) in v.mirrors else "")
                else:
                    low, high = win_rate_interval(r)
                    cells.append(f"{r.win_rate:.1%} [{low:.1%}, {high:.1%}]")
            lines.append(f"| {v.variant} | {a} | " + " | ".join(cells) + f" | {v.ms_per_decision(a):.2f} |")
    return "\n".join(lines) + "\n"


def plot(path: Path, by_variant: list[VariantResults], summary: dict[str, Any]) -> None:
    """One panel: each agent's normalized score per variant (its 95% bootstrap interval over the
    deals, the scale's zero redrawn with them, as ``summary.json``'s: ``random`` and ``expert``
    have none), the references at 0 and 1; titled with the protocol, or as exploratory with the reasons (and
    the label in the PNG's ``Description``)."""
    from matplotlib.figure import Figure

    labels = [a for a in summary["agents"] if "scores" in summary["agents"][a]]
    fig = Figure(figsize=(9, 1.2 + 0.45 * len(by_variant) * max(1, len(labels)) / 2), layout="constrained")
    ax = fig.subplots()
    height = 0.8 / max(len(labels), 1)
    for k, label in enumerate(labels):
        ys, xs, below, above = [], [], [], []
        entry = summary["agents"][label]
        for i, v in enumerate(by_variant):
            if v.variant not in entry["scores_ci"]:  # (not scored there)
                continue
            score, (low, high) = entry["scores"][v.variant], entry["scores_ci"][v.variant]
            ys.append(i + k * height)
            xs.append(score)
            below.append(0.0 if math.isnan(low) else score - low)
            above.append(0.0 if math.isnan(high) else high - score)
        iqm = summary["agents"][label]["iqm"]
        ax.barh(
            ys, xs, height=height, xerr=[below, above], capsize=2, label=f"{label} (IQM {two_places(iqm)})"
        )
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(by_variant))], [v.variant for v in by_variant])
    ax.axvline(0, color="grey", lw=0.8)
    ax.axvline(1, color="grey", lw=0.8, ls="--")
    ax.set_xlabel(
        f"normalized score (0: plays like {protocol.BOTTOM}, 1: holds its own against {protocol.TOP})"
    )
    if summary["exploratory"]:  # the reasons on a second line, smaller, wrapped to the figure
        reasons = textwrap.fill(
            "not " + protocol.PROTOCOL_NAME + ": " + "; ".join(summary["exploratory_reasons"]), 110
        )
        fig.suptitle("domino-env benchmark, exploratory", color="firebrick")
        ax.set_title(reasons, fontsize="small", color="firebrick")
    else:
        ax.set_title(f"domino-env benchmark, {summary['label']}")
    ax.legend(loc="best", fontsize="small")
    fig.savefig(path, dpi=100, metadata={"Title": "domino-env benchmark", "Description": summary["label"]})
