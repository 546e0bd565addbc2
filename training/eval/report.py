"""What every evaluation writes with: a table's text for headers and errors, CSV files, and the
output paths, checked before any game is played so a bad path wastes none. (The tables of
results and ratings are with their types, in :mod:`training.eval.evaluate` and
:mod:`training.eval.ratings`.)"""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path
from typing import Any


def table_text(variant: str, options: dict[str, Any]) -> str:
    """``all_fives (num_players=2, episode=match)``: the table in the headers and the errors. The
    ``reward`` option is left out: evaluation and play count outcomes whatever reward the env gives;
    so are options left unset (None: the variant's own)."""
    shown = [f"{k}={v}" for k, v in options.items() if k != "reward" and v is not None]
    return f"{variant} ({', '.join(shown) or 'default options'})"


def writable_file(path: str | Path) -> Path:
    """An output file checked before any game is played, so a bad path does not waste them."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a file to write")
    writable_folder(path.parent)
    existed = path.exists()
    try:  # (opened to append: tried for real, as root ``os.access`` says yes to /proc too)
        with path.open("a"):
            pass
    except OSError as err:
        raise ValueError(f"cannot write {path}: {err.strerror}") from err
    if not existed:
        path.unlink()
    return path


def writable_folder(path: str | Path) -> Path:
    """An output folder, created now (before training or games) so a bad path fails at once."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{path} is a file, not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"cannot create the folder {path}: {err.strerror}") from err
    refused = file_refused(path)
    if refused:
        raise ValueError(f"the folder {path} is not writable ({refused})")
    return path


def folder_to_be(path: str | Path) -> Path:
    """An output folder checked without making it, for a command whose later checks may still
    refuse (and should leave nothing behind): it, or the nearest folder above it that exists,
    must take a file."""
    path = Path(path)
    there = next(p for p in (path, *path.parents) if p.exists())
    if not there.is_dir():
        raise ValueError(f"{there} is a file, not a folder to write {path} in")
    refused = file_refused(there)
    if refused:
        raise ValueError(f"cannot write in the folder {there} ({refused}) for {path}")
    return path


def file_refused(folder: Path) -> str | None:
    """Why ``folder`` takes no file (the system's words), or None: a file made there and dropped,
    tried for real, as root ``os.access`` says yes to /proc too."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return None
    except OSError as err:
        return str(err.strerror)


def refuse_earlier(folder: Path, files: tuple[str, ...], what: str, overwrite: bool) -> None:
    """Refuse (ValueError) a ``folder`` that holds any of ``files`` (an earlier ``what``: "a
    ladder"), unless ``overwrite``."""
    earlier = [name for name in files if (folder / name).exists()] if folder.is_dir() else []
    if earlier and not overwrite:
        raise ValueError(
            f"{folder} already holds {what} ({', '.join(earlier)}); add --overwrite to replace it"
        )


def write_rows(path: Path, columns: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
    """A CSV with floats to 4 decimals, as ``evaluations.csv`` writes them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        out = csv.DictWriter(handle, fieldnames=list(columns))
        out.writeheader()
        for row in rows:
            out.writerow({k: f"{v:.4f}" if isinstance(v, float) else v for k, v in row.items()})


def replace_rows(
    path: Path, columns: tuple[str, ...], key: tuple[str, ...], rows: list[dict[str, Any]]
) -> None:
    """Write ``rows`` into the CSV at ``path`` (columns ``columns``): the rows it holds with the
    same values in the ``key`` columns as one of them are replaced, the others kept in order (a
    results file that several runs of a script add to, each rerun replacing its own rows)."""
    mine = {tuple(str(row[k]) for k in key) for row in rows}
    kept = []
    if path.exists():
        with path.open(newline="") as handle:
            kept = [r for r in csv.DictReader(handle) if tuple(r[k] for k in key) not in mine]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        out = csv.DictWriter(handle, fieldnames=list(columns))
        out.writeheader()
        out.writerows([*kept, *rows])
