"""Release check: the README's variant table shows every shipped variant, linked to its rules
page, with its committed picture (``python docs/hooks.py`` draws them; ``make release-check``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

import domino_env
from domino_env.registry import shipped

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", shipped())
def test_readme_shows_every_shipped_variant_with_its_picture(name: str) -> None:
    """A picture of the benchmark table, 800x600 or the 3D board."""
    readme = (ROOT / "README.md").read_text()
    assert f"(docs/rules/{name}.md)" in readme and f"docs/assets/tables/{name}.png" in readme
    with Image.open(ROOT / "docs" / "assets" / "tables" / f"{name}.png") as picture:
        assert picture.mode == "RGB"
        env = domino_env.make(name, render_mode="rgb_array", **domino_env.spec(name).benchmark_tables[0])
        env.reset(seed=0)
        frame = env.render()
        assert picture.size == (frame.shape[1], frame.shape[0])
