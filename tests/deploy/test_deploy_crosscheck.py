"""Every endpoint and port named in one deployment file agrees with the files it talks to and
with the sidecar's own defaults (OTLP/gRPC 14317; OTLP/HTTP, /metrics, /healthz, /readyz 14318):
collector configs, the compose file, the Prometheus config, Grafana provisioning and dashboard,
the Dockerfile and the Kubernetes manifests. The sidecar configs load with the project's own
config loader.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from otel_scorers.config import Config, SidecarConfig, load_config, parse_config

ROOT = Path(__file__).resolve().parent.parent.parent
DEPLOY = ROOT / "deploy"
COLLECTOR_CONFIGS = ROOT / "collector-config"
DEFAULTS = SidecarConfig()
GRPC_PORT, HTTP_PORT = DEFAULTS.grpc.port, DEFAULTS.http.port
PROMETHEUS_PORT, JAEGER_UI_PORT, JAEGER_OTLP_GRPC_PORT = 9090, 16686, 4317


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def host_port(endpoint: str) -> tuple[str, int]:
    """`host:port`, `scheme://host:port/path` -> (host, port)."""
    parts = urlsplit(endpoint if "://" in endpoint else f"//{endpoint}")
    assert parts.hostname and parts.port, f"no host and port in {endpoint!r}"
    return parts.hostname, parts.port


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = load_yaml(DEPLOY / "docker-compose.yaml")
    return loaded


def service(name: str) -> dict[str, Any]:
    found: dict[str, Any] = compose()["services"][name]
    return found


def mounts(name: str) -> dict[str, Path]:
    """Container path -> host path of a compose service's bind mounts."""
    result = {}
    for volume in service(name).get("volumes", []):
        source, target = volume.split(":")[:2]
        result[target] = (DEPLOY / source).resolve()
    return result


def published(name: str) -> set[int]:
    return {int(str(port).split(":")[-1]) for port in service(name).get("ports", [])}


def receiver_ports(config: dict[str, Any]) -> dict[int, str]:
    """Port -> receiver id, for every protocol of every receiver."""
    ports = {}
    for receiver_id, receiver in config["receivers"].items():
        for protocol in receiver["protocols"].values():
            ports[host_port(protocol["endpoint"])[1]] = receiver_id
    return ports


def pipelines_from(config: dict[str, Any], receiver_id: str) -> list[dict[str, Any]]:
    return [pipe for pipe in config["service"]["pipelines"].values() if receiver_id in pipe["receivers"]]


def assert_results_come_back_to(collector: dict[str, Any], endpoint: str) -> None:
    """The sidecar's results reach a collector receiver whose pipelines carry traces, metrics and
    logs on, and never back to the sidecar."""
    port = host_port(endpoint)[1]
    receiver = receiver_ports(collector).get(port)
    assert receiver is not None and receiver != "otlp", f"no receiver of its own for results on {port}"
    pipelines = pipelines_from(collector, receiver)
    signals = {
        pipeline_id.split("/")[0]
        for pipeline_id, pipe in collector["service"]["pipelines"].items()
        if pipe in pipelines
    }
    assert signals == {"traces", "metrics", "logs"}
    for pipeline in pipelines:
        assert not any(e == "loadbalancing" or "otel-scorers" in e for e in pipeline["exporters"])


def sidecar_exporter_endpoint(collector: dict[str, Any]) -> str:
    endpoint: str = collector["exporters"]["otlp/otel-scorers"]["endpoint"]
    return endpoint


def k8s(name: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all((DEPLOY / "k8s" / name).read_text()) if doc]


def k8s_kind(name: str, kind: str) -> list[dict[str, Any]]:
    return [doc for doc in k8s(name) if doc["kind"] == kind]


def config_map_text(name: str, key: str) -> str:
    (config_map,) = k8s_kind(name, "ConfigMap")
    text: str = config_map["data"][key]
    return text


def container(name: str, container_name: str) -> dict[str, Any]:
    (deployment,) = k8s_kind(name, "Deployment")
    containers: list[dict[str, Any]] = deployment["spec"]["template"]["spec"]["containers"]
    (found,) = (c for c in containers if c["name"] == container_name)
    return found


def container_ports(found: dict[str, Any]) -> dict[str, int]:
    return {port["name"]: port["containerPort"] for port in found["ports"]}


