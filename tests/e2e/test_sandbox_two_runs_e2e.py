"""Two harness runs in one workspace and HOME, as two steps of one job are: nothing the
first run's tools leave behind reaches the host or the second run.

Every run goes through `copilot-driver-harness` with the real Copilot CLI, the
scripted model asking for bash commands and an allow-all policy, so only the
sandbox contains anything. The oracle is the host: which files exist, what a
marker outside the workspace says ran, what the model was sent. The same
families run with `--sandbox off`, where they land (the oracle can fail).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from copilot_driver.testing import ScriptedModelServer
from helpers.harness_runs import HarnessHarness, host_folder

pytestmark = pytest.mark.e2e

REPOSITORY = Path(__file__).resolve().parents[2]
CHECKOUT_TOKEN = "ghs_canaryCheckoutPersisted0000000000000"
"""actions/checkout's token, persisted in .git/config and nowhere in the environment."""
EXTRAHEADER = "AUTHORIZATION: basic " + base64.b64encode(
    f"x-access-token:{CHECKOUT_TOKEN}".encode()
).decode("ascii")
WORKSPACE_CREDENTIAL = "https://x:canary-workspace-credential-7c1e@github.com"
WORKSPACE_NOTE = "canary-workspace-note-5d2a"


class TwoRuns(HarnessHarness):
    """A repository whose checkout persisted its token, a HOME with a git identity, and
    a marker folder outside both: anything that lands there ran outside the sandbox."""

    def __init__(
        self, tmp: Path, model: ScriptedModelServer, cli: Path, cache: Path, outside: Path
    ) -> None:
        super().__init__(tmp, model, cli, cache)
        self.outside = outside
        for command in (
            ["git", "init", "-q", "-b", "main"],
            ["git", "config", "user.email", "ci@example.com"],
            ["git", "config", "user.name", "ci"],
            ["git", "config", "http.https://github.com/.extraheader", EXTRAHEADER],
        ):
            subprocess.run(command, cwd=self.workspace, check=True, capture_output=True)
        # The CLI masks a URL's password in what it shows the model; the note it keeps.
        (self.workspace / ".git-credentials").write_text(
            f"{WORKSPACE_CREDENTIAL}\n# {WORKSPACE_NOTE}\n"
        )
        self.home = Path(self.env["HOME"])
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / ".gitconfig").write_text("[user]\n\tname = host\n")
        (self.home / ".cache").mkdir(exist_ok=True)
        self.env["GH_AW_COPILOT_SDK_SERVER_ARGS"] = json.dumps(["--allow-all-tools"])

    def command(self, *args: str, driver: list[str] | None = None) -> list[str]:
        # As the Action starts it: no working directory on the harness's import path.
        return [sys.executable, "-P", *super().command(*args, driver=driver)[1:]]

    def run_calls_here(self, commands: dict[str, str], *args: str, **env: str) -> dict[str, str]:
        """`run_calls` in the workspace, as a workflow step runs the harness."""
        return self.run_calls(commands, *args, cwd=self.workspace, **env)

    def ran_outside(self) -> list[str]:
        return sorted(path.name for path in self.outside.iterdir())


@pytest.fixture
def two_runs(
    tmp_path: Path,
    scripted_model: ScriptedModelServer,
    copilot_cli: Path,
    copilot_cache_home: Path,
) -> Iterator[TwoRuns]:
    with host_folder() as outside:
        yield TwoRuns(tmp_path, scripted_model, copilot_cli, copilot_cache_home, outside)


def first_run_plants(run: TwoRuns) -> dict[str, str]:
    """What a tool of the first run leaves for the host and the second run."""
    marker = run.outside
    planted_module = f"import pathlib; pathlib.Path('{marker}/driver-imported').touch()"
    program = f"#!/bin/sh\\ntouch {marker}/$(basename $0)-ran\\nexit 1\\n"
    return {
        "driver-module": (
            "mkdir -p copilot_driver src/copilot_driver && "
            "for d in copilot_driver src/copilot_driver; do "
            f'echo "{planted_module}" > $d/__init__.py; '
            "cp $d/__init__.py $d/__main__.py; done; echo planted"
        ),
        "programs": (
            f"mkdir -p bin && for p in bwrap copilot git; do printf '{program}' > bin/$p; "
            "chmod +x bin/$p; done; echo planted"
        ),
        "credential-link": "ln -s ~/.gitconfig .netrc; echo linked",
        "home-writes": (
            "mkdir -p ~/.cache/tool ~/.local/share/tool && echo cached > ~/.cache/tool/f && "
            "echo data > ~/.local/share/tool/f && echo new > ~/new-file && "
            "git config --global user.email agent@example.com && "
            "cat ~/.cache/tool/f ~/.local/share/tool/f ~/new-file && "
            "git config --global user.email && git config --global user.name"
        ),
        "checkout-token": "cat .git/config; git config --get-regexp 'http\\..*'; echo config=$?",
        "workspace-credential": "cat .git-credentials; echo read=$?",
        "github": "curl -sS -m 5 https://github.com/ -o /dev/null; echo curl=$?",
    }


