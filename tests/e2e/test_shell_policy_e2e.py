"""The shell policy on the real runtime: every family of tricks denied, ordinary commands run.

The scripted model makes the real Copilot CLI call its bash tool once per
family of FAMILIES (tests/helpers/shell_corpus.py) and once per ORDINARY
command, all as parallel calls in one reply, under the union of the rules
each was tried with. The oracle is what really happened in the workspace:
no marker file exists (a family's payload never ran), nothing connected to
the listening socket the `/dev/tcp` family aims at, every ordinary command
was approved and ran (its output reached the model), and the runtime, the
driver's log and the model each record every family as denied.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from copilot_driver.permissions.policy import DENIAL_FEEDBACK
from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, ToolCall
from copilot_driver.testing.fixtures import DriverRunner
from helpers import runtime_record
from helpers.shell_corpus import (
    DENY_RULE_FAMILIES,
    FAMILIES,
    ORDINARY,
    ORDINARY_RULES,
    make_workspace,
)

pytestmark = pytest.mark.e2e

RULES = tuple(sorted({*ORDINARY_RULES, *(rule for f in FAMILIES for rule in f.rules)}))
"""Each family is denied under the union of all the rules, so under its own too."""


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A port on 127.0.0.1 that the `/dev/tcp` family would connect to."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        yield server


def _marker(family_id: str) -> str:
    return f"pwn-{family_id}"


def test_families_are_denied_and_ordinary_commands_run_on_the_real_runtime(
    driver: DriverRunner,
    scripted_model: ScriptedModelServer,
    listener: socket.socket,
    tmp_path: Path,
) -> None:
    workspace = make_workspace(tmp_path / "workspace")
    port = listener.getsockname()[1]
    families = {
        f"family-{family.id}": family.command(_marker(family.id)).replace(
            "127.0.0.1/9", f"127.0.0.1/{port}"
        )
        for family in FAMILIES
    }
    ordinary = {f"ordinary-{index}": command for index, command in enumerate(ORDINARY)}
    calls = tuple(
        ToolCall("bash", {"command": command, "description": call_id}, call_id=call_id)
        for call_id, command in {**families, **ordinary}.items()
    )
    scripted_model.script = Script(
        rules=(Rule("FAMILIES", (Reply(tool_calls=calls), Reply(text="families done"))),)
    )
    run = driver.run(
        "Run the FAMILIES",
        GH_AW_COPILOT_SDK_SERVER_ARGS=json.dumps(
            [arg for rule in RULES for arg in ("--allow-tool", rule)]
        ),
        GH_AW_MAX_TOOL_DENIALS="100000",
    )
    assert run.exit_code == 0, run.stderr[-2000:]
    assert run.stdout == "families done\n"

    decisions = runtime_record.decisions(run.events())
    results = runtime_record.tool_results(scripted_model)
    assert set(decisions) == set(families) | set(ordinary), "a tool call asked no permission"
    wrong = [
        f"{call_id}: {decisions[call_id]} {families[call_id]!r}"
        for call_id in families
        if not decisions[call_id].startswith("denied") or DENIAL_FEEDBACK not in results[call_id]
    ]
    wrong += [
        f"{call_id}: {decisions[call_id]} {ordinary[call_id]!r} {results[call_id][:200]!r}"
        for call_id in ordinary
        if decisions[call_id] != "approved" or DENIAL_FEEDBACK in results[call_id]
    ]
    assert not wrong, "wrong decisions:\n" + "\n".join(wrong)

    # What really happened: no payload ran, nothing connected.
    markers = [
        path
        for family in FAMILIES
        if (path := family.marker_path(_marker(family.id))) is not None
        and (workspace / path).exists()
    ]
    assert markers == [], f"payloads ran: {markers}"
    assert sorted(p.name for p in workspace.rglob("pwn-*")) == []
    with pytest.raises(BlockingIOError):
        listener.accept()
    # The driver logged one denial per family, each with the policy's reason.
    denials = run.entries("permission.denied")
    assert len(denials) == len(families)
    assert all(str(entry["reason"]).strip() for entry in denials)
    # The ordinary commands really ran: their output reached the model.
    by_command = {command: results[call_id] for call_id, command in ordinary.items()}
    assert "On branch main" in by_command["git status"]
    assert "second line" in by_command["sed -n 1,5p F"]  # (`sed -i` may have run first)
    assert "src/app.py" in by_command["find . -name '*.py'"]


def test_under_deny_rules_wrappers_are_denied_and_known_programs_run_on_the_real_runtime(
    driver: DriverRunner, scripted_model: ScriptedModelServer, tmp_path: Path
) -> None:
    """`--allow-all-tools` with deny rules: every DENY_RULE_FAMILIES line (a wrapper, a
    build tool, a package manager, a database, git's push plumbing) is denied and leaves
    no marker and no remote ref; programs known to run nothing else still run."""
    workspace = make_workspace(tmp_path / "workspace")
    families = {
        f"family-{family.id}": family.command(_marker(family.id)) for family in DENY_RULE_FAMILIES
    }
    everyday = {"everyday-git": "git status --short", "everyday-ls": "ls src | wc -l"}
    calls = tuple(
        ToolCall("bash", {"command": command, "description": call_id}, call_id=call_id)
        for call_id, command in {**families, **everyday}.items()
    )
    scripted_model.script = Script(
        rules=(Rule("DENIED", (Reply(tool_calls=calls), Reply(text="deny rules done"))),)
    )
    denied = sorted({rule for family in DENY_RULE_FAMILIES for rule in family.rules})
    run = driver.run(
        "Run the DENIED families",
        GH_AW_COPILOT_SDK_SERVER_ARGS=json.dumps(
            ["--allow-all-tools", *(arg for rule in denied for arg in ("--deny-tool", rule))]
        ),
        GH_AW_MAX_TOOL_DENIALS="100000",
    )
    assert run.exit_code == 0, run.stderr[-2000:]

    decisions = runtime_record.decisions(run.events())
    results = runtime_record.tool_results(scripted_model)
    wrong = [
        f"{call_id}: {decisions.get(call_id)} {command!r}"
        for call_id, command in families.items()
        if not str(decisions.get(call_id)).startswith("denied")
    ]
    wrong += [
        f"{call_id}: {decisions.get(call_id)} {command!r}"
        for call_id, command in everyday.items()
        if decisions.get(call_id) != "approved"
    ]
    assert not wrong, "wrong decisions:\n" + "\n".join(wrong)
    assert sorted(str(p.relative_to(workspace)) for p in workspace.rglob("pwn-*")) == []
    reasons = [str(entry["reason"]) for entry in run.entries("permission.denied")]
    assert len(reasons) == len(families)
    assert all("--deny-tool shell(" in reason for reason in reasons), reasons
    assert "1" in results["everyday-ls"]  # src holds app.py: the pipeline really ran
