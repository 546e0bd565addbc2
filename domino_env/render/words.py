"""Values of ``public_state()`` in words, for the variants' ``extra_words`` (what each of a
variant's public extras says) and the terminal's table text."""

from __future__ import annotations

from typing import Any

from domino_env.core.tiles import format_tile


def value_text(value: Any) -> str:
    """A value of ``public_state()`` in words: tiles as ``3-4``, lists and dicts without brackets."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return format_tile(value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {value_text(v)}" for k, v in value.items()) or "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(value_text(v) for v in value) or "none"
    return str(value)


def per_seat_text(values: list[Any], names: list[str]) -> str:
    """``P0 3, P1 5``: one value per seat, each after its name."""
    return ", ".join(f"{name} {value_text(value)}" for name, value in zip(names, values, strict=True))