def config_path_in(found: dict[str, Any], flag: str) -> PurePosixPath:
    args = found["args"]
    if flag == "-c":
        return PurePosixPath(args[args.index("-c") + 1])
    (value,) = (arg.split("=", 1)[1] for arg in args if arg.startswith(f"{flag}="))
    return PurePosixPath(value)


def mounted_key(name: str, found: dict[str, Any], path: PurePosixPath) -> str:
    """The ConfigMap key that `path` reads, checking it is mounted from this manifest's ConfigMap."""
    (config_map,) = k8s_kind(name, "ConfigMap")
    (deployment,) = k8s_kind(name, "Deployment")
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    for mount in found["volumeMounts"]:
        if PurePosixPath(mount["mountPath"]) == path.parent:
            assert volumes[mount["name"]]["configMap"]["name"] == config_map["metadata"]["name"]
            assert path.name in config_map["data"], f"{name}: no key {path.name}"
            return path.name
    raise AssertionError(f"{name}: nothing mounted at {path.parent}")


# ---- the sidecar's own defaults and configs ---------------------------------------------------


def test_the_sidecar_defaults_are_the_documented_ports() -> None:
    assert (GRPC_PORT, HTTP_PORT) == (14317, 14318)


@pytest.mark.parametrize("name", ["otel-scorers.yaml", "otel-scorers-inline.yaml"])
def test_the_compose_sidecar_configs_load_and_listen_on_the_defaults_everywhere(name: str) -> None:
    config = load_config(DEPLOY / name)
    assert config.scoring().bindings
    for listen in (config.sidecar.grpc, config.sidecar.http):
        assert listen.host == "0.0.0.0", "in a container the receivers must listen beyond loopback"
    assert (config.sidecar.grpc.port, config.sidecar.http.port) == (GRPC_PORT, HTTP_PORT)


# ---- compose --------------------------------------------------------------------------------


def test_compose_mounts_the_files_that_exist_where_the_programs_read_them() -> None:
    collector_mounts = mounts("otel-collector")
    (config_flag,) = service("otel-collector")["command"]
    collector_config = collector_mounts[config_flag.split("=", 1)[1]]
    assert collector_config == (COLLECTOR_CONFIGS / "sidecar-tap.yaml").resolve()
    # The sidecar's config path is the one the image's CMD names and the Dockerfile copies to.
    cmd = dockerfile_instruction("CMD")
    config_path = json.loads(cmd)[-1]
    assert mounts("otel-scorers")[config_path] == (DEPLOY / "otel-scorers.yaml").resolve()
    assert f"deploy/otel-scorers.yaml {config_path}" in " ".join(dockerfile_instruction("COPY", every=True))
    prometheus_dir = mounts("prometheus")["/etc/prometheus"]
    (config_flag,) = service("prometheus")["command"]
    assert PurePosixPath(config_flag.split("=", 1)[1]).parent == PurePosixPath("/etc/prometheus")
    assert (prometheus_dir / PurePosixPath(config_flag.split("=", 1)[1]).name).is_file()
    for path in mounts("grafana").values():
        assert path.exists(), path


def test_the_compose_collector_sends_to_the_compose_services_on_their_ports() -> None:
    collector = load_yaml(COLLECTOR_CONFIGS / "sidecar-tap.yaml")
    sidecar = load_config(DEPLOY / "otel-scorers.yaml").sidecar
    assert host_port(sidecar_exporter_endpoint(collector)) == ("otel-scorers", sidecar.grpc.port)
    assert host_port(collector["exporters"]["otlp/jaeger"]["endpoint"]) == ("jaeger", JAEGER_OTLP_GRPC_PORT)
    for exporter in collector["exporters"].values():
        endpoint = (exporter or {}).get("endpoint")
        if endpoint and not endpoint.startswith("0.0.0.0"):
            assert host_port(endpoint)[0] in compose()["services"], endpoint
    # The agents' ports are the otlp receiver's, published to the host.
    agent_ports = {port for port, receiver in receiver_ports(collector).items() if receiver == "otlp"}
    assert agent_ports == {4317, 4318} == published("otel-collector")


def test_the_sidecars_results_reach_the_collectors_receiver_for_them() -> None:
    sidecar = load_config(DEPLOY / "otel-scorers.yaml").sidecar
    assert sidecar.export.endpoint is not None
    assert host_port(sidecar.export.endpoint)[0] == "otel-collector"
    assert_results_come_back_to(load_yaml(COLLECTOR_CONFIGS / "sidecar-tap.yaml"), sidecar.export.endpoint)


