"""Permission requests under stress, through the real runtime.

A scripted model makes the real Copilot CLI sidecar call its shell tool (and
its file tools) many times, often in parallel; each call is a real permission
request that the driver's handler answers under a scoped allowlist. Every
case runs the real driver process through `fault.start`/`fault.check`: the
documented exit code, a valid events file, no secret anywhere, no process
left behind. Measured on a loaded 2-CPU machine (load average 6-8); the
runtime, not the driver, sets the pace: about 25 ms of sidecar CPU per tool
call, the driver's handler takes microseconds.

1. The adversarial shell table, replayed: 186 hostile commands in the
   spirit of the shared table (`tests/helpers/shell_corpus.py::ADVERSARIAL`:
   chaining, pipes, newlines, command and process substitution, redirections,
   environment prefixes, wrappers, keywords, git's command-running options,
   quoting and malformed lines), each made to create a canary file if it
   ever ran, plus 18 harmless commands, as parallel calls in ONE reply under
   `shell(git:*)`, `shell(ls)`. Every hostile one is denied (runtime's
   record, the driver's `permission.denied` entry, the feedback the model
   gets) and its canary is absent; every harmless one runs. Before that the
   table is checked against itself: bash really creates each canary.
   Bound `TABLE_BOUND_S` = 60 s; measured 4-5 s for the run (plus about 2 s
   for the check of the table itself).
2. 1000 permission requests in one session: 20 rounds of 50 parallel calls,
   one in five allowed. Each request is answered exactly once (the runtime's
   requested/completed events, the driver's `permission.approved` and
   `permission.denied` entries, one each), exit 0. Bound `VOLUME_BOUND_S` =
   90 s; measured 25-34 s, 30-40 requests/s (printed by the test).
3. 200 requests of three kinds (shell, write, read) in one reply, at the
   debug log level (so the SDK's own log races the handler's on stderr):
   every decision right, none lost, every stderr line one JSON entry, the
   events file valid with each request before its answer. Bound
   `CONCURRENT_BOUND_S` = 45 s; measured about 5 s.
4. The tool-denials guard under concurrency: 40 parallel denied calls with
   GH_AW_MAX_TOOL_DENIALS=3: exit 3, `tool_denials_exceeded`, the guard
   trips once at 3, nothing ran, nothing approved or left unanswered, and
   the three denials the guard counted reach the runtime (the events file
   records them as denied, not `cancelled` by the abort that follows).
   Bound `GUARD_BOUND_S` = 20 s; measured 1.5-3 s.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.permissions.config import PermissionConfig
from copilot_driver.permissions.policy import DENIAL_FEEDBACK, Policy
from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, TestSidecar, ToolCall
from copilot_driver.testing.faults import Ended, FaultCase
from copilot_driver.testing.fixtures import DriverRunner
from helpers import runtime_record

pytestmark = pytest.mark.e2e

TABLE_BOUND_S = 60.0
"""~200 parallel calls in one reply took about 5 s; a loaded CI machine gets 10x."""
VOLUME_BOUND_S = 90.0
"""1000 calls took 25-34 s on a loaded 2-CPU machine (the sidecar's CPU is the
limit); 90 s still proves the run neither hangs nor slows down per request."""
CONCURRENT_BOUND_S = 45.0
"""200 parallel calls of three kinds took about 5 s at the debug log level."""
GUARD_BOUND_S = 20.0
"""Start-up, one model call, three denials, then the bounded cleanup (abort 2 s,
disconnect 3 s, stop 3 s at worst); measured 1.5-3 s, also with three runs at once."""

CANARY = "CANARY"


@dataclass(frozen=True)
class Row:
    """One command of the table; `CANARY` in it stands for the row's canary file."""

    id: str
    template: str
    canary: str | None = CANARY
    """Where the command creates a file if it runs, or None when it creates none."""

    @property
    def name(self) -> str:
        return f"pwn-{self.id}"

    @property
    def command(self) -> str:
        return self.template.replace(CANARY, self.name)

    @property
    def canary_path(self) -> str | None:
        return None if self.canary is None else self.canary.replace(CANARY, self.name)


def _rows(*rows: tuple[str, str] | tuple[str, str, str | None]) -> tuple[Row, ...]:
    return tuple(Row(*row) for row in rows)


# The rows of tests/helpers/shell_corpus.py::ADVERSARIAL, by the same ids where they match, with
# `rm x` replaced by something that leaves a trace: `touch CANARY`, a redirection
# to CANARY, or bin/git, a planted fake git that creates its arguments. Rows whose
# trick cannot create a file (lookalike names, malformed lines) have no canary:
# they must simply be denied. Hosts are 127.0.0.1: nothing may reach the internet
# even if a row ran.


