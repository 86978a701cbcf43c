"""Hostile spans in trace files read by the real CLI entry point (`otel-scorers runs`): values of
every OTLP type where numbers, ids, names and messages are expected, NaN and infinite token
counts, spans of one trace sent twice, parents that loop. The command never raises, every good
trace beside them is read, and a line it cannot read is named."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from otel_scorers.cli.main import main
from tests.cli.test_cli_input import _trace

#: The span of `_trace`'s three that is the run's: the agent span.
RUN = 2


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"stringValue": "x"}
    for level in range(depth):
        value = (
            {"arrayValue": {"values": [value]}}
            if level % 2
            else {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
        )
    return value


any_values = st.one_of(
    st.builds(lambda text: {"stringValue": text}, st.text(max_size=30)),
    st.builds(lambda number: {"intValue": str(number)}, st.integers(-(2**63), 2**63 - 1)),
    st.builds(lambda number: {"doubleValue": number}, st.sampled_from(("NaN", "Infinity", "-Infinity"))),
    st.builds(lambda number: {"doubleValue": number}, st.floats(allow_nan=False, allow_infinity=False)),
    st.builds(lambda flag: {"boolValue": flag}, st.booleans()),
    st.builds(lambda data: {"bytesValue": data}, st.sampled_from(("", "AAEC", "////"))),
    st.builds(nested, st.integers(0, 45)),  # protobuf's JSON reader refuses 100 levels of messages
    st.just({}),
)
#: Keys the conventions read numbers, names, ids and messages from.
KEYS = (
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.agent.name",
    "gen_ai.conversation.id",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.name",
    "gen_ai.request.model",
    "metadata",
    "session.id",
    "input.value",
    "openinference.span.kind",
)


@st.composite
def hostile_traces(draw: st.DrawFn, number: int) -> dict[str, Any]:
    trace = _trace(number)
    spans = trace["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for _ in range(draw(st.integers(1, 4))):
        span = spans[draw(st.integers(0, len(spans) - 1))]
        change = draw(st.sampled_from(("attribute", "twice", "loop", "name", "status")))
        if change == "attribute":
            span["attributes"].append({"key": draw(st.sampled_from(KEYS)), "value": draw(any_values)})
        elif change == "twice":  # the same span ended and sent twice
            spans.append(copy.deepcopy(span))
        elif change == "loop":
            span["parentSpanId"] = spans[draw(st.integers(0, len(spans) - 1))]["spanId"]
        elif change == "name":
            span["name"] = draw(st.text(max_size=30))
        else:
            span["status"] = {"code": draw(st.integers(0, 2)), "message": draw(st.text(max_size=30))}
    return trace


def _good(number: int) -> dict[str, Any]:
    trace = _trace(number)
    trace["resourceSpans"][0]["scopeSpans"][0]["spans"][RUN]["attributes"].append(
        {"key": "gen_ai.agent.name", "value": {"stringValue": f"good-{number}"}}
    )
    return trace


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(hostile=st.lists(st.integers(100, 199).flatmap(hostile_traces), min_size=1, max_size=6))
@example(  # NaN and infinite token counts ended the whole command
    hostile=[
        {
            "resourceSpans": [
                {
                    "scopeSpans": [
                        {
                            "spans": [
                                {
                                    **_trace(150)["resourceSpans"][0]["scopeSpans"][0]["spans"][RUN],
                                    "attributes": [
                                        {
                                            "key": "gen_ai.operation.name",
                                            "value": {"stringValue": "invoke_agent"},
                                        },
                                        {"key": "gen_ai.usage.input_tokens", "value": {"doubleValue": "NaN"}},
                                        {
                                            "key": "gen_ai.usage.output_tokens",
                                            "value": {"doubleValue": "Infinity"},
                                        },
                                    ],
                                }
                            ]
                        }
                    ]
                }
            ]
        }
    ]
)
def test_hostile_spans_cost_only_their_own_trace(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    hostile: list[dict[str, Any]],
) -> None:
    path = tmp_path_factory.mktemp("hostile") / "traces.jsonl"
    goods = [_good(number) for number in range(1, 4)]
    lines = [goods[0], *hostile[: len(hostile) // 2], goods[1], *hostile[len(hostile) // 2 :], goods[2]]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    capsys.readouterr()
    code = main(["runs", str(path)])  # raising here would take every other trace with it
    out, err = capsys.readouterr()
    names = {orjson.loads(line)["agent_name"] for line in out.splitlines()}
    assert {"good-1", "good-2", "good-3"} <= names, err
    said = [line for line in err.splitlines() if line.startswith("otel-scorers: skipped")]
    assert code == (1 if said else 0), err
    for line in said:  # a line protobuf refuses, named; every trace read is read into its runs
        assert line.startswith(f"otel-scorers: skipped {path}:"), line


def test_a_trace_no_reader_can_read_is_named_and_the_others_are_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader failing on spans nobody foresaw costs that trace only, said with its id."""
    from otel_scorers.runs import open_traces

    build_runs = open_traces.build_runs

    def failing_on_trace_2(spans: Any) -> Any:
        if spans and spans[0].trace_id == 2:
            raise ValueError("a reader's bug")
        return build_runs(spans)

    monkeypatch.setattr(open_traces, "build_runs", failing_on_trace_2)
    path = tmp_path / "traces.jsonl"
    path.write_bytes(b"".join(orjson.dumps(_good(number)) + b"\n" for number in range(3)))
    code = main(["runs", str(path)])
    out, err = capsys.readouterr()
    assert sorted(orjson.loads(line)["agent_name"] for line in out.splitlines()) == ["good-0", "good-2"]
    assert code == 1
    assert (
        "otel-scorers: skipped 1 trace: could not be read into runs, the first trace "
        f'{2:032x}: ValueError("a reader\'s bug")' in err
    )
