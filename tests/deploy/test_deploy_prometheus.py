"""The dashboard and the alert rules, proven on a real Prometheus (Debian package `prometheus`).

A real sidecar process gets the example agent's traces over OTLP (with an LLM judge on a local
chat-completions server, a judge that fails on some runs, a late span and an invalid one), a
real Prometheus scrapes its /metrics every second, and every PromQL expression of the Grafana
dashboard must return data from that Prometheus. `promtool` checks the Prometheus config and
rules and runs the alert rules' unit tests.

Without prometheus/promtool these tests are skipped, unless OTEL_SCORERS_REQUIRE_PROMETHEUS=1
(as in CI), which makes a missing binary a failure.
"""

from __future__ import annotations

import http.server
import json
import math
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from otel_scorers.demos.example_agent import DEMO_RUNS, ScriptedRun
from otel_scorers.demos.example_traffic import send_traffic
from otel_scorers.metrics import REASON
from tests.conventions.acme_instrumentation import acme_trace
from tests.judge_server import JudgeServer, judge_server
from tests.otlp_capture import OtlpCapture, attrs
from tests.sidecar_harness import ServeProcess, agent_spans, encode, send_grpc
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parent.parent.parent
DEPLOY = ROOT / "deploy"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "otel-scorers.json"
PROMETHEUS_DIR = DEPLOY / "prometheus"

#: Concrete values for Grafana's variables, as Grafana would put them in with "All" selected.
GRAFANA_VARIABLES = {
    "$__rate_interval": "1m",
    "$__interval": "15s",
    "$__range": "1h",
    "$agent": ".*",
    "$scorer": ".*",
}
METRIC = re.compile(r"\b((?:gen_ai|otel_scorers)_[a-zA-Z0-9_]+)\s*(?=[{\[])")
MATCHER_LABEL = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*\"")
GROUPING = re.compile(r"\b(?:by|without|on|ignoring)\s*\(([^)]*)\)")
#: Labels only on series this test does not make happen: the reason of a dropped run.
RARE_LABELS = {"otel_scorers_runs_total": {REASON.replace(".", "_")}}
RATE = re.compile(r"(?:rate|increase)\((\w+(?:\{[^}]*\})?)\[[^\]]+\]\)")


def require_tool(name: str) -> str:
    """The path of `name`; a skip when it is missing, or a failure where it is required."""
    path = shutil.which(name)
    if path is None:
        message = f"{name} is not installed (Debian: apt-get install prometheus)"
        if os.environ.get("OTEL_SCORERS_REQUIRE_PROMETHEUS") == "1":
            pytest.fail(f"{message}; OTEL_SCORERS_REQUIRE_PROMETHEUS=1 requires it")
        pytest.skip(message)
    return path


# ---- the dashboard's queries ----------------------------------------------------------------


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def all_panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from all_panels(panel.get("panels", []))


def prometheus_queries() -> list[tuple[str, str]]:
    """(panel title, expression) for every Prometheus target in the dashboard."""
    queries = []
    for panel in all_panels(dashboard()["panels"]):
        for target in panel.get("targets", []):
            datasource = target.get("datasource") or panel.get("datasource") or {}
            if datasource.get("type") == "prometheus":
                queries.append((panel["title"], target["expr"]))
    return queries


def prometheus_targets() -> list[tuple[str, str, str]]:
    """(panel title, expression, legend format) for every Prometheus target in the dashboard."""
    return [
        (panel["title"], target["expr"], target.get("legendFormat", ""))
        for panel in all_panels(dashboard()["panels"])
        for target in panel.get("targets", [])
        if (target.get("datasource") or panel.get("datasource") or {}).get("type") == "prometheus"
    ]


def concrete(expression: str) -> str:
    for variable, value in GRAFANA_VARIABLES.items():
        expression = expression.replace(variable, value)
    assert "$" not in expression, f"a Grafana variable is left in {expression!r}"
    return expression


