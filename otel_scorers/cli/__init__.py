"""The command line: `otel-scorers` and what its commands run (scoring files of traces, the CI gate, JUnit)."""
