"""OTLP in and out: decoding spans, writing evaluation spans and events, where OTLP goes, the score export."""
