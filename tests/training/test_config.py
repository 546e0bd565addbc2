"""Training configs: the shipped ones load, overrides, and clear refusals of bad keys and values."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.training_helpers import ROOT, write
from training.model.config import Config, ConfigError, config_from_dict, load_config


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.stem)
def test_shipped_configs_load_and_survive_a_dict_round_trip(path: Path) -> None:
    config = load_config(path)
    assert config_from_dict(config.to_dict()) == config


def test_all_fives_config_and_overrides() -> None:
    config = load_config(
        ROOT / "configs" / "all_fives.yaml",
        ["ppo.learning_rate=0.001", "run.num_envs=8", "network.hidden=[32, 16]", "eval.opponents=[random]"],
    )
    assert config.env.variant == "all_fives" and config.env.options["num_players"] == 2
    assert config.ppo.learning_rate == 0.001 and isinstance(config.ppo.learning_rate, float)
    assert config.run.num_envs == 8 and config.network.hidden == [32, 16]
    assert config.eval.opponents == ["random"]
    assert config.run_name == "all_fives-1"


def test_float_override_in_scientific_notation() -> None:
    """The CLI help and config.py's docstring show ``ppo.learning_rate=1e-3``."""
    assert load_config(None, ["ppo.learning_rate=1e-3"]).ppo.learning_rate == pytest.approx(1e-3)


def test_overriding_one_env_option_keeps_the_others() -> None:
    config = load_config(ROOT / "configs" / "all_fives.yaml", ["env.options.num_players=4"])
    file_options = load_config(ROOT / "configs" / "all_fives.yaml").env.options
    assert config.env.options == {**file_options, "num_players": 4}


def test_unknown_keys_are_named_with_the_allowed_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, "ppo:\n  learning_rat: 0.1\n"))
    assert "ppo.learning_rat" in str(err.value)
    assert "learning_rate" in str(err.value) and "gae_lambda" in str(err.value)
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, "optimiser: {lr: 1}\n"))
    assert "optimiser" in str(err.value)
    assert all(section in str(err.value) for section in ("env", "network", "ppo", "pool", "eval", "run"))
    with pytest.raises(ConfigError, match=r"run\.num_env.*num_envs"):
        load_config(None, ["run.num_env=3"])


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("ppo.learning_rate=fast", r"ppo\.learning_rate must be float.*fast"),
        ("run.num_envs=2.5", r"run\.num_envs must be int"),
        ("run.num_envs=true", r"run\.num_envs must be int"),
        ("ppo.anneal_lr=1", r"ppo\.anneal_lr must be bool"),
        ("network.hidden=[32, wide]", r"network\.hidden\[1\] must be int"),
        ("network.hidden=32", r"network\.hidden must be list"),
        ("env.options=4", r"env\.options must be dict"),
        ("ppo=3", r"ppo must be a mapping"),
        ("run.num_envs=0", r"run\.num_envs must be at least 1"),
        ("pool.share=1.5", r"pool\.share must be in \[0, 1\]"),
        ("eval.opponents=[nobody]", r"nobody.*random"),
        ("pool.baselines=[nobody]", r"pool\.baselines.*nobody.*random"),
        ("run.checkpoint_every=0", r"run\.checkpoint_every must be at least 1"),
        ("eval.games=0", r"eval\.games must be at least 1"),
        ("eval.every=-1", r"eval\.every must be 0 \(never\) or more"),
        ("ppo.learning_rate=-1", r"ppo\.learning_rate must be above 0, got -1"),
        ("ppo.max_grad_norm=.nan", r"ppo\.max_grad_norm must be above 0, got nan"),
        ("ppo.clip_coef=-0.2", r"ppo\.clip_coef must be above 0"),
        ("ppo.ent_coef=-0.01", r"ppo\.ent_coef must be 0 or more"),
        ("ppo.target_kl=.inf", r"ppo\.target_kl must be 0 or more, got inf"),
        ("ppo.gamma=-3", r"ppo\.gamma must be in \[0, 1\], got -3"),
        ("ppo.gae_lambda=1.5", r"ppo\.gae_lambda must be in \[0, 1\]"),
        ("run.reward_scale=0", r"run\.reward_scale must be above 0"),
        ("run.seed=-1", r"^run\.seed must be a non-negative integer \(0 or more\), got -1$"),
        ("run.seed=1.5", r"run\.seed must be int"),
    ],
)
def test_ill_typed_or_senseless_values_are_refused(override: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        load_config(None, [override])


@pytest.mark.parametrize("override", ["ppo.learning_rate", "ppo.learning_rate 0.1", "=3"])
def test_bad_override_syntax(override: str) -> None:
    with pytest.raises(ConfigError, match=r"section\.key=value|unknown key"):
        load_config(None, [override])


@pytest.mark.parametrize("override", ["run.total_steps=[1", "network.hidden=[64, 64", "run.seed={"])
def test_an_override_that_is_not_yaml_says_so_in_one_line(override: str) -> None:
    said = r"^override .* the value is not valid YAML .*; write e\.g\. "
    with pytest.raises(ConfigError, match=said) as err:
        load_config(None, [override])
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["../../etc", "a/b", "/tmp/x", "..", "."])
def test_a_run_name_is_a_plain_folder_name(name: str) -> None:
    """A run's folder is ``run.out_dir/run.name``: a name with path parts would put it (and,
    for demo and ship, which overwrite their run folder, delete it) somewhere else."""
    with pytest.raises(ConfigError, match=r"run\.name must be a plain folder name .*run\.out_dir"):
        load_config(None, [f"run.name={name}"])
    assert load_config(None, ["run.name=my-run_2"]).run.name == "my-run_2"


