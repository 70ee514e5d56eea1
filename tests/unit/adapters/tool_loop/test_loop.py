"""The round loop on a fake model: tools run, results fed back, the round cap holds."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.adapters.core.agent_events import TokenUsage
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.tool_loop.loop import (
    CallUsage,
    FileModified,
    FinalReply,
    LoopEvent,
    LoopFailed,
    TextDelta,
    ToolDone,
    ToolStart,
    agentic_loop,
    args_summary,
    result_summary,
)
from copilot_driver.adapters.tool_loop.sandbox import resolve_root
from copilot_driver.adapters.tool_loop.stream import (
    Completion,
    Message,
    TokenCallback,
    ToolCallRequest,
)
from copilot_driver.adapters.tool_loop.tools import Toolbox
from copilot_driver.vocabulary import AdapterErrorKind


class FakeModel:
    """Answers with the given completions in order (the last one repeats);
    records a copy of the conversation of every call."""

    def __init__(self, *answers: Completion | AgentError) -> None:
        self.answers = answers
        self.calls: list[list[Message]] = []

    async def complete(self, messages: Sequence[Message], on_token: TokenCallback) -> Completion:
        self.calls.append(json.loads(json.dumps(list(messages))))
        answer = self.answers[min(len(self.calls), len(self.answers)) - 1]
        if isinstance(answer, AgentError):
            raise answer
        for word in answer.text.split(" "):
            on_token(word)
        return answer


def tool(name: str, arguments: str | dict[str, Any], call_id: str = "") -> ToolCallRequest:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCallRequest(call_id, name, raw)


def calls(*requests: ToolCallRequest, text: str = "") -> Completion:
    return Completion(text=text, tool_calls=requests, usage=TokenUsage(10, 2))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("alpha\n")
    return resolve_root(tmp_path)


async def run(
    model: FakeModel, root: Path, *, max_rounds: int = 20, limit: int = 20_000
) -> tuple[list[LoopEvent], list[Message]]:
    events: list[LoopEvent] = []
    messages: list[Message] = [{"role": "user", "content": "go"}]
    toolbox = Toolbox(root, max_result_chars=limit)
    await agentic_loop(model, toolbox, messages, max_rounds=max_rounds, emit=events.append)
    return events, messages


def tool_messages(messages: Sequence[Message]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "tool"]


def assert_valid_history(messages: Sequence[Message]) -> None:
    """Each assistant tool call is answered by exactly one tool message, right after it."""
    for i, message in enumerate(messages):
        if message["role"] == "assistant" and message.get("tool_calls"):
            ids = [c["id"] for c in message["tool_calls"]]
            answers = messages[i + 1 : i + 1 + len(ids)]
            assert [a["role"] for a in answers] == ["tool"] * len(ids)
            assert [a["tool_call_id"] for a in answers] == ids


async def test_a_text_answer_ends_the_turn_at_once(root: Path) -> None:
    model = FakeModel(Completion(text="all good", usage=TokenUsage(5, 1)))
    events, messages = await run(model, root)
    assert events[:2] == [TextDelta("all"), TextDelta("good")]
    assert events[2] == CallUsage(TokenUsage(5, 1))
    assert isinstance(events[-1], FinalReply)
    assert events[-1].reply == "all good"
    assert events[-1].rounds == 1
    assert messages[-1] == {"role": "assistant", "content": "all good"}


async def test_tool_calls_run_in_order_and_their_results_reach_the_model(root: Path) -> None:
    model = FakeModel(
        calls(
            tool("read_file", {"path": "a.txt"}, "c1"),
            tool("edit_file", {"path": "a.txt", "old_str": "alpha", "new_str": "beta"}, "c2"),
            text="Let me look",
        ),
        Completion(text="Done editing."),
    )
    events, messages = await run(model, root)

    assert (root / "a.txt").read_text() == "beta\n"
    kinds = [type(e).__name__ for e in events if not isinstance(e, TextDelta | CallUsage)]
    # The order: ToolStart, execute, FileModified (on success), ToolDone.
    assert kinds == ["ToolStart", "ToolDone", "ToolStart", "FileModified", "ToolDone", "FinalReply"]
    starts = [e for e in events if isinstance(e, ToolStart)]
    assert [(s.call_id, s.name, s.args_summary) for s in starts] == [
        ("c1", "read_file", "a.txt"),
        ("c2", "edit_file", "a.txt"),
    ]
    assert FileModified("a.txt") in events
    second_request = model.calls[1]
    assert second_request[1]["role"] == "assistant"
    assert second_request[1]["content"] == "Let me look"
    assert tool_messages(second_request) == [
        "   1\talpha",
        "edited a.txt: replaced 1 match at line 1",
    ]
    assert_valid_history(messages)


async def test_invalid_json_arguments_are_fed_back_as_an_error_not_a_crash(root: Path) -> None:
    model = FakeModel(
        calls(tool("read_file", '{"path": "a.txt"', "bad")),
        Completion(text="Sorry, retried."),
    )
    events, messages = await run(model, root)
    done = [e for e in events if isinstance(e, ToolDone)]
    assert done[0].is_error
    assert "not valid JSON" in done[0].result_summary
    (fed_back,) = tool_messages(model.calls[1])
    assert fed_back.startswith("error: the arguments are not valid JSON")
    assert isinstance(events[-1], FinalReply)
    # The model's own (broken) arguments stay in the history, as it sent them.
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == '{"path": "a.txt"'


async def test_a_failing_edit_is_fed_back_and_the_loop_goes_on(root: Path) -> None:
    model = FakeModel(
        calls(tool("edit_file", {"path": "a.txt", "old_str": "zeta", "new_str": "x"})),
        calls(tool("edit_file", {"path": "a.txt", "old_str": "alpha", "new_str": "x"})),
        Completion(text="fixed"),
    )
    events, _ = await run(model, root)
    assert "0 matches" in tool_messages(model.calls[1])[0]
    assert [e for e in events if isinstance(e, FileModified)] == [FileModified("a.txt")]
    assert (root / "a.txt").read_text() == "x\n"


async def test_the_round_cap_stops_a_model_that_always_calls_a_tool(root: Path) -> None:
    model = FakeModel(calls(tool("list_directory", {})))
    events, messages = await run(model, root, max_rounds=3)

    assert len(model.calls) == 3
    assert len([e for e in events if isinstance(e, ToolStart)]) == 3
    last = events[-1]
    assert isinstance(last, LoopFailed)
    assert last.error.kind is AdapterErrorKind.TURN_FAILED
    assert not last.error.retryable
    assert "after 3 rounds (max_rounds)" in last.message
    assert not [e for e in events if isinstance(e, FinalReply)]
    assert_valid_history(messages)  # the last round's results are still recorded


async def test_the_last_allowed_round_may_still_answer(root: Path) -> None:
    model = FakeModel(calls(tool("list_directory", {})), Completion(text="ok"))
    events, _ = await run(model, root, max_rounds=2)
    assert isinstance(events[-1], FinalReply)


async def test_a_failed_model_call_is_an_error_event_with_its_kind(root: Path) -> None:
    failure = AgentError(AdapterErrorKind.RESPONSE_ERROR, "HTTP 401", retryable=False)
    model = FakeModel(calls(tool("list_directory", {})), failure)
    events, _ = await run(model, root)
    last = events[-1]
    assert isinstance(last, LoopFailed)
    assert last.error is failure
    assert last.rounds == 2


async def test_calls_without_ids_get_unique_ones_so_results_can_match(root: Path) -> None:
    model = FakeModel(
        calls(tool("list_directory", {}), tool("read_file", {"path": "a.txt"})),
        Completion(text="ok"),
    )
    _, messages = await run(model, root)
    ids = [c["id"] for c in messages[1]["tool_calls"]]
    assert len(set(ids)) == 2
    assert all(ids)
    assert_valid_history(messages)


async def test_big_results_reach_the_model_truncated(root: Path) -> None:
    (root / "big.txt").write_text("z" * 5_000)
    model = FakeModel(calls(tool("read_file", {"path": "big.txt"})), Completion(text="ok"))
    await run(model, root, limit=1_000)
    (fed_back,) = tool_messages(model.calls[1])
    assert len(fed_back) <= 1_000
    assert "[line truncated: 4206 more characters]" in fed_back


async def test_a_cancelled_turn_still_answers_every_call_in_the_history(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = asyncio.Event()

    async def slow_to_thread(func: Any, /, *args: Any) -> Any:
        started.set()
        await asyncio.sleep(60)
        raise AssertionError("not reached")

    monkeypatch.setattr(asyncio, "to_thread", slow_to_thread)
    model = FakeModel(calls(tool("list_directory", {}, "c1"), tool("list_directory", {}, "c2")))
    messages: list[Message] = [{"role": "user", "content": "go"}]
    toolbox = Toolbox(root, max_result_chars=20_000)
    task = asyncio.create_task(
        agentic_loop(model, toolbox, messages, max_rounds=5, emit=lambda event: None)
    )
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert_valid_history(messages)
    assert tool_messages(messages)[0].startswith("error: the turn was stopped while this call ran")
    assert tool_messages(messages)[1].startswith("error: not run")


def test_args_summary_shows_the_path_else_the_squeezed_arguments() -> None:
    assert args_summary('{"path": "src/a.py", "content": "..."}') == "src/a.py"
    assert args_summary("{}") == ""
    assert args_summary('{"x":\n  1}') == '{"x": 1}'
    assert len(args_summary("{" + "x" * 1000)) <= 120


def test_result_summary_is_the_first_line_and_a_count() -> None:
    assert result_summary("   1\tone\n   2\ttwo\n   3\tthree") == "1 one (+2 more lines)"
    assert result_summary("single") == "single"
    assert result_summary("") == ""