def as_totals(expression: str) -> str:
    """The expression over the counters' totals instead of their rates: exact, where a rate
    over a window is extrapolated."""
    return RATE.sub(r"\1", expression)


def label_value_variables() -> list[tuple[str, str]]:
    """(metric, label) of every `label_values(metric, label)` template variable."""
    found = []
    for variable in dashboard()["templating"]["list"]:
        if variable["type"] == "query":
            match = re.fullmatch(r"label_values\((\w+),\s*(\w+)\)", variable["definition"])
            assert match, f"variable {variable['name']}: unexpected query {variable['definition']!r}"
            found.append((match.group(1), match.group(2)))
    return found


def test_the_dashboard_has_queries_for_every_required_view() -> None:
    titles = {title for title, _ in prometheus_queries()}
    for required in (
        "Pass rate per check and agent",
        "Estimated pass rate, last hour, with 95% interval",
        "Estimated mean score, last hour, with 95% interval",
        "Score distribution: $scorer",
        "Evaluations by outcome",
        "Runs by outcome",
        "Dropped runs",
        "Judge tokens per hour",
        "Judge cost per hour",
        "Scorer latency p50 / p95",
        "Errors by scorer and type",
        "Queue depth",
        "Late spans",
        "Receiver spans: accepted / refused",
        "Judge vs people: agreement and kappa",
        "Judge vs people: pass rate, judge only and corrected by labels, 95% interval",
        "Judge vs people: labels paired and unpaired",
    ):
        assert required in titles
    expressions = " ".join(expression for _, expression in prometheus_queries())
    assert "histogram_quantile(0.5," in expressions and "histogram_quantile(0.95," in expressions


def test_every_metric_in_the_queries_is_followed_by_a_selector() -> None:
    # The metric-name check below reads names followed by `{` or `[`; a bare name would escape it.
    for _, expression in prometheus_queries():
        bare = re.findall(r"\b(?:gen_ai|otel_scorers)_\w+\b(?!\s*[{\[=~!])", expression)
        labels = set(MATCHER_LABEL.findall(expression))
        for group in GROUPING.findall(expression):
            labels.update(name.strip() for name in group.split(","))
        assert set(bare) <= labels, f"metric without selector in {expression!r}"


# ---- a real Prometheus scraping a real sidecar ----------------------------------------------


def judge_reply(body: dict[str, Any]) -> str:
    """Relevant answers, except for Oslo, where the judge answers prose (an invalid response)."""
    if "Oslo" in json.dumps(body):
        return "I think the answer is fine."
    statements = [{"statement": "It answers the question.", "verdict": "yes", "reason": "on topic"}]
    return json.dumps({"statements": statements, "explanation": "Answers the question."})


def sidecar_config(judge: JudgeServer, export_endpoint: str) -> dict[str, Any]:
    weather_only = {"op": "eq", "left": {"path": "agent.name"}, "right": {"literal": "weather-agent"}}
    return {
        "scorers": [
            {"type": "no_tool_errors"},
            {"type": "called_tool", "args": {"tool": "get_weather"}, "filter": weather_only},
            {
                "type": "includes",
                "name": "says-sunny",
                "args": {"expected": "sunny"},
                "sampling": {"rate": 0.5},
            },
            # a continuous score of half the runs: its mean has an interval
            {
                "type": "similarity",
                "name": "sunny-likeness",
                "args": {"expected": "Sunny, 21°C in Paris."},
                "sampling": {"rate": 0.5},
            },
            # the binding's deadline above the judge's, which the config requires
            {"type": "answer_relevancy", "args": {"model": "openai/gpt-4o-mini"}, "timeout_s": 150},
        ],
        # A deadline no judge call on 127.0.0.1 comes near, even on a loaded machine: the errors
        # counted here must be the scripted ones, not timeouts.
        "judge": {"api_base": judge.url, "api_key": "test-key", "max_retries": 0, "timeout_s": 120},
        "sidecar": {
            "grpc": {"port": 0},
            "http": {"port": 0},
            "decision_wait_s": 0.2,
            "max_wait_s": 5.0,
            "shutdown_timeout_s": 5.0,
            "export": {"endpoint": export_endpoint, "protocol": "grpc", "metric_interval_s": 1},
        },
        # Two conversations of two turns (CONVERSATION_TURNS), closed a second after their last.
        "conversations": {"idle_timeout_s": 1.0, "tick_s": 0.1, "scorers": [{"type": "tool_error_rate"}]},
        # People's labels (`people_labels`); one for a run never sent is unpaired after 10 s.
        "labels": {"wait_s": 10},
    }


