# chronomem — quality gates one command away. `make help` lists them.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: help install demo test test-unit lint bench clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[all]'
	touch $(STAMP)

install: $(STAMP)  ## create .venv and install chronomem with every extra

demo: install  ## ingest the bundled sample into an embedded store and query it
	$(VENV)/bin/chronomem demo

test: install  ## run every test (unit and integration: real model files, real servers)
	$(PY) -m pytest -q -p no:cacheprovider

test-unit: install  ## only the fast unit tests
	$(PY) -m pytest -q -m "not integration"

lint: install  ## ruff and mypy --strict
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy --strict src

bench: install  ## run every benchmark in bench/ (prints name: value lines)
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:  ## remove the virtual environment and caches
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