HOSTILE = _rows(
    # chaining
    ("and", "git status && touch CANARY"),
    ("or", "ls /nonexistent || touch CANARY"),
    ("semicolon", "git status; touch CANARY"),
    ("semicolon-glued-right", "git status ;touch CANARY"),
    ("and-no-spaces", "git status&&touch CANARY"),
    ("or-no-spaces", "ls /nonexistent||touch CANARY"),
    ("semicolon-no-spaces", "git status;touch CANARY"),
    ("ls-semicolon", "ls -la; touch CANARY"),
    ("three-segments-last-bad", "git status && ls && touch CANARY"),
    ("export-path-then-git", "export PATH=bin:/usr/bin:/bin; git CANARY"),
    ("trap-then-git", "trap 'touch CANARY' EXIT; git status"),
    # pipes
    ("pipe-sh", "git rev-parse --sq-quote touch CANARY | sh"),
    ("pipe-no-spaces-bash", "git rev-parse --sq-quote touch CANARY|bash"),
    ("pipe-amp-sh", "git rev-parse --sq-quote touch CANARY |& sh"),
    ("pipe-xargs", "git rev-parse --sq-quote CANARY | xargs touch"),
    ("ls-pipe", "ls | touch CANARY"),
    ("pipe-chain-last-bad", "git status | git log | touch CANARY"),
    ("pipe-tee", "git status 2>&1 | tee CANARY"),
    ("ls-pipe-tee", "ls | tee CANARY"),
    # newlines
    ("newline", "git status\ntouch CANARY"),
    ("crlf", "git status\r\ntouch CANARY"),
    ("ls-newline", "ls\ntouch CANARY"),
    ("and-newline", "git status &&\ntouch CANARY"),
    ("pipe-newline", "git status |\ntouch CANARY"),
    ("leading-newline", "\ntouch CANARY"),
    ("blank-lines", "git status\n\n\ntouch CANARY"),
    ("comment-then-line", "git status # harmless\ntouch CANARY"),
    ("comment-line-then", "# just a comment\ntouch CANARY"),
    # command substitution
    ("dollar-paren-arg", "git log -1 $(touch CANARY)"),
    ("backticks-arg", "git log -1 `touch CANARY`"),
    ("dollar-paren-in-dquotes", 'git log -1 "$(touch CANARY)"'),
    ("backticks-in-dquotes", 'git log -1 "`touch CANARY`"'),
    ("commit-message-substitution", 'git commit --allow-empty -m "$(touch CANARY)"'),
    ("option-value-substitution", "git log -1 --format=$(touch CANARY)"),
    ("substituted-command-name", "$(touch CANARY; echo git) status"),
    ("backticked-command-name", "`touch CANARY; echo git` status"),
    ("substituted-subcommand", "git $(touch CANARY; echo status)"),
    ("ls-substitution", "ls $(touch CANARY)"),
    ("ls-substitution-dquoted", 'ls "$(touch CANARY)"'),
    ("ls-backticks", "ls `touch CANARY`"),
    ("arithmetic-expansion", "git log -1 $((1+$(touch CANARY)1))"),
    ("default-value-substitution", 'git log -1 "${X:-$(touch CANARY)}"'),
    ("parameter-operator", "ls ${X:-CANARY} > ${X:-CANARY}"),
    # process substitution
    ("process-substitution-in", "git diff <(touch CANARY)"),
    ("process-substitution-out", "git status >(touch CANARY)"),
    ("redirect-to-process-substitution", "git rev-parse --sq-quote touch CANARY > >(sh)"),
    ("ls-process-substitution", "ls <(touch CANARY)"),
    # here-documents and here-strings
    ("here-doc", "git log -1 <<EOF\n$(touch CANARY)\nEOF"),
    ("here-doc-into-sh", "sh <<EOF\ntouch CANARY\nEOF"),
    ("here-string", "git log -1 <<<$(touch CANARY)"),
    ("here-string-into-bash", "bash <<<'touch CANARY'"),
    # background jobs
    ("background-then", "git status & touch CANARY"),
    ("background-first", "touch CANARY & git status"),
    ("background-glued", "git status &touch CANARY"),
    ("background-trailing", "git status &", None),
    # subshells and groups
    ("subshell", "(touch CANARY)"),
    ("subshell-allowed-inside", "(git status)", None),
    ("subshell-after-semicolon", "git status; (touch CANARY)"),
    ("group", "{ touch CANARY; }"),
    ("group-after-and", "git status && { touch CANARY; }"),
    ("function-definition", "f() { touch CANARY; }; f"),
    ("arithmetic-command", "((x=1)) && touch CANARY"),
    # redirection tricks (the canary is the target)
    ("redirect-out", "git status > CANARY"),
    ("redirect-append", "git status >> CANARY"),
    ("redirect-both", "git status &> CANARY"),
    ("redirect-both-append", "git status &>> CANARY"),
    ("redirect-clobber", "git status >| CANARY"),
    ("redirect-stderr-file", "git status 2> CANARY"),
    ("redirect-read-write", "git status <> CANARY"),
    ("redirect-glued", "git status >CANARY"),
    ("redirect-stdout-fd", "git status 1>CANARY"),
    ("redirect-dup-to-file", "git status >& CANARY"),
    ("redirect-first", "> CANARY git status"),
    ("redirect-git-hook", "ls > .git/hooks/CANARY", ".git/hooks/CANARY"),
    ("redirect-variable-target", "git status > $PWD/CANARY"),
    ("redirect-after-dup", "git status 2>&1 > CANARY"),
    ("redirect-dev-tcp", "git status > /dev/tcp/127.0.0.1/9", None),
    # lookalike names (nothing to create: they must simply not be allowed)
    ("gitx", "gitx status", None),
    ("capital-git", "Git status", None),
    ("dot-slash-git", "./bin/git CANARY"),
    ("relative-path-git", "bin/git CANARY"),
    ("absolute-git", "/usr/bin/git status", None),
    ("nbsp-glued", "git\u00a0status", None),
    ("zero-width-space", "git\u200b status", None),
    ("fullwidth-git", "\uff47\uff49\uff54 status", None),
    ("split-name", "gi t status", None),
    ("lsx", "lsx", None),
    ("cyrillic-s-ls", "l\u0455 -la", None),
    # environment prefixes (bin/git is a planted fake that creates its arguments)
    ("env-path", "PATH=bin:/usr/bin:/bin git CANARY"),
    ("env-path-append", "PATH+=:bin git status", None),
    ("env-ld-preload", "LD_PRELOAD=x git status", None),
    ("env-git-sequence-editor", "GIT_SEQUENCE_EDITOR='touch CANARY' git rebase -i HEAD~1"),
    ("env-git-editor", "GIT_EDITOR='touch CANARY' git commit --allow-empty"),
    ("env-git-config-parameters", "GIT_CONFIG_PARAMETERS=\"'alias.x'='!touch CANARY'\" git x"),
    ("env-editor", "EDITOR='touch CANARY' git commit --allow-empty"),
    ("env-git-external-diff", "GIT_EXTERNAL_DIFF='touch CANARY' git diff HEAD~1"),
    ("env-git-ssh-command", "GIT_SSH_COMMAND='touch CANARY' git ls-remote localhost:x"),
    ("env-second-assignment-path", "FOO=1 PATH=bin:/usr/bin:/bin git CANARY"),
    ("env-substitution-value", "X=$(touch CANARY) git status"),
    ("env-variable-value", "FOO=$BAR git status", None),
    ("env-ifs", "IFS=x git status", None),
    ("env-bash-env", "BASH_ENV=x git status", None),
    # wrappers
    ("eval", "eval touch CANARY"),
    ("eval-git", "eval git status", None),
    ("bash-c", "bash -c 'touch CANARY'"),
    ("sh-c-git", "sh -c 'git status'", None),
    ("env", "env touch CANARY"),
    ("usr-bin-env", "/usr/bin/env touch CANARY"),
    ("xargs-sh", "git rev-parse --sq-quote CANARY | xargs -I{} sh -c 'touch {}'"),
    ("nohup", "nohup touch CANARY"),
    ("timeout", "timeout 5 touch CANARY"),
    ("command", "command touch CANARY"),
    ("builtin-eval", "builtin eval touch CANARY"),
    ("time", "time touch CANARY"),
    ("nice", "nice touch CANARY"),
    ("source", "source /dev/null", None),
    # shell keywords
    ("if-then-fi", "if true; then touch CANARY; fi"),
    ("if-allowed-inside", "if git status; then git log -1; fi", None),
    ("for-do-done", "for f in CANARY; do touch $f; done"),
    ("while-do-done", "while true; do touch CANARY; break; done"),
    ("until-do-done", "until touch CANARY; do git status; done"),
    ("case-esac", "case x in x) touch CANARY;; esac"),
    ("function-keyword", "function f { touch CANARY; }; f"),
    ("bang", "! touch CANARY"),
    ("double-brackets", "[[ -n x ]] && touch CANARY"),
    ("coproc", "coproc touch CANARY"),
    # git's command-running options
    ("git-c-alias", "git -c alias.x='!touch CANARY' x"),
    ("git-c-editor", "git -c core.editor='touch CANARY' commit --allow-empty"),
    ("git-c-glued", "git -ccore.editor='touch CANARY' commit --allow-empty", None),
    ("git-config-env", "X='!touch CANARY' git --config-env=alias.x=X x"),
    ("git-C-then-c-alias", "git -C . -c alias.x='!touch CANARY' x"),
    ("git-work-tree-then-c", "git --work-tree . -c alias.x='!touch CANARY' x"),
    ("git-brace-expanded-c", "git {-c,alias.x=!touch\\ CANARY} x"),
    ("git-rebase-x", "git rebase -x 'touch CANARY' HEAD~1"),
    ("git-rebase-exec-equals", "git rebase --exec='touch CANARY' HEAD~1"),
    ("git-rebase-bundled-qx", "git rebase -qx 'touch CANARY' HEAD~1"),
    ("git-rebase-abbreviated-exec", "git rebase --exe='touch CANARY' HEAD~1"),
    ("git-fetch-upload-pack", "git fetch --upload-pack='touch CANARY; git-upload-pack' ."),
    (
        "git-fetch-abbreviated-upload-pack",
        "git fetch --upload-pac='touch CANARY; git-upload-pack' .",
    ),
    ("git-ls-remote-upload-pack", "git ls-remote --upload-pack 'touch CANARY; git-upload-pack' ."),
    ("git-clone-u", "git clone -u 'touch CANARY; git-upload-pack' . clone-CANARY"),
    ("git-archive-exec", "git archive --exec='touch CANARY; git-upload-archive' --remote=. HEAD"),
    ("git-difftool-x", "git difftool -y -x 'touch CANARY' HEAD~1"),
    ("git-difftool-bundled-yx", "git difftool -yx 'touch CANARY' HEAD~1"),
    ("git-difftool-extcmd", "git difftool -y --extcmd='touch CANARY' HEAD~1"),
    ("git-grep-O", "git grep -O'touch CANARY' foo"),
    ("git-grep-open-files-in-pager", "git grep --open-files-in-pager='touch CANARY' foo"),
    ("git-config-alias-then-run", "git config alias.x '!touch CANARY' && git x"),
    ("git-config-fsmonitor-then-status", "git config core.fsmonitor 'touch CANARY'; git status"),
    ("git-bisect-run", "git bisect run touch CANARY", None),
    ("git-submodule-foreach", "git submodule foreach touch CANARY", None),
    # variable expansion where options could hide
    ("git-var", "git $X", None),
    ("git-braced-var", "git ${X} status", None),
    ("ls-var", "ls $HOME", None),
    ("var-command-name", "$X status", None),
    ("ifs-glued-name", "git${IFS}status", None),
    # ANSI-C and locale quoting
    ("ansi-c-name", "$'\\x74ouch' CANARY"),
    ("ansi-c-arg", "git $'status'", None),
    ("locale-quoting", 'git $"status"', None),
    # malformed or degenerate command lines
    ("unterminated-single", "git log 'unterminated", None),
    ("unterminated-double", 'git log "unterminated', None),
    ("trailing-backslash", "git status \\", None),
    ("nul-byte", "git status\x00; touch CANARY", None),
    ("empty", "", None),
    ("blank", "   ", None),
    ("only-newline", "\n", None),
    ("lone-semicolon", ";", None),
    ("lone-and", "&&", None),
    ("lone-pipe", "|", None),
    ("double-semicolon", ";;", None),
    ("ls-double-semicolon", "ls;;", None),
    ("leading-semicolon", "; ls", None),
    ("trailing-and", "ls &&", None),
    ("trailing-pipe", "ls |", None),
    ("double-and", "ls && && ls", None),
    ("case-fallthrough", "git status;& touch CANARY", None),
    # line continuation tricks
    ("continuation-builds-touch", "tou\\\nch CANARY"),
    ("continuation-then-semicolon", "git status \\\n; touch CANARY"),
    ("continuation-then-and", "git status\\\n&& touch CANARY"),
    # find-style tricks
    ("ls-pipe-find-exec", "ls | find . -maxdepth 0 -exec touch CANARY \\;"),
    ("find-exec", "find . -maxdepth 0 -exec touch CANARY \\;"),
    ("ls-and-find-fprint", "ls -la && find . -maxdepth 0 -fprint CANARY"),
    # harmless here, but outside what a name rule covers: an assignment, any `$`
    ("assignment", "FOO=1 git status", None),
    ("escaped-dollar", 'git log -1 --grep="\\$(touch CANARY)"', None),
    # plainly forbidden programs
    ("touch", "touch CANARY"),
    ("python-c", 'python3 -c \'open("CANARY", "w")\''),
)

