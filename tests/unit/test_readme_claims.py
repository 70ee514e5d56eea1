"""What the docs say of masking and echoes (docs/driver.md, *What is masked*), checked by
running the real driver."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import copilot_driver

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(copilot_driver.__file__).parents[1]
MASKING_DOC = (ROOT / "docs" / "driver.md").read_text(encoding="utf-8")


def _driver(tmp_path: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    prompt = tmp_path / "prompt.md"
    prompt.write_text("Say hello.\n", encoding="utf-8")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": str(SRC),
        "GH_AW_PROMPT": str(prompt),
        "COPILOT_SDK_URI": "127.0.0.1:9",
        "COPILOT_CONNECTION_TOKEN": "connection-token-0123456789",
        "COPILOT_MODEL": "gpt-5",
        "GH_AW_SESSION_STATE_BASE_DIR": str(tmp_path / "state"),
        **variables,
    }
    return subprocess.run(
        [sys.executable, "-m", "copilot_driver"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("model", "shown"),
    [
        ("sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "(it is sk-p… (44 characters))"),
        ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "(it is ***)"),
    ],
)
def test_a_token_shaped_model_is_refused_and_echoed_as_the_docs_say(
    tmp_path: Path, model: str, shown: str
) -> None:
    assert "A token-shaped `COPILOT_MODEL`\nis refused (exit 2)" in MASKING_DOC
    assert "a GitHub\ntoken is shown as `***`" in MASKING_DOC
    ran = _driver(tmp_path, COPILOT_MODEL=model)
    assert ran.returncode == 2
    assert shown in ran.stderr
    assert model not in ran.stderr


def test_everything_before_the_last_at_of_the_base_url_is_masked(tmp_path: Path) -> None:
    assert "`https://u:KEY@host/v1` → `https://***@host/v1`" in MASKING_DOC
    ran = _driver(tmp_path, COPILOT_PROVIDER_BASE_URL="ftp://u:ab+c/d==@host/v1")
    assert ran.returncode == 2
    assert "is not an http(s) URL: ftp://***@host/v1:" in ran.stderr
    assert "ab+c" not in ran.stderr + ran.stdout
