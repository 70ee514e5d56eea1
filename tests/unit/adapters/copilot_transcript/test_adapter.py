"""The copilot-transcript adapter (spec: "Copilot CLI Session Integration").

Every turn is a fresh, stateless `copilot -p` whose prompt carries the
conversation so far. The CLI is faked with pytest-subprocess (`fp`); the
replies come from the real CLI transcripts in tests/data/copilot-cli or
from hand-written `assistant.message` + `result` lines.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pytest_subprocess import FakeProcess

from copilot_driver.adapters.copilot_cli import CopilotCliSession
from copilot_driver.adapters.copilot_transcript import (
    DEFAULT_TRANSCRIPT_TURNS,
    CopilotTranscriptAdapter,
    Exchange,
    TranscriptOptions,
    TranscriptSession,
    build_prompt,
    strip_ansi,
)
from copilot_driver.adapters.core import registry
from copilot_driver.adapters.core.agent_events import AgentEvent, EventType, TokenUsage
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.session import AdapterConfig, ExitReason, TurnResult
from copilot_driver.adapters.core.ssh import SshSettings
from copilot_driver.vocabulary import AdapterErrorKind
from helpers.fake_processes import recorded_argvs

if TYPE_CHECKING:
    from unit.adapters.conftest import FakeCopilot

DATA = Path(__file__).resolve().parents[3] / "data" / "copilot-cli"
CLI_SESSION_ID = "cli-session-0001"
"""The id the (stateless) CLI reports; the transcript session must never use it."""
CLI_FLAGS = [
    "--output-format", "json", "-s", "--autopilot", "--no-ask-user",
    "--allow-all", "--max-autopilot-continues", "50",
]  # fmt: skip
TURN_TIMEOUT_S = 30.0
PLAIN = "plain text, [brackets], ]8; and a lone ] stay"


# -- helpers -------------------------------------------------------------------


def transcript(name: str) -> list[str]:
    """The exact stdout lines of one real CLI 1.0.102 run."""
    return (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()


def reply_lines(
    text: str, *, session_id: str = CLI_SESSION_ID, output_tokens: int = 0, exit_code: int = 0
) -> list[str]:
    """A turn's stdout: one assistant message, then the result line."""
    message = {"content": text, "toolRequests": [], "outputTokens": output_tokens}
    return [
        json.dumps({"type": "assistant.message", "data": message}),
        json.dumps({"type": "result", "sessionId": session_id, "exitCode": exit_code}),
    ]


def expected_prompt(exchanges: Sequence[tuple[str, str]], message: str) -> str:
    """The spec's transcript format, spelled out independently of build_prompt."""
    if not exchanges:
        return message
    body = "".join(f"User: {user}\nAssistant: {reply}\n" for user, reply in exchanges)
    return f"Previous conversation:\n{body}\nUser: {message}"


async def run(
    adapter: CopilotTranscriptAdapter, session: TranscriptSession, message: str
) -> tuple[TurnResult, list[AgentEvent]]:
    events: list[AgentEvent] = []
    result = await asyncio.wait_for(
        adapter.run_turn(session, message, on_event=events.append), TURN_TIMEOUT_S
    )
    return result, events


async def converse(
    fake_copilot: FakeCopilot,
    adapter: CopilotTranscriptAdapter,
    session: TranscriptSession,
    exchanges: Sequence[tuple[str, str]],
) -> list[TurnResult]:
    """One completed turn per (message, reply)."""
    results = []
    for message, reply in exchanges:
        fake_copilot.turn(reply_lines(reply))
        result, _ = await run(adapter, session, message)
        results.append(result)
    return results


# -- build_prompt ----------------------------------------------------------------


@pytest.mark.parametrize("message", ["say hi", "line one\nline two", "  padded  ", ""])
def test_build_prompt_without_history_is_the_message_unchanged(message: str) -> None:
    assert build_prompt([], message) == message


def test_build_prompt_with_one_exchange_is_the_spec_format() -> None:
    prompt = build_prompt([Exchange("a", "b")], "c")

    assert prompt == "Previous conversation:\nUser: a\nAssistant: b\n\nUser: c"


