"""The bundled example agent and what runs it: `otel-scorers demo` (`live_demo`), the demo's
one-off OTLP send (`otlp_send`), and the live example traffic of the compose stack
(`example_traffic`)."""
