"""MkDocs hooks: a page per variant and the list of variants, written from ``domino_env.SPECS``.

Each variant's page (``environments/<name>.md``) is generated from its spec and from an
environment built on the variant's benchmark table - the spaces, the observation and state
layouts, the action kinds, the options, the version history of its module docstring - with a
picture of a game in progress drawn by the environment itself (``render_mode="rgb_array"``).
So the pages cannot drift from the code. Pages and pictures exist only in the built site
(``python docs/hooks.py`` writes the same pictures into ``docs/assets/tables`` for the README);
anything that cannot be generated (a picture that fails to render, a missing version entry)
raises and fails the build.

The module is also a griffe extension for the API pages (:class:`ReSTInlineMarkup`, named in
mkdocs.yml): the docstrings' reST roles rewritten as Markdown.
"""

from __future__ import annotations

import inspect
import io
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import griffe
import numpy as np

import domino_env
from domino_env import DominoEnv, VariantSpec
from domino_env.envs.base import EPISODES, ILLEGAL_ACTIONS, REWARDS
from domino_env.registry import ENV_OPTIONS

ROOT = Path(__file__).resolve().parent.parent
PAGES = "environments"  # the folder of the generated pages, under docs/
NAV_SECTION = "Environments"  # the nav section that lists them (mkdocs.yml)
PICTURE_SEED = 0
PICTURE_TILES = 6  # the picture shows the table once this many tiles are down (or at the end)

ENV_OPTION_HELP = {
    "episode": "an episode is the whole match, or one round (played with the first round's opening rule)",
    "reward": "outcome: the ranking at the episode's end; points: every score change as it happens",
    "render_mode": "ansi / human: the table in words; rgb_array: a picture of the table",
    "illegal_action": "raise a ValueError naming the legal actions (nothing changes), "
    "or penalize: -1 for the offender and the episode ends",
}
ENV_OPTION_VALUES = {"episode": EPISODES, "reward": REWARDS, "illegal_action": ILLEGAL_ACTIONS}


# --- reading the code's own documentation -------------------------------------------------------


ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|obj|exc):`~?([\w.]+)`")


