"""Bearer-token checks and TLS settings shared by both receivers."""

from __future__ import annotations

import hmac
import os
import ssl
from pathlib import Path

import grpc

from otel_scorers.config import SidecarConfig, TlsConfig
from otel_scorers.errors import ConfigError


class TokenCheck:
    """Checks an `Authorization` header value against `Bearer <token>`: the scheme in any case
    (HTTP schemes are case-insensitive), the token compared in constant time. A value that is not
    text (a non-ASCII byte) is a wrong token, not an error."""

    def __init__(self, token: str | None) -> None:
        self._expected = token.encode() if token else None

    @property
    def enabled(self) -> bool:
        return self._expected is not None

    def problem(self, authorization: str | None) -> str | None:
        """None when allowed, else what is wrong (said without echoing the token)."""
        if self._expected is None:
            return None
        if not authorization:
            return "missing bearer token (Authorization: Bearer <token>)"
        scheme, _, credentials = authorization.strip().partition(" ")
        if scheme.lower() != "bearer":
            return "not a bearer token (Authorization: Bearer <token>)"
        # Header bytes that are not UTF-8 reach us as surrogates; they round-trip to the same bytes.
        given = credentials.strip().encode("utf-8", "surrogateescape")
        if not hmac.compare_digest(given, self._expected):
            return "wrong bearer token"
        return None


def resolve_token(config: SidecarConfig) -> str | None:
    if config.token_env:
        value = os.environ.get(config.token_env)
        if not value:
            raise ConfigError(
                "sidecar.token_env", f"environment variable {config.token_env} is not set or empty"
            )
        return value
    return config.token


def _read(path: str, key: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"sidecar.tls.{key}", f"cannot read {path}: {exc.strerror}") from None


def grpc_credentials(tls: TlsConfig) -> grpc.ServerCredentials:
    cert = _read(tls.cert_file, "cert_file")
    key = _read(tls.key_file, "key_file")
    client_ca = _read(tls.client_ca_file, "client_ca_file") if tls.client_ca_file else None
    return grpc.ssl_server_credentials(
        [(key, cert)], root_certificates=client_ca, require_client_auth=client_ca is not None
    )


def ssl_context(tls: TlsConfig) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(tls.cert_file, tls.key_file)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError("sidecar.tls.cert_file", f"cannot load certificate and key: {exc}") from None
    if tls.client_ca_file:
        try:
            context.load_verify_locations(tls.client_ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError("sidecar.tls.client_ca_file", f"cannot load client CA: {exc}") from None
        context.verify_mode = ssl.CERT_REQUIRED
    return context
