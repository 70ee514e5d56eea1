"""The tool-loop adapter end to end: real HTTP to the scripted model on 127.0.0.1,
real files in a temporary workspace, and the command line as a user runs it.

The scripted model streams its answers; with `chunk_bytes` and
`argument_fragments` it cuts the SSE byte stream into tiny writes (frames
and multi-byte characters split across TCP segments) and each tool call's
arguments into several deltas, as real servers and networks do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.adapters import (
    AdapterConfig,
    AdapterErrorKind,
    AgentEvent,
    EventType,
    TurnResult,
    get_adapter,
)
from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, ToolCall
from copilot_driver.testing.fixtures import run_adapters
from helpers.workspaces import workspace_fixture

pytestmark = pytest.mark.e2e

MAIN_PY = 'def greet():\n    return "hello"\n\n\ndef part():\n    return "hello"\n'
NOTES = "# Notes\n\ngreet() → bonjour 🇫🇷\n"
FINAL_REPLY = "Fertig ✅ — greet() says « bonjour » now, and NOTES.md is written. 🚀"


workspace = workspace_fixture("project dir", files={"src/main.py": MAIN_PY})


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace, which no tool may reach."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text("top secret\n")
    return path


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(chunk_bytes=5, argument_fragments=3) as model:
        yield model


async def run_turn(
    server: ScriptedModelServer,
    workspace: Path,
    prompt: str,
    *,
    environment: dict[str, str] | None = None,
    **options: Any,
) -> tuple[TurnResult, list[AgentEvent]]:
    config = AdapterConfig(
        options={"base_url": server.base_url, "model": "scripted-gpt", **options},
        environment=environment if environment is not None else {},
    )
    adapter = get_adapter("tool-loop", config)
    session = await adapter.start_session(workspace)
    events: list[AgentEvent] = []
    try:
        result = await adapter.run_turn(session, prompt, on_event=events.append)
    finally:
        await adapter.stop_session(session)
    return result, events


def calls_then_reply(trigger: str, calls: tuple[ToolCall, ...], reply: str) -> Script:
    """A script that answers a prompt containing `trigger` with `calls`, then with `reply`."""
    return Script(rules=(Rule(trigger, (Reply(tool_calls=calls), Reply(text=reply))),))


def tool_results(server: ScriptedModelServer) -> list[str]:
    """The tool messages of the model's last request: what the model was told."""
    body = server.chat_requests()[-1].body
    assert isinstance(body, dict)
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


# -- a whole turn ---------------------------------------------------------------------------

WORK = Rule(
    "WORK",
    (
        Reply(
            text="Je regarde le projet… 👀\n",
            tool_calls=(
                ToolCall("list_directory", {}),
                ToolCall("read_file", {"path": "src/main.py"}),
            ),
        ),
        Reply(
            tool_calls=(
                ToolCall(
                    "edit_file",
                    {
                        "path": "src/main.py",
                        "old_str": 'def greet():\n    return "hello"',
                        "new_str": 'def greet():\n    return "bonjour"  # « salut » ✅',
                    },
                ),
                ToolCall(
                    "write_file",
                    {"path": "docs/NOTES.md", "content": NOTES},
                ),
            )
        ),
        Reply(text=FINAL_REPLY),
    ),
)