def people_labels(turns: list[Any]) -> bytes:
    """no_tool_errors labels for the turns' runs (people fail the last one, which the check
    passed) and one for a run never sent, as an OTLP logs request."""
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    from otel_scorers.labels.join_records import Label
    from otel_scorers.labels.label_records import LabelLogWriter

    runs = [span for span in turns if span.name.startswith("invoke_agent")]
    labels = [
        Label("no_tool_errors", run.context.trace_id, run.context.span_id, label="fail" if n == 0 else "pass")
        for n, run in enumerate(runs)
    ]
    labels.append(Label("no_tool_errors", 0xAB, 0xCD, label="pass"))
    logs = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    writer = LabelLogWriter(provider)
    for label in labels:
        writer.emit(label)
    body: bytes = encode_logs(logs.get_finished_logs()).SerializeToString()
    return body


#: Two conversations of two weather turns each, their content not captured: the tool checks and
#: the conversation scorer score them, the text check and the judge skip them.
CONVERSATION_TURNS = [
    ScriptedRun(
        f"turn {turn}",
        [("get_weather", {"city": "Paris"})],
        "Sunny.",
        capture_content=False,
        conversation_id=c,
    )
    for turn in (1, 2)
    for c in ("conversation-a", "conversation-b")
]


class Prometheus:
    """`prometheus` on 127.0.0.1, scraping `targets` every second, with the project's rules."""

    def __init__(
        self, workdir: Path, targets: list[str], scrape_configs: list[dict[str, Any]] | None = None
    ) -> None:
        binary = require_tool("prometheus")
        shutil.copy(PROMETHEUS_DIR / "alerts.yml", workdir / "alerts.yml")
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": ["alerts.yml"],
            "scrape_configs": scrape_configs
            or [{"job_name": "otel-scorers", "static_configs": [{"targets": targets}]}],
        }
        #: service.name of the evaluation spans the scored sidecar exported (set by the fixture).
        self.evaluation_services: set[str] = set()
        #: The values of the sampled continuous scorer's scores, from its evaluation spans.
        self.likeness: list[float] = []
        (workdir / "prometheus.yml").write_text(yaml.safe_dump(config))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / "prometheus.log"
        self.process = subprocess.Popen(
            [
                binary,
                f"--config.file={workdir / 'prometheus.yml'}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            stdout=self.log.open("w"),
            stderr=subprocess.STDOUT,
        )
        wait_until(self._ready, 30, lambda: f"prometheus to get ready: {self.log.read_text()}")

    def _ready(self) -> bool:
        assert self.process.poll() is None, self.log.read_text()
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=1) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def api(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as response:
            body = json.loads(response.read())
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expression: str) -> list[dict[str, Any]]:
        data = self.api("query", query=expression)
        result: list[dict[str, Any]] = data["result"]
        return result

    def scrapes_since(self, since: float) -> int:
        window = math.floor(time.time() - since)  # whole seconds, all after `since`
        if window < 1:
            return 0
        result = self.query(f'count_over_time(up{{job="otel-scorers"}}[{window}s])')
        return int(float(result[0]["value"][1])) if result else 0

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def free_port() -> int:
    """A port free right now, for prometheus, which cannot bind port 0 and report it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def judged_evaluations(metrics: str) -> float:
    """How many answer_relevancy evaluations have ended, whatever their outcome."""
    return sum(
        float(match.group(1))
        for match in re.finditer(
            r'^otel_scorers_evaluations_total\{[^}]*gen_ai_evaluation_name="answer_relevancy"[^}]*\} (\S+)$',
            metrics,
            re.MULTILINE,
        )
    )


def likeness_values(capture: OtlpCapture) -> list[float]:
    """The values of sunny-likeness's scores, from the evaluation spans exported."""
    return [
        float(attrs(span.attributes)["gen_ai.evaluation.score.value"])
        for _, scope, span in capture.spans()
        if scope == "otel_scorers" and span.name == "evaluate sunny-likeness"
        if "gen_ai.evaluation.score.value" in attrs(span.attributes)
    ]


