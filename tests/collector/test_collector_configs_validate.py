"""Every shipped Collector config is loaded by the Collector it is written for (`otelcol
validate`: every component known to the build, every setting known to its component); and the
build has exactly the components the shipped configs use."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from tests.collector.programs import CONFIGS, ROOT, otelcol

pytestmark = pytest.mark.collector

SHIPPED = sorted(CONFIGS.glob("*.yaml"))
#: The names this Collector release gives components that the shipped configs call by their
#: older names (which it still takes, as deprecated aliases, and which older releases know).
RENAMED = {"otlp_grpc": "otlp", "load_balancing": "loadbalancing"}


@pytest.mark.parametrize("config", SHIPPED, ids=[path.name for path in SHIPPED])
def test_the_collector_validates_the_shipped_config(config: Path) -> None:
    done = subprocess.run(
        [str(otelcol()), "validate", "--config", str(config)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def test_the_collector_refuses_a_config_with_a_component_it_does_not_have(tmp_path: Path) -> None:
    config = yaml.safe_load((CONFIGS / "sidecar-tap.yaml").read_text())
    config["processors"]["tail_sampling"] = {}
    config["service"]["pipelines"]["traces"]["processors"].append("tail_sampling")
    path = tmp_path / "with-tail-sampling.yaml"
    path.write_text(yaml.safe_dump(config))
    done = subprocess.run([str(otelcol()), "validate", "--config", str(path)], capture_output=True, text=True)
    assert done.returncode != 0 and "tail_sampling" in done.stderr


def test_the_build_has_exactly_the_components_the_shipped_configs_use() -> None:
    used: dict[str, set[str]] = {}
    for path in SHIPPED:
        config = yaml.safe_load(path.read_text())
        for kind in ("receivers", "processors", "exporters", "extensions"):
            used.setdefault(kind, set()).update(name.split("/")[0] for name in config.get(kind, {}))
    manifest = yaml.safe_load((ROOT / "collector-build" / "manifest.yaml").read_text())
    listed = subprocess.run([str(otelcol()), "components"], capture_output=True, text=True, timeout=60)
    built = yaml.safe_load(listed.stdout)
    for kind, names in used.items():
        assert {RENAMED.get(component["name"], component["name"]) for component in built[kind]} == names, kind
        assert len(manifest[kind]) == len(names), kind
