# Two commands do all the setup on a fresh machine: `make demo` and `make test` (`make sidecar`
# adds what `otel-scorers serve` needs).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo sidecar test test-local-judge lint typecheck pytest perf-gate perf-baseline bench bench-mastra fixtures clean \
	collector jaeger validate-collector-configs test-collector

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
	@echo "the tests that run the real Collector and Jaeger are left to \`make test-collector\` (it builds both with Go)"
	$(VENV)/bin/pytest -q -n 2 -m "not local_judge and not collector"

# The judged scorers against a real local model (llama.cpp's server, Gemma 3 270M): the proof that
# the judge works against a real server. Its install compiles llama.cpp (~7 min the first time).
test-local-judge: $(VENV)/.installed-local-judge
	$(VENV)/bin/pytest -q -m local_judge

bench: $(VENV)/.installed-dev
	$(PY) bench/hot_path.py
	$(PY) bench/checks.py
	$(PY) bench/conventions.py

# The performance gate: instructions per unit of fixed workloads, counted by valgrind's callgrind
# (the same count whatever else the machine does), against bench/instructions-baseline.json; more
# than 3 % over fails, naming the workload (docs/performance.md). A few minutes on 2 cores.
perf-gate: $(VENV)/.installed-dev
	@command -v valgrind >/dev/null || { echo "valgrind is not on PATH (Debian/Ubuntu package 'valgrind')"; exit 1; }
	$(PY) bench/instructions.py

# Counts the same workloads and writes them as the baseline: a commit that raises it says why.
perf-baseline: $(VENV)/.installed-dev
	$(PY) bench/instructions.py --update

# Mastra's own scorers (@mastra/evals 1.10.2, Node 20, from the npm registry) on the reference
# cases: agreement and scorer.run throughput. Never part of `make test`.
bench-mastra:
	cd bench/mastra && npm install --no-audit --no-fund && node run.mjs

# Regenerates tests/fixtures/traces from the real frameworks (registry access needed to install
# them); `make fixtures FIXTURES="strands google_adk"` regenerates only those generators.
FIXTURES ?=
fixtures:
	PYTHON=$(PYTHON) tests/fixtures/generate/run_all.sh $(FIXTURES)

# The OpenTelemetry Collector and Jaeger, built from their Go modules (Go and the Go module proxy
# needed) into .tools/bin: the Collector from collector-build/manifest.yaml with the Collector's
# builder at the same release, Jaeger from jaeger-build/go.mod. Go keeps its module and build
# caches (`go env GOMODCACHE GOCACHE`) between runs, so a rebuild on a warm machine takes seconds;
# a binary newer than its manifest is not rebuilt at all.
TOOLS_BIN := $(CURDIR)/.tools/bin
OTELCOL := $(TOOLS_BIN)/otelcol-otel-scorers
JAEGER := $(TOOLS_BIN)/jaeger
COLLECTOR_RELEASE := v0.161.0

collector: $(OTELCOL)
$(OTELCOL): collector-build/manifest.yaml
	mkdir -p .tools
	cd collector-build && go run go.opentelemetry.io/collector/cmd/builder@$(COLLECTOR_RELEASE) --config manifest.yaml
	install -D .tools/collector-build/otelcol-otel-scorers $@

jaeger: $(JAEGER)
$(JAEGER): jaeger-build/go.mod jaeger-build/go.sum
	mkdir -p $(TOOLS_BIN)
	cd jaeger-build && go build -o $@ github.com/jaegertracing/jaeger/cmd/jaeger

# Every shipped Collector config loaded by the Collector it is written for.
validate-collector-configs: $(OTELCOL)
	@for config in collector-config/*.yaml; do \
		echo "$(OTELCOL) validate --config $$config"; $(OTELCOL) validate --config $$config || exit 1; \
	done

# The tests that run the real Collector and Jaeger (end to end, scale-out, a backend that refuses
# a signal); `make test` skips them when the binaries are absent.
test-collector: $(VENV)/.installed-dev $(OTELCOL) $(JAEGER) validate-collector-configs
	OTEL_SCORERS_REQUIRE_COLLECTOR=1 OTEL_SCORERS_OTELCOL=$(OTELCOL) OTEL_SCORERS_JAEGER=$(JAEGER) \
		$(VENV)/bin/pytest -q -n 0 -m collector

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
