"""The LLM scorer catalogue against Mastra's own scorers (@mastra/evals 1.10.2, run by
bench/mastra/llm/run.mjs under node), on the same scripted judge (tests/judge_server.py on
127.0.0.1, tokens counted with cl100k): judge calls and tokens per score, and the score each
gives for equivalent verdicts. Ours runs at steps=1 (the default), at Mastra's steps, and with
all fifteen batched on one run. Called by `python bench/judge.py --catalogue`.

Each case scripts the verdicts once, in two spellings: the replies Mastra's schemas ask for (by
the first property of the requested JSON schema) and the one-call reply ours asks for.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from otel_scorers import AgentRun, ContextItem, Score, bind, scorers
from otel_scorers.conversation_turns import Conversation, turn_of
from otel_scorers.conversations.scoring import bind_conversation, score_conversation
from otel_scorers.pipeline.scorer_call import evaluate
from otel_scorers.pipeline.scoring_pipeline import score_run
from otel_scorers.scorers.conversation.judged import ConversationJudged
from otel_scorers.scorers.judge import Judge, JudgeConfig
from tests.judge_server import JudgeServer, count_tokens, prompt_tokens

MASTRA_DIR = Path(__file__).resolve().parent / "mastra" / "llm"
MODEL = "openai/gpt-4o-mini"

QUESTION = "I'm in Paris tomorrow: what will the weather be, and can I visit the Louvre on Tuesday morning?"
ANSWER = (
    "Tomorrow Paris will be sunny with a high of 21°C and a light breeze. The Louvre is closed on "
    "Tuesdays, so plan the Musée d'Orsay instead, which opens at 9:30. Take sunglasses."
)
CONTEXT = [
    "get_weather(city='Paris', day='tomorrow') -> {'summary': 'sunny', 'high_c': 21, 'wind': 'light breeze'}",
    "Louvre opening hours: open 9:00-18:00 every day except Tuesday; closed on 1 January, 1 May and 25 December.",
    "Musée d'Orsay: open Tuesday to Sunday 9:30-18:00, late opening on Thursdays until 21:45.",
]
REFERENCE = (
    "Sunny, 21°C tomorrow in Paris. The Louvre is closed on Tuesdays; the Musée d'Orsay is open from 9:30."
)
CLAIMS = [
    "Tomorrow Paris will be sunny.",
    "The high will be 21°C.",
    "There will be a light breeze.",
    "The Louvre is closed on Tuesdays.",
    "The Musée d'Orsay opens at 9:30.",
]


@dataclass(frozen=True)
class Case:
    name: str
    mastra: dict[str, Any]  # first property of a requested schema -> the reply to it
    ours: dict[str, Any]  # our one-call reply
    run: dict[str, Any] = field(default_factory=dict)  # the case as run.mjs reads it
    args: dict[str, Any] = field(default_factory=dict)  # our scorer's arguments


def _units(verdicts: list[str], texts: list[str] = CLAIMS) -> list[dict[str, str]]:
    return [
        {"text": t, "verdict": v, "reason": "judged against the context"}
        for t, v in zip(texts, verdicts, strict=True)
    ]


def cases() -> list[Case]:
    base = {"input": QUESTION, "output": ANSWER, "context": CONTEXT, "reference": REFERENCE}
    faith = ["yes", "yes", "yes", "yes", "no"]
    tools = [
        {"name": "get_weather", "args": {"city": "Paris", "day": "tomorrow"}, "result": CONTEXT[0]},
        {"name": "search_museums", "args": {"city": "Paris"}, "result": CONTEXT[1]},
        {"name": "get_stock_price", "args": {"ticker": "AAPL"}, "result": "187.2"},
    ]
    opinions = ["Take sunglasses.", "The Musée d'Orsay is a good alternative."]
    statements = [*CLAIMS[:4], "Take sunglasses."]
    return [
        Case(
            "faithfulness",
            {
                "claims": {"claims": CLAIMS},
                "verdicts": {"verdicts": [{"verdict": v, "reason": "r"} for v in faith]},
            },
            {"units": _units(faith)},
            base,
        ),
        Case(
            "hallucination",
            {
                "claims": {"claims": CLAIMS},
                "verdicts": {
                    "verdicts": [
                        {"statement": c, "verdict": v, "reason": "r"}
                        for c, v in zip(CLAIMS, ["no", "no", "no", "no", "yes"], strict=True)
                    ]
                },
            },
            {"units": _units(["no", "no", "no", "no", "yes"])},
            base,
        ),
        Case(
            "bias",
            {
                "opinions": {"opinions": opinions},
                "results": {"results": [{"result": "no", "reason": "r"}] * 2},
            },
            {"units": _units(["no", "no"], opinions)},
            base,
        ),
        Case(
            "toxicity",
            {"verdicts": {"verdicts": [{"verdict": "no", "reason": "r"}] * 5}},
            {"units": _units(["no"] * 5, statements)},
            base,
        ),
        Case(
            "answer_similarity",
            {
                "outputUnits": {
                    "outputUnits": [*CLAIMS, "Take sunglasses."],
                    "groundTruthUnits": ["sunny", "21°C", "Louvre closed Tuesdays", "Orsay from 9:30"],
                },
                "matches": {
                    "matches": [
                        {"groundTruthUnit": u, "outputUnit": u, "matchType": m, "explanation": "e"}
                        for u, m in zip(
                            ["sunny", "21°C", "Louvre closed Tuesdays", "Orsay from 9:30"],
                            ["exact", "exact", "semantic", "partial"],
                            strict=True,
                        )
                    ],
                    "extraInOutput": ["light breeze", "Take sunglasses."],
                    "contradictions": [],
                },
            },
            {
                "matches": [
                    {"unit": u, "match": m}
                    for u, m in zip(
                        ["sunny", "21°C", "Louvre closed Tuesdays", "Orsay from 9:30"],
                        ["exact", "exact", "semantic", "partial"],
                        strict=True,
                    )
                ],
                "extra": ["light breeze", "Take sunglasses."],
                "contradictions": [],
            },
            base,
            {"reference": REFERENCE},
        ),
        Case(
            "context_precision",
            {
                "verdicts": {
                    "verdicts": [
                        {"context_index": i, "verdict": v, "reason": "r"}
                        for i, v in enumerate(["yes", "no", "yes"])
                    ]
                }
            },
            {"verdicts": [{"context": i + 1, "verdict": v} for i, v in enumerate(["yes", "no", "yes"])]},
            base,
        ),
        Case(
            "context_recall",
            {
                "claims": {"claims": CLAIMS[:4]},
                "verdicts": {
                    "verdicts": [{"verdict": v, "reason": "r"} for v in ["yes", "yes", "no", "yes"]]
                },
            },
            {"units": _units(["yes", "yes", "no", "yes"], CLAIMS[:4])},
            base,
            {"reference": REFERENCE},
        ),
        Case(
            "context_relevance",
            {
                "evaluations": {
                    "evaluations": [
                        {
                            "context_index": i,
                            "contextPiece": CONTEXT[i],
                            "relevanceLevel": lvl,
                            "wasUsed": used,
                            "reasoning": "r",
                        }
                        for i, (lvl, used) in enumerate([("high", True), ("high", True), ("medium", True)])
                    ],
                    "missingContext": [],
                    "overallAssessment": "good",
                }
            },
            {
                "items": [
                    {"context": i + 1, "relevance": lvl, "used": used}
                    for i, (lvl, used) in enumerate([("high", True), ("high", True), ("medium", True)])
                ],
                "missing": [],
            },
            base,
        ),
        Case(
            "prompt_alignment",
            {
                "intentAlignment": {
                    "intentAlignment": {
                        "score": 1,
                        "primaryIntent": "plan",
                        "isAddressed": True,
                        "reasoning": "r",
                    },
                    "requirementsFulfillment": {
                        "requirements": [{"requirement": "weather", "isFulfilled": True, "reasoning": "r"}],
                        "overallScore": 0.9,
                    },
                    "completeness": {"score": 0.8, "missingElements": [], "reasoning": "r"},
                    "responseAppropriateness": {
                        "score": 1,
                        "formatAlignment": True,
                        "toneAlignment": True,
                        "reasoning": "r",
                    },
                    "overallAssessment": "good",
                }
            },
            {"intent": 1, "requirements": 0.9, "completeness": 0.8, "appropriateness": 1},
            base,
        ),
        Case(
            "noise_sensitivity",
            {
                "dimensions": {
                    "dimensions": [
                        {"dimension": d, "impactLevel": lvl, "specificChanges": "c", "noiseInfluence": "n"}
                        for d, lvl in [
                            ("accuracy", "none"),
                            ("completeness", "minimal"),
                            ("relevance", "moderate"),
                        ]
                    ],
                    "overallAssessment": "ok",
                    "majorIssues": ["mentions sunglasses"],
                    "robustnessScore": 0.9,
                }
            },
            {
                "robustness": 0.9,
                "dimensions": [
                    {"dimension": d, "impact": lvl}
                    for d, lvl in [
                        ("accuracy", "none"),
                        ("completeness", "minimal"),
                        ("relevance", "moderate"),
                    ]
                ],
                "major_issues": ["mentions sunglasses"],
            },
            base,
            {"baseline": REFERENCE},
        ),
        Case(
            "summarization",
            {
                "alignment": {
                    "alignment": [
                        {"claim": c, "supported": s, "reason": "r"}
                        for c, s in zip(CLAIMS, [True, True, False, True, True], strict=True)
                    ],
                    "questions": [
                        "Will it be sunny?",
                        "What is the high?",
                        "Is the Louvre open on Tuesday?",
                        "When does Orsay open?",
                    ],
                },
                "coverage": {
                    "coverage": [
                        {"question": "q", "answered": a, "reason": "r"} for a in [True, True, True, False]
                    ]
                },
            },
            {
                "claims": [
                    {"claim": c, "supported": s}
                    for c, s in zip(CLAIMS, [True, True, False, True, True], strict=True)
                ],
                "questions": [
                    {"question": q, "answered": a}
                    for q, a in zip(
                        [
                            "Will it be sunny?",
                            "What is the high?",
                            "Is the Louvre open on Tuesday?",
                            "When does Orsay open?",
                        ],
                        [True, True, True, False],
                        strict=True,
                    )
                ],
            },
            {**base, "input": " ".join(CONTEXT)},
        ),
        Case(
            "tool_call_accuracy_llm",
            {
                "evaluations": {
                    "evaluations": [
                        {"toolCalled": t["name"], "wasAppropriate": a, "reasoning": "r"}
                        for t, a in zip(tools, [True, True, False], strict=True)
                    ],
                    "missingTools": [],
                }
            },
            {
                "calls": [
                    {"tool": t["name"], "appropriate": a}
                    for t, a in zip(tools, [True, True, False], strict=True)
                ]
            },
            {
                **base,
                "toolCalls": tools,
                "availableTools": [
                    ["get_weather", "forecast"],
                    ["search_museums", "opening hours"],
                    ["get_stock_price", "quotes"],
                ],
            },
            {
                "available_tools": {
                    "get_weather": "forecast",
                    "search_museums": "opening hours",
                    "get_stock_price": "quotes",
                }
            },
        ),
        Case(
            "trajectory_accuracy_llm",
            {
                "stepEvaluations": {
                    "stepEvaluations": [
                        {"stepName": t["name"], "wasNecessary": n, "wasInOrder": True, "reasoning": "r"}
                        for t, n in zip(tools, [True, True, False], strict=True)
                    ],
                    "missingSteps": [],
                    "extraSteps": ["get_stock_price"],
                    "overallAssessment": "ok",
                }
            },
            {
                "steps": [
                    {"step": t["name"], "necessary": n, "in_order": True}
                    for t, n in zip(tools, [True, True, False], strict=True)
                ],
                "extra_steps": ["get_stock_price"],
            },
            {**base, "toolCalls": tools},
        ),
        Case(
            "rubric",
            {
                "criteria": {
                    "criteria": [
                        {
                            "criterion": "Gives the temperature",
                            "satisfied": True,
                            "required": True,
                            "reasoning": "r",
                        },
                        {
                            "criterion": "Suggests an alternative museum",
                            "satisfied": True,
                            "required": True,
                            "reasoning": "r",
                        },
                    ],
                    "overallAssessment": "ok",
                }
            },
            {"criteria": [{"criterion": 1, "satisfied": True}, {"criterion": 2, "satisfied": True}]},
            {
                **base,
                "criteria": [
                    {"criterion": "Gives the temperature"},
                    {"criterion": "Suggests an alternative museum"},
                ],
            },
            {"criteria": ["Gives the temperature", "Suggests an alternative museum"]},
        ),
        Case(
            "multi_turn",
            {"satisfied": {"satisfied": True, "reasoning": "both questions answered"}},
            {"satisfied": True},
            {
                **base,
                "criterion": "The agent answered the weather and the museum question.",
                "turns": [ANSWER],
            },
            {"criterion": "The agent answered the weather and the museum question."},
        ),
    ]


@dataclass
class Meter:
    """Calls and cl100k tokens of the judge requests made since `reset`."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, body: dict[str, Any], reply: str) -> str:
        self.calls += 1
        self.input_tokens += prompt_tokens(body.get("messages", []))
        self.output_tokens += count_tokens(reply)
        return reply