def test_the_inline_override_swaps_both_configs_at_the_paths_the_stack_reads() -> None:
    override = load_yaml(DEPLOY / "docker-compose.inline.yaml")["services"]
    assert set(override) == {"otel-collector", "otel-scorers"}
    for name, expected in (
        ("otel-collector", COLLECTOR_CONFIGS / "sidecar-inline.yaml"),
        ("otel-scorers", DEPLOY / "otel-scorers-inline.yaml"),
    ):
        ((source, target),) = (volume.split(":")[:2] for volume in override[name]["volumes"])
        assert (DEPLOY / source).resolve() == expected.resolve()
        assert target in mounts(name), f"{name}: {target} would be added, not replaced"


def test_inline_mode_forwards_to_the_collector_and_the_collector_does_not_loop() -> None:
    collector = load_yaml(COLLECTOR_CONFIGS / "sidecar-inline.yaml")
    sidecar = load_config(DEPLOY / "otel-scorers-inline.yaml").sidecar
    assert sidecar.mode == "inline" and sidecar.forward is not None and sidecar.export.endpoint
    assert host_port(sidecar_exporter_endpoint(collector)) == ("otel-scorers", sidecar.grpc.port)
    # Traces from agents go only to the sidecar; what it forwards goes to Jaeger only.
    assert collector["service"]["pipelines"]["traces"]["exporters"] == ["otlp/otel-scorers"]
    forwarded = receiver_ports(collector)[host_port(sidecar.forward.endpoint)[1]]
    for pipeline in pipelines_from(collector, forwarded):
        assert "otlp/otel-scorers" not in pipeline["exporters"]
    assert_results_come_back_to(collector, sidecar.export.endpoint)


def test_the_example_agent_sends_to_the_collectors_otlp_receiver() -> None:
    collector = load_yaml(COLLECTOR_CONFIGS / "sidecar-tap.yaml")
    command = service("example-agent")["command"]
    endpoint = command[command.index("--endpoint") + 1]
    host, port = host_port(endpoint)
    assert host == "otel-collector"
    grpc = collector["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"]
    assert port == host_port(grpc)[1]
    assert service("example-agent")["depends_on"]["otel-scorers"]["condition"] == "service_healthy"


def test_the_services_name_themselves_as_the_dashboard_searches_them() -> None:
    assert service("otel-scorers")["environment"]["OTEL_SERVICE_NAME"] == "otel-scorers"
    assert container("sidecar.yaml", "otel-scorers")["env"] == [
        {"name": "OTEL_SERVICE_NAME", "value": "otel-scorers"}
    ]
    # The dashboard's Jaeger links search the service in the score series' `job` label: for the
    # sidecar, the scrape job, which must carry the sidecar's service name.
    dashboard = (DEPLOY / "grafana" / "dashboards" / "otel-scorers.json").read_text()
    assert "service=${__field.labels.job}&" in dashboard
    jobs = {job["job_name"] for job in load_yaml(DEPLOY / "prometheus" / "prometheus.yml")["scrape_configs"]}
    assert service("otel-scorers")["environment"]["OTEL_SERVICE_NAME"] in jobs


# ---- Prometheus and Grafana -----------------------------------------------------------------


def test_prometheus_scrapes_the_sidecar_and_the_collector_where_they_serve_metrics() -> None:
    prometheus = load_yaml(DEPLOY / "prometheus" / "prometheus.yml")
    targets = {
        job["job_name"]: [host_port(t) for config in job["static_configs"] for t in config["targets"]]
        for job in prometheus["scrape_configs"]
    }
    sidecar = load_config(DEPLOY / "otel-scorers.yaml").sidecar
    assert targets["otel-scorers"] == [("otel-scorers", sidecar.http.port)]
    jobs = {job["job_name"]: job for job in prometheus["scrape_configs"]}
    assert jobs["otel-scorers"]["metrics_path"] == "/metrics"
    collector = load_yaml(COLLECTOR_CONFIGS / "sidecar-tap.yaml")
    exporter_port = host_port(collector["exporters"]["prometheus"]["endpoint"])[1]
    assert targets["otel-collector"] == [("otel-collector", exporter_port)]
    for rules in prometheus["rule_files"]:
        assert (DEPLOY / "prometheus" / rules).is_file()