def measured_likeness(metrics: str) -> float:
    """How many sunny-likeness scores the sidecar measured into its score histogram."""
    return sum(
        float(match.group(1))
        for match in re.finditer(
            r'^gen_ai_evaluation_score_count\{[^}]*gen_ai_evaluation_name="sunny-likeness"[^}]*\} (\S+)$',
            metrics,
            re.MULTILINE,
        )
    )


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        text: str = response.read().decode()
        return text


@pytest.fixture(scope="module")
def scored_prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    """A Prometheus that has scraped a sidecar after it scored, failed, refused and saw late spans."""
    require_tool("prometheus")
    workdir = tmp_path_factory.mktemp("prometheus")
    with judge_server(judge_reply) as judge, OtlpCapture() as capture:
        config = workdir / "otel-scorers.yaml"
        config.write_text(yaml.safe_dump(sidecar_config(judge, capture.endpoint)))
        sidecar = ServeProcess(config)
        prometheus: Prometheus | None = None
        try:
            grpc_endpoint = f"127.0.0.1:{sidecar.grpc_port()}"
            metrics_url = f"http://127.0.0.1:{sidecar.http_port()}/metrics"
            prometheus = Prometheus(workdir, [metrics_url.removeprefix("http://").removesuffix("/metrics")])
            # The example traffic entry point, three rounds of the demo questions.
            assert send_traffic(f"http://{grpc_endpoint}", "grpc", interval_s=0, rounds=3).runs == 3 * len(
                DEMO_RUNS
            )
            spans = agent_spans(DEMO_RUNS[:1])
            send_grpc(grpc_endpoint, encode(spans).SerializeToString())
            turns = agent_spans(CONVERSATION_TURNS)
            send_grpc(grpc_endpoint, encode(turns).SerializeToString())
            # People label the turns' runs (scored in well under labels.wait_s), and one run that never came.
            with grpc.insecure_channel(grpc_endpoint) as channel:
                channel.unary_unary("/opentelemetry.proto.collector.logs.v1.LogsService/Export")(
                    people_labels(turns), timeout=10
                )
            assembled = re.compile(
                r'otel_scorers_runs_total\{[^}]*otel_scorers_outcome="assembled"[^}]*\} 23\.0'
            )
            wait_until(
                lambda: bool(assembled.search(scrape(metrics_url))),
                30,
                "the sidecar to assemble the 23 runs",
            )
            # A span of a trace already scored arrives late; a span without a valid trace id is refused.
            send_grpc(grpc_endpoint, encode(spans[:1]).SerializeToString())
            invalid = encode(spans[:1])
            invalid.resource_spans[0].scope_spans[0].spans[0].trace_id = b"\x01\x02\x03"
            send_grpc(grpc_endpoint, invalid.SerializeToString())
            # A trace of an instrumentation no reader knows: no run found in it, counted by scope.
            send_grpc(grpc_endpoint, encode(acme_trace()).SerializeToString())
            wanted = (
                "otel_scorers_judge_cost_USD_total",
                'error_type="judge_invalid_response"',
                "otel_scorers_late_spans_total{",
                'otel_scorers_reason="invalid_span"',
                'otel_scorers_scope="acme.agents"',
            )
            wait_until(
                lambda: all(name in scrape(metrics_url) for name in wanted),
                120,
                lambda: f"the sidecar's metrics to have each of {wanted}: {scrape(metrics_url)}",
            )
            # Every run's judge evaluation has ended: 23 runs, 16 of them with content to judge.
            wait_until(
                lambda: judged_evaluations(scrape(metrics_url)) == 23,
                120,
                "the judge to finish the 23 runs",
            )
            scored_conversations = re.compile(
                r'otel_scorers_conversations_total\{[^}]*otel_scorers_outcome="scored"[^}]*\} 2\.0'
            )
            wait_until(
                lambda: bool(scored_conversations.search(scrape(metrics_url))),
                30,
                "the sidecar to score the 2 conversations",
            )
            wait_until(
                lambda: all(
                    name in scrape(metrics_url)
                    for name in ("otel_scorers_labels_unpaired_total{", "otel_scorers_estimate_corrected{")
                ),
                120,
                lambda: (
                    "the sidecar to pair the labels: "
                    + "\n".join(
                        line
                        for line in scrape(metrics_url).splitlines()
                        if "agreement" in line or "labels" in line
                    )
                ),
            )
            # Two more scrapes, so that rate() has two points after the last change.
            since = time.time()
            wait_until(lambda: prometheus.scrapes_since(since) >= 2, 60, "prometheus to scrape twice more")
            wait_until(
                lambda: len(likeness_values(capture)) == measured_likeness(scrape(metrics_url)),
                30,
                "the evaluation span of every sunny-likeness score to be exported",
            )
            prometheus.likeness = likeness_values(capture)
            prometheus.evaluation_services = {
                str(resource.get("service.name"))
                for resource, scope, _ in capture.spans()
                if scope == "otel_scorers"
            }
            yield prometheus
        finally:
            if prometheus is not None:
                prometheus.stop()
            sidecar.stop()