def mastra_responder(case: Case, meter: Meter) -> Any:
    def respond(body: dict[str, Any]) -> str:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        if schema is None:  # the reason step: prose
            return meter.add(
                body, "The score follows from the verdicts: most claims are supported by the context."
            )
        first = next(iter(schema.get("properties", {})), "")
        return meter.add(body, json.dumps(case.mastra[first]))

    return respond


def our_run(case: Case) -> AgentRun:
    items = tuple(
        ContextItem(text, "tool_result", f"tool_{n}") for n, text in enumerate(case.run.get("context", []))
    )
    from otel_scorers.model import ToolCall

    calls = tuple(
        ToolCall(t["name"], arguments=t["args"], result=t["result"]) for t in case.run.get("toolCalls", [])
    )
    return AgentRun(
        trace_id=1,
        span_id=2,
        agent_name="travel",
        input=case.run["input"],
        output=case.run["output"],
        context=items,
        tool_calls=calls,
        conversation_id="c1",
    )


def our_responder(case: Case, meter: Meter, steps_replies: list[str] | None = None) -> Any:
    def respond(body: dict[str, Any]) -> str:
        if steps_replies:
            return meter.add(body, steps_replies.pop(0))
        return meter.add(body, json.dumps({**case.ours, "reason": "The verdicts decide the score."}))

    return respond


