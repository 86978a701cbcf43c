# Two commands do all the setup on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo test lint typecheck pytest bench bench-mastra fixtures clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[dev]'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(VENV)/bin/otel-scorers demo

test: $(VENV)/.installed-dev lint typecheck pytest

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check otel_scorers tests bench
	$(VENV)/bin/ruff format --check otel_scorers tests bench

typecheck: $(VENV)/.installed-dev
	$(VENV)/bin/mypy

pytest: $(VENV)/.installed-dev
	$(VENV)/bin/pytest -q

bench: $(VENV)/.installed-dev
	$(PY) bench/hot_path.py
	$(PY) bench/checks.py
	$(PY) bench/conventions.py

# Mastra's own scorers (@mastra/evals 1.10.2, Node 20, from the npm registry) on the reference
# cases: agreement and scorer.run throughput. Never part of `make test`.
bench-mastra:
	cd bench/mastra && npm install --no-audit --no-fund && node run.mjs

# Regenerates tests/fixtures/traces from the real frameworks (registry access needed to install
# them); `make fixtures FIXTURES="strands google_adk"` regenerates only those generators.
FIXTURES ?=
fixtures:
	PYTHON=$(PYTHON) tests/fixtures/generate/run_all.sh $(FIXTURES)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