def test_grafana_reaches_prometheus_and_jaeger_at_their_compose_addresses() -> None:
    datasources = {
        source["type"]: source
        for source in load_yaml(DEPLOY / "grafana" / "provisioning" / "datasources" / "datasources.yaml")[
            "datasources"
        ]
    }
    assert host_port(datasources["prometheus"]["url"]) == ("prometheus", PROMETHEUS_PORT)
    assert PROMETHEUS_PORT in published("prometheus")
    assert host_port(datasources["jaeger"]["url"]) == ("jaeger", JAEGER_UI_PORT)
    assert JAEGER_UI_PORT in published("jaeger")
    prometheus = load_yaml(DEPLOY / "prometheus" / "prometheus.yml")
    # $__rate_interval is sized from the datasource's scrape interval: they must be the same.
    assert datasources["prometheus"]["jsonData"]["timeInterval"] == prometheus["global"]["scrape_interval"]


def test_grafana_loads_the_dashboard_from_where_compose_mounts_it() -> None:
    providers = load_yaml(DEPLOY / "grafana" / "provisioning" / "dashboards" / "dashboards.yaml")["providers"]
    (path,) = (provider["options"]["path"] for provider in providers)
    grafana_mounts = mounts("grafana")
    assert grafana_mounts[path] == (DEPLOY / "grafana" / "dashboards").resolve()
    assert grafana_mounts["/etc/grafana/provisioning"] == (DEPLOY / "grafana" / "provisioning").resolve()
    home = PurePosixPath(service("grafana")["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"])
    assert (grafana_mounts[str(home.parent)] / home.name).is_file()
    dashboard = json.loads((grafana_mounts[path] / home.name).read_text())
    jaeger_url = next(v for v in dashboard["templating"]["list"] if v["name"] == "jaeger_url")["query"]
    assert host_port(jaeger_url) == ("localhost", JAEGER_UI_PORT)


# ---- the image --------------------------------------------------------------------------------


def dockerfile_instruction(op: str, every: bool = False) -> Any:
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    found = [line.split(None, 1)[1] for line in text.splitlines() if line.split(None, 1)[:1] == [op]]
    return found if every else found[-1]


def test_the_image_exposes_and_checks_the_sidecar_ports() -> None:
    assert {int(port) for port in dockerfile_instruction("EXPOSE").split()} == {GRPC_PORT, HTTP_PORT}
    healthcheck = dockerfile_instruction("HEALTHCHECK")
    (url,) = re.findall(r"http://[^']+", healthcheck)
    assert host_port(url)[1] == HTTP_PORT and url.endswith("/healthz")
    assert json.loads(dockerfile_instruction("ENTRYPOINT")) == ["otel-scorers"]
    assert json.loads(dockerfile_instruction("CMD"))[:2] == ["serve", "-c"]
    user = dockerfile_instruction("USER")
    assert f"--uid {user}" in dockerfile_instruction("RUN", every=True)[-1]
    for manifest in ("sidecar.yaml", "collector-with-sidecar.yaml"):
        (deployment,) = k8s_kind(manifest, "Deployment")
        assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == int(user)


def test_compose_builds_one_image_from_the_repository_with_the_dockerfile() -> None:
    images = set()
    for name in ("otel-scorers", "example-agent"):
        build = service(name)["build"]
        assert (DEPLOY / build["context"]).resolve() == ROOT
        assert (ROOT / build["dockerfile"]).resolve() == (DEPLOY / "Dockerfile").resolve()
        images.add(service(name)["image"])
    assert len(images) == 1


