// Mastra's completeness scorer (@mastra/evals 1.10.2) on the pairs of a JSON file, and the
// elements compromise extracts from each text (as the scorer does: nouns, verbs turned into
// their infinitive, topics, terms). Used by bench/completeness_parity.py.
import fs from "node:fs";
import nlp from "compromise";
import { createCompletenessScorer } from "@mastra/evals/scorers/prebuilt";

const { pairs } = JSON.parse(fs.readFileSync(process.argv[2]));
const fold = (text) => text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
const split = (term) => fold(term).replace(/[^a-z0-9]+/g, " ").trim().split(/\s+/).filter((word) => word.length > 0);
function elements(text) {
  const doc = nlp(text.trim());
  const nouns = doc.nouns().out("array") || [];
  const verbs = doc.verbs().toInfinitive().out("array") || [];
  const topics = doc.topics().out("array") || [];
  const terms = doc.terms().out("array") || [];
  return [...new Set([...nouns, ...verbs, ...topics, ...terms].flatMap(split))];
}
const message = (role, text) => ({ id: "m", role, content: { format: 2, parts: [{ type: "text", text }], content: text } });
const scorer = createCompletenessScorer();
const results = [];
for (const pair of pairs) {
  const run = { input: { inputMessages: [message("user", pair.input)] }, output: [message("assistant", pair.output)] };
  const { score } = await scorer.run(run);
  results.push({ score, input: elements(pair.input), output: elements(pair.output) });
}
process.stdout.write(JSON.stringify(results));
