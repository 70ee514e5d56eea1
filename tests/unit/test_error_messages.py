"""Every mistake a new user made, run as the real command: exit 2, and a message that
says what is wrong and what to do (never a secret from the environment).

Each case is named after the mistake. The driver's cases end at the configuration
check, before the SDK is imported; the harness's end before any sidecar starts.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import copilot_driver
from copilot_driver.compatibility import RECOMMENDED_CLI_VERSION
from copilot_driver.driver.catalog import EXAMPLE as CATALOG_EXAMPLE
from copilot_driver.driver.contract import EXAMPLE as CONTRACT_EXAMPLE
from copilot_driver.permissions.config import EXPLICIT_EXAMPLE

TOKEN = "conn-token-SECRET-41c9e2"
API_KEY = "provider-key-SECRET-7d03b5"
GITHUB_TOKEN = "ghp_SECRET0123456789abcdefABCDEF012345"
SECRETS = (TOKEN, API_KEY, GITHUB_TOKEN)
INSTALL = f"npm install -g @github/copilot@{RECOMMENDED_CLI_VERSION}"


@dataclass
class Run:
    """One command, as a user ran it, and what its message must say."""

    argv: list[str]
    env: dict[str, str]
    says: list[str]
    cwd: Path | None = None
    never_says: list[str] = field(default_factory=list)


def driver(tmp: Path, says: list[str], **variables: str) -> Run:
    """`python -m copilot_driver` with a minimal valid environment, changed by `variables`."""
    prompt = tmp / "prompt.md"
    prompt.write_text("Say hello.\n", encoding="utf-8")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp),
        "GH_AW_PROMPT": str(prompt),
        "COPILOT_SDK_URI": "127.0.0.1:3002",
        "COPILOT_CONNECTION_TOKEN": TOKEN,
        "COPILOT_MODEL": "gpt-4.1",
        "COPILOT_PROVIDER_BASE_URL": "https://models.example/v1",
        "COPILOT_PROVIDER_API_KEY": API_KEY,
        "GH_AW_SESSION_STATE_BASE_DIR": str(tmp / "state"),
        **variables,
    }
    return Run([sys.executable, "-m", "copilot_driver"], env, says)


def harness(tmp: Path, says: list[str], *args: str, **variables: str) -> Run:
    """`python -m copilot_driver.harness` with a minimal environment (no copilot on PATH)."""
    empty = tmp / "empty-bin"
    empty.mkdir(exist_ok=True)
    env = {"PATH": str(empty), "HOME": str(tmp), "COPILOT_GITHUB_TOKEN": GITHUB_TOKEN}
    argv = [sys.executable, "-m", "copilot_driver.harness", *args]
    return Run(argv, {**env, **variables}, says)


# -- the prompt ---------------------------------------------------------------------------


def prompt_path_starting_with_a_tilde(tmp: Path) -> Run:
    (tmp / "task.md").write_text("Say hello.\n", encoding="utf-8")
    return driver(
        tmp,
        [
            "GH_AW_PROMPT file does not exist: ~/task.md",
            "`~` is not expanded in environment variables",
            "write $HOME/task.md instead",
            f"the file is there: {tmp / 'task.md'}",
        ],
        GH_AW_PROMPT="~/task.md",
    )


def prompt_path_relative_to_another_directory(tmp: Path) -> Run:
    (tmp / "checkout" / "prompts").mkdir(parents=True)
    (tmp / "checkout" / "prompts" / "task.md").write_text("Say hello.\n", encoding="utf-8")
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    run = driver(
        tmp,
        [
            "GH_AW_PROMPT file does not exist: prompts/task.md",
            f"resolved against the driver's working directory {elsewhere} ",
            f"(tried {elsewhere / 'prompts' / 'task.md'})",
            "give an absolute path",
        ],
        GH_AW_PROMPT="prompts/task.md",
    )
    run.cwd = elsewhere
    return run


# -- the sidecar's address ----------------------------------------------------------------


def sdk_uri_host_without_a_port(tmp: Path) -> Run:
    return driver(
        tmp,
        ["COPILOT_SDK_URI is invalid: 'localhost' has no port: write localhost:PORT"],
        COPILOT_SDK_URI="localhost",
    )


def sdk_uri_url_without_a_port(tmp: Path) -> Run:
    return driver(
        tmp,
        ["'127.0.0.1' has no port: write http://127.0.0.1:PORT"],
        COPILOT_SDK_URI="http://127.0.0.1",
    )


def sdk_uri_ipv6_address_without_brackets(tmp: Path) -> Run:
    return driver(
        tmp, ["an IPv6 address needs brackets", "write [::1]:8080"], COPILOT_SDK_URI="::1:8080"
    )


# -- JSON variables -----------------------------------------------------------------------


def permissions_with_a_trailing_comma(tmp: Path) -> Run:
    return driver(
        tmp,
        [
            "GH_AW_COPILOT_SDK_PERMISSIONS is not valid JSON: line 1 column 27: ",
            "found `}`; it has a trailing comma before `}`",
            f"a valid value looks like {EXPLICIT_EXAMPLE}",
        ],
        GH_AW_COPILOT_SDK_PERMISSIONS='{"allowedTools": ["read"],}',
    )


def server_args_with_a_trailing_comma(tmp: Path) -> Run:
    return driver(
        tmp,
        [
            "GH_AW_COPILOT_SDK_SERVER_ARGS is not valid JSON: line 1 column 33: ",
            "found `]`; it has a trailing comma before `]`",
            'e.g. ["--allow-tool","shell(git:*)","--allow-tool","write"]',
        ],
        GH_AW_COPILOT_SDK_SERVER_ARGS='["--allow-tool", "shell(git:*)",]',
    )


def server_args_in_single_quotes(tmp: Path) -> Run:
    return driver(
        tmp,
        [
            "GH_AW_COPILOT_SDK_SERVER_ARGS is not valid JSON: line 1 column 2: ",
            "JSON strings take double quotes, not single quotes",
        ],
        GH_AW_COPILOT_SDK_SERVER_ARGS="['--allow-tool', 'read']",
    )


def tool_contract_with_a_trailing_comma(tmp: Path) -> Run:
    return driver(
        tmp,
        [
            "GH_AW_COPILOT_SDK_TOOL_CONFIG is not valid JSON: line 2 column 1: ",
            f"a valid value looks like {CONTRACT_EXAMPLE}",
        ],
        GH_AW_COPILOT_SDK_TOOL_CONFIG='{"version": 1,\n}',
    )


def provider_catalog_with_a_missing_quote(tmp: Path) -> Run:
    return driver(
        tmp,
        [
            "GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON is not valid JSON: line 1 column 2: ",
            "keys take double quotes",
            f"a valid value looks like {CATALOG_EXAMPLE}",
        ],
        GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON='{providers": []}',
    )


# -- the provider -------------------------------------------------------------------------


def provider_base_url_without_a_scheme(tmp: Path) -> Run:
    return driver(
        tmp,
        ["COPILOT_PROVIDER_BASE_URL is not an http(s) URL", "write https://api.openai.com/v1"],
        COPILOT_PROVIDER_BASE_URL="api.openai.com/v1",
    )


# -- the Copilot CLI ----------------------------------------------------------------------


def no_copilot_cli_after_a_wheel_install(tmp: Path) -> Run:
    """The package copied out of the checkout, as a wheel would install it."""
    site = tmp / "site-packages"
    package = Path(copilot_driver.__file__).parent
    shutil.copytree(package, site / "copilot_driver", ignore=shutil.ignore_patterns("__pycache__"))
    run = harness(
        tmp,
        [
            "no Copilot CLI found (no --copilot, no COPILOT_CLI_PATH, no `copilot` on PATH)",
            f"install the tested Copilot CLI (`{INSTALL}`)",
            "with --copilot PATH or COPILOT_CLI_PATH",
        ],
        PYTHONPATH=str(site),
    )
    run.never_says = ["make setup", "not set"]
    run.cwd = tmp
    return run


def copilot_path_that_does_not_exist(tmp: Path) -> Run:
    missing = tmp / "no-such" / "copilot"
    return harness(
        tmp, [f"--copilot {missing} does not exist: ", INSTALL], "--copilot", str(missing)
    )


def copilot_cli_path_set_to_its_directory(tmp: Path) -> Run:
    folder = tmp / "copilot-cli"
    folder.mkdir()
    binary = folder / "copilot"
    binary.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    binary.chmod(0o755)
    return harness(
        tmp,
        [f"COPILOT_CLI_PATH={folder} is a directory: use the binary inside it, {binary}"],
        COPILOT_CLI_PATH=str(folder),
    )


def copilot_binary_that_is_not_executable(tmp: Path) -> Run:
    binary = tmp / "copilot"
    binary.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    binary.chmod(0o644)
    return harness(
        tmp,
        [f"--copilot {binary} is not executable", f"`chmod +x {binary}`"],
        "--copilot",
        str(binary),
    )


# -- the report ---------------------------------------------------------------------------


def report_given_a_session_folder_without_its_events_file(tmp: Path) -> Run:
    folder = tmp / "session-state" / "0f1e2d3c"
    folder.mkdir(parents=True)
    argv = [sys.executable, "-m", "copilot_driver.report", str(folder)]
    return Run(
        argv,
        {"PATH": "/usr/bin:/bin", "HOME": str(tmp), "COPILOT_CONNECTION_TOKEN": TOKEN},
        [f"is a folder without events.jsonl (expected {folder / 'events.jsonl'})"],
        never_says=["Is a directory"],
    )


CASES: list[Callable[[Path], Run]] = [
    prompt_path_starting_with_a_tilde,
    prompt_path_relative_to_another_directory,
    sdk_uri_host_without_a_port,
    sdk_uri_url_without_a_port,
    sdk_uri_ipv6_address_without_brackets,
    permissions_with_a_trailing_comma,
    server_args_with_a_trailing_comma,
    server_args_in_single_quotes,
    tool_contract_with_a_trailing_comma,
    provider_catalog_with_a_missing_quote,
    provider_base_url_without_a_scheme,
    no_copilot_cli_after_a_wheel_install,
    copilot_path_that_does_not_exist,
    copilot_cli_path_set_to_its_directory,
    copilot_binary_that_is_not_executable,
    report_given_a_session_folder_without_its_events_file,
]


@pytest.mark.parametrize("case", CASES, ids=[case.__name__ for case in CASES])
def test_the_message_names_the_fix(case: Callable[[Path], Run], tmp_path: Path) -> None:
    run = case(tmp_path)
    ended = subprocess.run(
        run.argv,
        env=run.env,
        cwd=run.cwd or tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = ended.stdout + ended.stderr
    assert ended.returncode == 2, output
    errors = [line for line in ended.stderr.splitlines() if " error: " in line]
    assert len(errors) == 1, output  # the mistake, and nothing else
    for fragment in run.says:
        assert fragment in errors[0], errors[0]
    for fragment in run.never_says:
        assert fragment not in output, output
    for secret in SECRETS:
        assert secret not in output
    assert ended.stdout == ""