def test_the_dockerignore_lets_through_everything_the_dockerfile_copies() -> None:
    lines = (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
    allowed = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    for copy in dockerfile_instruction("COPY", every=True):
        if copy.startswith("--from"):
            continue
        *sources, _ = copy.split()
        for source in sources:
            assert source in allowed, f"COPY {source} is excluded by Dockerfile.dockerignore"
            assert (ROOT / source).exists(), source


def test_the_example_traffic_entry_point_exists() -> None:
    module = service("example-agent")["entrypoint"][-1]
    assert (ROOT / (module.replace(".", "/") + ".py")).is_file()
    assert shlex.join(service("example-agent")["entrypoint"][:2]) == "python -m"


# ---- Kubernetes -----------------------------------------------------------------------------


def k8s_sidecar_config(manifest: str, found: dict[str, Any]) -> Config:
    key = mounted_key(manifest, found, config_path_in(found, "-c"))
    return parse_config(yaml.safe_load(config_map_text(manifest, key)), f"{manifest}:{key}")


def test_the_k8s_sidecar_deployment_agrees_with_its_config_services_and_probes() -> None:
    found = container("sidecar.yaml", "otel-scorers")
    config = k8s_sidecar_config("sidecar.yaml", found).sidecar
    ports = container_ports(found)
    assert ports == {"otlp-grpc": config.grpc.port, "otlp-http": config.http.port}
    assert (config.grpc.port, config.http.port) == (GRPC_PORT, HTTP_PORT)
    assert config.grpc.host == config.http.host == "0.0.0.0"
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        assert found[probe]["httpGet"] == {"path": path, "port": "otlp-http"}
    (deployment,) = k8s_kind("sidecar.yaml", "Deployment")
    pod = deployment["spec"]["template"]
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == str(config.http.port)
    assert pod["spec"]["terminationGracePeriodSeconds"] > config.shutdown_timeout_s
    labels = pod["metadata"]["labels"]
    for svc in k8s_kind("sidecar.yaml", "Service"):
        assert svc["spec"]["selector"].items() <= labels.items()
        for port in svc["spec"]["ports"]:
            assert ports[port["targetPort"]] == port["port"]


def test_scale_out_resolves_the_headless_service_of_the_sidecar_replicas() -> None:
    collector = load_yaml(COLLECTOR_CONFIGS / "scale-out.yaml")
    dns = collector["exporters"]["loadbalancing"]["resolver"]["dns"]
    (headless,) = (s for s in k8s_kind("sidecar.yaml", "Service") if s["spec"].get("clusterIP") == "None")
    name, namespace = headless["metadata"]["name"], headless["metadata"]["namespace"]
    assert dns["hostname"] == f"{name}.{namespace}.svc.cluster.local"
    assert int(dns["port"]) == GRPC_PORT == headless["spec"]["ports"][0]["port"]
    # The replicas send their results back to the collector tier's receiver for them.
    config = k8s_sidecar_config("sidecar.yaml", container("sidecar.yaml", "otel-scorers")).sidecar
    assert config.export.endpoint is not None
    assert host_port(config.export.endpoint)[0] == f"otel-collector.{namespace}.svc.cluster.local"
    assert_results_come_back_to(collector, config.export.endpoint)


def test_the_collector_pod_with_a_sidecar_is_wired_over_localhost() -> None:
    manifest = "collector-with-sidecar.yaml"
    collector_container = container(manifest, "otel-collector")
    collector_key = mounted_key(
        manifest, collector_container, config_path_in(collector_container, "--config")
    )
    collector = yaml.safe_load(config_map_text(manifest, collector_key))
    sidecar_container = container(manifest, "otel-scorers")
    sidecar = k8s_sidecar_config(manifest, sidecar_container).sidecar
    assert host_port(sidecar_exporter_endpoint(collector)) == ("localhost", sidecar.grpc.port)
    assert sidecar.grpc.host == "127.0.0.1"  # only the collector in the pod can send to it
    assert sidecar.export.endpoint is not None and host_port(sidecar.export.endpoint)[0] == "localhost"
    assert_results_come_back_to(collector, sidecar.export.endpoint)
    assert not sidecar.http.enabled  # /metrics and probes only
    assert container_ports(sidecar_container) == {"scorers-http": sidecar.http.port}
    collector_ports = container_ports(collector_container)
    assert {collector_ports["otlp-grpc"], collector_ports["otlp-http"]} == {
        port for port, receiver in receiver_ports(collector).items() if receiver == "otlp"
    }
    assert collector_ports["prom-exporter"] == host_port(collector["exporters"]["prometheus"]["endpoint"])[1]
    assert collector_ports["health"] == host_port(collector["extensions"]["health_check"]["endpoint"])[1]
    (deployment,) = k8s_kind(manifest, "Deployment")
    assert deployment["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"] == str(
        sidecar.http.port
    )
    (svc,) = k8s_kind(manifest, "Service")
    for port in svc["spec"]["ports"]:
        assert collector_ports[port["targetPort"]] == port["port"]
