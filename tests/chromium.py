"""A real headless Chromium (Debian's `chromium`), for the tests of the HTML report: the page it
rendered (`--dump-dom`) and a screenshot. Without chromium the tests that need it are skipped,
unless OTEL_SCORERS_REQUIRE_CHROMIUM=1 (CI: `.ci/run` installs it), where they fail."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium() -> str:
    """The path of chromium, or the test skipped (failed under OTEL_SCORERS_REQUIRE_CHROMIUM=1)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "chromium is not installed (apt-get install chromium)"
        if os.environ.get("OTEL_SCORERS_REQUIRE_CHROMIUM") == "1":
            pytest.fail(f"{message}; OTEL_SCORERS_REQUIRE_CHROMIUM=1 requires it")
        pytest.skip(message)
    return found


def _run(page: Path, *action: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        return subprocess.run(
            [chromium(), *FLAGS, f"--user-data-dir={profile}", *action, page.resolve().as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )


def rendered_dom(page: Path) -> str:
    """The DOM chromium made of `page`, serialised (`--dump-dom`)."""
    return _run(page, "--dump-dom").stdout


def screenshot(page: Path, out: Path, size: str = "1200,1400") -> Path:
    _run(page, f"--screenshot={out.resolve()}", f"--window-size={size}", "--hide-scrollbars")
    return out
