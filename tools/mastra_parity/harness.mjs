// Runs Mastra's scorers from the pinned @mastra/evals on every case of a JSONL file
// and writes one JSON line per case: {id, score, preprocess, analysis} or {id, error}.
// Usage: node harness.mjs cases.jsonl > mastra.jsonl  (the Python driver does this; see README.md)
// The LLM-judged scorers call the OpenAI-compatible server at $MASTRA_JUDGE_URL (the driver's
// scripted judge on 127.0.0.1) through Mastra's own model router.
import { readFileSync } from "node:fs";
import {
  createCompletenessScorer,
  createContentSimilarityScorer,
  createKeywordCoverageScorer,
  createTextualDifferenceScorer,
  createToneScorer,
  createToolCallAccuracyScorerCode,
  createAnswerRelevancyScorer,
  createAnswerSimilarityScorer,
  createContextRelevanceScorerLLM,
  createBiasScorer,
  createContextPrecisionScorer,
  createFaithfulnessScorer,
  createHallucinationScorer,
  createNoiseSensitivityScorerLLM,
  createPromptAlignmentScorerLLM,
  createSummarizationScorer,
  createToxicityScorer,
  createToolCallAccuracyScorerLLM,
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

// The LLM-judged scorers: an OpenAI-compatible provider at the scripted judge's URL.
const model = { providerId: "openai", modelId: "gpt-4o-mini", url: process.env.MASTRA_JUDGE_URL, apiKey: "test-key" };
const JUDGED = {
  faithfulness: createFaithfulnessScorer,
  hallucination: createHallucinationScorer,
  "answer-relevancy": createAnswerRelevancyScorer,
  bias: createBiasScorer,
  toxicity: createToxicityScorer,
  "context-precision": createContextPrecisionScorer,
  "noise-sensitivity": createNoiseSensitivityScorerLLM,
  "prompt-alignment": createPromptAlignmentScorerLLM,
  summarization: createSummarizationScorer,
  "context-relevance": createContextRelevanceScorerLLM,
  "answer-similarity": createAnswerSimilarityScorer,
};
// No options (an empty object) = the factory's defaults: answer relevancy's `options = DEFAULT_OPTIONS`
// would be replaced by {} and lose its scale.
for (const [name, factory] of Object.entries(JUDGED))
  FACTORIES[name] = (o) => (o && Object.keys(o).length ? factory({ model, options: o }) : factory({ model }));
// Tool-call accuracy (LLM) takes its tools beside the model, not in options.
FACTORIES["tool-call-accuracy"] = (o) => createToolCallAccuracyScorerLLM({ model, availableTools: o.availableTools });

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