@pytest.mark.parametrize(
    ("title", "expression"),
    prometheus_queries(),
    ids=[f"{index}-{title}" for index, (title, _) in enumerate(prometheus_queries())],
)
def test_every_dashboard_query_returns_data(
    scored_prometheus: Prometheus, title: str, expression: str
) -> None:
    result = scored_prometheus.query(concrete(expression))
    assert result, f"panel {title!r}: no data for {concrete(expression)}"


def test_the_queries_name_metrics_and_labels_that_exist(scored_prometheus: Prometheus) -> None:
    """`... or vector(0)` returns data even for a misspelt metric: check every name and label."""
    known: dict[str, set[str]] = {}
    for _, expression in prometheus_queries():
        metrics = METRIC.findall(expression)
        assert metrics, f"no metric found in {expression!r}"
        labels: set[str] = set()
        for metric in metrics:
            if metric not in known:
                series = scored_prometheus.api("series", **{"match[]": metric})
                assert series, f"Prometheus has no series named {metric} (in {expression!r})"
                known[metric] = {name for item in series for name in item} | RARE_LABELS.get(metric, set())
            labels |= known[metric]
        used = set(MATCHER_LABEL.findall(expression))
        for group in GROUPING.findall(expression):
            used.update(name.strip() for name in group.split(",") if name.strip())
        assert used <= labels, f"labels {sorted(used - labels)} are on none of {metrics}"


def test_the_dashboard_variables_have_values(scored_prometheus: Prometheus) -> None:
    for metric, label in label_value_variables():
        values = scored_prometheus.api(f"label/{label}/values", **{"match[]": metric})
        assert values, f"label_values({metric}, {label}) is empty"
    agents = scored_prometheus.api("label/gen_ai_agent_name/values")
    assert {"weather-agent", "chat-agent"} <= set(agents)


def jaeger_linked_queries() -> list[tuple[str, str, str]]:
    """(panel title, expression, link url) of every panel whose lines link to Jaeger."""
    found = []
    for panel in all_panels(dashboard()["panels"]):
        for link in panel.get("fieldConfig", {}).get("defaults", {}).get("links", []):
            for target in panel.get("targets", []):
                found.append((panel["title"], target["expr"], link["url"]))
    return found


