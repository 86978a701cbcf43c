# Two commands do all the setup on a fresh machine: `make demo` and `make test` (`make sidecar`
# adds what `otel-scorers serve` needs).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo sidecar test test-local-judge lint typecheck pytest bench bench-mastra fixtures clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(PY)
	@echo "installing otel-scorers with its dev extra into $(VENV) (about 3 min the first time)"
	$(PY) -m pip install -q -e '.[dev]'
	touch $@ $(VENV)/.installed $(VENV)/.installed-sidecar

# llama.cpp is built for a baseline x86-64 (AVX2, FMA, F16C), not for the build machine (its default,
# -march=native): on a CPU with AMX a native build takes llama.cpp's AMX path, whose tile
# configuration GCC 12 (Debian 12) drops as dead stores, so the server segfaults (a general
# protection fault in ldtilecfg) on its first request. A baseline build also runs on every machine
# that later takes the wheel from pip's cache. pip's cache does not key wheels by CMAKE_ARGS: a wheel
# built natively before stays there until `pip cache remove llama_cpp_python`.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF

$(VENV)/.installed-local-judge: pyproject.toml | $(PY)
	@echo "installing the local-judge extra: llama-cpp-python compiles from source the first time (~7 min on 2 cores)"
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install -q -e '.[local-judge]'
	touch $@ $(VENV)/.installed-dev $(VENV)/.installed $(VENV)/.installed-sidecar

$(VENV)/.installed-sidecar: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[sidecar]'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(VENV)/bin/otel-scorers demo

# The sidecar's extra (grpcio, aiohttp, prometheus-client) in .venv, then how to start it.
sidecar: $(VENV)/.installed-sidecar
	@echo "installed; start the sidecar with: $(VENV)/bin/otel-scorers serve -c examples/scorers.yaml --console"

test: $(VENV)/.installed-dev lint typecheck pytest

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check otel_scorers tests bench
	$(VENV)/bin/ruff format --check otel_scorers tests bench

typecheck: $(VENV)/.installed-dev
	$(VENV)/bin/mypy

# The dashboard and alert tests run a real Prometheus and promtool, the HTML report's a headless
# Chromium; without them they are skipped.
pytest: $(VENV)/.installed-dev
	@command -v chromium >/dev/null || echo "note: chromium is not on PATH: the HTML report's rendering tests will be skipped (Debian/Ubuntu package 'chromium'; .ci/run installs it)"
	@command -v prometheus >/dev/null && command -v promtool >/dev/null || echo "note: prometheus and promtool are not on PATH: the dashboard and alert tests will be skipped (Debian/Ubuntu package 'prometheus'; .ci/run installs it)"
	@echo "running the tests in two worker processes (with ruff and mypy before them, make test takes about 5 min on 2 cores)"
	$(VENV)/bin/pytest -q -n 2 -m "not local_judge"

# The judged scorers against a real local model (llama.cpp's server, Gemma 3 270M): the proof that
# the judge works against a real server. Its install compiles llama.cpp (~7 min the first time).
test-local-judge: $(VENV)/.installed-local-judge
	$(VENV)/bin/pytest -q -m local_judge

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