def test_nothing_the_first_run_leaves_reaches_the_host_or_the_second_run(
    two_runs: TwoRuns,
) -> None:
    run = two_runs
    gitconfig = (run.home / ".gitconfig").read_text()
    first = run.run_calls_here(first_run_plants(run))

    # HOME: the tools wrote where users expect, privately; the host's HOME is untouched.
    assert "cached\ndata\nnew\nagent@example.com\nhost" in first["home-writes"], first
    assert not (run.home / ".cache" / "tool").exists()
    assert not (run.home / "new-file").exists()
    assert (run.home / ".gitconfig").read_text() == gitconfig
    # The checkout's token and a credentials file a step wrote are not readable.
    assert CHECKOUT_TOKEN not in json.dumps(first)
    assert EXTRAHEADER.split()[-1] not in json.dumps(first)
    assert "extraheader" not in first["checkout-token"]
    assert "canary-workspace" not in first["workspace-credential"]
    assert "read=" in first["workspace-credential"]
    # github.com is not a channel for tools: only the hosts the CLI needs are allowed.
    assert "github.com:443 refused" in run.stderr
    record = json.loads(next(run.state.glob("*/sandbox.json")).read_text())
    assert record["egressDenied"]["github.com:443"] >= 1

    # The second run: the planted link stops it before any model request.
    asked_before = len(run.model.requests)
    (run.tmp / "prompt.md").write_text("TWO RUNS: again\n")
    workspace_path = f"{run.workspace / 'bin'}:{run.env['PATH']}"
    stopped = run.run(timeout=120, cwd=run.workspace, PATH=workspace_path)
    assert stopped.returncode == 2, stopped.stderr[-2000:]
    assert f"{run.workspace / '.netrc'} (-> {run.home / '.gitconfig'})" in stopped.stderr
    assert len(run.model.requests) == asked_before  # no model request

    # Removed, the second run works: it imports and runs nothing the first run wrote.
    (run.workspace / ".netrc").unlink()
    second = run.run_calls_here(
        {"home": "ls ~/.cache; cat ~/new-file 2>&1; git config --global user.email; echo $?"}
    )
    assert "tool" not in second["home"]
    assert "No such file" in second["home"]
    assert run.ran_outside() == []
    # The oracle can fail: Python run in the workspace as the harness once ran the
    # driver does import the planted package.
    subprocess.run(
        [sys.executable, "-m", "copilot_driver", "--version"],
        cwd=run.workspace,
        env={"PATH": os.environ["PATH"]},
        capture_output=True,
        check=False,
    )
    assert run.ran_outside() == ["driver-imported"]


def test_the_second_run_finds_the_programs_it_runs_outside_the_workspace(
    two_runs: TwoRuns,
) -> None:
    """A PATH that names the workspace (node_modules/.bin, a tool's bin/), and a
    planted package in the driver's working directory: the harness's bwrap and its
    driver come from outside the workspace."""
    run = two_runs
    plants = first_run_plants(run)
    run.run_calls_here({"driver-module": plants["driver-module"], "programs": plants["programs"]})
    results = run.run_calls_here(
        {"again": "echo fine"},
        PATH=f"bin:{run.workspace / 'bin'}:{run.env['PATH']}",
    )
    assert "fine" in results["again"]
    assert run.ran_outside() == []
    # The oracle can fail: that PATH does lead a plain lookup to the planted programs.
    lookup = {"PATH": "bin:/usr/bin:/bin"}
    subprocess.run(["bwrap", "--version"], cwd=run.workspace, env=lookup, check=False)
    assert run.ran_outside() == ["bwrap-ran"]


def test_with_the_sandbox_off_the_same_families_land(two_runs: TwoRuns) -> None:
    run = two_runs
    results = run.run_calls_here(first_run_plants(run), "--sandbox", "off")
    assert (run.home / ".cache" / "tool" / "f").exists()
    assert (run.home / "new-file").exists()
    assert "agent@example.com" in (run.home / ".gitconfig").read_text()
    assert EXTRAHEADER in results["checkout-token"]
    assert WORKSPACE_NOTE in results["workspace-credential"]
    # A tool read the checkout's token; nothing the harness and driver wrote shows it,
    # raw or in the base64 the header carries.
    written = run.everything_written(run.stderr)
    assert CHECKOUT_TOKEN not in written
    assert EXTRAHEADER.split()[-1] not in written
    assert "extraheader" in written  # the tool's output is there, masked


def test_a_provider_on_localhost_is_reached_as_on_127_0_0_1(two_runs: TwoRuns) -> None:
    """A local model server named `http://localhost:PORT`, as users write it."""
    run = two_runs
    url = run.env["COPILOT_PROVIDER_BASE_URL"].replace("127.0.0.1", "localhost")
    assert "localhost" in url
    results = run.run_calls_here({"works": "echo fine"}, COPILOT_PROVIDER_BASE_URL=url)
    assert "fine" in results["works"]
    record = json.loads(next(run.state.glob("*/sandbox.json")).read_text())
    assert any(host.startswith("localhost:") for host in record["egressAllowed"]), record


def test_a_state_folder_in_the_workspace_cannot_be_redirected(two_runs: TwoRuns) -> None:
    """The session state lies in the workspace (a relative GH_AW_SESSION_STATE_BASE_DIR):
    no tool can swap it for a link that would lead the harness's writes elsewhere."""
    run = two_runs
    state = run.workspace / "logs"
    results = run.run_calls_here(
        {"redirect": f"rm -rf logs; ln -s {run.outside} logs; echo linked=$?"},
        GH_AW_SESSION_STATE_BASE_DIR="logs",
    )
    assert "linked=1" in results["redirect"]
    assert state.is_dir()
    assert not state.is_symlink()
    assert list(state.glob("*/events.jsonl"))
    assert run.ran_outside() == []
