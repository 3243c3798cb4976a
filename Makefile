# chronomem — quality gates one command away. `make help` lists them.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# the real llama.cpp server of the integration tests: its own venv (the wheel is built once per
# machine and cached under ~/.cache/chronomem, see scripts/llamacpp-env)
LLAMACPP_VENV  ?= .venv-llamacpp
LLAMACPP_STAMP := $(LLAMACPP_VENV)/.ready
# The explorer's browser code, vendored from npm (git-ignored; scripts/vendor-js).
VENDOR := src/chronomem/ui/static/vendor/VERSIONS

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: help install llamacpp browser demo test test-unit lint bench clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[all]'
	touch $(STAMP)

$(VENDOR): scripts/vendor-js
	scripts/vendor-js

install: $(STAMP) $(VENDOR)  ## create .venv and install chronomem with every extra

browser:  ## install Debian's headless chromium for the explorer's browser tests (if missing)
	scripts/install-browser

$(LLAMACPP_STAMP): scripts/llamacpp-env
	PYTHON=$(PYTHON) scripts/llamacpp-env $(LLAMACPP_VENV)
	touch $(LLAMACPP_STAMP)

llamacpp: $(LLAMACPP_STAMP)  ## the llama.cpp server the integration tests start (first build ~6-16 min, then cached)

demo: install  ## ingest the bundled sample into an embedded store and query it
	$(VENV)/bin/chronomem demo

test: install browser $(LLAMACPP_STAMP)  ## run every test (unit and integration: real model files, real servers)
	CHRONOMEM_LLAMACPP_VENV=$(abspath $(LLAMACPP_VENV)) $(PY) -m pytest -q -p no:cacheprovider

test-unit: install  ## only the fast unit tests
	$(PY) -m pytest -q -m "not integration"

lint: install  ## ruff and mypy --strict
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy --strict src

bench: install  ## run every benchmark in bench/ (prints name: value lines)
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:  ## remove the virtual environment and caches
	rm -rf $(VENV) $(LLAMACPP_VENV) .pytest_cache .ruff_cache .mypy_cache
