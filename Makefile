# Two commands do all the set-up: `make demo` (the main job) and `make test` (CI runs it).
PYTHON ?= python3
# More flags for `make demo`, e.g. DEMO_ARGS=--overwrite for a runs/demo that demo did not mark as its own.
DEMO_ARGS ?=
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The optional integrations (Ray/RLlib, TorchRL) live in a second venv: Ray pins its own
# gymnasium (1.2.2), the main venv gets the latest, and the core package is tested on both.
EXTRAS := .venv-extras
EXTRAS_STAMP := $(EXTRAS)/.installed
EXTRAS_TESTS := tests/integrations/test_rllib.py tests/training/test_distributed.py tests/integrations/test_torchrl.py tests/env/test_api.py tests/env/test_wrappers.py tests/env/test_parallel.py

.PHONY: demo test test-extras release-check lint docs bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[train,dev,docs,serve,openspiel]"
	touch $(STAMP)

$(EXTRAS_STAMP): pyproject.toml
	$(PYTHON) -m venv $(EXTRAS)
	$(EXTRAS)/bin/pip install --quiet --upgrade pip
	$(EXTRAS)/bin/pip install --quiet torch==2.13.0
	$(EXTRAS)/bin/pip install --quiet -e ".[train,dev,ray,torchrl]"
	touch $(EXTRAS_STAMP)

demo: $(STAMP)
	$(BIN)/python -m training demo $(DEMO_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# The main suite runs on TEST_WORKERS processes (pytest-xdist; logical: one per logical core,
# about half the serial time on two cores); the extras' suite stays serial (one shared Ray).
TEST_WORKERS ?= logical

test: lint docs
	$(BIN)/python -m pytest -m "not ray and not torchrl" -n $(TEST_WORKERS)
	$(MAKE) test-extras

# The release checks alone (tests/release, also part of `make test`'s pytest): every variant marked
# shipped in its spec has its agent, its results row, its pairings in the benchmark reference (its
# first deals replayed: slow) and its README picture. A variant being written is not marked.
release-check: $(STAMP)
	$(BIN)/python -m pytest tests/release

# RLlib and `--ray` on a local Ray instance (2 CPUs), TorchRL, and the core API, the Gymnasium
# wrapper and the registry entries on Ray's gymnasium; DOMINO_REQUIRE_EXTRAS turns a missing
# extra into a failure.
test-extras: $(EXTRAS_STAMP)
	DOMINO_REQUIRE_EXTRAS=1 $(EXTRAS)/bin/python -m pytest $(EXTRAS_TESTS)

# The documentation site, strict: a broken link, a griffe warning or a variant page that cannot be
# generated (docs/hooks.py) fails the build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/site

bench: $(STAMP)
	$(BIN)/python benchmarks/env_speed.py
	$(BIN)/python benchmarks/train_speed.py

clean:
	rm -rf $(VENV) $(EXTRAS) .pytest_cache .mypy_cache .ruff_cache .hypothesis