def test_every_jaeger_link_names_the_service_that_exported_the_evaluation_spans(
    scored_prometheus: Prometheus,
) -> None:
    """Tap mode: the evaluation spans are the sidecar's, and so is every linked line's `job`."""
    assert scored_prometheus.evaluation_services == {"otel-scorers"}
    linked = jaeger_linked_queries()
    assert len(linked) >= 3
    for title, expression, url in linked:
        label = re.search(r"service=\$\{__field\.labels\.(\w+)\}", url)
        assert label, f"{title}: the link takes its service from a label of the line: {url}"
        result = scored_prometheus.query(concrete(expression))
        assert result, title
        services = {item["metric"].get(label.group(1)) for item in result}
        assert services == scored_prometheus.evaluation_services, title


class StaticExposition:
    """An HTTP /metrics target serving fixed Prometheus text."""

    def __init__(self, text: str) -> None:
        body = text.encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.target = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


#: What the collector's Prometheus exporter serves for scores that reached it over OTLP: its
#: `job` label is the series' service.name and `instance` its service.instance.id (the
#: OpenTelemetry-to-Prometheus conversion the exporter implements). One agent scored in process,
#: and the sidecar's own scores, which reach the collector too.
COLLECTOR_EXPOSITION = """\
# TYPE gen_ai_evaluation_results_total counter
gen_ai_evaluation_results_total{job="weather-service",instance="agent-1",otel_scope_name="otel_scorers",gen_ai_evaluation_name="no_tool_errors",gen_ai_agent_name="weather-agent",gen_ai_evaluation_score_label="fail"} 3
gen_ai_evaluation_results_total{job="weather-service",instance="agent-1",otel_scope_name="otel_scorers",gen_ai_evaluation_name="no_tool_errors",gen_ai_agent_name="weather-agent",gen_ai_evaluation_score_label="pass"} 5
gen_ai_evaluation_results_total{job="otel-scorers",instance="sidecar-1",otel_scope_name="otel_scorers",gen_ai_evaluation_name="no_tool_errors",gen_ai_agent_name="chat-agent",gen_ai_evaluation_score_label="pass"} 7
# TYPE otel_scorers_estimate_weight_total counter
otel_scorers_estimate_weight_total{job="weather-service",instance="agent-1",otel_scope_name="otel_scorers",gen_ai_evaluation_name="no_tool_errors",gen_ai_agent_name="weather-agent",gen_ai_evaluation_score_label="fail"} 3
otel_scorers_estimate_weight_total{job="weather-service",instance="agent-1",otel_scope_name="otel_scorers",gen_ai_evaluation_name="no_tool_errors",gen_ai_agent_name="weather-agent",gen_ai_evaluation_score_label="pass"} 5
otel_scorers_estimate_weight_total{job="otel-scorers",instance="sidecar-1",otel_scope_name="otel_scorers",gen_ai_evaluation_name="no_tool_errors",gen_ai_agent_name="chat-agent",gen_ai_evaluation_score_label="pass"} 7
"""


def test_in_process_scores_through_the_collector_keep_the_agents_service_for_the_jaeger_links(
    tmp_path: Path,
) -> None:
    """The stack's own scrape config for the collector, on a real Prometheus: the in-process
    scores keep the agent's service in `job` (the link's service), the sidecar's are dropped
    there (they are scraped from the sidecar itself)."""
    require_tool("prometheus")
    collector = StaticExposition(COLLECTOR_EXPOSITION)
    stack = yaml.safe_load((PROMETHEUS_DIR / "prometheus.yml").read_text())
    (scrape,) = [job for job in stack["scrape_configs"] if job["job_name"] == "otel-collector"]
    scrape["static_configs"] = [{"targets": [collector.target]}]
    prometheus = Prometheus(tmp_path, [], scrape_configs=[scrape])
    try:
        wait_until(
            lambda: bool(prometheus.query('up{job="otel-collector"} == 1')), 60, "the target to be scraped"
        )
        wait_until(
            lambda: bool(prometheus.query("gen_ai_evaluation_results_total")), 60, "scores to be scraped"
        )
        (title, expression, _), *_ = jaeger_linked_queries()
        jobs = {item["metric"]["job"] for item in prometheus.query(as_totals(concrete(expression)))}
        assert jobs == {"weather-service"}, title
        assert not prometheus.query('gen_ai_evaluation_results_total{gen_ai_agent_name="chat-agent"}')
    finally:
        prometheus.stop()
        collector.close()


