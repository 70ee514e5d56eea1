"""The `codex` block and its wire spellings (pure).

Approval policies and sandboxes are accepted in camelCase (`onRequest`,
`workspaceWrite`) and in the spellings the app-server 0.169 wants on
`thread/start` (`on-request`, `workspace-write`; camelCase only in a turn's
`sandboxPolicy.type`), and mapped to the latter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from copilot_driver.adapters.core.options import OptionBlock, raise_problems

BLOCK = "codex"
DEFAULT_COMMAND = "codex app-server"

APPROVAL_POLICIES = {
    "never": "never",
    "onRequest": "on-request",
    "on-request": "on-request",
    "unlessTrusted": "untrusted",
    "untrusted": "untrusted",
}
THREAD_SANDBOXES = {
    "readOnly": "read-only",
    "read-only": "read-only",
    "workspaceWrite": "workspace-write",
    "workspace-write": "workspace-write",
    "dangerFullAccess": "danger-full-access",
    "danger-full-access": "danger-full-access",
}
PERSONALITIES = (None, "", "none", "friendly", "pragmatic")
"""What Codex 0.169 accepts (anything else fails `thread/start`)."""
TURN_SANDBOX_TYPES = ("readOnly", "workspaceWrite", "dangerFullAccess", "externalSandbox")

Approvals = Literal["workspace", "accept", "decline"]


@dataclass(frozen=True)
class CodexOptions(OptionBlock):
    block = BLOCK

    model: str | None = None
    effort: str | None = None
    approval_policy: str = "never"
    thread_sandbox: str = "workspaceWrite"
    turn_sandbox_policy: dict[str, Any] = field(default_factory=dict)
    personality: str | None = None
    skip_git_repo_check: bool = False
    """Accepted and unused: Codex itself decides about non-git workspaces."""
    approvals: Approvals = "workspace"
    """How command and file-change approval requests are answered:
    `workspace` accepts them inside the workspace and declines the rest."""
    interrupt_wait_ms: int = 5_000
    """How long a cancelled turn waits for Codex to confirm the interrupt."""

    def __post_init__(self) -> None:
        raise_problems(self._problems())

    def _problems(self) -> list[str]:
        problems = []
        if self.approval_policy not in APPROVAL_POLICIES:
            problems.append(
                f"approval_policy must be one of {', '.join(APPROVAL_POLICIES)}, "
                f"not {self.approval_policy!r} (the app-server has no `always`)"
            )
        if self.thread_sandbox not in THREAD_SANDBOXES:
            problems.append(
                f"thread_sandbox must be one of {', '.join(THREAD_SANDBOXES)}, "
                f"not {self.thread_sandbox!r}"
            )
        kind = self.turn_sandbox_policy.get("type")
        if kind is not None and kind not in TURN_SANDBOX_TYPES:
            problems.append(
                f"turn_sandbox_policy.type must be one of {', '.join(TURN_SANDBOX_TYPES)}"
            )
        if self.personality not in PERSONALITIES:
            problems.append(
                f"personality must be one of {', '.join(p for p in PERSONALITIES if p)}, "
                f"not {self.personality!r}"
            )
        if self.effort is not None and not self.effort.strip():
            problems.append("effort must not be empty")
        if self.interrupt_wait_ms < 0:
            problems.append("interrupt_wait_ms must be 0 or more")
        return problems

    def thread_params(self, workspace: str) -> dict[str, Any]:
        params: dict[str, Any] = {
            "cwd": workspace,
            "approvalPolicy": APPROVAL_POLICIES[self.approval_policy],
            "sandbox": THREAD_SANDBOXES[self.thread_sandbox],
        }
        if self.model:
            params["model"] = self.model
        if self.personality:
            params["personality"] = self.personality
        return params

    def sandbox_policy(self, workspace: str) -> dict[str, Any]:
        """Workspace-write, the workspace writable, no network; overrides on top.

        An override of another `type` replaces the default whole: the other
        policies have different fields (`externalSandbox` takes a string
        `networkAccess`, `dangerFullAccess` none at all).
        """
        override = dict(self.turn_sandbox_policy)
        if override.get("type", "workspaceWrite") != "workspaceWrite":
            return override
        return {
            "type": "workspaceWrite",
            "writableRoots": [workspace],
            "networkAccess": False,
            **override,
        }

    def turn_params(self, thread_id: str, prompt: str, workspace: str) -> dict[str, Any]:
        params: dict[str, Any] = {
            "threadId": thread_id,
            "input": [{"type": "text", "text": prompt, "text_elements": []}],
            "cwd": workspace,
            "sandboxPolicy": self.sandbox_policy(workspace),
        }
        if self.model:
            params["model"] = self.model
        if self.effort:
            params["effort"] = self.effort
        return params
