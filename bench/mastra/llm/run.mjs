// Runs one of Mastra's LLM scorers (@mastra/evals 1.10.2) on one case, against the
// OpenAI-compatible judge at argv[2]; prints {"score": ...}. Driven by bench/judge.py --catalogue,
// which scripts the judge's verdicts and counts the calls and tokens.
import * as prebuilt from "@mastra/evals/scorers/prebuilt";

const [url, name, caseJson] = process.argv.slice(2);
const c = JSON.parse(caseJson);
const model = { id: "openai/gpt-4o-mini", url, apiKey: "bench", api: "chat" };
const tools = (c.toolCalls || []).map((t, i) => ({
  type: "tool-invocation",
  toolInvocation: { state: "result", toolCallId: `c${i}`, toolName: t.name, args: t.args || {}, result: t.result ?? "" },
}));
const output = [{ role: "assistant", content: c.output, toolInvocations: tools.map((t) => t.toolInvocation) }];
const input = {
  inputMessages: [{ role: "user", content: c.input }],
  systemMessages: c.system ? [{ role: "system", content: c.system }] : [],
  rememberedMessages: [],
  taggedSystemMessages: {},
};

const make = {
  faithfulness: () => prebuilt.createFaithfulnessScorer({ model, options: { context: c.context } }),
  hallucination: () => prebuilt.createHallucinationScorer({ model, options: { context: c.context } }),
  bias: () => prebuilt.createBiasScorer({ model }),
  toxicity: () => prebuilt.createToxicityScorer({ model }),
  answer_similarity: () => prebuilt.createAnswerSimilarityScorer({ model }),
  context_precision: () => prebuilt.createContextPrecisionScorer({ model, options: { context: c.context } }),
  context_recall: () => prebuilt.createContextRecallScorer({ model, options: { context: c.context } }),
  context_relevance: () => prebuilt.createContextRelevanceScorerLLM({ model, options: { context: c.context } }),
  prompt_alignment: () => prebuilt.createPromptAlignmentScorerLLM({ model }),
  noise_sensitivity: () =>
    prebuilt.createNoiseSensitivityScorerLLM({ model, options: { baselineResponse: c.reference, noisyQuery: c.input } }),
  summarization: () => prebuilt.createSummarizationScorer({ model }),
  tool_call_accuracy_llm: () =>
    prebuilt.createToolCallAccuracyScorerLLM({
      model,
      availableTools: (c.availableTools || []).map(([id, description]) => ({ id, description })),
    }),
  trajectory_accuracy_llm: () => prebuilt.createTrajectoryAccuracyScorerLLM({ model }),
  rubric: () =>
    prebuilt.createRubricScorer({
      model,
      criteria: c.criteria.map((x) => ({ description: x.criterion, required: x.required ?? true })),
    }),
  multi_turn: () => prebuilt.createMultiTurnJudgeScorer({ model, criterion: c.criterion }),
};

const scorer = make[name]();
const run = { input, output, groundTruth: c.reference };
if (name === "multi_turn")
  run.output = c.turns.map((t, i) => ({ id: `m${i}`, role: "assistant", content: t, createdAt: new Date(0) }));
if (name === "trajectory_accuracy_llm")
  run.output = {
    steps: (c.toolCalls || []).map((t) => ({ stepType: "tool_call", name: t.name, toolArgs: t.args || {} })),
    rawOutput: output,
  };
const result = await scorer.run(run);
console.log(JSON.stringify({ score: result.score }));