@pytest.mark.parametrize(
    ("chunk_bytes", "fragments"),
    [(None, 1), (5, 3), (1, 7)],
    ids=["whole-frames", "5-byte-writes-3-fragments", "1-byte-writes-7-fragments"],
)
async def test_a_turn_reads_edits_and_writes_files_then_answers(
    workspace: Path, chunk_bytes: int | None, fragments: int
) -> None:
    with ScriptedModelServer(
        Script(rules=(WORK,)), chunk_bytes=chunk_bytes, argument_fragments=fragments
    ) as server:
        result, events = await run_turn(server, workspace, "please WORK on it")
        requests = server.chat_requests()

    assert result.ok, result.error
    assert result.reply == FINAL_REPLY
    assert (workspace / "src" / "main.py").read_text() == MAIN_PY.replace(
        'return "hello"', 'return "bonjour"  # « salut » ✅', 1
    )
    assert (workspace / "docs" / "NOTES.md").read_text() == NOTES

    # What the model saw: the listing, then the line-numbered file, then the edit results.
    second = requests[1].body
    assert isinstance(second, dict)
    round_one = [m["content"] for m in second["messages"] if m["role"] == "tool"]
    assert round_one == [
        "src/",
        '   1\tdef greet():\n   2\t    return "hello"\n   3\t\n   4\t\n'
        '   5\tdef part():\n   6\t    return "hello"',
    ]
    third = requests[2].body
    assert isinstance(third, dict)
    assert [m["content"] for m in third["messages"] if m["role"] == "tool"][2:] == [
        "edited src/main.py: replaced 1 match at line 1",
        f"created docs/NOTES.md: 3 lines, {len(NOTES.encode())} bytes",
    ]
    # The request is the spec's: streamed, with the four tools, usage asked for.
    assert second["stream"] is True
    assert second["tool_choice"] == "auto"
    assert second["stream_options"] == {"include_usage": True}
    assert len(second["tools"]) == 4

    types = [e.type for e in events]
    assert types[0] is EventType.SESSION_STARTED
    assert types[-1] is EventType.TURN_COMPLETED
    tools = [(e.tool_name, e.tool_error) for e in events if e.type is EventType.TOOL_RESULT]
    assert tools == [
        ("list_directory", False),
        ("read_file", False),
        ("edit_file", False),
        ("write_file", False),
    ]
    modified = [e.message for e in events if e.raw_type == "file.modified"]
    assert modified == ["file modified: src/main.py", "file modified: docs/NOTES.md"]
    streamed = "".join(e.message for e in events if e.raw_type == "assistant.delta")
    assert streamed == "Je regarde le projet… 👀\n" + FINAL_REPLY
    # Three model calls at 10 input and 5 output tokens each (the scripted usage).
    assert result.usage.input_tokens == 30
    assert result.usage.output_tokens == 15


# -- escapes ----------------------------------------------------------------------------------


async def test_path_escapes_are_refused_and_the_model_is_told_why(
    server: ScriptedModelServer, workspace: Path, outside: Path
) -> None:
    (workspace / "link-dir").symlink_to(outside)
    (workspace / "link-file").symlink_to(outside / "secret.txt")
    attempts = (
        ToolCall("write_file", {"path": "../outside/secret.txt", "content": "pwned"}),
        ToolCall("read_file", {"path": str(outside / "secret.txt")}),
        ToolCall("write_file", {"path": "link-dir/planted.txt", "content": "pwned"}),
        ToolCall("edit_file", {"path": "link-file", "old_str": "top", "new_str": "no"}),
        ToolCall("write_file", {"path": "src/main.py\u0000.txt", "content": "pwned"}),
        ToolCall("list_directory", {"path": "link-dir"}),
    )
    server.script = calls_then_reply("ESCAPE", attempts, "I stayed inside.")

    result, events = await run_turn(server, workspace, "ESCAPE please")

    assert result.ok, result.error
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (workspace / "src" / "main.py").read_text() == MAIN_PY
    told = tool_results(server)
    assert len(told) == len(attempts)
    assert all(message.startswith("error: ") for message in told)
    assert "path traversal rejected" in told[0]
    assert "absolute path" in told[1]
    assert "outside the project root" in told[2]
    assert "outside the project root" in told[3]
    assert "NUL byte" in told[4]
    assert "outside the project root" in told[5]
    failed = [e for e in events if e.type is EventType.TOOL_RESULT]
    assert [e.tool_error for e in failed] == [True] * len(attempts)
    assert not [e for e in events if e.raw_type == "file.modified"]


