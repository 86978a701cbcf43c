"""What the judge sees: each detector on true and false cases, masks typed and stable, the
`redact:` setting per judge and per binding, and a red-team over real HTTP: private text in the
question, the answer, tool arguments and results, and echoed back by the judge in its own
replies, never reaches the judge server unmasked."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from otel_scorers import AgentRun, ContextItem, Score, ToolCall, bind, scorers
from otel_scorers.config import parse_config
from otel_scorers.emission.metrics_output import MetricsOutput
from otel_scorers.errors import ConfigError
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.pipeline.scorer_call import evaluate
from otel_scorers.scorers.judge import Judge, JudgeConfig, import_litellm
from otel_scorers.scorers.judge.masking import Masker, RedactConfig, iban_valid, luhn_valid
from otel_scorers.scorers.llm import llm_scorer

from ..conftest import Telemetry
from ..judge_server import JudgeServer, Reply, judge_server

MODEL = "openai/gpt-4o-mini"
pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


def masked(text: str, **config: Any) -> str:
    return Masker(RedactConfig(**config)).mask(text)


# ---- the detectors: true and false cases ------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "found", "text"),
    [
        ("email", "alice@example.com", "write to alice@example.com today"),
        ("email", "a.b+tag@mail.co.uk", "<a.b+tag@mail.co.uk>"),
        ("phone", "+1 (555) 123-4567", "call +1 (555) 123-4567."),
        ("phone", "+44 20 7946 0958", "UK: +44 20 7946 0958"),
        ("phone", "555-123-4567", "or 555-123-4567"),
        ("card", "4111 1111 1111 1111", "card 4111 1111 1111 1111 expires"),
        ("card", "5500-0055-5555-5559", "5500-0055-5555-5559"),
        ("card", "378282246310005", "amex 378282246310005"),
        ("card", "4111 1111 1111 1111", "order 12 4111 1111 1111 1111 shipped"),  # after another number
        ("iban", "GB82 WEST 1234 5698 7654 32", "to GB82 WEST 1234 5698 7654 32 please"),
        ("iban", "DE89370400440532013000", "IBAN DE89370400440532013000"),
        ("ip", "192.168.1.20", "host 192.168.1.20 down"),
        ("ip", "2001:db8::8a2e:370:7334", "v6 2001:db8::8a2e:370:7334 up"),
        (
            "credential",
            "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
            "key sk-proj-abcdefghijklmnopqrstuvwxyz012345",
        ),
        ("credential", "AKIAIOSFODNN7EXAMPLE", "aws AKIAIOSFODNN7EXAMPLE"),
        (
            "credential",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "gh ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        ),
        (
            "credential",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok",
        ),
        ("credential", "abcdef0123456789abcdef", "Authorization: Bearer abcdef0123456789abcdef"),
        (
            "credential",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
            "pem -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY----- end",
        ),
    ],
)
def test_each_kind_is_found_and_masked_with_its_type(kind: str, found: str, text: str) -> None:
    masker = Masker(RedactConfig())
    out = masker.mask(text)
    assert found not in out
    assert f"[{kind.upper()}_1]" in out
    assert masker.counts == {kind: 1}


@pytest.mark.parametrize(
    "text",
    [
        "card 4111 1111 1111 1112 fails Luhn",  # one digit off
        "order 1234567890123 shipped",  # 13 digits, not Luhn-valid
        "IBAN GB82WEST12345698765433 has a bad checksum",
        "release v1.2.3.4 and version 10.0.0.1 are out",  # versions, not addresses
        "build 1.2.3.4.5 and 999.1.1.1",  # too many parts; an octet above 255
        "at 12:30:45 on 2024-01-15, ticket 12345",  # a time, a date, a number
        "the sk-learn model and an AKIA prefix alone",  # too short to be keys
        "bearer of bad news",
        "user at example dot com",
    ],
)
def test_lookalikes_are_left_alone(text: str) -> None:
    masker = Masker(RedactConfig())
    assert masker.mask(text) == text
    assert masker.counts == {}


def test_numbers_side_by_side_are_each_found() -> None:
    text = "12 555-123-4567 555-987-6543 555-111-2222; 4111111111111111 5500005555555559"
    assert masked(text) == "12 [PHONE_1] [PHONE_2] [PHONE_3]; [CARD_1] [CARD_2]"


def test_the_checksums_against_published_examples() -> None:
    # Luhn: the test numbers card networks publish; ISO 13616's own example IBANs
    assert luhn_valid("4111111111111111") and luhn_valid("79927398713")
    assert not luhn_valid("79927398710")
    assert iban_valid("GB82WEST12345698765432") and iban_valid("NL91 ABNA 0417 1643 00")
    assert not iban_valid("NL91 ABNA 0417 1643 01")


def test_masks_are_stable_within_a_score_and_numbered_by_value() -> None:
    masker = Masker(RedactConfig())
    first = masker.mask("alice@example.com wrote to bob@example.com")
    second = masker.mask("and alice@example.com again")
    assert first == "[EMAIL_1] wrote to [EMAIL_2]"
    assert second == "and [EMAIL_1] again"
    assert masker.counts == {"email": 3}


def test_kinds_can_be_chosen_and_user_patterns_added() -> None:
    text = "alice@example.com from 10.1.2.3 is EMP-123456"
    assert masked(text, kinds=["ip"]) == "alice@example.com from [IP_1] is EMP-123456"
    assert masked(text, kinds=[], patterns={"employee_id": r"EMP-\d{6}"}) == (
        "alice@example.com from 10.1.2.3 is [EMPLOYEE_ID_1]"
    )


def test_a_bad_setting_names_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="invalid regular expression"):
        RedactConfig(patterns={"x": "("})
    with pytest.raises(ValueError, match="built-in kind"):
        RedactConfig(patterns={"email": "x"})
    with pytest.raises(ValueError, match="kinds"):
        RedactConfig(kinds=["emails"])  # type: ignore[list-item]
    assert RedactConfig.model_validate(True) == RedactConfig()
    assert not RedactConfig.model_validate(False).active


# ---- the setting in the config file -----------------------------------------------------------


def test_redact_per_judge_and_per_binding_in_the_config_file() -> None:
    config = parse_config(
        {
            "judge": {"model": MODEL, "api_key": "k", "redact": True},
            "scorers": [
                {"type": "faithfulness"},
                {"type": "toxicity", "redact": {"kinds": ["email"], "patterns": {"ticket": r"T-\d+"}}},
                {"type": "bias", "redact": False},
            ],
        }
    )
    faithfulness, toxicity, bias = (binding.scorer for binding in config.scoring().bindings)
    assert faithfulness.judge.config.redact == RedactConfig()  # type: ignore[attr-defined]
    assert toxicity.redaction == RedactConfig(kinds=("email",), patterns={"ticket": r"T-\d+"})  # type: ignore[attr-defined]
    assert bias.redaction is not None and not bias.redaction.active  # type: ignore[attr-defined]


def test_redact_on_a_check_is_a_config_error_naming_the_key() -> None:
    with pytest.raises(ConfigError, match=r"scorers\[0\]\.redact: only judge scorers"):
        parse_config({"scorers": [{"type": "includes", "args": {"expected": "x"}, "redact": True}]})
    with pytest.raises(ConfigError, match=r"judge\.redact\.kinds"):
        parse_config(
            {"judge": {"model": MODEL, "redact": {"kinds": ["mail"]}}, "scorers": [{"type": "bias"}]}
        )


# ---- red team over real HTTP ------------------------------------------------------------------

SECRETS = {
    "email": "alice.smith@example.com",
    "phone": "+1 (555) 123-4567",
    "card": "4111 1111 1111 1111",
    "iban": "GB82 WEST 1234 5698 7654 32",
    "ip": "192.168.14.20",
    "openai": "sk-proj-Zx9abcdefghijklmnopqrstuvwxyz0123",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "bearer": "tok3n0123456789abcdefXYZ",
    "pem": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END PRIVATE KEY-----",
    "employee": "EMP-424242",
}
#: Each secret as a sentence, so that every one sits in every place a run carries text.
LEAKY = " ".join(
    f"{kind}: {'Bearer ' + value if kind == 'bearer' else value}." for kind, value in SECRETS.items()
)
RUN = AgentRun(
    trace_id=0xABC,
    span_id=0x1,
    agent_name="support",
    input=f"My details: {LEAKY} What is my balance?",
    output=f"Your balance is 10 EUR. On file: {LEAKY}",
    tool_calls=(ToolCall("lookup", "c1", arguments={"query": LEAKY}, result={"record": LEAKY}),),
    context=(ContextItem(f"record: {LEAKY}", "tool_result", "lookup"),),
    attributes={"expected": f"lookup then answer; {LEAKY}"},
)


def _leaks(text: str) -> list[str]:
    """The secrets, or any recognisable part of them, found in `text` as sent (JSON-escaped)."""
    decoded = text.replace("\\n", "\n")
    found = [kind for kind, value in SECRETS.items() if value in decoded]
    for kind, value in (("card", "4111"), ("iban", "WEST"), ("pem", "MIIEvQ"), ("bearer", "tok3n")):
        if value in decoded and kind not in found:
            found.append(kind)
    return found


@pytest.fixture(autouse=True, scope="module")
def litellm_imported() -> None:
    import_litellm()


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with judge_server() as running:
        yield running


def judge(server: JudgeServer, **options: Any) -> Judge:
    settings: dict[str, Any] = {
        "model": MODEL,
        "api_base": server.url,
        "api_key": "k",
        "timeout_s": 5.0,
        "redact": RedactConfig(patterns={"employee": r"EMP-\d{6}"}),
    }
    return Judge(JudgeConfig(**{**settings, **options}))


def score(scorer: Any, run: AgentRun = RUN) -> Score:
    result = evaluate(bind(scorer), run)
    return result if isinstance(result, Score) else asyncio.run(result)  # type: ignore[arg-type]


class Verdict(BaseModel):
    ok: bool
    reason: str


def test_red_team_nothing_private_reaches_the_judge(server: JudgeServer) -> None:
    echo = LEAKY  # the judge repeats private text in its replies, as if it had seen it
    server.then(
        # answer_relevancy in Mastra's three calls: the statements echo back in the verdict call
        Reply(json.dumps({"statements": [echo, "Your balance is 10 EUR."]})),
        Reply(json.dumps({"verdicts": [{"verdict": "no", "reason": echo}, {"verdict": "yes"}]})),
        Reply(json.dumps({"reason": echo})),
        # faithfulness in three calls: the claims, their verdicts, then the reason over both
        Reply(json.dumps({"units": [echo, "balance is 10 EUR"]})),
        Reply(json.dumps({"verdicts": [{"verdict": "no", "reason": echo}, {"verdict": "yes"}]})),
        Reply(json.dumps({"reason": echo})),
        # the trajectory, whose data is the tool calls' arguments
        Reply(
            json.dumps({"steps": [{"step": "lookup", "necessary": True, "in_order": True}], "reason": echo})
        ),
        # a custom judge scorer over the tool's result
        Reply(json.dumps({"ok": True, "reason": echo})),
    )
    the_judge = judge(server, record_prompts=True)
    results = [
        score(scorers.answer_relevancy(steps=3, judge=the_judge)),
        score(scorers.faithfulness(steps=3, judge=the_judge)),
        score(scorers.trajectory_accuracy_llm(expected_from="attributes.expected", judge=the_judge)),
        score(
            llm_scorer(
                "record_ok",
                "Is the record complete?",
                Verdict,
                score=lambda reply: reply.ok,
                data=lambda run: {"question": run.input, "result": json.dumps(run.tool_calls[0].result)},
                judge=the_judge,
            )
        ),
    ]
    assert [r.error for r in results] == [None] * 4, [r.error for r in results]
    assert server.calls == 8
    for request in server.requests:
        assert _leaks(request.text) == [], request.text
    every = "\n".join(request.text for request in server.requests)
    for mask in (
        "[EMAIL_1]",
        "[PHONE_1]",
        "[CARD_1]",
        "[IBAN_1]",
        "[IP_1]",
        "[CREDENTIAL_1]",
        "[EMPLOYEE_1]",
    ):
        assert mask in every
    # the echo (call 2 and 3 of each flow) went back masked, with the masks of the first call
    assert "[EMAIL_1]" in server.requests[1].text and "[EMAIL_1]" in server.requests[5].text
    for result in results:
        counts = result.details["redacted"]
        assert set(counts) == {"email", "phone", "card", "iban", "ip", "credential", "employee"}
        assert counts["credential"] >= 6  # each of the six credentials at least once
        for prompt in result.details["prompts"]:  # record_prompts keeps the masked prompt only
            assert _leaks(json.dumps(prompt["messages"])) == []


def test_a_binding_can_send_its_text_as_it_is(server: JudgeServer) -> None:
    server.then(
        Reply(json.dumps({"units": [{"text": "u", "verdict": "no", "reason": "r"}], "reason": "none"}))
    )
    scorer = scorers.toxicity(judge=judge(server)).with_redaction(RedactConfig.model_validate(False))
    result = score(scorer)
    assert result.error is None and "redacted" not in result.details
    assert SECRETS["email"] in server.requests[0].text


def test_a_user_pattern_that_cannot_finish_fails_the_score_and_sends_nothing(server: JudgeServer) -> None:
    slow = RedactConfig(kinds=[], patterns={"slow": r"(a|a)+$"})
    run = AgentRun(trace_id=1, span_id=2, agent_name="a", input="q", output="a" * 40 + "!")
    result = score(scorers.toxicity(judge=judge(server, redact=slow)), run)
    assert result.error is not None and result.error.type == "redaction"
    assert "'slow'" in result.error.message and server.calls == 0


def test_redaction_counts_become_a_metric(server: JudgeServer, telemetry: Telemetry) -> None:
    server.then(
        Reply(json.dumps({"units": [{"text": "u", "verdict": "no", "reason": "r"}], "reason": "none"}))
    )
    result = score(scorers.toxicity(judge=judge(server)))
    output = MetricsOutput(PipelineMetrics(telemetry.meter_provider))
    output.emit(RUN, [result])
    name = "otel_scorers.judge.redactions"
    assert (
        telemetry.counter(name, gen_ai__evaluation__name="toxicity", otel_scorers__redaction__kind="email")
        == (result.details["redacted"]["email"])
    )
    assert telemetry.counter(name, otel_scorers__redaction__kind="employee") == 1