@pytest.mark.parametrize("stored", ["zzz", 3, ["a"]])
def test_a_stored_config_that_is_not_a_mapping_is_refused(stored: object) -> None:
    """A checkpoint's config rebuilt by :func:`config_from_dict`: a damaged one is a ConfigError
    (which the checkpoint loader reports), not an AttributeError."""
    with pytest.raises(ConfigError, match=r"a config must be a mapping of its keys"):
        config_from_dict(stored)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("env.variant=checkers", r"env: .*checkers.*all_fives"),
        ("env.options={num_players: 7}", r"env: .*players.*7"),
        ("env.options={num_players: 2, teams: true}", r"env: .*teams"),
        ("env.options={num_players: 2, episode: forever}", r"env: .*episode.*forever"),
        ("env.options={num_players: 2, colour: red}", r"env: .*colour"),
    ],
)
def test_bad_env_variant_or_option(override: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        load_config(None, [override])


def test_a_missing_relative_config_says_where_it_was_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run outside the checkout, a default such as configs/classic.yaml is not there: one line
    saying the path is relative to this folder and how to give one; a missing file in a folder
    that is there names the YAML files it holds."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as err:
        load_config("configs/classic.yaml")
    said = str(err.value)
    assert said.startswith("config file configs/classic.yaml does not exist (a path relative to this")
    assert str(tmp_path) in said and "repository's root" in said and "--config PATH" in said
    assert "\n" not in said
    (tmp_path / "configs").mkdir()
    write(tmp_path / "configs", "run: {seed: 2}\n", "mine.yaml")
    with pytest.raises(ConfigError, match=r"configs/typo\.yaml does not exist; configs/ holds mine\.yaml$"):
        load_config("configs/typo.yaml")
    with pytest.raises(ConfigError, match=r"does not exist$"):  # an absolute path: nothing to add
        load_config(tmp_path / "nowhere" / "x.yaml")


def test_missing_file_invalid_yaml_and_non_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(write(tmp_path, "ppo: [1, 2\nrun: {a: 1}\n"))
    with pytest.raises(ConfigError, match="mapping"):
        load_config(write(tmp_path, "- 1\n- 2\n"))
    assert load_config(write(tmp_path, "")) == Config()  # an empty file is the defaults
    with pytest.raises(ConfigError, match="is a folder; give a YAML file"):
        load_config(tmp_path)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        load_config(binary)