def test_build_prompt_lists_the_exchanges_oldest_first() -> None:
    history = [Exchange("first?", "one"), Exchange("second?", "two\nlines")]

    prompt = build_prompt(history, "third?")

    assert prompt == (
        "Previous conversation:\n"
        "User: first?\nAssistant: one\n"
        "User: second?\nAssistant: two\nlines\n"
        "\nUser: third?"
    )


# -- strip_ansi ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        pytest.param("\x1b[31mred\x1b[0m", "red", id="csi-colour"),
        pytest.param(
            "\x1b[1;38;5;208mbold\x1b[m \x1b[38;2;1;2;3mrgb\x1b[39m",
            "bold rgb",
            id="csi-256-and-truecolour",
        ),
        pytest.param("\x1b[2K\x1b[1Gline\x1b[3A\x1b[10;20H!", "line!", id="cursor-moves"),
        pytest.param("\x1b[?25lhidden cursor\x1b[?25h", "hidden cursor", id="private-mode"),
        pytest.param("\x1b]0;window title\x07text", "text", id="osc-title-bel"),
        pytest.param("\x1b]2;window title\x1b\\text", "text", id="osc-title-st"),
        pytest.param(
            "see \x1b]8;;https://example.com/a?b=c\x1b\\the docs\x1b]8;;\x1b\\.",
            "see the docs.",
            id="osc-8-hyperlink-st",
        ),
        pytest.param(
            "\x1b]8;id=1;https://example.com\x07link\x1b]8;;\x07", "link", id="osc-8-hyperlink-bel"
        ),
        pytest.param("\x1bMup", "up", id="reverse-index"),
        pytest.param(PLAIN, PLAIN, id="plain"),
        pytest.param("héllo — 日本語 🎉\n\tnext", "héllo — 日本語 🎉\n\tnext", id="unicode"),
        pytest.param("\x1b[32m✓ héllo 🎉\x1b[0m", "✓ héllo 🎉", id="unicode-in-colour"),
        pytest.param("", "", id="empty"),
    ],
)
def test_strip_ansi(text: str, plain: str) -> None:
    assert strip_ansi(text) == plain


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        pytest.param("\x1b[1mbold\x1b(B\x1b[m done", "bold done", id="tput-sgr0"),
        pytest.param("\x1b7status\x1b8", "status", id="save-restore-cursor"),
    ],
)
def test_strip_ansi_removes_every_escape_a_terminal_program_emits(text: str, plain: str) -> None:
    assert strip_ansi(text) == plain


# -- the adapter: argv and the transcript in the prompt ----------------------------


async def test_the_first_turn_runs_the_bare_message(fake_copilot: FakeCopilot) -> None:
    adapter = fake_copilot.transcript_adapter()
    session = await fake_copilot.start(adapter)
    fake_copilot.turn(transcript("plain-prompt"))

    result, _ = await run(adapter, session, "say hi")

    (argv,) = fake_copilot.argvs()
    usage_file = argv[argv.index("--usage-output-file") + 1]
    binary = str(fake_copilot.binary)
    assert argv == [binary, "-p", "say hi", *CLI_FLAGS, "--usage-output-file", usage_file]
    assert result.ok
    assert result.reply == "hello from fake model"
    assert session.history == [Exchange("say hi", "hello from fake model")]


async def test_no_turn_ever_resumes_or_continues_a_cli_session(fake_copilot: FakeCopilot) -> None:
    adapter = fake_copilot.transcript_adapter()
    session = await fake_copilot.start(adapter, resume_session_id="transcript-earlier")
    fake_copilot.turn(transcript("plain-prompt"))  # reports a CLI session id
    fake_copilot.turn(
        [json.dumps({"type": "assistant.message", "data": {"content": "no result line"}})]
    )
    fake_copilot.turn(transcript("plain-prompt"))

    for message in ("one", "two", "three"):
        await run(adapter, session, message)

    argvs = fake_copilot.argvs()
    assert len(argvs) == 3
    for argv in argvs:
        assert "--resume" not in argv
        assert "--continue" not in argv