async def test_symlinks_inside_and_hard_links_are_refused_and_the_model_is_told_why(
    server: ScriptedModelServer, workspace: Path, outside: Path
) -> None:
    (workspace / "src-link").symlink_to("src")  # points inside, still not followed
    (workspace / "src" / "linked.txt").hardlink_to(outside / "secret.txt")
    attempts = (
        ToolCall("read_file", {"path": "src-link/main.py"}),
        ToolCall("list_directory", {"path": "src-link"}),
        ToolCall("read_file", {"path": "src/linked.txt"}),
        ToolCall("write_file", {"path": "src/linked.txt", "content": "pwned"}),
        ToolCall("edit_file", {"path": "src/linked.txt", "old_str": "top", "new_str": "no"}),
        ToolCall("read_file", {"path": "src/main.py"}),
    )
    server.script = calls_then_reply("LINKS", attempts, "I used the real paths.")

    result, _ = await run_turn(server, workspace, "LINKS please")

    assert result.ok, result.error
    assert (outside / "secret.txt").read_text() == "top secret\n"
    told = tool_results(server)
    assert len(told) == len(attempts)
    assert told[0] == (
        "error: path 'src-link/main.py' goes through the symlink 'src-link'; symlinks are "
        "not followed (one can lead outside the project root): use the real path of the "
        "file or directory inside the project"
    )
    assert told[1].startswith("error: path 'src-link' is a symlink;")
    for refused in told[2:5]:
        assert refused.startswith("error: src/linked.txt has 2 hard links")
    assert not any("top secret" in message for message in told)
    assert told[5].startswith("   1\tdef greet():")


# -- edits that must not happen ---------------------------------------------------------------


async def test_edits_with_zero_and_two_matches_change_nothing_and_say_why(
    server: ScriptedModelServer, workspace: Path
) -> None:
    edits = (
        ToolCall("edit_file", {"path": "src/main.py", "old_str": "goodbye", "new_str": "x"}),
        ToolCall(
            "edit_file",
            {"path": "src/main.py", "old_str": 'return "hello"', "new_str": 'return "hi"'},
        ),
    )
    server.script = calls_then_reply(
        "EDIT", edits, "Both edits were refused; I will read the file first."
    )

    result, _ = await run_turn(server, workspace, "EDIT it")

    assert result.ok, result.error
    assert (workspace / "src" / "main.py").read_text() == MAIN_PY
    zero, two = tool_results(server)
    assert zero.startswith("error: old_str was not found in src/main.py (0 matches)")
    assert two.startswith("error: old_str occurs 2 times in src/main.py (at lines 2, 6)")


async def test_invalid_json_arguments_are_fed_back_and_the_turn_goes_on(
    server: ScriptedModelServer, workspace: Path
) -> None:
    broken = ToolCall("read_file", '{"path": "src/main.py"')
    server.script = calls_then_reply("BROKEN", (broken,), "Retried.")
    result, _ = await run_turn(server, workspace, "BROKEN json")
    assert result.ok, result.error
    (told,) = tool_results(server)
    assert told.startswith("error: the arguments are not valid JSON")


# -- limits ------------------------------------------------------------------------------------


async def test_the_round_cap_fails_a_model_that_never_stops_calling_tools(
    server: ScriptedModelServer, workspace: Path
) -> None:
    server.script = Script(default=Reply(tool_calls=(ToolCall("list_directory", {}),)))

    result, events = await run_turn(server, workspace, "loop forever", max_rounds=4)

    assert len(server.chat_requests()) == 4
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.TURN_FAILED
    assert "after 4 rounds (max_rounds)" in result.error.message
    assert events[-1].type is EventType.TURN_FAILED
    assert len([e for e in events if e.type is EventType.TOOL_RESULT]) == 4


async def test_big_tool_results_reach_the_model_cut_with_a_note(
    server: ScriptedModelServer, workspace: Path
) -> None:
    (workspace / "big.log").write_text("".join(f"log line {n}\n" for n in range(5000)))
    server.script = calls_then_reply("BIG", (ToolCall("read_file", {"path": "big.log"}),), "ok")
    result, _ = await run_turn(server, workspace, "BIG file", max_tool_result_chars=1000)
    assert result.ok, result.error
    (told,) = tool_results(server)
    assert len(told) <= 1000
    assert "of 5000 shown" in told
    assert "read on with start_line=" in told


