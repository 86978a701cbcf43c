// Runs Mastra's real code scorers (@mastra/evals 1.10.2) on the text-based reference cases of
// tests/data/code-scorers-vectors.json, reports agreement, and times scorer.run.
import fs from "node:fs";
import {
  createCompletenessScorer,
  createContentSimilarityScorer,
  createKeywordCoverageScorer,
  createTextualDifferenceScorer,
  createToneScorer,
} from "@mastra/evals/scorers/prebuilt";

const vectors = JSON.parse(fs.readFileSync(new URL("../../tests/data/code-scorers-vectors.json", import.meta.url)));
const factories = {
  textual_difference: () => createTextualDifferenceScorer(),
  content_similarity: (a) =>
    "ignore_case" in a || "ignore_whitespace" in a
      ? createContentSimilarityScorer({ ignoreCase: a.ignore_case ?? true, ignoreWhitespace: a.ignore_whitespace ?? true })
      : createContentSimilarityScorer(),
  keyword_coverage: () => createKeywordCoverageScorer(),
  completeness: () => createCompletenessScorer(),
  tone: (a) => createToneScorer(a.reference_tone ? { referenceTone: a.reference_tone } : {}),
};
const message = (role, text) => ({ id: "m", role, content: { format: 2, parts: [{ type: "text", text }], content: text } });
const runOf = (c) => ({ input: { inputMessages: [message("user", c.input)] }, output: [message("assistant", c.output)] });

const agree = {}, total = {};
for (const c of vectors.filter((v) => v.scorer in factories)) {
  const result = await factories[c.scorer](c.args).run(runOf(c));
  total[c.scorer] = (total[c.scorer] ?? 0) + 1;
  if (Math.abs(result.score - c.expected_score) <= 1e-9) agree[c.scorer] = (agree[c.scorer] ?? 0) + 1;
}
for (const name of Object.keys(total)) console.log(`agreement ${name}: ${agree[name] ?? 0} of ${total[name]}`);

const cases = vectors.filter((v) => v.scorer === "keyword_coverage").map(runOf);
const scorer = createKeywordCoverageScorer();
for (const run of cases) await scorer.run(run); // warm up
const rounds = 2000;
const started = process.hrtime.bigint();
for (let i = 0; i < rounds; i++) await scorer.run(cases[i % cases.length]);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
console.log(`scorer.run (keyword_coverage): ${Math.round(rounds / seconds)} runs/s (${((seconds / rounds) * 1e6).toFixed(1)} µs each), node ${process.version}`);