def test_the_pass_rate_is_what_the_checks_decided(scored_prometheus: Prometheus) -> None:
    expression = next(
        expr for title, expr in prometheus_queries() if title == "Pass rate per check and agent"
    )
    result = scored_prometheus.query(as_totals(concrete(expression)))
    rates = {
        (item["metric"]["gen_ai_evaluation_name"], item["metric"]["gen_ai_agent_name"]): float(
            item["value"][1]
        )
        for item in result
    }
    # Per round of the six demo runs, weather-agent: Atlantis's tool fails (1 of 5 fails
    # no_tool_errors), plus one more passing Paris run and four passing conversation turns;
    # chat-agent never calls a tool and passes.
    assert rates[("no_tool_errors", "weather-agent")] == pytest.approx(17 / 20)
    assert rates[("no_tool_errors", "chat-agent")] == pytest.approx(1.0)
    assert ("called_tool", "chat-agent") not in rates  # filtered: weather-agent only


def test_the_estimates_of_a_sampled_scorer_have_their_95_percent_intervals(
    scored_prometheus: Prometheus,
) -> None:
    """says-sunny scores half the runs (rate 0.5): each result stands for two runs. The interval is
    the README's, from the raw results: R = pass / all, variance (2 pass (1 - 2R) + 2 all R^2) /
    (2 all)^2, R -/+ 1.96 sqrt(variance), within 0 and 1."""
    raw = {
        item["metric"]["gen_ai_evaluation_score_label"]: float(item["value"][1])
        for item in scored_prometheus.query(
            'sum by (gen_ai_evaluation_score_label) (gen_ai_evaluation_results_total{gen_ai_evaluation_name="says-sunny"})'
        )
    }
    passed, runs = raw.get("pass", 0.0), raw.get("pass", 0.0) + raw.get("fail", 0.0)
    assert runs > 0
    rate = passed / runs
    half = 1.96 * math.sqrt(max(0.0, (2 * passed * (1 - 2 * rate) + 2 * runs * rate**2) / (2 * runs) ** 2))
    # the traces the rate keeps are the random ids' to say: when they all passed (or all failed),
    # the interval closes on the estimate, and the panels must say exactly that
    assert half > 0 or rate in (0.0, 1.0)
    # sunny-likeness, a continuous score of half the runs, from its evaluation spans' values:
    # w = 2 for each, so M is their plain mean, variance (2 sum s^2 - 4 M sum s + 2 n M^2) / (2n)^2.
    values = scored_prometheus.likeness
    assert values
    mean = sum(values) / len(values)
    spread = 1.96 * math.sqrt(
        max(0.0, (2 * sum(v * v for v in values) - 4 * mean * sum(values) + 2 * len(values) * mean**2))
        / (2 * len(values)) ** 2
    )
    for title, scorer, low, high in (
        (
            "Estimated pass rate, last hour, with 95% interval",
            "says-sunny",
            max(rate - half, 0.0),
            min(rate + half, 1.0),
        ),
        (
            "Estimated mean score, last hour, with 95% interval",
            "sunny-likeness",
            mean - spread,
            mean + spread,
        ),
    ):
        panel = {
            legend.split(" ", 1)[1]: expression
            for panel_title, expression, legend in prometheus_targets()
            if panel_title == title
        }
        found = {}
        for name, expression in panel.items():
            (item,) = [
                item
                for item in scored_prometheus.query(as_totals(concrete(expression)))
                if item["metric"]["gen_ai_evaluation_name"] == scorer
            ]
            found[name] = float(item["value"][1])
        estimate = rate if scorer == "says-sunny" else mean
        assert found == pytest.approx({"estimate": estimate, "95% low": low, "95% high": high}), title
        # no_tool_errors scores every run: its estimate is exact, and it has no interval.
        lows = scored_prometheus.query(as_totals(concrete(panel["95% low"])))
        assert "no_tool_errors" not in {item["metric"]["gen_ai_evaluation_name"] for item in lows}, title
    # A pass/fail check is counted, not measured: no mean score for it.
    (estimates,) = [
        expression
        for panel_title, expression, legend in prometheus_targets()
        if panel_title == "Estimated mean score, last hour, with 95% interval"
        and legend.endswith(" estimate")
    ]
    means = {
        item["metric"]["gen_ai_evaluation_name"] for item in scored_prometheus.query(concrete(estimates))
    }
    assert "sunny-likeness" in means and not means & {"says-sunny", "no_tool_errors", "called_tool"}


