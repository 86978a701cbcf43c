"""Mastra's LLM-judged scorers (spec/llm-scorers.md), each computed in code from the judge's
verdicts: one call by default, Mastra's several with `steps`, several scorers of a run in one
call with `judge: {batch: true}`. `base` holds what they share; one module per scorer."""
