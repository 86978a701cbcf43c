"""The masker against hostile text: costs that grow linearly, and private data in disguise
(compatibility forms, zero-width and odd spaces, look-alike letters, percent-encoding) masked as
the plain forms are, over real HTTP to the test's judge server."""

from __future__ import annotations

import gc
import math
import time

from otel_scorers.pipeline.scorer_call import evaluate
from otel_scorers.scorers.judge.masking import Masker, RedactConfig


def _cpu_seconds(text: str) -> float:
    best = math.inf
    for _ in range(3):  # the best of three: a collection or another process may stall one
        gc.collect()
        started = time.process_time()  # CPU time: other processes on the machine do not move it
        Masker(RedactConfig()).mask(text)
        best = min(best, time.process_time() - started)
    return best


def test_the_card_detector_costs_time_linear_in_digit_groups() -> None:
    _cpu_seconds("1234 " * 50)  # warm
    # Ten times the groups: about ten times the work when linear, a thousand when cubic.
    assert _cpu_seconds("1234 " * 500) < 40 * max(_cpu_seconds("1234 " * 50), 1e-3)


def wide(text: str) -> str:
    """`text` in full-width forms (U+FF01..U+FF5E), spaces left as they are."""
    return "".join(chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else char for char in text)


#: Each private item in a disguise, and the plain form the judge must not see either.
DISGUISED = {
    "full-width card": (wide("4111 1111 1111 1111"), "4111"),
    "full-width at": ("alice.smith" + wide("@") + "example.com", "alice.smith"),
    "zero-width email": ("alice\u200b.smith@exam\u200bple.com", "smith"),
    "zero-width card": ("4111\u200b1111\u200b1111\u200b1111", "1111"),
    "zero-width iban": ("GB82\u200bWEST\u200b1234\u200b5698\u200b7654\u200b32", "WEST"),
    "zero-width key": ("sk-proj-Zx9abc\u200bdefghijklmnopqrstuvwxyz0123", "Zx9abc"),
    "no-break spaces card": ("5500\u00a00000\u00a00000\u00a00004", "5500"),
    "dotted card": ("4012.8888.8888.1881", "8888"),
    "lower-case iban": ("de89 3704 0044 0532 0130 00", "3704"),
    "cyrillic domain": ("bob@ex\u0430mple.org", "bob@"),
    "percent-encoded at": ("carol%40example.net", "carol"),
    "full-width phone": (wide("+44 20 7946 0958"), "7946"),
}


def test_disguised_private_data_never_reaches_the_judge() -> None:
    import asyncio
    import json

    from pydantic import BaseModel

    from otel_scorers import AgentRun, Score, bind
    from otel_scorers.scorers.judge import Judge, JudgeConfig, import_litellm
    from otel_scorers.scorers.llm import llm_scorer

    from ..judge_server import Reply, judge_server

    class Verdict(BaseModel):
        ok: bool
        reason: str

    import_litellm()
    text = " ".join(f"{name}: {value}." for name, (value, _) in DISGUISED.items())
    run = AgentRun(trace_id=0xABC, span_id=0x1, agent_name="support", input=text, output=f"On file: {text}")
    with judge_server() as server:
        server.then(Reply(json.dumps({"ok": True, "reason": "fine"})))
        judge = Judge(
            JudgeConfig(
                model="openai/gpt-4o-mini",
                api_base=server.url,
                api_key="k",
                timeout_s=5.0,
                redact=RedactConfig(),
            )
        )
        scorer = llm_scorer(
            "record_ok",
            "Is the record complete?",
            Verdict,
            score=lambda reply: reply.ok,
            data=lambda run: {"question": run.input, "answer": run.output},
            judge=judge,
        )
        result = evaluate(bind(scorer), run)
        score = result if isinstance(result, Score) else asyncio.run(result)  # type: ignore[arg-type]
        assert score.error is None, score.error
        (request,) = server.requests
    prompt = request.text
    leaked = [name for name, (value, plain) in DISGUISED.items() if value in prompt or plain in prompt]
    assert leaked == [], prompt
    for mask in ("[EMAIL_3]", "[CARD_4]", "[IBAN_2]", "[CREDENTIAL_1]", "[PHONE_1]"):
        assert mask in prompt, prompt