def test_the_recording_rules_produce_data_and_the_alert_expressions_run(
    scored_prometheus: Prometheus,
) -> None:
    wait_until(
        lambda: bool(scored_prometheus.query("otel_scorers:pass_rate:ratio_rate15m")),
        60,
        "the recording rule otel_scorers:pass_rate:ratio_rate15m to have data",
    )
    rules = yaml.safe_load((PROMETHEUS_DIR / "alerts.yml").read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            scored_prometheus.query(rule["expr"])  # a bad expression or name is an API error
            for metric in METRIC.findall(rule["expr"]):
                assert scored_prometheus.api("series", **{"match[]": metric}), f"{metric} does not exist"
    # The judge failed on a third of its evaluations (Oslo, once per round): JudgeErrors' ratio.
    judge_ratio = as_totals(rules["groups"][1]["rules"][0]["expr"].rsplit(">", 1)[0])
    (ratio,) = scored_prometheus.query(judge_ratio)
    assert ratio["metric"]["gen_ai_evaluation_name"] == "answer_relevancy"
    # Judged per round: Paris, Oslo, Atlantis, Lima, the joke (no content: skipped); plus Paris.
    assert float(ratio["value"][1]) == pytest.approx(3 / 16)


# ---- promtool -------------------------------------------------------------------------------


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [require_tool("promtool"), *args], cwd=PROMETHEUS_DIR, capture_output=True, text=True, timeout=60
    )


def test_promtool_accepts_the_prometheus_config() -> None:
    result = promtool("check", "config", "prometheus.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_accepts_the_alert_rules() -> None:
    result = promtool("check", "rules", "alerts.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 7 rules found" in result.stdout


def test_every_alert_has_a_unit_test_in_which_it_fires() -> None:
    rules = yaml.safe_load((PROMETHEUS_DIR / "alerts.yml").read_text())
    alerts = {rule["alert"] for group in rules["groups"] for rule in group["rules"] if "alert" in rule}
    unit_tests = yaml.safe_load((PROMETHEUS_DIR / "alerts-test.yml").read_text())
    firing = {
        case["alertname"]
        for test in unit_tests["tests"]
        for case in test["alert_rule_test"]
        if case["exp_alerts"]
    }
    assert firing == alerts


def test_the_alert_rules_pass_their_unit_tests() -> None:
    result = promtool("test", "rules", "alerts-test.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_catches_a_broken_alert(tmp_path: Path) -> None:
    broken = (
        (PROMETHEUS_DIR / "alerts.yml").read_text().replace("sum by (otel_scorers_reason)", "sum by (", 1)
    )
    (tmp_path / "alerts.yml").write_text(broken)
    result = promtool("check", "rules", str(tmp_path / "alerts.yml"))
    assert result.returncode != 0
