"""The `sidecar:` section of the config file: defaults, validation errors that name the key."""

from __future__ import annotations

from typing import Any

import pytest

from otel_scorers.config import parse_config
from otel_scorers.errors import ConfigError
from otel_scorers.sidecar.security import resolve_token

SCORERS = [{"type": "no_tool_errors"}]


def config(**sidecar: Any) -> Any:
    return parse_config({"scorers": SCORERS, "sidecar": sidecar})


def test_defaults_listen_on_loopback_with_the_documented_ports_and_limits() -> None:
    settings = parse_config({"scorers": SCORERS}).sidecar
    assert settings.mode == "tap"
    assert (settings.grpc.host, settings.grpc.port) == ("127.0.0.1", 14317)
    assert (settings.http.host, settings.http.port) == ("127.0.0.1", 14318)
    assert settings.decision_wait_s == 2.0
    assert settings.max_request_bytes == 4 * 1024 * 1024
    assert settings.tls is None and settings.token is None


@pytest.mark.parametrize(
    ("section", "path", "message"),
    [
        ({"grpc": {"port": 70000}}, "sidecar.grpc.port", "less than or equal to 65535"),
        ({"mode": "mirror"}, "sidecar.mode", "'tap' or 'inline'"),
        ({"mode": "inline"}, "sidecar", "needs a 'forward' section"),
        ({"decision_wait_s": 5, "max_wait_s": 1}, "sidecar", "max_wait_s must be at least decision_wait_s"),
        ({"tls": {"cert_file": "a.pem"}}, "sidecar.tls.key_file", "Field required"),
        ({"export": {"protocol": "udp"}}, "sidecar.export.protocol", "'grpc' or 'http/protobuf'"),
        (
            {"forward": {"endpoint": "x", "protocol": "kafka"}},
            "sidecar.forward.protocol",
            "'grpc' or 'http/protobuf'",
        ),
        ({"max_request_bytes": 10}, "sidecar.max_request_bytes", "greater than or equal to 1024"),
        ({"decision_wiat_s": 1}, "sidecar.decision_wiat_s", "unknown key; did you mean 'decision_wait_s'?"),
    ],
)
def test_invalid_settings_name_the_key(section: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        config(**section)
    assert raised.value.path == path
    assert message in raised.value.message


def test_the_token_can_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCORERS_TOKEN", "from-env")
    assert resolve_token(config(token_env="SCORERS_TOKEN").sidecar) == "from-env"
    monkeypatch.delenv("SCORERS_TOKEN")
    with pytest.raises(ConfigError, match=r"sidecar\.token_env: environment variable SCORERS_TOKEN"):
        resolve_token(config(token_env="SCORERS_TOKEN").sidecar)