def _record_ok(url: str, timeout_s: float = 5.0) -> object:
    """A judged scorer with every kind of redaction, asking the judge at `url`."""
    from pydantic import BaseModel

    from otel_scorers.scorers.judge import Judge, JudgeConfig, import_litellm
    from otel_scorers.scorers.llm import llm_scorer

    class Verdict(BaseModel):
        ok: bool
        reason: str

    import_litellm()
    judge = Judge(
        JudgeConfig(
            model="openai/gpt-4o-mini", api_base=url, api_key="k", timeout_s=timeout_s, redact=RedactConfig()
        )
    )
    return llm_scorer(
        "record_ok",
        "Is the record complete?",
        Verdict,
        score=lambda reply: reply.ok,
        data=lambda run: {"answer": run.output},
        judge=judge,
    )


#: An answer of digit groups: masking it costs seconds (linear, with a large constant).
DIGIT_GROUPS = "1234 " * 60_000


def test_a_long_text_is_masked_off_the_loop_which_keeps_turning() -> None:
    import asyncio
    import json

    from otel_scorers import AgentRun, Score, bind

    from ..judge_server import Reply, judge_server

    answer = "card 4111 1111 1111 1111 on file; then " + DIGIT_GROUPS
    run = AgentRun(trace_id=0xABC, span_id=0x1, agent_name="support", input="q", output=answer)
    with judge_server() as server:
        server.then(*[Reply(json.dumps({"ok": True, "reason": "fine"}))] * 2)
        binding = bind(_record_ok(server.url), timeout_s=60.0)

        async def scored_with_heartbeat() -> tuple[Score, int]:
            # A first score, short, loads the judge's client: what is measured next is masking.
            await evaluate(
                binding,
                AgentRun(trace_id=0xABC, span_id=0x3, agent_name="support", input="q", output="short"),
            )  # type: ignore[misc]
            server.requests.clear()
            beats = 0
            scoring = asyncio.ensure_future(evaluate(binding, run))  # type: ignore[arg-type]
            while not scoring.done():
                await asyncio.sleep(0.01)
                beats += not server.requests  # while the answer is masked, before it is sent
            return scoring.result(), beats

        started = time.process_time()
        score, beats = asyncio.run(scored_with_heartbeat())
        masking_s = time.process_time() - started
        assert score.error is None, score.error
        (request,) = server.requests
    assert "4111" not in request.text and "card [CARD_1] on file" in request.text
    # On the loop, the heartbeat could not beat while the answer was masked: a handful of beats
    # at most, however long masking took. Off it, the loop turned all along.
    print(f"{beats} heartbeats in {masking_s:.2f} s of CPU")
    assert beats >= 20, beats


def test_the_bindings_timeout_ends_a_score_whose_masking_outlasts_it() -> None:
    import asyncio
    import json

    from otel_scorers import AgentRun, bind

    from ..judge_server import Reply, judge_server

    run = AgentRun(trace_id=0xABC, span_id=0x2, agent_name="support", input="q", output=DIGIT_GROUPS)
    with judge_server() as server:
        server.then(Reply(json.dumps({"ok": True, "reason": "fine"})))
        score = asyncio.run(evaluate(bind(_record_ok(server.url), timeout_s=0.2), run))  # type: ignore[arg-type]
        assert score.error is not None and score.error.type == "timeout", score
        assert server.requests == []  # nothing was sent, masked or not


def test_masking_gives_up_at_its_own_deadline_with_nothing_sent() -> None:
    from otel_scorers.scorers.judge.masking import MaskingError

    masker = Masker(RedactConfig())
    try:
        masker.mask_blocks([("answer", DIGIT_GROUPS)], timeout_s=0.05)
    except MaskingError as exc:
        assert "did not finish within 0.05s" in str(exc)
    else:
        raise AssertionError("masking seconds of text within 0.05 s")
