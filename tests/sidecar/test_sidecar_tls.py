"""TLS and mutual TLS on both receivers, with certificates made by openssl for the test."""

from __future__ import annotations

import http.client
import shutil
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from otel_scorers.demos.example_agent import DEMO_RUNS
from otel_scorers.span_record import OWN_SCOPE
from tests.otlp_capture import OtlpCapture
from tests.sidecar_harness import RunningSidecar, agent_spans, encode, sidecar_document

EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

pytestmark = pytest.mark.skipif(
    shutil.which("openssl") is None, reason="the openssl command is needed to make certificates"
)


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by the CA."""
    folder = tmp_path_factory.mktemp("certs")
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    openssl(
        "req",
        "-x509",
        *ec,
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "1",
        "-subj",
        "/CN=test-ca",
        cwd=folder,
    )
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name in ("server", "client"):
        openssl(
            "req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=folder
        )
        openssl(
            "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", f"{name}.crt", "-days", "1", "-extfile", "san.ext", cwd=folder,
        )  # fmt: skip
    return folder


@pytest.fixture(scope="module")
def capture() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


def evaluations(capture: OtlpCapture) -> int:
    return sum(1 for _, scope, _ in capture.spans() if scope == OWN_SCOPE)


def test_tls_on_both_receivers(certs: Path, capture: OtlpCapture) -> None:
    tls = {"cert_file": str(certs / "server.crt"), "key_file": str(certs / "server.key")}
    body, other_body = (encode(agent_spans(DEMO_RUNS[:1])).SerializeToString() for _ in range(2))
    with RunningSidecar(sidecar_document(capture.endpoint, tls=tls)) as sidecar:
        before = evaluations(capture)
        credentials = grpc.ssl_channel_credentials(root_certificates=(certs / "ca.crt").read_bytes())
        with grpc.secure_channel(sidecar.grpc_endpoint, credentials) as channel:
            channel.unary_unary(EXPORT)(body, timeout=10)
        with grpc.insecure_channel(sidecar.grpc_endpoint) as channel, pytest.raises(grpc.RpcError):
            channel.unary_unary(EXPORT)(body, timeout=2)  # plaintext is not spoken
        context = ssl.create_default_context(cafile=str(certs / "ca.crt"))
        connection = http.client.HTTPSConnection(
            "127.0.0.1", sidecar.service.http.port, context=context, timeout=10
        )
        headers = {"Content-Type": "application/x-protobuf"}
        connection.request("POST", "/v1/traces", body=other_body, headers=headers)
        assert connection.getresponse().status == 200
        connection.close()
        assert capture.wait_for(lambda: evaluations(capture) >= before + 6)  # two traces, three scorers


def test_mutual_tls_requires_a_client_certificate(certs: Path, capture: OtlpCapture) -> None:
    tls = {
        "cert_file": str(certs / "server.crt"),
        "key_file": str(certs / "server.key"),
        "client_ca_file": str(certs / "ca.crt"),
    }
    body = encode(agent_spans(DEMO_RUNS[:1])).SerializeToString()
    ca = (certs / "ca.crt").read_bytes()
    with RunningSidecar(sidecar_document(capture.endpoint, tls=tls)) as sidecar:
        with_cert = grpc.ssl_channel_credentials(
            root_certificates=ca,
            private_key=(certs / "client.key").read_bytes(),
            certificate_chain=(certs / "client.crt").read_bytes(),
        )
        with grpc.secure_channel(sidecar.grpc_endpoint, with_cert) as channel:
            channel.unary_unary(EXPORT)(body, timeout=10)
        without_cert = grpc.ssl_channel_credentials(root_certificates=ca)
        with (
            grpc.secure_channel(sidecar.grpc_endpoint, without_cert) as channel,
            pytest.raises(grpc.RpcError),
        ):
            channel.unary_unary(EXPORT)(body, timeout=2)

        context = ssl.create_default_context(cafile=str(certs / "ca.crt"))
        connection = http.client.HTTPSConnection(
            "127.0.0.1", sidecar.service.http.port, context=context, timeout=5
        )
        with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
            connection.request(
                "POST", "/v1/traces", body=body, headers={"Content-Type": "application/x-protobuf"}
            )
            connection.getresponse()
        connection.close()
        context.load_cert_chain(str(certs / "client.crt"), str(certs / "client.key"))
        connection = http.client.HTTPSConnection(
            "127.0.0.1", sidecar.service.http.port, context=context, timeout=10
        )
        connection.request(
            "POST", "/v1/traces", body=body, headers={"Content-Type": "application/x-protobuf"}
        )
        assert connection.getresponse().status == 200
        connection.close()


def test_unreadable_certificate_is_a_config_error_naming_the_key(
    tmp_path: Path, capture: OtlpCapture
) -> None:
    from otel_scorers.errors import ConfigError

    tls = {"cert_file": str(tmp_path / "missing.crt"), "key_file": str(tmp_path / "missing.key")}
    with (
        pytest.raises(ConfigError, match=r"sidecar\.tls\.cert_file"),
        RunningSidecar(sidecar_document(capture.endpoint, tls=tls)),
    ):
        pass
