"""After a sandboxed run, no git command on the host runs anything a tool wrote.

One harness run with the real Copilot CLI, the scripted model asking for bash
commands and an allow-all policy: the tools arm every git control location
they can reach in the workspace (a nested repository committed as a gitlink,
a new `.git/modules/evil` with a `.gitmodules` entry, a `.git` file pointing at
a git folder elsewhere, a worktree's admin folder), each with hooks and an
fsmonitor that leave a marker in a folder outside the workspace when they run.
Then the host runs what a later workflow step would (`git status`, a submodule
update, commits, in the workspace and its subfolders). The oracle is that
folder: nothing may appear. The same with `--sandbox off`, where nothing is
put away, leaves markers from every way in (the oracle can fail).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from copilot_driver.testing import ScriptedModelServer
from helpers.harness_runs import HarnessHarness, host_folder
from helpers.shell_corpus import make_workspace

pytestmark = pytest.mark.e2e

REPOSITORY = Path(__file__).resolve().parents[2]
IDENTITY = "-c user.email=tool@example.com -c user.name=tool"
WAYS_IN = ("nested", "module", "gitfile", "worktree")


class GitControlsRun(HarnessHarness):
    """A repository holding a nested repository `R` (there before the run, left alone),
    an allow-all policy, and a marker folder outside the workspace and the host's /tmp."""

    def __init__(
        self, tmp: Path, model: ScriptedModelServer, cli: Path, cache: Path, outside: Path
    ) -> None:
        super().__init__(tmp, model, cli, cache)
        self.outside = outside
        shutil.rmtree(self.workspace)
        make_workspace(self.workspace)
        self.env["GH_AW_COPILOT_SDK_SERVER_ARGS"] = json.dumps(["--allow-all-tools"])

    def markers(self) -> list[str]:
        return sorted(path.name for path in self.outside.iterdir())

    def later_host_git_commands(self) -> None:
        """What later steps of the job do in the workspace, with the host's git."""
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": self.env["HOME"],
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "later",
            "GIT_AUTHOR_EMAIL": "later@example.com",
            "GIT_COMMITTER_NAME": "later",
            "GIT_COMMITTER_EMAIL": "later@example.com",
        }
        ws = self.workspace
        for where, command in (
            (ws, ["status"]),
            (ws / "nested", ["status"]),
            (ws / "nested", ["commit", "-q", "--allow-empty", "-m", "later"]),
            (ws, ["-c", "protocol.file.allow=always", "submodule", "update", "--init"]),
            (ws, ["status"]),
            (ws / "sub", ["status"]),
            (ws / "wt", ["status"]),
            (ws, ["commit", "-q", "--allow-empty", "-m", "later"]),
        ):
            if where.is_dir():
                subprocess.run(["git", *command], cwd=where, env=env, capture_output=True)


def arm(git_dir: str, marker: Path) -> str:
    """Shell that gives a git folder hooks and an fsmonitor leaving `marker`-<what>."""
    return (
        f"mkdir -p {git_dir}/hooks && for h in pre-commit post-commit post-checkout; do "
        f"printf '#!/bin/sh\\ntouch %s\\n' \"{marker}-$h\" > {git_dir}/hooks/$h && "
        f"chmod +x {git_dir}/hooks/$h; done && git config --file {git_dir}/config "
        f"core.fsmonitor 'touch {marker}-fsmonitor; false'"
    )


