// Runs Mastra's code-based scorers from the pinned @mastra/evals on every case of a JSONL file
// and writes one JSON line per case: {id, score, analysis} or {id, error}.
// Usage: node harness.mjs cases.jsonl > mastra.jsonl  (the Python driver does this; see README.md)
import { readFileSync } from "node:fs";
import {
  createCompletenessScorer,
  createContentSimilarityScorer,
  createKeywordCoverageScorer,
  createTextualDifferenceScorer,
  createToneScorer,
  createToolCallAccuracyScorerCode,
} from "@mastra/evals/scorers/prebuilt";

// A case's "options" use Mastra's own option names; "default" means: call the factory without options.
const FACTORIES = {
  completeness: () => createCompletenessScorer(),
  "content-similarity": (o) => (o === "default" ? createContentSimilarityScorer() : createContentSimilarityScorer(o)),
  "keyword-coverage": () => createKeywordCoverageScorer(),
  "textual-difference": () => createTextualDifferenceScorer(),
  "tone-consistency": (o) => createToneScorer(o === "default" ? {} : o),
  "tool-call-accuracy-code": (o) => createToolCallAccuracyScorerCode(o),
};

// Sets (keyword coverage's keywords) become sorted arrays so they survive JSON.
const plain = (value) =>
  JSON.parse(JSON.stringify(value, (_, v) => (v instanceof Set ? [...v].sort() : v)));

const lines = readFileSync(process.argv[2], "utf8").split("\n").filter((line) => line.trim());
for (const line of lines) {
  const c = JSON.parse(line);
  try {
    const scorer = FACTORIES[c.scorer](c.options);
    const result = await scorer.run({ input: c.run.input, output: c.run.output, groundTruth: c.run.groundTruth });
    process.stdout.write(
      JSON.stringify({
        id: c.id,
        score: result.score,
        preprocess: plain(result.preprocessStepResult ?? null),
        analysis: plain(result.analyzeStepResult ?? null),
      }) + "\n",
    );
  } catch (error) {
    process.stdout.write(JSON.stringify({ id: c.id, error: String(error?.message ?? error) }) + "\n");
  }
}