async def test_the_second_prompt_carries_the_first_exchange(fake_copilot: FakeCopilot) -> None:
    adapter = fake_copilot.transcript_adapter()
    session = await fake_copilot.start(adapter)
    fake_copilot.turn(transcript("plain-prompt"))
    fake_copilot.turn(reply_lines("it said hello"))

    await run(adapter, session, "say hi")
    second, _ = await run(adapter, session, "what did you say?")

    assert fake_copilot.prompts() == [
        "say hi",
        "Previous conversation:\nUser: say hi\nAssistant: hello from fake model\n\n"
        "User: what did you say?",
    ]
    assert second.reply == "it said hello"


async def test_ansi_in_a_reply_is_stripped_when_returned_and_stored(
    fake_copilot: FakeCopilot,
) -> None:
    adapter = fake_copilot.transcript_adapter()
    session = await fake_copilot.start(adapter)
    coloured = "  \x1b[1;32mAll\x1b[0m \x1b]8;;https://example.com\x1b\\green\x1b]8;;\x1b\\\x1b[K\n"
    fake_copilot.turn(reply_lines(coloured))
    fake_copilot.turn(reply_lines("ok"))

    first, events = await run(adapter, session, "status?")
    await run(adapter, session, "next")

    assert first.reply == "All green"
    assert session.history[0] == Exchange("status?", "All green")
    assert fake_copilot.prompts()[1] == expected_prompt([("status?", "All green")], "next")
    assert "\x1b" not in fake_copilot.prompts()[1]
    assert events[-1].type is EventType.TURN_COMPLETED


@pytest.mark.parametrize("limit", [1, 2, 3, None])
async def test_the_transcript_keeps_only_the_most_recent_exchanges(
    fake_copilot: FakeCopilot, limit: int | None
) -> None:
    kept = DEFAULT_TRANSCRIPT_TURNS if limit is None else limit
    adapter = fake_copilot.transcript_adapter({} if limit is None else {"transcript_turns": limit})
    session = await fake_copilot.start(adapter)
    exchanges = [(f"message {n}", f"reply {n}") for n in range(1, kept + 2)]
    await converse(fake_copilot, adapter, session, exchanges)
    fake_copilot.turn(reply_lines("last reply"))

    await run(adapter, session, "last message")

    last_prompt = fake_copilot.prompts()[-1]
    assert last_prompt == expected_prompt(exchanges[1:], "last message")
    assert "message 1\n" not in last_prompt
    assert "reply 1\n" not in last_prompt
    assert len(session.history) == kept
    assert session.history[-1] == Exchange("last message", "last reply")


async def test_two_kept_turns_spelled_out(fake_copilot: FakeCopilot) -> None:
    adapter = fake_copilot.transcript_adapter({"transcript_turns": 2})
    session = await fake_copilot.start(adapter)
    await converse(fake_copilot, adapter, session, [("m1", "r1"), ("m2", "r2"), ("m3", "r3")])
    fake_copilot.turn(reply_lines("r4"))

    await run(adapter, session, "m4")

    assert fake_copilot.prompts()[-1] == (
        "Previous conversation:\nUser: m2\nAssistant: r2\nUser: m3\nAssistant: r3\n\nUser: m4"
    )


