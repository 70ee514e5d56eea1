"""The demo's settings (`DEMO_*` variables) and the commands it prints for the user.

`DEMO_ALLOW` is a JSON array of rules, as `allowedTools` is in
GH_AW_COPILOT_SDK_PERMISSIONS: a rule may hold spaces (`shell(rm notes.txt)`, the
rule a denial suggests), so a list split on spaces cannot carry it.

Every command the demo prints must work when pasted into a fresh shell in the
folder the demo ran from, whose PATH need not hold the virtualenv's `bin`: programs
are named by path (relative to that folder when they lie in it), and `make demo` is
suggested only when make started the demo.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

COMMAND = "copilot-driver-demo"
AUTH_CHOICES = ("provider", "token")
SANDBOX_CHOICES = ("workspace", "off")
DEMO_RULES: tuple[str, ...] = ("shell(ls:*)", "read")
"""The demo's own policy: `ls` and reading are allowed, so the `rm` is denied."""
ALLOW_EXAMPLE = '\'["shell(ls:*)", "shell(rm notes.txt)", "read"]\''


@dataclass(frozen=True)
class DemoSettings:
    rules: tuple[str, ...]
    auth: str
    sandbox: str
    output: Path


def read_settings(env: Mapping[str, str]) -> tuple[DemoSettings | None, list[str]]:
    """The settings, or None and every problem (each naming its fix)."""
    problems: list[str] = []
    rules = DEMO_RULES
    given = env.get("DEMO_ALLOW", "")
    if given.strip():
        parsed = allow_rules(given)
        if parsed is None:
            problems.append(
                f"DEMO_ALLOW={given!r} is not a JSON array of rules; give one, e.g. "
                f"DEMO_ALLOW={ALLOW_EXAMPLE} (a rule may hold spaces)"
            )
        else:
            rules = parsed
    auth = env.get("DEMO_AUTH", "").strip().lower() or "provider"
    if auth not in AUTH_CHOICES:
        problems.append(
            f"DEMO_AUTH={env['DEMO_AUTH']!r} is not a choice; give `provider` (the default: "
            "a scripted model as the provider) or `token` (a GitHub token, against a local "
            "fake of GitHub's API)"
        )
    sandbox = env.get("DEMO_SANDBOX", "").strip().lower() or "workspace"
    if sandbox not in SANDBOX_CHOICES:
        problems.append(
            f"DEMO_SANDBOX={env['DEMO_SANDBOX']!r} is not a choice; give `workspace` (the "
            "default: tools run in bubblewrap) or `off` (no bubblewrap needed)"
        )
    output = Path(env.get("DEMO_OUTPUT", "") or "demo-output").resolve()
    if problems:
        return None, problems
    return DemoSettings(rules=rules, auth=auth, sandbox=sandbox, output=output), []


def allow_rules(text: str) -> tuple[str, ...] | None:
    """The rules of a JSON array of non-blank strings; None for anything else."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(rule, str) and rule.strip() for rule in value):
        return None
    return tuple(value)


def server_args(rules: Sequence[str]) -> list[str]:
    """The rules as the sidecar's arguments (GH_AW_COPILOT_SDK_SERVER_ARGS)."""
    return [argument for rule in rules for argument in ("--allow-tool", rule)]


def shown_path(path: Path, cwd: Path) -> str:
    """`path` as a command names it: relative to `cwd` when it lies there, quoted."""
    try:
        relative = path.relative_to(cwd)
    except ValueError:
        return shlex.quote(str(path))
    return shlex.quote(str(relative)) if relative.parts else "."


def report_command(session: Path, cwd: Path) -> str:
    """The report on `session`, by a path that works whatever the shell's PATH."""
    beside = Path(sys.executable).parent / "copilot-driver-report"
    if beside.is_file() and os.access(beside, os.X_OK):
        program = shown_path(beside, cwd)
        if "/" not in program:  # a bare name would be looked up on PATH
            program = f"./{program}"
    else:
        program = f"{shown_path(Path(sys.executable), cwd)} -m copilot_driver.report"
    return f"{program} {shown_path(session, cwd)} --format markdown"


def demo_command(cwd: Path, env: Mapping[str, str], **variables: str) -> str:
    """The demo again with `variables` set: `make demo` when make started this one,
    else this interpreter running the module."""
    assignments = " ".join(f"{name}={shlex.quote(value)}" for name, value in variables.items())
    if env.get("MAKELEVEL"):
        program = "make demo"
    else:
        python = shown_path(Path(sys.executable), cwd)
        program = f"{python if '/' in python else './' + python} -m copilot_driver.testing.demo"
    return f"{assignments} {program}".strip()


def allow_value(rules: Sequence[str]) -> str:
    """`rules` as DEMO_ALLOW takes them."""
    return json.dumps(list(rules))


__all__ = [
    "COMMAND",
    "DemoSettings",
    "allow_rules",
    "allow_value",
    "demo_command",
    "read_settings",
    "report_command",
    "server_args",
]