def our_steps_replies(case: Case) -> list[str]:
    """Our steps-mode flow for the same verdicts: the extraction (when Mastra has one), the
    verdicts, the reason."""
    reason = json.dumps({"reason": "The verdicts decide the score."})
    ours = case.ours
    if "units" in ours and case.name != "toxicity":
        texts = [u["text"] for u in ours["units"]]
        return [
            json.dumps({"units": texts}),
            json.dumps({"verdicts": [{"verdict": u["verdict"]} for u in ours["units"]]}),
            reason,
        ]
    if case.name == "answer_similarity":
        return [
            json.dumps({"answer_units": CLAIMS, "reference_units": [m["unit"] for m in ours["matches"]]}),
            json.dumps(ours),
            reason,
        ]
    if case.name == "summarization":
        return [
            json.dumps({"claims": ours["claims"], "questions": [q["question"] for q in ours["questions"]]}),
            json.dumps({"answers": [{"answered": q["answered"]} for q in ours["questions"]]}),
            reason,
        ]
    return [json.dumps(ours), reason]


def make(case: Case, judge: Judge, steps: int = 1) -> Any:
    factory = getattr(scorers, case.name)
    args = dict(case.args)
    if steps != 1:
        args["steps"] = steps
    return factory(judge=judge, **args)


