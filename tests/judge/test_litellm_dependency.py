"""litellm ships with the package, yet is imported only when a judge scorer runs, off the agent's thread."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import textwrap

from packaging.requirements import Requirement

from ..judge_server import ALL_RELEVANT, judge_server


def run_python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )


def test_litellm_is_a_regular_dependency_not_an_extra() -> None:
    requirements = [Requirement(text) for text in importlib.metadata.requires("otel-scorers") or []]
    litellm = [req for req in requirements if req.name == "litellm"]
    assert litellm, "litellm is among the installed package's requirements"
    assert any(req.marker is None for req in litellm), "a plain `pip install otel-scorers` brings litellm"


def test_scoring_without_a_judge_never_imports_litellm() -> None:
    result = run_python(
        """
        import sys
        from opentelemetry.sdk.trace import TracerProvider
        from otel_scorers import ScoringSpanProcessor, checks, load_config
        from otel_scorers.demos.example_agent import DEMO_RUNS, ExampleAgent
        from otel_scorers.demos.live_demo import DEMO_CONFIG
        from otel_scorers.config import parse_config
        import yaml

        provider = TracerProvider()
        config = parse_config(yaml.safe_load(DEMO_CONFIG))
        processor = ScoringSpanProcessor([*config.scoring().bindings, checks.used_no_tools()], tracer_provider=provider)
        provider.add_span_processor(processor)
        ExampleAgent(tracer=provider.get_tracer("agent")).run(DEMO_RUNS[0])
        assert processor.force_flush(10_000)
        processor.shutdown()
        print("litellm" in sys.modules, sum(1 for name in sys.modules if name.startswith("litellm")))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "0"]


def test_a_judge_imports_litellm_on_the_scoring_thread_not_the_agents() -> None:
    with judge_server(lambda _body: ALL_RELEVANT) as server:
        result = run_python(
            f"""
            import sys, threading, traceback
            importers = []

            class Watch:
                def find_spec(self, name, path=None, target=None):
                    # importlib.util.find_spec only asks whether litellm is installed: not an import.
                    asking = any(
                        frame.f_code.co_name == "find_spec" and "importlib" in frame.f_code.co_filename
                        for frame, _ in traceback.walk_stack(None)
                    )
                    if name == "litellm" and not asking:
                        importers.append(threading.current_thread().name)
                    return None

            sys.meta_path.insert(0, Watch())
            from opentelemetry.sdk.trace import TracerProvider
            from otel_scorers import ScoringSpanProcessor, scorers
            from otel_scorers.demos.example_agent import DEMO_RUNS, ExampleAgent
            from otel_scorers.scorers.judge import Judge, JudgeConfig

            judge = Judge(JudgeConfig(api_base={server.url!r}, api_key="test-key", max_retries=0))
            provider = TracerProvider()
            processor = ScoringSpanProcessor(
                [scorers.answer_relevancy(model="openai/judge", judge=judge)], tracer_provider=provider
            )
            provider.add_span_processor(processor)
            agent = ExampleAgent(tracer=provider.get_tracer("agent"))
            agent.run(DEMO_RUNS[0])
            assert processor.force_flush(60_000)
            processor.shutdown()
            print(threading.main_thread().name in importers, len(importers) > 0)
            """
        )
    assert result.returncode == 0, result.stderr
    on_agent_thread, imported = result.stdout.split()
    assert imported == "True", "the judge ran, so litellm was imported"
    assert on_agent_thread == "False", "the agent's (main) thread never imported litellm"
    assert server.calls >= 1