async def test_a_huge_first_line_is_read_capped_and_streamed_and_edits_name_lines(
    server: ScriptedModelServer, workspace: Path
) -> None:
    size = 64 * 1024 * 1024
    with (workspace / "huge.min.js").open("w") as file:
        chunk = "a" * (1 << 20)
        for _ in range(size // len(chunk)):
            file.write(chunk)
        file.write("\nend\n")
    rows = "".join(f"x = {n}\n" for n in range(80_000))
    (workspace / "rows.py").write_text(rows)
    server.script = calls_then_reply(
        "HUGE",
        (
            ToolCall("read_file", {"path": "huge.min.js", "end_line": 1}),
            ToolCall("read_file", {"path": "huge.min.js", "start_line": 2}),
            ToolCall("edit_file", {"path": "rows.py", "old_str": "x = ", "new_str": "y = "}),
        ),
        "ok",
    )
    tracemalloc.start()
    try:
        result, _ = await run_turn(server, workspace, "HUGE file")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.ok, result.error
    first, second, edit = tool_results(server)
    assert peak < 32 * 1024 * 1024  # the 64 MB line was never held whole
    assert first.startswith("   1\taaaa")
    assert len(first) <= 20_000
    shown = len(first.removeprefix("   1\t").split(" \u2026 ", 1)[0])
    assert first.endswith(f" \u2026 [line truncated: {size - shown} more characters]")
    assert second == "   2\tend"
    assert edit.startswith("error: old_str occurs 80000 times in rows.py (at lines 1, 2, 3,")
    assert (workspace / "rows.py").read_text() == rows


async def test_the_key_is_sent_as_bearer_and_an_http_error_fails_the_turn(
    server: ScriptedModelServer, workspace: Path
) -> None:
    server.script = Script(default=Reply(text="slow down", http_status=429))
    result, events = await run_turn(
        server, workspace, "hi", environment={"OPENAI_API_KEY": "sk-e2e-key"}
    )
    assert server.chat_requests()[0].headers.get("Authorization") == "Bearer sk-e2e-key"
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.RESPONSE_ERROR
    assert result.error.retryable
    assert "HTTP 429" in result.error.message
    assert events[-1].error_kind is AdapterErrorKind.RESPONSE_ERROR


async def test_an_endpoint_that_is_not_listening_is_a_retryable_port_exit(workspace: Path) -> None:
    with ScriptedModelServer() as gone:
        base_url = gone.base_url
    config = AdapterConfig(options={"base_url": base_url, "model": "m"}, environment={})
    adapter = get_adapter("tool-loop", config)
    session = await adapter.start_session(workspace)
    result = await adapter.run_turn(session, "hi", on_event=lambda event: None)
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.PORT_EXIT
    assert result.error.retryable


# -- the command line -------------------------------------------------------------------------


def _cli(
    workspace: Path, workflow: Path, *prompts: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return run_adapters(workspace, workflow, *prompts, env=env, kind="tool-loop", timeout=60)


def _workflow(path: Path, base_url: str, **extra: Any) -> Path:
    lines = ["---", "tool-loop:", f"  base_url: {base_url}", "  model: scripted-gpt"]
    lines += [f"  {key}: {value}" for key, value in extra.items()]
    lines += ["---", "The prompt template is not read by the adapters.", ""]
    path.write_text("\n".join(lines))
    return path


@pytest.fixture
def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["OPENAI_API_KEY"] = "sk-cli-secret-value"
    return env


def test_the_command_line_runs_turns_and_prints_json_events(
    server: ScriptedModelServer, workspace: Path, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    server.script = Script(
        rules=(
            WORK,
            Rule("AGAIN", (Reply(text="Second turn: I remember the first one."),)),
        )
    )
    workflow = _workflow(tmp_path / "WORKFLOW.md", server.base_url)

    done = _cli(workspace, workflow, "please WORK on it", "AGAIN please", env=cli_env)

    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["type"] for e in events].count("turn_completed") == 2
    assert events[0]["type"] == "session_started"
    assert events[-1]["type"] == "turn_completed"
    assert events[-1]["message"] == "Second turn: I remember the first one."
    assert len({e["session_id"] for e in events}) == 1
    assert events[0]["session_id"].startswith("tool-loop-")
    assert "greet() → bonjour" in (workspace / "docs" / "NOTES.md").read_text()
    # The key reached the model, and nowhere in what was printed.
    assert server.chat_requests()[0].headers.get("Authorization") == "Bearer sk-cli-secret-value"
    assert "sk-cli-secret-value" not in done.stdout + done.stderr
    # The second turn carried the first one's conversation.
    last = server.chat_requests()[-1].body
    assert isinstance(last, dict)
    assert FINAL_REPLY in [m.get("content") for m in last["messages"]]


def test_the_command_line_exits_1_at_the_round_cap_and_2_on_a_bad_block(
    server: ScriptedModelServer, workspace: Path, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    server.script = Script(default=Reply(tool_calls=(ToolCall("list_directory", {}),)))
    capped = _cli(
        workspace,
        _workflow(tmp_path / "capped.md", server.base_url, max_rounds=2),
        "loop",
        env=cli_env,
    )
    assert capped.returncode == 1, capped.stderr
    assert json.loads(capped.stdout.splitlines()[-1])["error_kind"] == "turn_failed"

    bad = _cli(
        workspace,
        _workflow(tmp_path / "bad.md", "ftp://example.com", max_round=2),
        "loop",
        env=cli_env,
    )
    assert bad.returncode == 2
    assert bad.stderr.splitlines() == [
        f"[copilot-driver-adapters] error: {tmp_path / 'bad.md'}: tool-loop.max_round: unknown "
        "field (known: api_key_env, base_url, max_rounds, max_tokens, max_tool_result_chars, "
        "model, request_timeout_ms, request_usage, system_prompt, temperature)",
        f"[copilot-driver-adapters] error: {tmp_path / 'bad.md'}: tool-loop: base_url "
        "'ftp://example.com': only http:// and https:// URLs are allowed",
    ]


def test_the_command_line_masks_secret_looking_values_and_url_userinfo(
    server: ScriptedModelServer, workspace: Path, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    """A value of a secret-looking variable the model repeats is printed nowhere;
    a key written in the base URL's userinfo is refused without being echoed."""
    deploy_token = "deploy-token-0123456789"
    cli_env["DEPLOY_TOKEN"] = deploy_token
    server.script = Script(default=Reply(text=f"the token is {deploy_token}, said twice"))

    done = _cli(workspace, _workflow(tmp_path / "plain.md", server.base_url), "say", env=cli_env)

    assert done.returncode == 0, done.stderr
    assert server.chat_requests(), "the model was never asked"
    assert deploy_token not in done.stdout + done.stderr
    assert "the token is ***, said twice" in done.stdout

    url_key = "urlkey-0123456789abcdef"
    with_key = server.base_url.replace("http://", f"http://user:{url_key}@")
    keyed = _cli(workspace, _workflow(tmp_path / "keyed.md", with_key), "say", env=cli_env)

    assert keyed.returncode == 2, keyed.stderr
    [error] = keyed.stderr.splitlines()
    assert error.startswith("[copilot-driver-adapters] error: ")
    assert error.endswith("must not carry credentials (name the key's variable in api_key_env)")
    assert url_key not in keyed.stdout + keyed.stderr


def test_the_command_line_logs_no_http_request_lines_unless_asked_for_debug(
    server: ScriptedModelServer, workspace: Path, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    """httpx logs every request at INFO (`httpx INFO: HTTP Request: POST ...`): noise at
    the default level, shown with --log-level debug."""
    look = calls_then_reply("LOOK", (ToolCall("list_directory", {}),), "Looked.")
    server.script = look
    workflow = _workflow(tmp_path / "WORKFLOW.md", server.base_url)

    default = _cli(workspace, workflow, "LOOK around", env=cli_env)

    assert default.returncode == 0, default.stderr
    assert len(server.chat_requests()) == 2  # two model calls, each an httpx request
    assert "httpx" not in default.stderr
    assert "HTTP Request" not in default.stderr
    assert "copilot_driver.adapters INFO: turn 1 of session tool-loop-" in default.stderr

    server.script = look  # from its first reply again
    debug = subprocess.run(
        [sys.executable, "-m", "copilot_driver.adapters", "run", "--kind", "tool-loop",
         "--workspace", str(workspace), "--workflow", str(workflow),
         "--prompt", "LOOK again", "--log-level", "debug"],
        env={**cli_env, "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip

    assert debug.returncode == 0, debug.stderr
    requests = [line for line in debug.stderr.splitlines() if "HTTP Request: POST" in line]
    assert len(requests) == 2
    assert all(line.startswith("httpx INFO: ") for line in requests)
