# Every target creates/uses the virtual environment in .venv and installs what it needs.
PY ?= python3
RECIPES := notebooks
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The lab needs only the package and JupyterLab: a fresh clone's `make lab` skips the test,
# docs and benchmark tools that `make test` installs (they are a superset, so a full install
# satisfies the lab too).
LAB_STAMP := $(VENV)/.installed-lab
# The versions `make test` installs, every package of the `dev` extra's tree pinned: without
# them pip's resolver backtracks through hundreds of aiobotocore and boto3 releases (s3fs pins
# botocore narrowly, boto3's newest wants a newer one), more than 15 minutes on a fresh clone.
# `make constraints` writes it again from the current venv.
CONSTRAINTS := .ci/constraints.txt
# The files that hold the tests marked serial: the serial passes of `make test` collect only
# these, not the whole suite in each of their processes; tests/test_makefile.py checks the
# list against the markers.
SERIAL_FILES := tests/test_browser.py tests/test_browser_binder.py tests/test_browser_consent.py \
	tests/test_browser_escaping.py tests/test_notebooks.py tests/test_scaleout_drills.py

.PHONY: test system-packages npm-packages constraints lint lab notebooks clear-notebooks bench serve docs clean

$(STAMP): pyproject.toml $(CONSTRAINTS)
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]" -c $(CONSTRAINTS)
	touch $(STAMP) $(LAB_STAMP)

$(LAB_STAMP): pyproject.toml
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e ".[lab]"
	touch $(LAB_STAMP)

## test: install everything (Python, Debian and npm packages) and run lint, types and all tests:
## two test processes (each test file in one of them, the longest files first:
## tests/conftest.py), then the tests marked serial alone (one process: their budgets and
## deadlines assume a machine that runs nothing else); then the same again with the platforms
## on PostgreSQL, but for the tests marked any_engine (docs/testing.md)
## (`make -j3 test`, as CI runs it, installs the three kinds of packages and lints at once)
# Bytecode written: with PYTHONDONTWRITEBYTECODE set in the environment every pytest process
# rewrote every test module's asserts afresh, and every `explorer serve` a test starts compiled
# the package again (the caches go to the ignored __pycache__ folders).
test: export PYTHONDONTWRITEBYTECODE =
test: lint system-packages npm-packages
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder -m "not serial"
	$(BIN)/python -m pytest -q -m serial $(SERIAL_FILES)
	EXPLORER_TEST_DATABASE=postgresql $(BIN)/python -m pytest -q -n 2 --dist loadfile \
		--no-loadscope-reorder -m "not serial and not any_engine"
	EXPLORER_TEST_DATABASE=postgresql $(BIN)/python -m pytest -q -m "serial and not any_engine" \
		$(SERIAL_FILES)

system-packages:
	bash .ci/system-packages

npm-packages:
	bash .ci/npm-packages

## constraints: pin the current venv's packages in .ci/constraints.txt (after changing the
## dependencies in pyproject.toml: install them, run the tests, then this)
constraints: $(STAMP)
	$(BIN)/python -m pip freeze --exclude-editable > $(CONSTRAINTS)

## lint: the same lint, format and type checks that make test runs (beside its installs)
lint: $(STAMP)
	$(BIN)/ruff check explorer tests benchmarks docs/hooks.py
	$(BIN)/ruff format --check explorer tests benchmarks docs/hooks.py
	$(BIN)/mypy

## serve: run the platform in the foreground (simulated activity on)
serve: $(LAB_STAMP)
	$(BIN)/explorer serve

## lab: install only what the lab needs, start the platform and JupyterLab on the recipes
lab: $(LAB_STAMP)
	$(BIN)/explorer lab

## notebooks: run every recipe top to bottom (EXPLORER_BASE_URL if set, else the embedded platform)
notebooks: $(LAB_STAMP)
	$(BIN)/jupyter execute --timeout=300 $(RECIPES)/*.ipynb

## clear-notebooks: strip outputs, execution counts and widget state from the recipes (a test checks)
clear-notebooks: $(LAB_STAMP)
	$(BIN)/jupyter nbconvert --clear-output --inplace --ClearMetadataPreprocessor.enabled=True \
		--ClearMetadataPreprocessor.clear_cell_metadata=False \
		--ClearMetadataPreprocessor.preserve_nb_metadata_mask=kernelspec \
		--ClearMetadataPreprocessor.preserve_nb_metadata_mask=language_info $(RECIPES)/*.ipynb

## bench: performance goals, each measured side by side in one run, printed as ratios (wrk
## beside the own load generator: .ci/system-packages installs it)
bench: $(STAMP) system-packages
	$(BIN)/python -m benchmarks

## docs: regenerate docs/rest.md and the bucket map in docs/platform.md from the route table,
## then build the documentation site into site/ with warnings as errors (open site/index.html)
docs: $(STAMP)
	$(BIN)/python -m explorer.emulator.docs docs
	EXPLORER_DOCS_EXECUTE=true NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .cache site
