"""Security tests of the `shell(...)` rules (spec 5.3, 5.4): fail closed, always.

The boundary under test: a workflow that allows `shell(git:*)` and `shell(ls)`
must never run anything else (`rm`, `curl`, a shell, ...), however the
command is spelled. Most tests go through `Policy.decide` on the runtime's
wire-form request dict, which is what the permission handler calls. How bash
reads a line is tested in test_permissions_bash.py, the program table in
test_permissions_programs.py, and what bash really does with every approval
in tests/oracle/.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from copilot_driver.permissions.bash import Command, ShellParseError, parse_command
from copilot_driver.permissions.config import PermissionConfig
from copilot_driver.permissions.policy import Decision, Policy
from copilot_driver.permissions.shell import ShellRules, plain_refusal
from helpers.bash_syntax import command_lines
from helpers.shell_corpus import ADVERSARIAL, TABLE_RULES

RULES = TABLE_RULES
POLICY = Policy(PermissionConfig(False, RULES, "test"))


def shell_request(
    command: Any,
    segments: Any = None,
    *,
    commands: Any = "same",
    include_segments: bool | None = None,
) -> dict[str, Any]:
    """The runtime's shell permission request, in its wire form.

    `commands` defaults to the runtime's observed shape: one entry whose
    identifier is the whole command text. `commandSegments` is left out
    (None: "not provided") unless `segments` is given.
    """
    if commands == "same":
        commands = [{"identifier": command, "readOnly": False}]
    request: dict[str, Any] = {
        "kind": "shell",
        "fullCommandText": command,
        "commands": commands,
        "intention": "test",
        "possiblePaths": [],
        "possibleUrls": [],
        "hasWriteFileRedirection": False,
        "canOfferSessionApproval": False,
    }
    if segments is not None or include_segments:
        request["commandSegments"] = segments
    return request


def runtime_segments(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"identifier": ident, "fullCommandText": text} for ident, text in pairs]


def decide(command: Any, policy: Policy = POLICY, **kwargs: Any) -> Decision:
    return policy.decide(shell_request(command, **kwargs))


def policy_of(*rules: str) -> Policy:
    return Policy(PermissionConfig(False, rules, "test"))


# -- 1. the adversarial table: every one of these must be denied ------------------------------

DENIED = [pytest.param(command, id=name) for name, command in ADVERSARIAL]


def test_the_adversarial_table_is_large_and_distinct() -> None:
    commands = [command for _, command in ADVERSARIAL]
    ids = [name for name, _ in ADVERSARIAL]
    assert len(commands) >= 240
    assert len(set(commands)) == len(commands)
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize("command", DENIED)
def test_adversarial_commands_are_denied(command: str) -> None:
    decision = decide(command)
    assert decision.allowed is False, decision.reason
    assert decision.kind == "shell"
    assert isinstance(decision.reason, str)
    assert decision.reason.strip()


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("git config alias.x '!rm -rf x' && git x", id="alias-defined-then-run"),
        pytest.param(
            "git config core.fsmonitor 'rm -rf x'; git status", id="fsmonitor-then-status"
        ),
        pytest.param("git config core.pager 'rm -rf x'", id="config-core-pager"),
        pytest.param("git config --global alias.x '!rm -rf x'", id="config-global-alias"),
    ],
)
def test_git_config_cannot_install_a_command(command: str) -> None:
    """`git -c alias.x='!rm' x` is denied; `git config` writing the same key is not.

    Both end in git running `rm` (verified with git 2.39), in one request.
    """
    decision = decide(command)
    assert decision.allowed is False, decision.reason


# -- 2. allowed commands ------------------------------------------------------------------------

ALLOWED = [
    pytest.param("git status", id="git-status"),
    pytest.param("git status --short", id="git-status-short"),
    pytest.param("git log --oneline -5", id="git-log-oneline"),
    pytest.param("git log 2>&1", id="dup-stderr"),
    pytest.param("git log >&2", id="dup-stdout"),
    pytest.param("git log 1>&2", id="dup-stdout-fd"),
    pytest.param("git log > /dev/null", id="dev-null"),
    pytest.param("git log 2>/dev/null", id="stderr-dev-null"),
    pytest.param("git log &> /dev/null", id="both-dev-null"),
    pytest.param("git log < /dev/null", id="stdin-dev-null"),
    pytest.param("2>/dev/null git status", id="redirect-first-dev-null"),
    pytest.param("git diff HEAD~1 -- src", id="git-diff-path"),
    pytest.param("git status && git log", id="and"),
    pytest.param("git status || ls", id="or"),
    pytest.param("git status; ls", id="semicolon"),
    pytest.param("git log | git status", id="pipe"),
    pytest.param("git log |& git status", id="pipe-amp"),
    pytest.param("ls", id="ls"),
    pytest.param("ls -la", id="ls-la"),
    pytest.param("ls -la /tmp", id="ls-la-tmp"),
    pytest.param("'git' status", id="single-quoted-name"),
    pytest.param('"git" status', id="double-quoted-name"),
    pytest.param("\\git status", id="backslashed-name"),
    pytest.param("git  status", id="double-space"),
    pytest.param("git\tstatus", id="tab"),
    pytest.param("   git status   ", id="surrounding-spaces"),
    pytest.param('git commit -m "a b; rm x"', id="quoted-semicolon"),
    pytest.param("git commit -m 'x && rm y'", id="quoted-and"),
    pytest.param("git commit -m 'a | b'", id="quoted-pipe"),
    pytest.param('git commit -m "line1\nline2"', id="quoted-newline"),
    pytest.param("git log --format='%H $(x)'", id="single-quoted-substitution"),
    pytest.param("git log --grep='`rm x`'", id="single-quoted-backticks"),
    pytest.param("git log --author='$(x)'", id="single-quoted-dollar-paren"),
    pytest.param("git status # rm x", id="comment"),
    pytest.param("git status #; rm x", id="comment-with-semicolon"),
    pytest.param("ls # $(rm x)", id="comment-with-substitution"),
    pytest.param("git status\n\ngit log", id="blank-line"),
    pytest.param("git status &&\ngit log", id="and-newline"),
    pytest.param("git status &&\n\n  git log", id="and-blank-lines"),
    pytest.param("git status |\ngit log", id="pipe-newline"),
    pytest.param("git sta\\\ntus", id="line-continuation"),
    pytest.param("git status \\\n  --short", id="line-continuation-between-words"),
    pytest.param("git grep -c foo", id="grep-count"),
    pytest.param("ls;   ", id="trailing-semicolon"),
    pytest.param("ls;", id="trailing-semicolon-glued"),
    pytest.param("git status\n", id="trailing-newline"),
    pytest.param("ls -la \\; rm x", id="escaped-semicolon-is-an-argument"),
    pytest.param("git log -- 'a b'", id="quoted-path"),
    pytest.param("git show HEAD:README.md", id="git-show"),
    pytest.param("git log -n 3 --format=%s", id="format"),
    pytest.param("git rev-parse --abbrev-ref HEAD", id="rev-parse"),
    pytest.param("git log -c", id="log-combined-diff"),
    pytest.param("git --no-pager log", id="no-pager"),
    pytest.param("git log 'a;b'", id="quoted-semicolon-arg"),
]


NOT_PLAIN = [
    pytest.param("FOO=1 git status", "it assigns FOO", id="assignment"),
    pytest.param("GCONV_PATH=. ls", "it assigns GCONV_PATH", id="assignment-that-loads-code"),
    pytest.param("git log 2>&-", "it redirects `2>&-`", id="close-stderr"),
    pytest.param("git log > out", "it redirects `>out`", id="file"),
    pytest.param("git log < in", "it redirects `<in`", id="read-a-file"),
    pytest.param("ls 3</dev/tcp/127.0.0.1/9 >&3", "it redirects `3</dev/tcp", id="dev-tcp"),
    pytest.param("git -c x=y log", "`-c` sets configuration", id="git-c"),
]


@pytest.mark.parametrize(("command", "why"), NOT_PLAIN)
def test_a_matching_rule_does_not_cover_a_command_that_is_not_plain(command: str, why: str) -> None:
    """Beyond matching, a name rule covers only plain commands; the reason names what is not."""
    decision = decide(command, policy_of("shell(git:*)", "shell(ls)", "shell(env:*)"))
    assert decision.allowed is False
    assert why in decision.reason, decision.reason


@pytest.mark.parametrize("rule", ["env:*", "sh", "xargs:*", "eval", "export:*", "/usr/bin/env:*"])
def test_a_rule_naming_a_wrapper_or_a_state_changing_builtin_is_unusable(rule: str) -> None:
    compiled = ShellRules.compile([rule])
    assert compiled.unusable == (rule,)
    (reason,) = compiled.unusable_reasons
    assert reason.startswith("no name rule covers"), reason
    name = rule.removesuffix(":*")
    assert decide(f"{name} git status", policy_of(f"shell({rule})")).allowed is False


@pytest.mark.parametrize(
    "command",
    ["FOO=1 git status", "git log > out", "git -c x=y log", "git log 2>&-"],
)
def test_an_exact_rule_covers_what_it_spells(command: str) -> None:
    assert decide(command, policy_of(f"shell({command})")).allowed is True
    assert decide(command + " x", policy_of(f"shell({command})")).allowed is False


@pytest.mark.parametrize("command", ALLOWED)
def test_plain_commands_under_the_rules_are_allowed(command: str) -> None:
    decision = decide(command)
    assert decision.allowed is True, decision.reason
    assert decision.summary.startswith("shell(")


def test_allowed_with_realistic_runtime_segments() -> None:
    command = "git status && git log | ls -la"
    segments = runtime_segments(
        ("git status", "git status"), ("git log", "git log"), ("ls", "ls -la")
    )
    assert decide(command, segments=segments).allowed is True


# -- 3. rule semantics --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("git checkout main", True),
        ("git checkout", True),
        ("git  checkout  main", True),
        ("git 'checkout' main", True),
        ("git checkoutx", False),
        ("git checkoutx main", False),
        ("git status", False),
        ("git", False),
        ("gitx checkout main", False),
        ("git checkout main && rm x", False),
    ],
)
def test_prefix_rule_is_word_based(command: str, allowed: bool) -> None:
    policy = policy_of("shell(git checkout:*)")
    assert decide(command, policy).allowed is allowed


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("git status -s", True),
        ("git status  -s", True),
        ("git 'status' -s", True),
        ('"git" status "-s"', True),
        ("git status -s x", False),
        ("git status", False),
        ("git status -s > x", False),
        ("git -s status", False),
        ("git status -s && git status -s", False),
        ("git status -s\ngit status -s", False),
    ],
)
def test_exact_rule_matches_the_whole_line(command: str, allowed: bool) -> None:
    policy = policy_of("shell(git status -s)")
    assert decide(command, policy).allowed is allowed


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("git diff > out.patch", True),
        ("git diff >out.patch", True),
        ("git  diff  >  'out.patch'", True),
        ("git diff > other.patch", False),
        ("git diff >> out.patch", False),
        ("git diff", False),
        ("git diff HEAD > out.patch", False),
    ],
)
def test_exact_rule_may_spell_a_redirection(command: str, allowed: bool) -> None:
    policy = policy_of("shell(git diff > out.patch)")
    assert decide(command, policy).allowed is allowed


def test_name_rule_is_an_identifier_match() -> None:
    policy = policy_of("shell(ls)")
    assert decide("ls -la", policy).allowed is True
    assert decide("ls", policy).allowed is True
    assert decide("lsx", policy).allowed is False
    assert decide("git status", policy).allowed is False


def test_name_rule_with_star_is_a_word_boundary() -> None:
    policy = policy_of("shell(git:*)")
    assert decide("git status", policy).allowed is True
    assert decide("git", policy).allowed is True
    assert decide("gitx status", policy).allowed is False
    assert decide("git2 status", policy).allowed is False


@pytest.mark.parametrize(
    "command",
    ["rm -rf x", "echo $(id)", "bash -c 'rm x'", "(rm x) & `id`", "git status; rm x", ""],
)
def test_plain_shell_allows_everything(command: str) -> None:
    policy = policy_of("shell")
    assert decide(command, policy).allowed is True


def test_unusable_rules_are_reported_and_never_match() -> None:
    compiled = ShellRules.compile([":*", "*", "a; b:*", "git:*", "FOO=1 ls:*", " "])
    assert compiled.unusable == (":*", "*", "a; b:*", "FOO=1 ls:*", " ")
    assert compiled.unusable_reasons == (
        "it contains no command",
        "it contains an unquoted `*` (a glob pattern)",
        "a name or prefix rule names one command, and this one holds several",
        "a name or prefix rule holds no assignment or redirection",
        "it names no command",
    )
    assert compiled.names == frozenset({"git"})

    policy = policy_of("shell(:*)", "shell(*)", "shell(a; b:*)", "shell()", "read")
    assert [p.rule for p in policy.rule_problems] == [
        "shell(:*)",
        "shell(*)",
        "shell(a; b:*)",
        "shell()",
    ]
    for command in ("a", "b", "a; b", "rm x", "git status", "x", ""):
        decision = decide(command, policy)
        assert decision.allowed is False, command
        assert decision.reason


def test_a_rule_missing_its_parenthesis_is_not_a_shell_rule() -> None:
    policy = policy_of("shell(git:*")
    (problem,) = policy.rule_problems
    assert problem.suggestion == "shell(git:*)"
    assert decide("git status", policy).allowed is False
    assert decide("shell(git:*", policy).allowed is False


def test_exact_rules_outside_the_literal_subset_match_their_text_only() -> None:
    compiled = ShellRules.compile(["echo $HOME", "git log --format='%H %s'"])
    assert compiled.unusable == ()
    assert compiled.spells("echo $HOME", None) is True
    assert compiled.spells(" echo $HOME\n", None) is True
    assert compiled.spells("echo  $HOME", None) is False
    assert compiled.spells("echo $HOME\x85", None) is False  # bash reads it into the word
    assert compiled.spells("git log --format='%H %s'", parse_command("git log --format='%H %s'"))
    assert compiled.spells('git log --format="%H %s"', parse_command('git log --format="%H %s"'))


def test_wrapper_rules_only_match_when_spelled_out_exactly() -> None:
    policy = policy_of("shell(env:*)", "shell(sudo git status)")
    assert decide("env rm x", policy).allowed is False
    assert decide("env", policy).allowed is False
    assert decide("sudo git status", policy).allowed is True
    assert decide("sudo git log", policy).allowed is False


# -- 4. cross-check with the runtime's own parse ------------------------------------------------


def test_matching_runtime_segments_allow() -> None:
    segments = runtime_segments(("git status", "git status"), ("ls", "ls -la"))
    assert decide("git status && ls -la", segments=segments).allowed is True


def test_quoted_runtime_identifier_is_read_like_a_command() -> None:
    segments = runtime_segments(("'git'", "'git' status"))
    assert decide("'git' status", segments=segments).allowed is True


def test_a_different_segment_count_denies() -> None:
    fewer = runtime_segments(("git status", "git status"))
    decision = decide("git status; ls", segments=fewer)
    assert decision.allowed is False
    assert "commands" in decision.reason

    more = runtime_segments(("git status", "git status"), ("rm", "rm x"))
    assert decide("git status", segments=more).allowed is False


def test_an_empty_runtime_segment_list_denies() -> None:
    assert decide("git status", segments=[]).allowed is False


def test_a_different_program_name_denies() -> None:
    segments = runtime_segments(("rm", "rm -rf x"))
    decision = decide("git status", segments=segments)
    assert decision.allowed is False
    assert "rm" in decision.reason


def test_a_runtime_identifier_of_two_commands_denies() -> None:
    segments = runtime_segments(("git status; rm x", "git status"))
    assert decide("git status", segments=segments).allowed is False


def test_a_commands_identifier_missing_from_the_text_denies() -> None:
    commands = [{"identifier": "rm -rf x", "readOnly": False}]
    decision = decide("git status", commands=commands)
    assert decision.allowed is False
    assert "command list" in decision.reason


@pytest.mark.parametrize(
    "commands",
    [
        pytest.param([{"readOnly": True}], id="missing-identifier"),
        pytest.param([{"identifier": 3}], id="identifier-not-a-string"),
        pytest.param(["git status"], id="entry-not-a-mapping"),
        pytest.param([None], id="entry-none"),
        pytest.param(5, id="not-iterable"),
        pytest.param("rm", id="a-string"),
    ],
)
def test_malformed_commands_deny(commands: Any) -> None:
    decision = decide("git status", commands=commands)
    assert decision.allowed is False
    assert decision.reason


@pytest.mark.parametrize(
    "segments",
    [
        pytest.param({"identifier": "git status"}, id="a-mapping"),
        pytest.param("git status", id="a-string"),
        pytest.param(3, id="a-number"),
        pytest.param([{"fullCommandText": "git status"}], id="missing-identifier"),
        pytest.param([{"identifier": None}], id="identifier-none"),
        pytest.param([{"identifier": ["git"]}], id="identifier-a-list"),
        pytest.param(["git status"], id="entry-a-string"),
        pytest.param([None], id="entry-none"),
        pytest.param([{"identifier": ""}], id="identifier-empty"),
        pytest.param([{"identifier": "git 'status"}], id="identifier-unparseable"),
    ],
)
def test_malformed_command_segments_deny(segments: Any) -> None:
    decision = decide("git status", segments=segments, include_segments=True)
    assert decision.allowed is False
    assert decision.reason


@pytest.mark.parametrize(
    "command",
    [None, 3, ["git status"], {"text": "git status"}, b"git status"],
    ids=["none", "int", "list", "dict", "bytes"],
)
def test_a_non_string_command_is_a_malformed_request(command: Any) -> None:
    decision = POLICY.decide(shell_request(command, commands=[]))
    assert decision.allowed is False
    assert "malformed" in decision.reason


def test_a_missing_command_is_a_malformed_request() -> None:
    request = shell_request("git status")
    del request["fullCommandText"]
    decision = POLICY.decide(request)
    assert decision.allowed is False
    assert "malformed" in decision.reason


# -- 5. properties ------------------------------------------------------------------------------

SHELL_ALPHABET = st.sampled_from(
    [*"ab gitlsrm-.\t\n\r\\'\"$`()<>&|;#{}=*?[]~!0123", "\x00", "\x0b", "\u00a0"]
)
SHELL_TEXT = st.one_of(
    st.text(SHELL_ALPHABET, max_size=40),
    st.text(max_size=40),
    st.lists(
        st.sampled_from(
            ["git", "ls", "rm", " ", ";", "&&", "||", "|", "|&", "&", "\n", "2>&1", ">", "<<",
             "<(", "$(", ")", "`", "'", '"', "\\", "$X", "${X}", "{", "}", "#", "-c", "x=1"]
        ),
        max_size=12,
    ).map("".join),
)  # fmt: skip


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(SHELL_TEXT, command_lines()))
@example('git "\\"; git 0\\')  # once raised IndexError (found by the oracle's generator)
def test_parse_command_raises_only_shell_parse_errors(text: str) -> None:
    try:
        commands = parse_command(text)
    except ShellParseError:
        return
    assert commands
    for command in commands:
        assert isinstance(command, Command)
        assert command.words
        assert all(isinstance(word, str) for word in command.words)
        assert plain_refusal(command) is None or plain_refusal(command)


JSON_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=10)
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
REQUEST_KEYS = st.sampled_from(
    [
        "kind",
        "fullCommandText",
        "commands",
        "commandSegments",
        "identifier",
        "url",
        "serverName",
        "toolName",
        "fileName",
        "path",
    ]
)
KINDS = st.sampled_from(
    ["shell", "read", "write", "url", "mcp", "custom-tool", "memory", "hook", "unknown"]
)


@st.composite
def malformed_requests(draw: st.DrawFn) -> Any:
    request = draw(st.dictionaries(REQUEST_KEYS, JSON_VALUES, max_size=5))
    if draw(st.booleans()):
        request["kind"] = draw(KINDS)
    if draw(st.booleans()):
        request["fullCommandText"] = draw(SHELL_TEXT)
    if draw(st.booleans()):
        hosts = st.one_of(st.text(max_size=12), st.sampled_from(["h:1", "h:x", "[::1]:9"]))
        request["url"] = draw(
            st.one_of(st.text(max_size=20), st.builds("http://{}/".format, hosts))
        )
    if draw(st.booleans()):
        items = st.one_of(JSON_VALUES, st.fixed_dictionaries({"identifier": JSON_VALUES}))
        request["commandSegments"] = draw(st.one_of(JSON_VALUES, st.lists(items, max_size=3)))
    return request


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SHELL_TEXT)
def test_decide_never_raises_on_any_command_text(text: str) -> None:
    decision = decide(text)
    assert isinstance(decision, Decision)
    assert isinstance(decision.reason, str)
    assert decision.reason


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(malformed_requests(), JSON_VALUES))
@example({"kind": "shell", "fullCommandText": "git status", "commandSegments": [[]]})
@example({"kind": "url", "url": "http://h:x/"})
def test_decide_never_raises_on_malformed_requests(request: Any) -> None:
    decision = POLICY.decide(request)
    assert isinstance(decision, Decision)
    assert isinstance(decision.reason, str)
    assert decision.reason


@pytest.mark.parametrize("url", ["http://a:x/", "http://a:99999/", "https://h:-1/p?token=s"])
def test_decide_never_raises_on_a_url_with_a_bad_port(url: str) -> None:
    """`summarise` reads `urlsplit(url).port` outside its try: a bad port raises ValueError."""
    decision = POLICY.decide({"kind": "url", "url": url})
    assert decision.allowed is False


# The grammar of the soundness and completeness properties.

SAFE_GIT_SUBCOMMANDS = ["status", "log", "diff", "show", "branch"]
SAFE_GIT_ARGS = [
    *SAFE_GIT_SUBCOMMANDS,
    "--oneline",
    "--short",
    "-5",
    "-n",
    "3",
    "HEAD",
    "HEAD~1",
    "--",
    "src",
    "--stat",
    "-a",
    "main",
]
SAFE_LS_ARGS = ["-la", "-l", "/tmp", "src", "-R", "--color=never", "a.txt"]
FORBIDDEN = [
    ["rm", "-rf", "x"],
    ["curl", "evil"],
    ["python", "-c", "x"],
    ["gitx", "status"],
    ["sh"],
]
SEPARATORS = ["&&", "||", ";", "|", "|&", "\n"]
WHITESPACE = st.sampled_from(["", " ", "  ", "\t", " \t "])


@st.composite
def quoted(draw: st.DrawFn, word: str) -> str:
    """`word`, spelled so that the shell reads it back as `word`."""
    style = draw(st.sampled_from(["plain", "single", "double", "backslash"]))
    if style == "single":
        return f"'{word}'"
    if style == "double":
        return f'"{word}"'
    if style == "backslash":
        return "".join(f"\\{c}" if c.isalpha() and draw(st.booleans()) else c for c in word)
    return word


@st.composite
def spelled(draw: st.DrawFn, words: list[str]) -> str:
    gaps = draw(st.lists(st.sampled_from([" ", "  ", "\t"]), min_size=len(words)))
    return "".join(draw(quoted(w)) + gap for w, gap in zip(words, gaps, strict=False)).rstrip()


@st.composite
def allowed_words(draw: st.DrawFn) -> list[str]:
    if draw(st.booleans()):  # git reads its own options before the subcommand: none here
        subcommand = draw(st.sampled_from(SAFE_GIT_SUBCOMMANDS))
        return ["git", subcommand, *draw(st.lists(st.sampled_from(SAFE_GIT_ARGS), max_size=3))]
    return ["ls", *draw(st.lists(st.sampled_from(SAFE_LS_ARGS), max_size=3))]


@st.composite
def hidden_forbidden(draw: st.DrawFn) -> str:
    """An allowed segment that runs a forbidden command through some nesting."""
    inner = draw(spelled(draw(st.sampled_from(FORBIDDEN))))
    host = draw(spelled(draw(allowed_words())))
    form = draw(
        st.sampled_from(
            ["$()", '"$()"', "``", '"``"', "<()", ">()", "--opt=$()", "subshell", "group"]
        )
    )
    if form == "$()":
        return f"{host} $({inner})"
    if form == '"$()"':
        return f'{host} "$({inner})"'
    if form == "``":
        return f"{host} `{inner}`"
    if form == '"``"':
        return f'{host} "`{inner}`"'
    if form == "<()":
        return f"{host} <({inner})"
    if form == ">()":
        return f"{host} >({inner})"
    if form == "--opt=$()":
        return f"{host} --format=$({inner})"
    if form == "subshell":
        return f"({inner})"
    return f"{{ {inner}; }}"


def join(draw: st.DrawFn, segments: list[str]) -> str:
    command = segments[0]
    for segment in segments[1:]:
        separator = draw(st.sampled_from(SEPARATORS))
        command += draw(WHITESPACE) + separator + draw(WHITESPACE) + segment
    return command


@st.composite
def commands_with_a_forbidden_part(draw: st.DrawFn) -> str:
    count = draw(st.integers(1, 4))
    kinds = draw(st.lists(st.sampled_from(["ok", "bad", "hidden"]), min_size=count, max_size=count))
    if all(kind == "ok" for kind in kinds):
        kinds[draw(st.integers(0, count - 1))] = draw(st.sampled_from(["bad", "hidden"]))
    segments = []
    for kind in kinds:
        if kind == "ok":
            segments.append(draw(spelled(draw(allowed_words()))))
        elif kind == "bad":
            segments.append(draw(spelled(draw(st.sampled_from(FORBIDDEN)))))
        else:
            segments.append(draw(hidden_forbidden()))
    return join(draw, segments)


@st.composite
def commands_of_allowed_parts(draw: st.DrawFn) -> tuple[str, list[list[str]]]:
    parts = draw(st.lists(allowed_words(), min_size=1, max_size=4))
    return join(draw, [draw(spelled(words)) for words in parts]), parts


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commands_with_a_forbidden_part())
def test_soundness_no_forbidden_command_is_ever_allowed(command: str) -> None:
    decision = decide(command)
    assert decision.allowed is False, (command, decision.reason)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commands_of_allowed_parts(), st.booleans())
def test_completeness_plain_allowed_commands_are_allowed(
    drawn: tuple[str, list[list[str]]], with_runtime_segments: bool
) -> None:
    command, parts = drawn
    segments = None
    if with_runtime_segments:  # as the runtime names them: `git <subcommand>`, or the name
        segments = [
            {"identifier": " ".join(words[:2]) if words[0] == "git" else words[0]}
            for words in parts
        ]
    decision = decide(command, segments=segments)
    assert decision.allowed is True, (command, decision.reason)


@settings(max_examples=200, deadline=None)
@given(allowed_words(), st.sampled_from(FORBIDDEN))
def test_a_quoted_forbidden_word_as_an_argument_is_just_an_argument(
    host: list[str], forbidden: list[str]
) -> None:
    command = f"{' '.join(host)} '{' '.join(forbidden)}'"
    assert decide(command).allowed is True, command
