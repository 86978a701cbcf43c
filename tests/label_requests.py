"""People's labels as the OTLP logs request a sidecar's `/v1/logs` takes (`LabelLogWriter`)."""

from __future__ import annotations

from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

from otel_scorers.labels.join_records import Label
from otel_scorers.labels.label_records import LabelLogWriter, labels_from_request


def label_request(items: list[Label]) -> bytes:
    logs = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    writer = LabelLogWriter(provider)
    for label in items:
        writer.emit(label)
    request = encode_logs(logs.get_finished_logs())
    provider.shutdown()
    assert labels_from_request(request)[0] == items  # what goes out reads back the same
    return request.SerializeToString()