def score_alone(server: JudgeServer, case: Case, steps: int = 1) -> tuple[Score, Meter]:
    meter = Meter()
    replies = our_steps_replies(case) if steps != 1 else None
    server.responder = our_responder(case, meter, replies)
    judge = Judge(JudgeConfig(model=MODEL, api_base=server.url, api_key="bench", cache_size=0))
    scorer = make(case, judge, steps)
    if isinstance(scorer, ConversationJudged):  # multi_turn judges a conversation: here, of one turn
        run = our_run(case)
        turn = turn_of(run)
        assert turn is not None
        (scored,) = asyncio.run(score_conversation([bind_conversation(scorer)], Conversation("c1", (turn,))))
        return scored, meter
    result = evaluate(bind(scorer), our_run(case))
    scored = result if isinstance(result, Score) else asyncio.run(result)  # type: ignore[arg-type]
    return scored, meter


def score_batched(server: JudgeServer, all_cases: list[Case]) -> tuple[dict[str, Score], Meter]:
    """All the run-level ones bound to one run, batched: one call."""
    meter = Meter()

    def respond(body: dict[str, Any]) -> str:
        return meter.add(body, json.dumps({c.name: {**c.ours, "reason": "r"} for c in all_cases}))

    server.responder = respond
    judge = Judge(JudgeConfig(model=MODEL, api_base=server.url, api_key="bench", cache_size=0, batch=True))
    run = our_run(
        replace(
            all_cases[0],
            run={
                **all_cases[0].run,
                "toolCalls": next(c.run["toolCalls"] for c in all_cases if "toolCalls" in c.run),
            },
        )
    )
    bindings = [bind(make(c, judge)) for c in all_cases if c.name not in ("summarization", "multi_turn")]
    results = asyncio.run(score_run(bindings, run))
    return {s.scorer: s for s in results}, meter