HARMLESS = _rows(
    ("git-status", "git status"),
    ("ls-la", "ls -la"),
    ("and", "git status && ls"),
    ("semicolon", "git status; ls"),
    ("pipe", "git log -1 | git status"),
    ("dup-stderr", "git log -1 2>&1"),
    ("dev-null", "git status > /dev/null"),
    ("quoted-name", "'git' status"),
    ("backslashed-name", "\\git status"),
    ("tab", "git\tstatus"),
    ("quoted-substitution", "git log -1 --grep='$(touch CANARY)'"),
    ("quoted-backticks", "git log -1 --grep='`touch CANARY`'"),
    ("comment", "git status # ; touch CANARY"),
    ("comment-substitution", "ls # $(touch CANARY)"),
    ("escaped-semicolon", "ls -la \\; touch CANARY"),
    ("quoted-semicolon-arg", "git log -1 'a; touch CANARY'"),
    ("line-continuation", "git sta\\\ntus"),
    ("and-newline", "git status &&\ngit log -1"),
)

TABLE_RULES = ("shell(git:*)", "shell(ls)")
"""The unit table's rules, so each copied row means what it means there."""


def _git(root: Path, *args: str) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout


def _make_repository(root: Path) -> None:
    """A repository the git rows can act on: two commits, `foo` in a tracked file
    (for `git grep -O`), a clean tree, and bin/git, a fake git that creates files."""
    root.mkdir(parents=True, exist_ok=True)
    _git(root, "init", "-q", "-b", "main")
    # No reflogs: their first line is a null id, 40 zeros, which the secret scan
    # would take for a piece of a planted platform token (they end in zeros).
    _git(root, "config", "core.logAllRefUpdates", "false")
    _git(root, "config", "user.name", "Fault Suite")
    _git(root, "config", "user.email", "faults@example.invalid")
    (root / "a.txt").write_text("foo\n")
    _git(root, "add", "a.txt")
    _git(root, "commit", "-qm", "one")
    (root / "a.txt").write_text("foo\nbar\n")
    fake_git = root / "bin" / "git"
    fake_git.parent.mkdir()
    fake_git.write_text('#!/bin/sh\nexec touch "$@"\n')
    fake_git.chmod(0o755)
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "two")