FAILURES = [
    pytest.param(
        [], 1, json.loads((DATA / "no-auth.meta.json").read_text())["stderr"],
        ExitReason.FAILED, AdapterErrorKind.PORT_EXIT, id="exit-1-without-result",
    ),
    pytest.param(
        reply_lines("half an answer", exit_code=1), 0, None,
        ExitReason.FAILED, AdapterErrorKind.TURN_FAILED, id="result-exit-code-1",
    ),
    pytest.param(
        [], 127, None, ExitReason.FAILED, AdapterErrorKind.AGENT_NOT_FOUND, id="exit-127",
    ),
    pytest.param(
        reply_lines("interrupted"), -15, None,
        ExitReason.CANCELLED, AdapterErrorKind.TURN_CANCELLED, id="sigterm",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("stdout", "returncode", "stderr", "reason", "kind"), FAILURES)
async def test_a_turn_that_does_not_complete_stays_out_of_the_transcript(
    fake_copilot: FakeCopilot,
    stdout: list[str],
    returncode: int,
    stderr: str | None,
    reason: ExitReason,
    kind: AdapterErrorKind,
) -> None:
    adapter = fake_copilot.transcript_adapter()
    session = await fake_copilot.start(adapter)
    await converse(fake_copilot, adapter, session, [("first", "first reply")])
    fake_copilot.turn(stdout, returncode=returncode, stderr=stderr)
    fake_copilot.turn(reply_lines("third reply"))

    failed, events = await run(adapter, session, "second")
    await run(adapter, session, "third")

    assert failed.exit_reason is reason
    assert failed.error is not None
    assert failed.error.kind is kind
    assert events[-1].error_kind is kind
    assert session.history == [Exchange("first", "first reply"), Exchange("third", "third reply")]
    assert fake_copilot.prompts()[2] == expected_prompt([("first", "first reply")], "third")


async def test_events_and_results_carry_the_transcript_session_id(
    fake_copilot: FakeCopilot,
) -> None:
    adapter = fake_copilot.transcript_adapter()
    session = await fake_copilot.start(adapter)
    other = await fake_copilot.start(adapter)
    fake_copilot.turn(reply_lines("one", session_id=CLI_SESSION_ID))
    fake_copilot.turn(reply_lines("two", session_id="cli-session-0002"))

    first, first_events = await run(adapter, session, "a")
    second, second_events = await run(adapter, session, "b")

    assert session.id.startswith("transcript-")
    assert other.id.startswith("transcript-")
    assert other.id != session.id
    events = first_events + second_events
    assert events[0].type is EventType.SESSION_STARTED
    assert {event.session_id for event in events} == {session.id}
    assert (first.session_id, second.session_id) == (session.id, session.id)


async def test_a_resume_id_becomes_the_transcript_session_id(fake_copilot: FakeCopilot) -> None:
    adapter = fake_copilot.transcript_adapter()
    session = await fake_copilot.start(adapter, resume_session_id="transcript-from-before")
    fake_copilot.turn(reply_lines("hi"))

    result, events = await run(adapter, session, "hello")

    assert session.id == "transcript-from-before"
    assert result.session_id == "transcript-from-before"
    assert {event.session_id for event in events} == {"transcript-from-before"}
    assert fake_copilot.prompts() == ["hello"]


async def test_token_usage_adds_up_over_the_stateless_turns(fake_copilot: FakeCopilot) -> None:
    adapter = fake_copilot.transcript_adapter()
    session = await fake_copilot.start(adapter)
    fake_copilot.turn(reply_lines("one", output_tokens=3))
    fake_copilot.turn(reply_lines("two", output_tokens=4))

    first, _ = await run(adapter, session, "a")
    second, events = await run(adapter, session, "b")

    assert first.usage == TokenUsage(output_tokens=3)
    assert second.usage == TokenUsage(output_tokens=7)
    assert session.usage == TokenUsage(output_tokens=7)
    assert events[-1].usage == TokenUsage(output_tokens=7)


async def test_cli_options_reach_the_argv_but_transcript_turns_does_not(
    fake_copilot: FakeCopilot,
) -> None:
    adapter = fake_copilot.transcript_adapter(
        {"transcript_turns": 3, "model": "gpt-4.1", "allowed_tools": ["view"]}
    )
    session = await fake_copilot.start(adapter)
    fake_copilot.turn(reply_lines("hi"))

    await run(adapter, session, "hello")

    (argv,) = fake_copilot.argvs()
    assert argv[argv.index("--model") + 1] == "gpt-4.1"
    assert "--allow-tool=view" in argv
    assert "--allow-all" not in argv
    assert not [a for a in argv if "transcript" in a]
    assert adapter.options.transcript_turns == 3


async def test_turns_run_over_ssh_without_canary_or_resume(
    fp: FakeProcess, tmp_path: Path, executable: Callable[..., Path]
) -> None:
    ssh = executable(tmp_path / "bin", "ssh")
    config = AdapterConfig(ssh=SshSettings(("host-a",)), environment={"PATH": str(ssh.parent)})
    adapter = CopilotTranscriptAdapter(config)
    session = await adapter.start_session("/srv/ws")
    fp.register([str(ssh), fp.any()], stdout=reply_lines("hi there"))
    fp.register([str(ssh), fp.any()], stdout=reply_lines("fine"))

    await run(adapter, session, "hello")
    await run(adapter, session, "how are you?")

    remotes = [shlex.split(call[-1]) for call in recorded_argvs(fp)]
    assert [call[-2] for call in recorded_argvs(fp)] == ["host-a", "host-a"]
    assert remotes[1] == [
        "cd", "/srv/ws", "&&", "copilot", "-p",
        expected_prompt([("hello", "hi there")], "how are you?"),
        *CLI_FLAGS,
    ]  # fmt: skip
    assert session.ssh_host == "host-a"


# -- start_session, options, registry ------------------------------------------------


async def test_start_session_runs_the_copilot_cli_checks(
    fake_copilot: FakeCopilot, tmp_path: Path
) -> None:
    with pytest.raises(AgentError) as bad_workspace:
        await fake_copilot.transcript_adapter().start_session(tmp_path / "missing")
    with pytest.raises(AgentError) as no_credential:
        await fake_copilot.start(fake_copilot.transcript_adapter(env=fake_copilot.env()))

    assert bad_workspace.value.kind is AdapterErrorKind.INVALID_WORKSPACE_CWD
    assert no_credential.value.kind is AdapterErrorKind.AGENT_NOT_FOUND
    assert "GH_TOKEN" in no_credential.value.message


async def test_run_turn_rejects_a_copilot_cli_session(
    fake_copilot: FakeCopilot, tmp_path: Path
) -> None:
    adapter = fake_copilot.transcript_adapter()

    with pytest.raises(TypeError, match="not a copilot-transcript session"):
        await adapter.run_turn(
            CopilotCliSession(workspace=tmp_path), "hi", on_event=lambda event: None
        )

    assert list(fake_copilot.fp.calls) == []


async def test_stop_session_without_a_running_turn_does_nothing(fake_copilot: FakeCopilot) -> None:
    adapter = fake_copilot.transcript_adapter()
    session = await fake_copilot.start(adapter)

    await adapter.stop_session(session)

    assert session.current is None


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        pytest.param({"transcript_turns": 0}, "transcript_turns must be 1 or more", id="zero"),
        pytest.param({"transcript_turns": -2}, "transcript_turns must be 1 or more", id="negative"),
        pytest.param(
            {"transcript_turns": "3"}, "copilot-transcript.transcript_turns: expected an integer",
            id="string",
        ),
        pytest.param(
            {"transcript_turns": True}, "copilot-transcript.transcript_turns: expected an integer",
            id="boolean",
        ),
        pytest.param(
            {"transcript_turn": 3}, "copilot-transcript.transcript_turn: unknown field",
            id="unknown-field",
        ),
        pytest.param(
            {"max_autopilot_continues": -1}, "max_autopilot_continues must be 0 or more",
            id="inherited-check",
        ),
    ],
)  # fmt: skip
def test_bad_options_are_rejected(options: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        TranscriptOptions.from_mapping(options)
    with pytest.raises(ValueError, match=fragment):
        CopilotTranscriptAdapter(AdapterConfig(options=options))


def test_options_default_to_ten_kept_turns_and_the_cli_defaults() -> None:
    options = TranscriptOptions.from_mapping(None)

    assert options.transcript_turns == DEFAULT_TRANSCRIPT_TURNS == 10
    assert options.max_autopilot_continues == 50
    assert options.scopes_tools is False


def test_get_adapter_builds_a_transcript_adapter() -> None:
    adapter = registry.get_adapter(
        "copilot-transcript", AdapterConfig(options={"transcript_turns": 4})
    )

    assert isinstance(adapter, CopilotTranscriptAdapter)
    assert adapter.kind == "copilot-transcript"
    assert adapter.options.transcript_turns == 4


def test_the_transcript_spec_requires_the_copilot_command() -> None:
    spec = registry.adapter_spec("copilot-transcript")

    assert spec.requires_command is True
    assert spec.default_command == "copilot"
    assert spec.options_block == "copilot-transcript"
    assert spec.validate_options is not None
    with pytest.raises(ValueError, match="transcript_turns must be 1 or more"):
        spec.validate_options({"transcript_turns": 0})
