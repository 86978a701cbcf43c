"""Hostile numbers in a configuration's settings, through the real loader and what it builds:
the processor from the file (ending a run through the SDK) and the sidecar (over OTLP/HTTP on
loopback). Every value either loads and scores, or is one error naming its key: a count the
runtime hands to C, a duration gRPC takes in milliseconds, a budget too small to divide by
failed when it was used, far from the file, or took the sidecar down."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers import ScoringSpanProcessor
from otel_scorers.config import parse_config
from otel_scorers.demos.example_agent import DEMO_RUNS
from otel_scorers.errors import ConfigError
from otel_scorers.setting_bounds import MAX_CONNECTIONS, MAX_GRPC_INT, MAX_READ_TIMEOUT_S
from tests.otlp_capture import OtlpCapture
from tests.sidecar_harness import RunningSidecar, agent_spans, encode, sidecar_document

#: Numbers past what any setting means, and the edges of what floats and C hold.
NUMBERS = (
    st.sampled_from(
        (0, -1, 5e-324, 1e-300, 0.5, 1, 2**31 - 1, 2**31, 2**53, 2**53 + 1, 2**63, 10**30, 1e308, -1e308)
    )
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(-(2**70), 2**70)
)
#: Where a number goes in a file the processor is built from: (section, key) of `place`.
PROCESSOR_KEYS = (
    ("processor", "hold_timeout_s"),
    ("processor", "max_queue_size"),
    ("processor", "max_traces"),
    ("processor", "max_spans_per_trace"),
    ("binding", "timeout_s"),
    ("binding", "threshold"),
    ("binding", "max_per_minute"),
    ("sampling", "rate"),
    ("labels", "wait_s"),
    ("labels", "max_pending"),
)


def place(section: str, key: str, value: Any) -> dict[str, Any]:
    document: dict[str, Any] = {"scorers": [{"type": "includes", "args": {"expected": "ok"}}]}
    if section == "binding":
        document["scorers"][0][key] = value
    elif section == "sampling":
        document["scorers"][0]["sampling"] = {key: value}
    else:
        document[section] = {key: value}
    return document


def key_path(section: str, key: str) -> str:
    return {"binding": f"scorers[0].{key}", "sampling": f"scorers[0].sampling.{key}"}.get(
        section, f"{section}.{key}"
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.sampled_from(PROCESSOR_KEYS), value=NUMBERS)
@example(where=("processor", "max_traces"), value=10**30)  # a deque's length: OverflowError at start
def test_a_processors_setting_loads_and_scores_or_is_an_error_naming_its_key(
    tmp_path_factory: pytest.TempPathFactory, where: tuple[str, str], value: Any
) -> None:
    path = tmp_path_factory.mktemp("config") / "scorers.yaml"
    path.write_text(json.dumps(place(*where, value)))  # JSON is YAML: numbers written exactly
    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    try:
        processor = ScoringSpanProcessor.from_config(path, tracer_provider=provider)
    except ConfigError as exc:
        assert key_path(*where) in str(exc) and str(path) in str(exc), exc
        return
    provider.add_span_processor(processor)
    answer = '[{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}]'
    with provider.get_tracer("agent").start_as_current_span(
        "invoke_agent hostile",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "hostile",
            "gen_ai.output.messages": answer,
        },
    ):
        pass  # raising here would be raising into the agent
    assert processor.force_flush(10_000)
    provider.shutdown()
    scored = [span for span in exported.get_finished_spans() if span.name == "evaluate includes"]
    if where[0] != "sampling":  # a rate may sample the run out
        assert len(scored) == 1


#: Sidecar settings whose hostile values took it down or failed at start, and the values.
SIDECAR_REFUSED = [
    ("max_connections", 2**31 - 1),  # gRPC aborted the whole process
    ("max_connections", 10**30),
    ("max_request_bytes", 2**31),
    ("read_timeout_s", 1e8),  # gRPC's idle limit in milliseconds, a C int
    ("max_runs_in_flight", 10**30),  # a metric's int64: every metric failed to export, retried
    ("join_window_s", 1e308),  # the scoring process exited while starting
    ("max_wait_s", 1e308),
    ("max_traces", 2**63),
]


@pytest.fixture(scope="module")
def capture() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


@pytest.mark.parametrize(("key", "value"), SIDECAR_REFUSED)
def test_a_sidecar_setting_past_what_the_runtime_takes_is_an_error_naming_its_key(
    capture: OtlpCapture, key: str, value: Any
) -> None:
    with pytest.raises(ConfigError, match=rf"sidecar\.{key}: Input should be less than or equal to"):
        parse_config(sidecar_document(capture.endpoint, **{key: value}))


def test_the_sidecar_starts_and_scores_with_the_largest_settings_it_takes(capture: OtlpCapture) -> None:
    document = sidecar_document(
        capture.endpoint,
        max_connections=MAX_CONNECTIONS,
        max_request_bytes=MAX_GRPC_INT,
        read_timeout_s=MAX_READ_TIMEOUT_S,
        max_runs_in_flight=2**53,
        max_traces=2**53,
        join_window_s=1e8,
    )
    with RunningSidecar(document) as sidecar:
        connection = http.client.HTTPConnection("127.0.0.1", sidecar.service.http.port, timeout=10)
        body = encode(agent_spans(DEMO_RUNS[:1])).SerializeToString()
        connection.request(
            "POST", "/v1/traces", body=body, headers={"Content-Type": "application/x-protobuf"}
        )
        assert connection.getresponse().status == 200
        connection.close()
        assert capture.wait_for(lambda: any(span.name.startswith("evaluate") for span in capture.span_list()))


@pytest.mark.parametrize("key", ["usd_per_hour", "calls_per_hour"])
@pytest.mark.parametrize("budget", [5e-324, 1e-300, 1e-7])
def test_a_budget_too_small_to_pace_by_is_an_error_naming_its_key(key: str, budget: float) -> None:
    # 5e-324 an hour loaded, then ended `score` with a ZeroDivisionError at the first run
    judge = {"model": "openai/judge", "api_base": "http://127.0.0.1:9/v1", "api_key": "none"}
    judge["prices"] = {"input_usd_per_million": 1, "output_usd_per_million": 1}  # type: ignore[assignment]
    document = {"judge": judge, "scorers": [{"type": "answer_relevancy", "sampling": {key: budget}}]}
    with pytest.raises(
        ConfigError, match=rf"scorers\[0\]\.sampling\.{key}: must be a finite number of at least 1e-06"
    ):
        parse_config(document)
