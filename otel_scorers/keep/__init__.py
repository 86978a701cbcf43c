"""Runs kept as a test set: the traces of the runs a scorer failed (or a sample of all runs)
written to an OTLP/JSON trace file that `otel-scorers score` reads."""