def ways_in(run: GitControlsRun) -> dict[str, str]:
    """The tool calls: each arms a way in after its own commits (so that nothing runs
    inside the run itself), and echoes its exit status."""
    out = run.outside
    hooks_path = (
        f"mkdir -p evil-hooks && printf '#!/bin/sh\\ntouch {out}/nested-hookspath\\n' "
        "> evil-hooks/pre-commit && chmod +x evil-hooks/pre-commit && "
        "git config --file nested/.git/config core.hooksPath $PWD/evil-hooks"
    )
    gitmodules = (
        '[submodule "evil"]\\n\\tpath = evil\\n\\turl = ./src-evil\\n'
        '[submodule "nested"]\\n\\tpath = nested\\n\\turl = ./nested\\n'
    )
    return {
        # (1) and (2) share the workspace's index, so they run in one call.
        "gitlinks": (
            f"git init -q nested && git -C nested {IDENTITY} commit -q --allow-empty -m x && "
            f"git init -q src-evil && git -C src-evil {IDENTITY} commit -q --allow-empty -m x && "
            "mkdir -p .git/modules && "
            "git clone -q --separate-git-dir=$PWD/.git/modules/evil src-evil evil && "
            f"printf '{gitmodules}' > .gitmodules && git add nested evil .gitmodules && "
            f"git {IDENTITY} commit -q -m gitlinks && rm evil/.git && "
            f"{arm('nested/.git', out / 'nested')} && {hooks_path} && "
            f"{arm('.git/modules/evil', out / 'module')}; echo gitlinks=$?"
        ),
        "gitfile": (
            "mkdir -p hidden && git init -q --separate-git-dir=$PWD/hidden/store sub && "
            f"{arm('hidden/store', out / 'gitfile')}; echo gitfile=$?"
        ),
        "worktree": (
            "git worktree add -q --detach wt && mkdir common && "
            "cp -r .git/objects .git/refs common/ && "
            f"{arm('common', out / 'worktree')} && "
            "echo $PWD/common > .git/worktrees/wt/commondir; echo worktree=$?"
        ),
    }


@pytest.fixture
def controls_run(
    tmp_path: Path,
    scripted_model: ScriptedModelServer,
    copilot_cli: Path,
    copilot_cache_home: Path,
) -> Iterator[GitControlsRun]:
    with host_folder() as outside:
        yield GitControlsRun(tmp_path, scripted_model, copilot_cli, copilot_cache_home, outside)


def test_git_control_files_a_tool_wrote_run_nothing_on_the_host(
    controls_run: GitControlsRun,
) -> None:
    run = controls_run
    ws = run.workspace
    results = run.run_calls(ways_in(run))
    for call, status in (("gitlinks", 0), ("gitfile", 0), ("worktree", 0)):
        assert f"{call}={status}" in results[call], results[call]
    run.later_host_git_commands()
    assert run.markers() == []
    said = [line for line in run.stderr.splitlines() if "warning: sandbox: " in line]
    for sentence in (
        f"moved {ws / 'nested/.git'} to .git.sandboxed, written in the sandbox",
        f"moved {ws / 'src-evil/.git'} to .git.sandboxed, written in the sandbox",
        f"moved {ws / '.git/modules/evil'} to {ws / '.git/sandboxed/modules/evil'}, written",
        f"moved {ws / 'sub/.git'} to .git.sandboxed, written in the sandbox",
        f"renamed {ws / 'hidden/store/HEAD'} to HEAD.sandboxed",
        f"moved {ws / 'wt/.git'} to .git.sandboxed, written in the sandbox",
        f"moved {ws / '.git/worktrees/wt'} to {ws / '.git/sandboxed/worktrees/wt'}, written",
    ):
        assert any(sentence in line for line in said), (sentence, said)
    assert len(said) == 7, said
    # The nested repository that was there before the run is left as it was.
    assert (ws / "R" / ".git" / "HEAD").is_file()
    assert not any(str(ws / "R") in line for line in said)
    # The session's sandbox record keeps the same sentences for the report.
    (record_file,) = run.state.glob("*/sandbox.json")
    recorded = json.loads(record_file.read_text())["gitNeutralised"]
    assert [line.split("warning: sandbox: ", 1)[1] for line in said] == recorded


def test_with_the_sandbox_off_the_same_control_files_do_run(
    controls_run: GitControlsRun,
) -> None:
    """The oracle can fail: without the sandbox nothing is put away, and each way in
    runs a tool's code on the host."""
    run = controls_run
    run.run_calls(ways_in(run), "--sandbox", "off")
    for path in run.outside.iterdir():  # what ran during the run itself does not count
        path.unlink()
    run.later_host_git_commands()
    landed = run.markers()
    for way in WAYS_IN:
        assert any(marker.startswith(f"{way}-") for marker in landed), (way, landed)
    assert "nested-hookspath" in landed
    assert "warning: sandbox: " not in run.stderr
    (record_file,) = run.state.glob("*/sandbox.json")
    assert "gitNeutralised" not in json.loads(record_file.read_text())
