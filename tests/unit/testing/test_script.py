"""Script: the scripted model's stateless reply selection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.testing.script import (
    DEFAULT_REPLY,
    Reply,
    Rule,
    Script,
    ToolCall,
    responses_input_as_messages,
)

FIRST = Reply(tool_calls=(ToolCall("bash", {"command": "ls"}, call_id="call_a"),))
SECOND = Reply(tool_calls=(ToolCall("view", {"path": "README.md"}),))
FINAL = Reply(text="All done.")
DEPLOY = Rule("DEPLOY", (FIRST, SECOND, FINAL))
OTHER = Rule("GREET", (Reply(text="Hi!"),))
SCRIPT = Script(rules=(DEPLOY, OTHER))

Message = dict[str, Any]


def user(text: Any) -> Message:
    return {"role": "user", "content": text}


def assistant(text: str | None = None) -> Message:
    return {"role": "assistant", "content": text}


def tool(content: str = "ok") -> Message:
    return {"role": "tool", "tool_call_id": "call_a", "content": content}


SYSTEM: Message = {"role": "system", "content": "You are a helpful agent. DEPLOY GREET"}


def test_first_request_gets_the_first_reply() -> None:
    assert SCRIPT.reply_for([SYSTEM, user("please DEPLOY the app")]) is FIRST


def test_step_counts_assistant_messages_after_the_triggering_user_message() -> None:
    history = [SYSTEM, user("please DEPLOY the app")]
    history += [assistant(), tool()]
    assert SCRIPT.reply_for(history) is SECOND
    history += [assistant(), tool()]
    assert SCRIPT.reply_for(history) is FINAL


def test_tool_messages_do_not_count_as_steps() -> None:
    history = [user("DEPLOY"), assistant(), tool(), tool(), tool()]
    assert SCRIPT.reply_for(history) is SECOND


def test_final_reply_repeats_past_the_end() -> None:
    history = [user("DEPLOY")]
    for _ in range(10):
        history += [assistant(), tool()]
    assert SCRIPT.reply_for(history) is FINAL


def test_selection_is_stateless_and_repeatable() -> None:
    short = [user("DEPLOY")]
    longer = [user("DEPLOY"), assistant(), tool()]
    assert SCRIPT.reply_for(longer) is SECOND
    assert SCRIPT.reply_for(short) is FIRST, "an earlier request must not advance a later one"
    assert SCRIPT.reply_for(longer) is SECOND
    assert SCRIPT.reply_for(short) is FIRST


def test_a_new_triggering_user_message_restarts_the_steps() -> None:
    history = [user("DEPLOY"), assistant(), tool(), assistant("done"), user("DEPLOY again")]
    assert SCRIPT.reply_for(history) is FIRST


def test_the_last_triggering_user_message_counts_even_after_a_non_matching_one() -> None:
    # "thanks" matches no rule, so the rule comes from the earlier DEPLOY
    # message and the step is the number of assistant messages after it.
    history = [user("DEPLOY"), assistant(), tool(), user("thanks")]
    assert SCRIPT.reply_for(history) is SECOND


def test_the_latest_user_message_decides_between_rules() -> None:
    history = [user("DEPLOY"), assistant(), tool(), assistant("done"), user("GREET me")]
    assert SCRIPT.reply_for(history) == Reply(text="Hi!")


def test_system_and_assistant_text_never_trigger() -> None:
    history = [SYSTEM, assistant("DEPLOY"), {"role": "tool", "content": "DEPLOY"}]
    assert SCRIPT.reply_for(history) is DEFAULT_REPLY


def test_first_matching_rule_in_script_order_wins() -> None:
    script = Script(rules=(Rule("A", (Reply(text="rule A"),)), Rule("AB", (Reply(text="AB"),))))
    assert script.reply_for([user("xABx")]).text == "rule A"


def test_rule_without_replies_falls_back_instead_of_failing() -> None:
    script = Script(rules=(Rule("X", ()),), default=Reply(text="fallback"))
    assert script.reply_for([user("X")]).text == "fallback"
    # ...and to an earlier user message whose rule does have replies.
    script = Script(rules=(Rule("X", ()), Rule("Y", (Reply(text="from Y"),))))
    assert script.reply_for([user("Y"), assistant(), user("X")]).text == "from Y"


def test_default_reply_when_no_rule_matches() -> None:
    assert SCRIPT.reply_for([SYSTEM, user("something else")]) is DEFAULT_REPLY
    assert DEFAULT_REPLY.text == "Hello from the scripted model."
    custom = Script(rules=(DEPLOY,), default=Reply(text="custom default"))
    assert custom.reply_for([user("nothing")]).text == "custom default"


def test_default_reply_for_empty_or_odd_messages() -> None:
    assert Script().reply_for([]) is DEFAULT_REPLY
    assert SCRIPT.reply_for([user(None), {"content": "DEPLOY"}, user(42)]) is DEFAULT_REPLY


def test_list_form_content_parts_are_read() -> None:
    parts = [
        {"type": "text", "text": "please "},
        {"type": "image_url", "image_url": {"url": "data:,"}},
        {"type": "text", "text": "DEPLOY now"},
    ]
    assert SCRIPT.reply_for([user(parts)]) is FIRST
    assert SCRIPT.reply_for([user(parts), assistant(), tool()]) is SECOND
    assert SCRIPT.reply_for([user([{"type": "text", "text": "hello"}, "stray"])]) is (DEFAULT_REPLY)


def test_from_dict_builds_rules_replies_tool_calls_and_default() -> None:
    raw = {
        "rules": [
            {
                "when": "DEPLOY",
                "replies": [
                    {
                        "tool_calls": [
                            {"name": "bash", "arguments": {"command": "ls"}, "id": "call_a"}
                        ]
                    },
                    {"text": "Working", "tool_calls": [{"name": "view"}], "delay_s": 1.5},
                    {"text": "All done."},
                ],
            }
        ],
        "default": {"text": "fallback"},
    }
    script = Script.from_dict(json.loads(json.dumps(raw)))
    assert script == Script(
        rules=(
            Rule(
                "DEPLOY",
                (
                    Reply(tool_calls=(ToolCall("bash", {"command": "ls"}, call_id="call_a"),)),
                    Reply(text="Working", tool_calls=(ToolCall("view", {}),), delay_s=1.5),
                    Reply(text="All done."),
                ),
            ),
        ),
        default=Reply(text="fallback"),
    )
    assert script.reply_for([user("DEPLOY")]).tool_calls[0].arguments_json() == (
        '{"command": "ls"}'
    )
    assert script.reply_for([user("DEPLOY"), assistant()]).delay_s == 1.5
    assert script.reply_for([user("nope")]).text == "fallback"


def test_from_dict_without_default_uses_the_builtin_default() -> None:
    script = Script.from_dict({"rules": []})
    assert script.rules == ()
    assert script.default == DEFAULT_REPLY
    assert Script.from_dict({}) == Script()


def test_from_dict_keeps_raw_string_arguments_verbatim() -> None:
    raw_arguments = '{"command": "ls", broken'
    script = Script.from_dict(
        {
            "rules": [
                {
                    "when": "X",
                    "replies": [{"tool_calls": [{"name": "bash", "arguments": raw_arguments}]}],
                }
            ]
        }
    )
    call = script.reply_for([user("X")]).tool_calls[0]
    assert call.arguments == raw_arguments
    assert call.arguments_json() == raw_arguments
    assert call.call_id is None


def test_mapping_arguments_are_sent_as_json() -> None:
    call = ToolCall("bash", {"command": 'echo "hi"', "timeout": 5, "nested": {"a": [1, 2]}})
    assert json.loads(call.arguments_json()) == {
        "command": 'echo "hi"',
        "timeout": 5,
        "nested": {"a": [1, 2]},
    }
    assert ToolCall("noargs").arguments_json() == "{}"


@pytest.mark.parametrize(("value", "expected"), [(2, 2.0), ("0.25", 0.25), (0, 0.0)])
def test_delay_s_is_parsed_as_float(value: Any, expected: float) -> None:
    script = Script.from_dict(
        {"rules": [{"when": "X", "replies": [{"text": "t", "delay_s": value}]}]}
    )
    delay = script.reply_for([user("X")]).delay_s
    assert isinstance(delay, float)
    assert delay == expected


def test_delay_defaults_to_zero() -> None:
    script = Script.from_dict({"rules": [{"when": "X", "replies": [{"text": "t"}]}]})
    assert script.reply_for([user("X")]).delay_s == 0.0


# -- the Responses API (Codex) ---------------------------------------------

RESPONSES_INPUTS = json.loads(
    (Path(__file__).parents[2] / "data" / "codex-app-server" / "responses-inputs.json").read_text()
)["inputs"]

CALLDYN = Rule(
    "CALLDYN",
    (
        Reply(tool_calls=(ToolCall("lookup_answer", {"question": "meaning of life"}),)),
        Reply(text="Tool returned: 42. Done."),
    ),
)
RUNSHELL = Rule(
    "RUNSHELL",
    (
        Reply(tool_calls=(ToolCall("exec_command", {"cmd": "echo hi"}),)),
        Reply(text="Shell done."),
    ),
)
CODEX_SCRIPT = Script(rules=(CALLDYN, RUNSHELL), default=Reply(text="hi"))


def real_input(name: str) -> list[Message]:
    items: list[Message] = RESPONSES_INPUTS[name]["input"]
    return items


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("say_hi", CODEX_SCRIPT.default),
        ("say_hi_with_passthrough_metadata", CODEX_SCRIPT.default),
        # "please CALLDYN now" after an earlier text turn.
        ("calldyn_first", CALLDYN.replies[0]),
        # ...then function_call + function_call_output: one model response.
        ("calldyn_after_tool_output", CALLDYN.replies[1]),
        # A later trigger wins over the finished CALLDYN turn before it.
        ("runshell_first", RUNSHELL.replies[0]),
        ("runshell_after_tool_output", RUNSHELL.replies[1]),
        ("nonzero_first", RUNSHELL.replies[0]),
        ("nonzero_after_tool_output", RUNSHELL.replies[1]),
    ],
)
def test_real_codex_inputs_select_the_step(name: str, expected: Reply) -> None:
    assert CODEX_SCRIPT.reply_for_responses(real_input(name)) is expected


def test_real_codex_input_as_chat_messages() -> None:
    messages = responses_input_as_messages(real_input("runshell_after_tool_output"))
    assert [m["role"] for m in messages] == [
        "developer",
        "developer",
        "user",  # <environment_context>
        "user",  # say hi
        "assistant",
        "user",  # please CALLDYN now
        "assistant",  # function_call
        "tool",  # function_call_output
        "assistant",
        "user",  # please RUNSHELL now
        "assistant",  # function_call
        "tool",  # function_call_output
    ]
    assert messages[9]["content"] == [{"type": "input_text", "text": "please RUNSHELL now"}]


def fn_call(call_id: str = "call_1") -> Message:
    return {"type": "function_call", "call_id": call_id, "name": "bash", "arguments": "{}"}


def fn_output(call_id: str = "call_1") -> Message:
    return {"type": "function_call_output", "call_id": call_id, "output": "ok"}


def r_message(role: str, text: str) -> Message:
    part = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}


REASONING: Message = {"type": "reasoning", "summary": [], "encrypted_content": "x"}


def test_one_model_response_is_a_run_of_model_items() -> None:
    # Reasoning, text and two parallel calls came from one model response.
    history = [
        r_message("user", "DEPLOY"),
        REASONING,
        r_message("assistant", "working"),
        fn_call("a"),
        fn_call("b"),
        fn_output("a"),
        fn_output("b"),
    ]
    assert SCRIPT.reply_for_responses(history) is SECOND
    history += [REASONING, fn_call("c"), fn_output("c")]
    assert SCRIPT.reply_for_responses(history) is FINAL


def test_responses_steps_match_the_chat_steps_of_the_same_conversation() -> None:
    responses = [r_message("user", "DEPLOY")]
    chat = [user("DEPLOY")]
    expected = [FIRST, SECOND, FINAL, FINAL]
    for step, reply in enumerate(expected):
        assert SCRIPT.reply_for_responses(responses) is reply, step
        assert SCRIPT.reply_for(chat) is reply, step
        responses += [r_message("assistant", "text"), fn_call(), fn_output()]
        chat += [assistant("text"), tool()]


def test_developer_and_user_messages_also_end_a_model_response() -> None:
    history = [
        r_message("user", "DEPLOY"),
        fn_call(),
        r_message("developer", "approval needed"),
        fn_call(),
    ]
    assert SCRIPT.reply_for_responses(history) is FINAL
    history = [r_message("user", "DEPLOY"), r_message("assistant", "a"), r_message("user", "go on")]
    history += [r_message("assistant", "b")]
    assert SCRIPT.reply_for_responses(history) is FINAL


def test_any_tool_output_item_ends_a_model_response() -> None:
    custom_call = {"type": "custom_tool_call", "call_id": "c", "name": "apply_patch", "input": ""}
    custom_output = {"type": "custom_tool_call_output", "call_id": "c", "output": "done"}
    history = [r_message("user", "DEPLOY"), custom_call, custom_output, custom_call]
    assert SCRIPT.reply_for_responses(history) is FINAL


def test_only_user_text_triggers_in_responses_input() -> None:
    history = [
        r_message("developer", "DEPLOY"),
        r_message("system", "DEPLOY"),
        r_message("assistant", "DEPLOY"),
        {"type": "function_call_output", "call_id": "x", "output": "DEPLOY"},
        {"type": "function_call", "call_id": "x", "name": "DEPLOY", "arguments": "DEPLOY"},
    ]
    assert SCRIPT.reply_for_responses(history) is DEFAULT_REPLY


def test_string_input_and_easy_messages() -> None:
    assert SCRIPT.reply_for_responses("please DEPLOY") is FIRST
    # "Easy" input messages leave out `type` and may carry a plain string.
    history = [{"role": "user", "content": "DEPLOY"}, {"role": "assistant", "content": "ok"}]
    assert SCRIPT.reply_for_responses(history) is SECOND


def test_odd_responses_input_falls_back_to_the_default() -> None:
    assert SCRIPT.reply_for_responses(None) is DEFAULT_REPLY
    assert SCRIPT.reply_for_responses({"role": "user", "content": "DEPLOY"}) is DEFAULT_REPLY
    assert SCRIPT.reply_for_responses([]) is DEFAULT_REPLY
    assert SCRIPT.reply_for_responses(["DEPLOY", 3, None]) is DEFAULT_REPLY
    assert SCRIPT.reply_for_responses(["junk", r_message("user", "DEPLOY")]) is FIRST


def test_http_status_from_dict() -> None:
    script = Script.from_dict(
        {
            "rules": [
                {
                    "when": "X",
                    "replies": [{"http_status": 500}, {"http_status": "429", "text": "slow down"}],
                }
            ]
        }
    )
    assert script.rules[0].replies == (
        Reply(http_status=500),
        Reply(text="slow down", http_status=429),
    )
    assert Reply().http_status is None
    assert Script.from_dict({"default": {"text": "t"}}).default.http_status is None


def test_connection_faults_from_dict() -> None:
    script = Script.from_dict(
        {
            "default": {"text": "t", "cut_after_bytes": "120"},
            "rules": [
                {
                    "when": "X",
                    "replies": [
                        {"never_ends": True},
                        {"never_ends": True, "cut_after_bytes": 5},
                        {"http_status": 429, "retry_after_s": 2},
                    ],
                }
            ],
        }
    )
    assert script.default == Reply(text="t", cut_after_bytes=120)
    assert script.rules[0].replies == (
        Reply(never_ends=True),
        Reply(never_ends=True, cut_after_bytes=5),
        Reply(http_status=429, retry_after_s=2),
    )
    plain = Script.from_dict({"default": {"text": "t"}}).default
    assert (plain.cut_after_bytes, plain.never_ends, plain.retry_after_s) == (None, False, None)


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_never_ends_must_be_a_json_boolean(value: Any) -> None:
    with pytest.raises(ValueError, match="never_ends must be true or false"):
        Script.from_dict({"default": {"never_ends": value}})


@pytest.mark.parametrize(
    ("fields", "message"),
    [({"cut_after_bytes": -1}, "cut_after_bytes"), ({"retry_after_s": -2}, "retry_after_s")],
)
def test_negative_connection_fault_values_are_refused(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Reply(**fields)


@pytest.mark.parametrize(
    ("reply", "limit"),
    [
        (Reply(text="t"), None),
        (Reply(cut_after_bytes=0), 0),
        (Reply(cut_after_bytes=9), 9),
        (Reply(never_ends=True), 0),
        (Reply(never_ends=True, cut_after_bytes=9), 9),
    ],
)
def test_body_limit_is_where_the_body_stops(reply: Reply, limit: int | None) -> None:
    assert reply.body_limit == limit
