"""`score --html`: the page a person opens, as a real headless Chromium renders it. Its scorer
table holds the figures of the JSON summary (`--summary-out`), its intervals stay within [0, 1],
each failing run is there with its text and a link to its trace, and a run whose text is HTML
(a `<script>`, an `<img onerror>`) is shown as text: the rendered page holds no such element."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers.runs.trace_writer import write_traces
from tests.chromium import rendered_dom, screenshot
from tests.cli.test_score_baseline import baseline, traces
from tests.cli.test_score_gate import run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCRIPT = "<script>document.title='owned'</script>"
IMAGE = "<img src=x onerror=\"document.title='owned'\">"
CONFIG = """\
scorers:
  - type: no_tool_errors
  - type: max_tool_calls
    args: {max: 2}
  - type: includes
    name: says-celsius
    args: {expected: "°C"}
report: {trace_url: "http://jaeger.example:16686/trace/{trace_id}"}
"""


class Page(HTMLParser):
    """The elements of a rendered page, the scorer table's cells by class, and its text."""

    def __init__(self, dom: str) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.links: list[str] = []
        self.rows: dict[str, dict[str, str]] = {}
        self.text: list[str] = []
        self._row: str | None = None
        self._cell: str | None = None
        self.feed(dom)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags.append(tag)
        if tag == "a" and found.get("href"):
            self.links.append(str(found["href"]))
        if tag == "tr" and found.get("data-scorer"):
            self._row = str(found["data-scorer"])
            self.rows[self._row] = {}
        if tag == "td" and self._row is not None:
            self._cell = (found.get("class") or "").split()[-1] if found.get("class") else None

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._cell = None
        if tag == "tr":
            self._row = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._row is not None and self._cell is not None:
            cells = self.rows[self._row]
            cells[self._cell] = cells.get(self._cell, "") + data


def hostile_trace(path: Path) -> Path:
    """One run whose question is a script and whose answer an image with an onerror handler."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    ask = [{"role": "user", "parts": [{"type": "text", "content": SCRIPT}]}]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": IMAGE}]}]
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "hostile</td></tr></table><script>alert(1)</script>",
        "gen_ai.input.messages": json.dumps(ask),
        "gen_ai.output.messages": json.dumps(answer),
    }
    with provider.get_tracer("agent").start_as_current_span("invoke_agent x", attributes=attributes):
        pass
    provider.shutdown()
    write_traces(path, exporter.get_finished_spans())
    return path


def figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def bounds(pair: list[float] | None) -> str:
    return "-" if pair is None else f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def test_the_report_renders_the_summary_s_figures_and_the_failing_runs(tmp_path: Path) -> None:
    config = tmp_path / "scorers.yaml"
    config.write_text(CONFIG)
    report, summary = tmp_path / "report.html", tmp_path / "summary.json"
    files = (str(EXAMPLES / "traces.json"), str(hostile_trace(tmp_path / "hostile.json")))
    result = run_cli("score", *files, "-c", str(config), "--html", str(report), "--summary-out", str(summary))
    assert "wrote the HTML report" in result.stderr, result.stderr
    page = Page(rendered_dom(report))
    scorers = json.loads(summary.read_text())["scorers"]
    assert set(page.rows) == set(scorers) == {"no_tool_errors", "max_tool_calls", "says-celsius"}
    for name, entry in scorers.items():
        cells = page.rows[name]
        assert cells["scored"] == str(entry["scored"])
        assert cells["pass-rate"] == figure(entry["pass_rate"])
        assert cells["mean"] == figure(entry["mean"])
        assert cells["pass-rate-interval"] == bounds(entry["pass_rate_interval"])
        assert cells["mean-interval"] == bounds(entry["mean_interval"])
        for low, high in (entry["pass_rate_interval"], entry["mean_interval"]):
            assert 0.0 <= low <= high <= 1.0
    # the example traces' failing tool, its runs over two calls, and the hostile run's answer
    text = "".join(page.text)
    assert "says-celsius: fail" in text and "no_tool_errors: fail" in text
    hostile = [link for link in page.links if link.startswith("http://jaeger.example:16686/trace/")]
    assert len(hostile) >= 3
    # hostile text is text: the rendered page has no image and one element only for the style
    assert SCRIPT in text and IMAGE in text
    assert "img" not in page.tags and "script" not in page.tags
    assert "owned" not in rendered_dom(report).split("<title>")[1].split("</title>")[0]


def test_the_report_against_a_baseline_shows_the_regression(tmp_path: Path) -> None:
    summary = baseline(tmp_path, 400, 360)  # 90 % pass on the main branch
    report = tmp_path / "report.html"
    config = tmp_path / "scorers.yaml"
    config.write_text("scorers:\n  - type: includes\n    args: {expected: sunny}\n")
    result = run_cli(
        "score", str(traces(tmp_path / "pr.json", 400, 340)), "-c", str(config),
        "--baseline", summary, "--html", str(report),
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    page = Page(rendered_dom(report))
    change = page.rows["includes"]["change"]
    assert "pass_rate 0.900 -> 0.850 (-0.050, interval -0.096..-0.004)" in change
    assert "FAIL" in change
    assert page.rows["includes"]["pass-rate"] == "0.850"


def test_the_screenshot_shows_a_page(tmp_path: Path) -> None:
    """The page paints: the screenshot is a PNG of the window's size, not a blank one."""
    config = tmp_path / "scorers.yaml"
    config.write_text(CONFIG)
    report = tmp_path / "report.html"
    run_cli("score", str(EXAMPLES / "traces.json"), "-c", str(config), "--html", str(report))
    png = screenshot(report, tmp_path / "report.png", "800,600").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(png[16:20], "big") == 800 and int.from_bytes(png[20:24], "big") == 600
    assert len(png) > 10_000  # text and tables; a blank page compresses to a few hundred bytes


def test_a_failing_conversation_is_shown_with_its_last_run_s_trace(tmp_path: Path) -> None:
    """`asked-again` asks for the same flight twice: `user_frustration` (at 0.3) fails it."""
    from tests.cli.test_score_conversations import CONFIG as CONVERSATION_CONFIG
    from tests.cli.test_score_conversations import CONVERSATIONS
    from tests.spans import conversations_file

    config = tmp_path / "scorers.yaml"
    config.write_text(CONVERSATION_CONFIG + 'report: {trace_url: "https://tempo.example/trace/{trace_id}"}\n')
    traces = conversations_file(tmp_path / "traces.jsonl", CONVERSATIONS)
    report = tmp_path / "report.html"
    run_cli("score", str(traces), "-c", str(config), "--html", str(report))
    page = Page(rendered_dom(report))
    text = "".join(page.text)
    assert "Failing conversations: 1" in text
    assert "conversation asked-again, last run" in text and "user_frustration: fail" in text
    assert any(link.startswith("https://tempo.example/trace/") for link in page.links)
