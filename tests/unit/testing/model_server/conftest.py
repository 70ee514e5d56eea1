"""The model server tests' running servers, one per script (see
helpers/model_server_client.py for the scripts and the client helpers)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

# Before the import below, so the helpers' own asserts report like tests' do.
pytest.register_assert_rewrite("helpers.model_server_client")

from copilot_driver.testing.model_server import ScriptedModelServer  # noqa: E402
from copilot_driver.testing.script import Reply, Rule, Script  # noqa: E402
from helpers.model_server_client import CUT, LONG_TEXT, R_SCRIPT, SCRIPT  # noqa: E402


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(SCRIPT) as running:
        yield running


@pytest.fixture
def r_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(R_SCRIPT) as running:
        yield running


@pytest.fixture
def broken_server() -> Iterator[ScriptedModelServer]:
    script = Script(
        rules=(
            Rule("CUTZERO", (Reply(text=LONG_TEXT, cut_after_bytes=0),)),
            Rule("CUTERROR", (Reply(http_status=500, cut_after_bytes=10),)),
            Rule("CUTLATE", (Reply(text="short", cut_after_bytes=1_000_000),)),
            Rule("CUT", (Reply(text=LONG_TEXT, cut_after_bytes=CUT),)),
            Rule("ENDLESSCHUNK", (Reply(text=LONG_TEXT, never_ends=True, cut_after_bytes=CUT),)),
            Rule("ENDLESS", (Reply(text=LONG_TEXT, never_ends=True),)),
            Rule("RETRYAFTER", (Reply(http_status=429, retry_after_s=3),)),
        )
    )
    with ScriptedModelServer(script) as running:
        yield running