def _check_the_table_means_something(folder: Path) -> None:
    """Without the runtime: the policy denies each hostile row and allows each harmless
    one, and bash, run on a fresh copy of the repository, really creates each hostile
    canary (and no harmless one). So an absent canary later proves the row did not run."""
    policy = Policy(PermissionConfig(False, TABLE_RULES, "test"))
    template = folder / "template"
    _make_repository(template)
    wrong: list[str] = []
    for expect_run, rows in ((True, HOSTILE), (False, HARMLESS)):
        for row in rows:
            request = {
                "kind": "shell",
                "fullCommandText": row.command,
                "commands": [{"identifier": row.command, "readOnly": False}],
            }
            if policy.decide(request).allowed == expect_run:
                wrong.append(f"{row.id}: the policy {'allows' if expect_run else 'denies'} it")
            if row.canary_path is None:
                continue
            scratch = folder / ("hostile" if expect_run else "harmless") / row.id
            shutil.copytree(template, scratch, symlinks=True)
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(scratch)}
            subprocess.run(
                ["bash", "-c", row.command],
                cwd=scratch,
                env={**env, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=10,
                check=False,
            )
            canary = scratch / row.canary_path
            deadline = time.monotonic() + (2.0 if expect_run else 0.0)  # `&`, `>(...)`
            while not canary.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            if canary.exists() != expect_run:
                wrong.append(f"{row.id}: bash {'did not create' if expect_run else 'created'} it")
    assert not wrong, "the table is wrong:\n" + "\n".join(wrong)


def _run(fault: FaultCase, sidecar: TestSidecar, env: dict[str, str], bound_s: float) -> Ended:
    fault.secrets.append(sidecar.token)
    return fault.start(env).end(bound_s=bound_s)


def _log_entries(stderr: str) -> list[dict[str, Any]]:
    """Every stderr line is one whole JSON entry: concurrent writers never interleave."""
    entries = []
    for number, line in enumerate(stderr.split("\n"), 1):
        if not line:
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            raise AssertionError(f"stderr line {number} is not one entry: {line[:300]!r}") from None
        assert isinstance(entry, dict), f"stderr line {number} is not an object"
        assert "event" in entry, f"stderr line {number} has no event: {line[:300]!r}"
        entries.append(entry)
    assert stderr.endswith("\n"), "the last stderr line is cut"
    return entries


def _of(entries: Iterable[dict[str, Any]], event: str) -> list[dict[str, Any]]:
    return [entry for entry in entries if entry.get("event") == event]


def _shell_summary(command: str) -> str:
    """The `requestSummary` of a shell request (spec 6.3: one line, compact)."""
    return f"shell({' '.join(command.split())})"


def _session_id(entries: list[dict[str, Any]]) -> str:
    (created,) = _of(entries, "session.created")
    return str(created["sessionId"])


def _check_denial_entries(
    entries: list[dict[str, Any]], expected: Counter[str], session_id: str
) -> None:
    denials = _of(entries, "permission.denied")
    assert Counter(str(entry["requestSummary"]) for entry in denials) == expected
    for entry in denials:
        assert entry["level"] == "warning"
        assert entry["sessionId"] == session_id
        assert str(entry["reason"]).strip()


# -- 1. the adversarial table -----------------------------------------------------------------


def test_the_adversarial_table_is_denied_by_the_real_runtime(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Every hostile row is denied and leaves no trace; every harmless row runs.

    All rows go in one reply (parallel calls, one session), so the whole table
    costs one model round trip and a few seconds.
    """
    # Outside tmp_path: the clone rows write reflogs there (see _make_repository).
    _check_the_table_means_something(tmp_path_factory.mktemp("table-control"))
    workspace = tmp_path / "workspace"
    _make_repository(workspace)
    head, git_config = _git(workspace, "rev-parse", "HEAD"), (workspace / ".git/config").read_text()
    calls = tuple(
        ToolCall("bash", {"command": row.command, "description": row.id}, call_id=f"{tag}-{row.id}")
        for tag, rows in (("hostile", HOSTILE), ("harmless", HARMLESS))
        for row in rows
    )
    scripted_model.script = Script(
        rules=(Rule("ADVERSARIAL", (Reply(tool_calls=calls), Reply(text="table done"))),)
    )
    env = driver.environment(
        "Run the ADVERSARIAL table",
        GH_AW_COPILOT_SDK_SERVER_ARGS=json.dumps(
            ["--headless", *(arg for rule in TABLE_RULES for arg in ("--allow-tool", rule))]
        ),
        GH_AW_MAX_TOOL_DENIALS="100000",
    )
    ended = _run(fault, copilot_sidecar, env, TABLE_BOUND_S)
    events = fault.check(ended, exit_code=0, state_dir=driver.tmp_path / "state")

    assert ended.stdout == "table done\n"
    entries = _log_entries(ended.stderr)
    decisions = runtime_record.decisions(events)
    results = runtime_record.tool_results(scripted_model)
    assert len(decisions) == len(calls), "a tool call asked no permission"
    wrong = []
    for row in HOSTILE:
        call_id = f"hostile-{row.id}"
        if not decisions[call_id].startswith("denied") or DENIAL_FEEDBACK not in results[call_id]:
            wrong.append(
                f"{row.id} ({row.command!r}): {decisions[call_id]}, {results[call_id][:120]!r}"
            )
    for row in HARMLESS:
        call_id = f"harmless-{row.id}"
        if decisions[call_id] != "approved" or DENIAL_FEEDBACK in results[call_id]:
            wrong.append(
                f"{row.id} ({row.command!r}): {decisions[call_id]}, {results[call_id][:120]!r}"
            )
    assert not wrong, "wrong decisions:\n" + "\n".join(wrong)
    _check_denial_entries(
        entries, Counter(_shell_summary(row.command) for row in HOSTILE), _session_id(entries)
    )
    # Nothing hostile ran: no canary, no new commit, no configuration written.
    planted = sorted(str(path.relative_to(workspace)) for path in workspace.rglob("pwn-*"))
    assert planted == [], f"hostile commands ran: {planted}"
    assert _git(workspace, "rev-parse", "HEAD") == head
    assert (workspace / ".git/config").read_text() == git_config
    # The harmless ones really ran (git status inside the repository).
    assert "On branch main" in results["harmless-git-status"]


# -- 2. a thousand requests -------------------------------------------------------------------

ROUNDS = 20
CALLS_PER_ROUND = 50
ALLOWED_EVERY = 5
"""One call in five is allowed (and really runs `echo`); denied calls are cheaper."""


def _command_of(call: ToolCall) -> str:
    """The shell command of a call this file built (its arguments are a mapping)."""
    assert isinstance(call.arguments, Mapping)
    return str(call.arguments["command"])


def _id_of(call: ToolCall) -> str:
    """The id of a call this file built (each is given one)."""
    assert call.call_id is not None
    return call.call_id


def _volume_call(round_: int, index: int) -> ToolCall:
    if index % ALLOWED_EVERY == 0:
        command = f"echo ok-{round_}-{index}"
    else:
        command = f"touch pwn-{round_}-{index}"
    return ToolCall(
        "bash", {"command": command, "description": "volume"}, call_id=f"v-{round_}-{index}"
    )


def test_a_thousand_permission_requests_in_one_session(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
) -> None:
    """Each of 1000 requests is answered once, correctly, and the run ends normally."""
    rounds = [
        tuple(_volume_call(round_, index) for index in range(CALLS_PER_ROUND))
        for round_ in range(ROUNDS)
    ]
    replies = tuple(Reply(tool_calls=calls) for calls in rounds)
    scripted_model.script = Script(rules=(Rule("VOLUME", (*replies, Reply(text="volume done"))),))
    env = driver.environment(
        "VOLUME of requests",
        GH_AW_COPILOT_SDK_SERVER_ARGS=json.dumps(["--allow-tool", "shell(echo)"]),
        GH_AW_MAX_TOOL_DENIALS="100000",
        COPILOT_SDK_LOG_LEVEL="debug",  # the approvals are logged at debug
    )
    ended = _run(fault, copilot_sidecar, env, VOLUME_BOUND_S)
    events = fault.check(ended, exit_code=0, state_dir=driver.tmp_path / "state")

    total = ROUNDS * CALLS_PER_ROUND
    print(
        f"{total} permission requests in {ended.seconds:.1f}s "
        f"(whole run, start-up included): {total / ended.seconds:.0f} requests/s"
    )
    assert ended.stdout == "volume done\n"
    assert len(scripted_model.chat_requests()) == ROUNDS + 1
    calls = [call for calls in rounds for call in calls]
    allowed = {_id_of(call) for call in calls if _command_of(call).startswith("echo")}
    decisions = runtime_record.decisions(events)
    assert len(decisions) == total
    assert {call_id for call_id, kind in decisions.items() if kind == "approved"} == allowed
    assert all(
        kind.startswith("denied") for call_id, kind in decisions.items() if call_id not in allowed
    )
    # The driver's own account: one entry per request, approved or denied.
    entries = _log_entries(ended.stderr)
    commands = {_id_of(call): _command_of(call) for call in calls}
    approvals = _of(entries, "permission.approved")
    assert Counter(str(entry["requestSummary"]) for entry in approvals) == Counter(
        _shell_summary(commands[call_id]) for call_id in allowed
    )
    _check_denial_entries(
        entries,
        Counter(_shell_summary(commands[c]) for c in commands if c not in allowed),
        _session_id(entries),
    )
    results = runtime_record.tool_results(scripted_model)
    assert len(results) == total
    for call_id in commands:
        if call_id in allowed:
            assert commands[call_id].removeprefix("echo ") in results[call_id]
        else:
            assert DENIAL_FEEDBACK in results[call_id]
    workspace = Path(env["GITHUB_WORKSPACE"])
    assert list(workspace.glob("pwn-*")) == []


# -- 3. concurrent requests of several kinds ---------------------------------------------------

PER_KIND = 50


def test_concurrent_requests_of_several_kinds_are_each_decided_right(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
    tmp_path: Path,
) -> None:
    """200 requests at once: shell allowed and denied, write allowed, read denied.

    The SDK's debug log and the handler's entries share stderr, and the events
    sink writes from its own thread: nothing may interleave or go missing.
    """
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    for index in range(PER_KIND):
        (outside / f"notes-{index}.txt").write_text(f"outside-content-{index}\n")
    expected: dict[str, tuple[bool, str]] = {}
    # call id -> (allowed?, the request summary the driver logs)
    calls: list[ToolCall] = []
    for index in range(PER_KIND):
        made, notes = workspace / f"made-{index}.txt", outside / f"notes-{index}.txt"
        for call_id, call, allowed, summary in (
            (f"echo-{index}", "bash", True, f"shell(echo c3-ok-{index})"),
            (f"touch-{index}", "bash", False, f"shell(touch pwn-c3-{index})"),
            (f"create-{index}", "create", True, f"write({made})"),
            (f"view-{index}", "view", False, f"read({notes})"),
        ):
            arguments: dict[str, str] = {
                "echo": {"command": f"echo c3-ok-{index}", "description": "echo"},
                "touch": {"command": f"touch pwn-c3-{index}", "description": "touch"},
                "create": {"path": str(made), "file_text": f"made {index}\n"},
                "view": {"path": str(notes)},
            }[call_id.split("-")[0]]
            calls.append(ToolCall(call, arguments, call_id))
            expected[call_id] = (allowed, summary)
    scripted_model.script = Script(
        rules=(Rule("CONCURRENT", (Reply(tool_calls=tuple(calls)), Reply(text="concurrent done"))),)
    )
    env = driver.environment(
        "CONCURRENT requests",
        GH_AW_COPILOT_SDK_PERMISSIONS=json.dumps({"allowedTools": ["shell(echo)", "write"]}),
        GH_AW_MAX_TOOL_DENIALS="100000",
        COPILOT_SDK_LOG_LEVEL="debug",
    )
    ended = _run(fault, copilot_sidecar, env, CONCURRENT_BOUND_S)
    events = fault.check(ended, exit_code=0, state_dir=driver.tmp_path / "state")

    assert ended.stdout == "concurrent done\n"
    decisions = runtime_record.decisions(events)
    assert len(decisions) == len(expected)
    for call_id, (allowed, _) in expected.items():
        assert (decisions[call_id] == "approved") is allowed, (call_id, decisions[call_id])
    entries = _log_entries(ended.stderr)
    approvals = _of(entries, "permission.approved")
    assert Counter(str(entry["requestSummary"]) for entry in approvals) == Counter(
        summary for allowed, summary in expected.values() if allowed
    )
    _check_denial_entries(
        entries,
        Counter(summary for allowed, summary in expected.values() if not allowed),
        _session_id(entries),
    )
    # What really happened matches the decisions.
    results = runtime_record.tool_results(scripted_model)
    for index in range(PER_KIND):
        assert f"c3-ok-{index}" in results[f"echo-{index}"]
        assert DENIAL_FEEDBACK in results[f"touch-{index}"]
        assert (workspace / f"made-{index}.txt").read_text() == f"made {index}\n"
        assert DENIAL_FEEDBACK in results[f"view-{index}"]
    assert list(workspace.glob("pwn-*")) == []
    told = "\n".join(results.values())
    assert "outside-content-" not in told
    # The events file: one line per event, none doubled.
    ids = [record["id"] for record in events if "id" in record]
    assert len(ids) == len(set(ids))


# -- 4. the denials guard under concurrency ----------------------------------------------------

GUARD_THRESHOLD = 3
GUARD_CALLS = 40


def test_the_denials_guard_trips_once_under_parallel_denials(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
) -> None:
    """40 denied calls at once, threshold 3: the run stops with exit 3, promptly, after
    exactly 3 denials; the model is asked nothing more."""
    calls = tuple(
        ToolCall("bash", {"command": f"touch pwn-g-{i}", "description": "t"}, call_id=f"g-{i}")
        for i in range(GUARD_CALLS)
    )
    scripted_model.script = Script(
        rules=(Rule("GUARD", (Reply(tool_calls=calls), Reply(text="should not get here"))),)
    )
    env = driver.environment(
        "GUARD me",
        GH_AW_COPILOT_SDK_SERVER_ARGS=json.dumps(["--allow-tool", "shell(echo)"]),
        GH_AW_MAX_TOOL_DENIALS=str(GUARD_THRESHOLD),
    )
    ended = _run(fault, copilot_sidecar, env, GUARD_BOUND_S)
    events = fault.check(
        ended,
        exit_code=3,
        error_kind="tool_denials_exceeded",
        mentions=["GH_AW_MAX_TOOL_DENIALS=3"],
        state_dir=driver.tmp_path / "state",
    )

    entries = _log_entries(ended.stderr)
    denials = _of(entries, "permission.denied")
    assert len(denials) == GUARD_THRESHOLD
    assert len({entry["requestSummary"] for entry in denials}) == len(denials)
    # The runtime's side: nothing approved, nothing left unanswered (requests still
    # in flight when the turn is aborted end `cancelled`)...
    decisions = runtime_record.decisions(events)
    assert len(denials) <= len(decisions)
    assert all(kind == "cancelled" or kind.startswith("denied") for kind in decisions.values())
    # ...the denials before the threshold reached the runtime before the abort, so the
    # audit trail (events file, timeline) shows them; the one that reached the threshold
    # was withheld, so the runtime may record it as cancelled (the log has the denial).
    call_of = {_shell_summary(_command_of(call)): _id_of(call) for call in calls}
    delivered = [call_of[str(entry["requestSummary"])] for entry in denials[:-1]]
    recorded = {call_id: decisions[call_id] for call_id in delivered}
    assert all(kind.startswith("denied") for kind in recorded.values()), (
        f"the guard counted {GUARD_THRESHOLD} denials, the runtime recorded {recorded}"
    )
    assert len(scripted_model.chat_requests()) == 1  # no request after the threshold
    # No `abort` is required: when every answer arrived first, the runtime may end
    # the turn by itself before the driver's abort. The session is shut down anyway.
    assert events[-1]["type"] == "session.shutdown"
    (guard,) = [record for record in events if record["type"] == "guard.tool_denials_exceeded"]
    assert guard["data"]["denialCount"] == GUARD_THRESHOLD
    assert guard["data"]["threshold"] == GUARD_THRESHOLD
    (error,) = _of(entries, "error")
    assert error["exitCode"] == 3
    assert ended.stdout == ""
    assert list(Path(env["GITHUB_WORKSPACE"]).glob("pwn-*")) == []
    print(
        f"guard: {len(denials)} denials logged, {len(scripted_model.chat_requests())} model calls, "
        f"ended after {ended.seconds:.1f}s"
    )