def markdown(text: str) -> str:
    """The project's reST inline markup as Markdown: a role as inline code of the name's last
    part, ``x::`` before a literal block as ``x:`` (``code`` is Markdown already)."""
    text = ROLE.sub(lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", text)
    return re.sub(r"(?<=\S)::\n", ":\n", text)


class ReSTInlineMarkup(griffe.Extension):
    """Docstrings as Markdown before mkdocstrings renders them (:func:`markdown`)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)


def rst_table(doc: str) -> dict[str, str]:
    """The rows of the first reST simple table in ``doc`` (``====`` rules, header ``name ...
    meaning``): first column -> last column, continuation lines joined."""
    lines = doc.splitlines()
    rules = [i for i, line in enumerate(lines) if re.fullmatch(r"\s*=+(\s+=+)+\s*", line)]
    if len(rules) < 3:
        raise ValueError("no reST simple table (three '====' rule lines) in the docstring")
    last_column = lines[rules[0]].rindex(" =") + 1
    rows: dict[str, str] = {}
    name = ""
    for line in lines[rules[1] + 1 : rules[2]]:
        if line[:1].strip():
            name = line.split()[0]
            rows[name] = line[last_column:].strip()
        elif name:
            rows[name] += " " + line.strip()
    return rows


def module_doc(obj: Any) -> str:
    """The docstring of the module that defines ``obj`` (a class or an instance's class)."""
    cls = obj if isinstance(obj, type) else type(obj)
    return sys.modules[cls.__module__].__doc__ or ""


def version_history(spec: VariantSpec) -> list[str]:
    """The entries of the "Version history:" list in the variant module's docstring that name
    this variant's modules (``<name>_v<k>``), as Markdown; the current version must be there."""
    doc = module_doc(spec.rules)
    if "Version history:" not in doc:
        raise ValueError(
            f"{spec.name}: the module docstring of {spec.rules.__module__} has no 'Version history:'"
        )
    entries: list[str] = []
    for line in doc.split("Version history:", 1)[1].strip().splitlines():
        if line.startswith("- "):
            entries.append(line[2:].strip())
        elif line.strip() and entries:
            entries[-1] += " " + line.strip()
    own = [e for e in entries if re.match(rf"``{spec.name}_v\d+``", e)]
    if not any(e.startswith(f"``{spec.module_name}``") for e in own):
        raise ValueError(
            f"{spec.name}: the version history in {spec.rules.__module__} has no {spec.module_name}"
        )
    # a rules page named in an entry becomes a link (from environments/<name>.md)
    return [re.sub(r"docs/rules/(\w+)\.md", r"[docs/rules/\1.md](../rules/\1.md)", markdown(e)) for e in own]


# --- the pieces of a page -----------------------------------------------------------------------


def table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def call_text(kwargs: Mapping[str, Any]) -> str:
    return ", ".join(f"{key}={value!r}" for key, value in kwargs.items())


def env_on(spec: VariantSpec, table_kwargs: Mapping[str, Any]) -> DominoEnv[Any]:
    return domino_env.make(spec.name, **table_kwargs).unwrapped


def layout_rows(layout: Mapping[str, slice], meanings: Mapping[str, str]) -> list[tuple[str, str, int, str]]:
    """(block, slice, size, meaning) per block; ``seat_0``, ``seat_1``, ... read ``seat_k``'s."""
    rows = []
    for name, part in layout.items():
        meaning = meanings.get(re.sub(r"_\d+$", "_k", name), meanings.get(name, ""))
        rows.append((f"`{name}`", f"`{part.start}:{part.stop}`", part.stop - part.start, markdown(meaning)))
    return rows


def action_rows(env: DominoEnv[Any], spec: VariantSpec) -> list[tuple[str, str, int, str]]:
    """The action ids in runs of one kind (and face): (kind, ids, count, meaning)."""
    words = {
        ("play", False): "lay a tile",
        ("play", True): "lay a double face down",
        **{(kind, False): text for kind, text in spec.action_names.items()},
    }
    runs: list[list[Any]] = []
    for action in range(env.action_space(env.possible_agents[0]).n):
        move = env.describe_action(action)
        key = (move["kind"], bool(move.get("face_down")))
        if runs and runs[-1][0] == key:
            runs[-1][2] = action
        else:
            runs.append([key, action, action])
    return [
        (
            f"`{kind}`",
            f"{first}" if first == last else f"{first}-{last}",
            last - first + 1,
            words.get((kind, down), ""),
        )
        for (kind, down), first, last in runs
    ]


def reward_text(env: DominoEnv[Any]) -> str:
    rules = env.rules
    target, penalties = rules.match_target, rules.lower_score_wins
    sides = (
        "a player, or a team with `teams=True`: partners share its reward"
        if rules.teams_allowed
        else "a player"
    )
    score = "penalty" if penalties else "points"
    return "\n".join(
        [
            "The `reward` and `episode` options of `domino_env.make` (see `DominoEnv`):",
            "",
            f'- `reward="outcome"` (default): at the episode\'s end each side ({sides}) ranked `k` of '
            "`n` gets `1 - 2 (k - 1) / (n - 1)`, +1 for the best and -1 for the worst; tied sides "
            "get the mean of the ranks they span. Every other step pays 0.",
            f'- `reward="points"`: every change of a side\'s {score} score as it happens, divided by '
            f"{target}{' and negative (a penalty is bad)' if penalties else ''}.",
            '- `episode="match"` (default): an episode is a whole match; `episode="round"`: one round, '
            "the sides ranked by that round's result (see the rules page).",
        ]
    )


def option_type(option: domino_env.Option) -> str:
    if option.choices is not None:
        return " / ".join(f"`{choice!r}`" for choice in option.choices)
    return f"`{getattr(option.type, '__name__', option.type)}`"


def env_option_rows(env: DominoEnv[Any]) -> list[tuple[str, str, str, str]]:
    values = {**ENV_OPTION_VALUES, "render_mode": tuple(env.metadata["render_modes"])}
    missing = set(ENV_OPTIONS) - set(ENV_OPTION_HELP)
    if missing:
        raise ValueError(f"docs/hooks.py does not describe the env option(s) {sorted(missing)}")
    defaults = inspect.signature(DominoEnv.__init__).parameters
    return [
        (
            f"`{name}`",
            " / ".join(f"`{v!r}`" for v in values[name]),
            f"`{defaults[name].default!r}`",
            ENV_OPTION_HELP[name],
        )
        for name in ENV_OPTIONS
    ]


def players_text(spec: VariantSpec) -> str:
    counts = ", ".join(map(str, spec.player_counts))
    return counts + ("; partners with 4" if spec.teams_allowed else "")


def tables_text(spec: VariantSpec) -> str:
    return "<br>".join(f"`{call_text(t)}`" for t in spec.tables())


# --- the picture --------------------------------------------------------------------------------


def picture(spec: VariantSpec) -> bytes:
    """A PNG of the benchmark table once ``PICTURE_TILES`` tiles are down (each move the
    first legal action, seeded), drawn by ``render_mode="rgb_array"``. Failing to draw raises."""
    from PIL import Image

    env = domino_env.make(spec.name, render_mode="rgb_array", **spec.benchmark_tables[0])
    env.reset(seed=PICTURE_SEED)
    while len(env.unwrapped.public_state()["table"]) < PICTURE_TILES:
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            break
        env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    frame = env.render()
    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3:
        raise ValueError(f"{spec.name}: render() gave {type(frame).__name__}, not an RGB array")
    out = io.BytesIO()
    Image.fromarray(frame.astype(np.uint8)).save(out, format="PNG")
    return out.getvalue()


# --- the pages ----------------------------------------------------------------------------------


def variant_page(spec: VariantSpec) -> str:
    """The Markdown of a variant's page."""
    bench = dict(spec.benchmark_tables[0])
    env = env_on(spec, bench)
    agent = env.possible_agents[0]
    spaces = env.observation_space(agent)
    observation, mask = spaces["observation"], spaces["action_mask"]
    encoder_doc = module_doc(env.encoder)
    block_meanings = rst_table(encoder_doc)
    if "phase" in block_meanings and hasattr(env.rules, "phases"):
        block_meanings["phase"] += f" Here: {', '.join(f'`{p}`' for p in env.rules.phases)}."
    observer_doc = "" if env.observer is None else markdown(inspect.getdoc(env.observer) or "")
    sizes = []
    for table_kwargs in spec.tables():
        other = env_on(spec, table_kwargs)
        sizes.append(
            (
                f"`{call_text(table_kwargs)}`",
                other.observation_space(other.possible_agents[0])["observation"].shape[0],
                other.action_space(other.possible_agents[0]).n,
                other.state_space.shape[0],
            )
        )
    summary = f"{spec.summary[0].upper()}{spec.summary[1:]}."
    facts = [
        ("Import", f"`from domino_env import {spec.module_name}`"),
        ("Create", f"`domino_env.make({spec.name!r}, {call_text(bench)})`"),
        ("Agents", ", ".join(f"`{a}`" for a in env.possible_agents)),
        ("Players", players_text(spec)),
        ("Tables", tables_text(spec)),
        ("Action space", f"`Discrete({env.action_space(agent).n})`"),
        ("Observation", f'`Dict("observation": {observation}, "action_mask": {mask})`'),
        ("Observation shape", f"`{observation.shape}`"),
        ("State shape", f"`{env.state_space.shape}`"),
        ("Version", f"`{spec.module_name}` (version {spec.version})"),
        ("Rules", f"[{spec.title} rules](../rules/{spec.name}.md)"),
    ]
    parts = [
        f"# {spec.title}",
        summary,
        f"![{spec.title}: a game in progress]({spec.name}.png)",
        table(("", ""), facts),
        f"Sizes are those of the table `{call_text(bench)}`. On every table:",
        table(("table", "observation", "actions", "state"), sizes),
        "## Observation",
        '`observe(agent)` (and `last()`) returns a dict: `"observation"`, a float32 vector seen from '
        "the agent's seat (its own side first), and `\"action_mask\"`. The vector's blocks, "
        "`env.unwrapped.observation_layout`:",
        table(("block", "slice", "size", "meaning"), layout_rows(env.observation_layout, block_meanings)),
    ]
    if observer_doc:
        parts += [f"The variant's own blocks: {observer_doc}"]
    parts += [
        "## State",
        "`env.state()` is the whole table as one float32 vector, every hand included: for a "
        "critic that learns from what no player sees, never part of an observation. Its blocks, "
        "`env.unwrapped.state_layout` (seats counted from the player to move):",
        table(
            ("block", "slice", "size", "meaning"),
            layout_rows(env.state_layout, rst_table(module_doc(DominoEnv))),
        ),
        "## Legal actions",
        '`observation["action_mask"]` (also `infos[agent]["action_mask"]`) is int8, 1 exactly for '
        "the legal actions of the agent to move and all zeros for the others. Forced actions (a "
        "draw, a pass) are played by the environment; the agent is asked whenever it has a legal "
        "choice, even a single one. `env.unwrapped.describe_action(a)` says what an action id "
        "means, `legal_moves()` lists the legal ones. The action ids:",
        table(("kind", "ids", "count", "meaning"), action_rows(env, spec)),
        "## Rewards",
        reward_text(env),
        "## Rules options",
        f"Keyword options of `domino_env.make({spec.name!r}, ...)` "
        f"(`domino_env.spec({spec.name!r}).options`):",
        table(
            ("option", "type", "default", "what it does"),
            [(f"`{o.name}`", option_type(o), f"`{o.default!r}`", o.help) for o in spec.options],
        ),
        "## Environment options",
        "Every variant takes these too:",
        table(("option", "values", "default", "what it does"), env_option_rows(env)),
        "## Rules",
        f"The full rules of {spec.title}, every decision the environment takes included: "
        f"[{spec.title}](../rules/{spec.name}.md).",
        "## Version history",
        "\n".join(f"- {entry}" for entry in version_history(spec)),
    ]
    return "\n\n".join(parts) + "\n"


def variant_list_page(specs: Mapping[str, VariantSpec]) -> str:
    """The Markdown of the page that lists every variant."""
    rows = [
        (
            f"[`{spec.name}`]({spec.name}.md)",
            spec.title,
            spec.summary,
            players_text(spec),
        )
        for spec in specs.values()
    ]
    return (
        "\n\n".join(
            [
                "# Environments",
                "Every variant in `domino_env.SPECS`, each a PettingZoo AEC environment with action "
                "masks: `domino_env.make(name, **options)`, or `from domino_env import <name>_v<version>`.",
                table(("name", "title", "summary", "players"), rows),
            ]
        )
        + "\n"
    )


def generated_files(specs: Mapping[str, VariantSpec]) -> Iterator[tuple[str, str | bytes]]:
    """(path under docs/, content) of every generated page and picture."""
    yield f"{PAGES}/index.md", variant_list_page(specs)
    for spec in specs.values():
        yield f"{PAGES}/{spec.name}.md", variant_page(spec)
        yield f"{PAGES}/{spec.name}.png", picture(spec)


# --- MkDocs events ------------------------------------------------------------------------------


def on_config(config: Any) -> Any:
    """List the variant pages in the nav section ``NAV_SECTION``, after its index page."""
    for entry in config["nav"]:
        if isinstance(entry, dict) and NAV_SECTION in entry:
            entry[NAV_SECTION] += [
                {spec.title: f"{PAGES}/{name}.md"} for name, spec in domino_env.SPECS.items()
            ]
            return config
    raise ValueError(f"mkdocs.yml: the nav has no section {NAV_SECTION!r} for the variant pages")


def on_files(files: Any, config: Any) -> Any:
    """Add the generated pages and pictures to the site's files."""
    from mkdocs.structure.files import File

    for path, content in generated_files(domino_env.SPECS):
        files.append(File.generated(config, path, content=content))
    return files


def write_readme_pictures(folder: Path = ROOT / "docs" / "assets" / "tables") -> None:
    """The pictures the README's variant table shows (the same as the pages', committed there
    because a README is read where no site was built): ``python docs/hooks.py``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, spec in domino_env.SPECS.items():
        (folder / f"{name}.png").write_bytes(picture(spec))


if __name__ == "__main__":
    write_readme_pictures()
