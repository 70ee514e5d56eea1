"""Script: the scripted model's stateless reply selection."""

from __future__ import annotations

import json
from typing import Any

import pytest

from copilot_driver.testing.script import DEFAULT_REPLY, Reply, Rule, Script, ToolCall

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
