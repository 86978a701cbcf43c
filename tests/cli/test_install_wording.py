"""The project is installed from a checkout of its repository: every install command the README,
the docs and the command line's hints give says so, in one wording (`otel_scorers.install`)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from otel_scorers.install import install_command, install_hint

ROOT = Path(__file__).resolve().parent.parent.parent
#: `pip install otel-scorers...`: an install from a package index, where the project is not.
FROM_AN_INDEX = re.compile(r"pip install\s+['\"]?otel-scorers")


def texts() -> dict[str, str]:
    files = [
        ROOT / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "otel_scorers").rglob("*.py")),
    ]
    return {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in files}


def test_no_install_command_names_a_package_index() -> None:
    found = {name: FROM_AN_INDEX.findall(text) for name, text in texts().items()}
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_the_readme_gives_the_install_commands_in_the_one_wording() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for extra in (None, "sidecar", "tone"):
        assert install_command(extra) in readme
    assert (
        install_hint("sidecar") == "pip install -e '.[sidecar]' in a checkout of the otel-scorers repository"
    )


def test_make_sidecar_is_a_target_that_installs_the_sidecar_extra() -> None:
    result = subprocess.run(
        ["make", "-n", "-B", "sidecar"], cwd=ROOT, capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "pip install -q -e '.[sidecar]'" in result.stdout
