"""Where the sidecar's export sends scores, in the words of its `sidecar.export` section."""

from __future__ import annotations

from otel_scorers.otlp.endpoint import environment_endpoint
from otel_scorers.otlp.exporters import ExportConfig, export_endpoint, export_protocol


def endpoint_configured(config: ExportConfig) -> bool:
    """Whether the config or the environment names an OTLP endpoint (else the SDK's default)."""
    return bool(config.endpoint) or environment_endpoint() is not None


def export_destination(config: ExportConfig) -> str:
    """Where the export sends scores, in words, saying where the endpoint comes from."""
    if not config.enabled:
        return "no OTLP endpoint (sidecar.export.enabled is false)"
    where = f"OTLP ({export_protocol(config)}) at {export_endpoint(config)}"
    if config.endpoint:
        return where
    named = environment_endpoint()
    if named is not None:
        return f"{where} (from {named[0]})"
    return (
        f"{where}, the SDK's default: neither sidecar.export.endpoint nor OTEL_EXPORTER_OTLP_ENDPOINT is set"
    )