def score_mastra(server: JudgeServer, case: Case) -> tuple[float | None, Meter, str]:
    meter = Meter()
    server.responder = mastra_responder(case, meter)
    done = subprocess.run(
        ["node", "run.mjs", server.url, case.name, json.dumps(case.run)],
        cwd=MASTRA_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        return None, meter, done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"
    return json.loads(done.stdout.strip().splitlines()[-1])["score"], meter, ""


def mastra_ready() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not (MASTRA_DIR / "node_modules" / "@mastra" / "evals").exists():
        return f"run `npm install` in {MASTRA_DIR} first"
    return None


def catalogue_table(server: JudgeServer) -> None:
    problem = mastra_ready()
    all_cases = cases()
    print("\n## The LLM scorer catalogue against Mastra's scorers (same scripted verdicts, tokens in cl100k)")
    if problem:
        print(f"Mastra not measured: {problem}")
    print(
        "| scorer | Mastra calls | Mastra tokens | ours calls | ours tokens | ratio | Mastra score | ours | ours, Mastra's steps |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for case in all_cases:
        ours, meter = score_alone(server, case)
        stepped, _ = score_alone(
            server, case, steps=make(case, Judge(JudgeConfig(model=MODEL))).rule.mastra_steps
        )
        mastra_score, mastra_meter, error = (
            (None, Meter(), problem) if problem else score_mastra(server, case)
        )
        mastra_tokens = mastra_meter.input_tokens + mastra_meter.output_tokens
        our_tokens = meter.input_tokens + meter.output_tokens
        ratio = f"{our_tokens / mastra_tokens:.0%}" if mastra_tokens else "-"
        shown = f"{mastra_score:g}" if mastra_score is not None else f"({error})"
        print(
            f"| {case.name} | {mastra_meter.calls} | {mastra_tokens} | {meter.calls} | {our_tokens} | {ratio} | "
            f"{shown} | {ours.value if ours.value is not None else ours.error or ours.skipped} | {stepped.value} |"
        )
    batched, meter = score_batched(server, all_cases)
    total = meter.input_tokens + meter.output_tokens
    print(
        f"\nBatched (`judge: {{batch: true}}`): {len(batched)} scorers on one run in {meter.calls} call, "
        f"{total} tokens; scores: "
        + ", ".join(f"{n} {s.value:g}" for n, s in batched.items() if s.value is not None)
    )
    sys.stdout.flush()
