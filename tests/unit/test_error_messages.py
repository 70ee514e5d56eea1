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
from copilot_driver.gh_aw import write_driver_file
from copilot_driver.harness.credentials import ACCEPTED_TOKENS
from copilot_driver.permissions.config import EXPLICIT_EXAMPLE
from copilot_driver.permissions.tool_contract import EXAMPLE as CONTRACT_EXAMPLE

TOKEN = "conn-token-SECRET-41c9e2"
API_KEY = "provider-key-SECRET-7d03b5"
GITHUB_TOKEN = "github_pat_SECRET0123456789abcdefABCDEF012345"
CLASSIC_TOKEN = "ghp_SECRET0123456789abcdefABCDEF012345"
SECRETS = (TOKEN, API_KEY, GITHUB_TOKEN, CLASSIC_TOKEN)
INSTALL = f"npm install -g @github/copilot@{RECOMMENDED_CLI_VERSION}"
SRC = Path(copilot_driver.__file__).parents[1]


@dataclass
class Run:
    """One command, as a user ran it, and what its message must say."""

    argv: list[str]
    env: dict[str, str]
    says: list[str]
    cwd: Path | None = None
    never_says: list[str] = field(default_factory=list)
    exit_code: int = 2
    error_lines: int = 1
    """How many ` error: ` lines: one a mistake, unless the mistake leaves two variables out."""


def driver(tmp: Path, says: list[str], **variables: str) -> Run:
    """`python -m copilot_driver` with a minimal valid environment, changed by `variables`."""
    prompt = tmp / "prompt.md"
    prompt.write_text("Say hello.\n", encoding="utf-8")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp),
        "PYTHONPATH": str(SRC),  # the code under test, installed or not
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
    """`python -m copilot_driver.harness` with a minimal environment that has all it
    needs but a Copilot CLI (no copilot on PATH): the harness says every problem at
    once, so one mistake is one error line only when nothing else is missing."""
    empty = tmp / "empty-bin"
    empty.mkdir(exist_ok=True)
    bwrap = shutil.which("bwrap")
    if bwrap is not None and not (empty / "bwrap").exists():
        (empty / "bwrap").symlink_to(bwrap)  # the sandbox's one program, and no copilot
    prompt = tmp / "harness-prompt.md"
    prompt.write_text("Say hello.\n", encoding="utf-8")
    workspace = tmp / "workspace"  # not the folder of empty-bin: the harness trusts no
    workspace.mkdir(exist_ok=True)  # program in the workspace
    env = {
        "GITHUB_WORKSPACE": str(workspace),
        "PATH": str(empty),
        "HOME": str(tmp),
        "PYTHONPATH": str(SRC),
        "COPILOT_GITHUB_TOKEN": GITHUB_TOKEN,
        "COPILOT_MODEL": "gpt-5-mini",
        "GH_AW_PROMPT": str(prompt),
    }
    argv = [sys.executable, "-m", "copilot_driver.harness", *args]
    return Run(argv, {**env, **variables}, says)


def harness_without_a_token(tmp: Path, says: list[str], *args: str, **variables: str) -> Run:
    """The harness with a Copilot CLI it finds (a stand-in that never answers), and no
    GitHub token at all."""
    run = harness(tmp, says, *args, COPILOT_CLI_PATH=str(_stand_in_cli(tmp)), **variables)
    del run.env["COPILOT_GITHUB_TOKEN"]
    return run


def _stand_in_cli(tmp: Path) -> Path:
    binary = tmp / "stand-in" / "copilot"
    binary.parent.mkdir(exist_ok=True)
    binary.write_text("#!/bin/sh\nexec /bin/sleep 30\n", encoding="utf-8")
    binary.chmod(0o755)
    return binary


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


# -- the GitHub token ---------------------------------------------------------------------

ACCEPTED = [
    'a fine-grained personal access token with the "Copilot Requests" permission',
    "an OAuth token from `gh auth login` or `copilot login`",
    "it refuses classic personal access tokens (ghp_...)",
]

EXPORT = (
    "`export COPILOT_GITHUB_TOKEN=$(gh auth token)` (after `gh auth login`), "
    "or `export COPILOT_GITHUB_TOKEN=<a token you created>`"
)


def no_github_token_on_a_terminal(tmp: Path) -> Run:
    run = harness_without_a_token(
        tmp,
        [
            "no credential for the Copilot CLI: COPILOT_GITHUB_TOKEN is not set",
            EXPORT,
            *ACCEPTED,
        ],
    )
    run.never_says = ["secrets.", "pull_request_target", "fork"]
    return run


def no_github_token_in_github_actions(tmp: Path) -> Run:
    return harness_without_a_token(
        tmp,
        [
            "no credential for the Copilot CLI: COPILOT_GITHUB_TOKEN is not set",
            "`env: COPILOT_GITHUB_TOKEN: ${{ secrets.COPILOT_GITHUB_TOKEN }}`",
            "`pull_request_target`",
            *ACCEPTED,
        ],
        GITHUB_ACTIONS="true",
    )


# -- running the parts by hand ------------------------------------------------------------


def driver_run_without_the_harness(tmp: Path) -> Run:
    run = driver(tmp, [])
    for name in ("COPILOT_SDK_URI", "COPILOT_CONNECTION_TOKEN"):
        del run.env[name]
    run.says = [
        "COPILOT_SDK_URI is not set: ",
        "a Copilot CLI sidecar, which copilot-driver-harness starts for you",
        "(and sets this and COPILOT_CONNECTION_TOKEN)",
        "run `copilot-driver-harness prompt.md`",
    ]
    run.error_lines = 2  # and COPILOT_CONNECTION_TOKEN is not set, which the harness passes
    return run


def harness_given_a_prompt_file_that_does_not_exist(tmp: Path) -> Run:
    return harness(
        tmp,
        [f"the prompt file task.md does not exist (tried {tmp / 'task.md'})"],
        "task.md",
    )


def harness_given_two_prompt_files(tmp: Path) -> Run:
    for name in ("a.md", "b.md"):
        (tmp / name).write_text("Say hello.\n", encoding="utf-8")
    return harness(
        tmp,
        [
            "[copilot-driver-harness] error: unexpected argument 'b.md': give one PROMPT_FILE "
            "at most, and a driver command after `--`",
        ],
        "a.md",
        "b.md",
    )


def gh_aw_driver_file_without_the_package(tmp: Path) -> Run:
    """gh-aw runs the file with its own python3: here one that cannot import the package
    (-I: no PYTHONPATH, no user site; -S: no site-packages)."""
    path = tmp / ".github" / "drivers" / "copilot-driver.py"
    write_driver_file(path)
    return Run(
        [sys.executable, "-S", "-I", str(path), "/usr/local/bin/copilot"],
        {"PATH": "/usr/bin:/bin", "HOME": str(tmp), "COPILOT_GITHUB_TOKEN": GITHUB_TOKEN},
        [
            "cannot import copilot_driver (PYTHONPATH='')",
            'pip install --target "$GITHUB_WORKSPACE/.copilot-driver/python" '
            '"copilot-driver @ git+https://github.com/<owner>/copilot-driver@<ref>"',
            "engine.env.PYTHONPATH: ${{ github.workspace }}/.copilot-driver/python",
        ],
        never_says=["Traceback"],
    )


def adapters_run_without_their_extra(tmp: Path) -> Run:
    command = ["run", "--kind", "copilot-cli", "--workspace", str(tmp), "--prompt", "Say hi."]
    return Run(
        [sys.executable, "-S", "-m", "copilot_driver.adapters", *command],
        {"PATH": "/usr/bin:/bin", "HOME": str(tmp), "PYTHONPATH": str(SRC)},
        ["the adapters need PyYAML, httpx-sse", "pip install 'copilot-driver[adapters]'"],
    )


# -- the report ---------------------------------------------------------------------------


def report_given_a_session_folder_without_its_events_file(tmp: Path) -> Run:
    folder = tmp / "session-state" / "0f1e2d3c"
    folder.mkdir(parents=True)
    argv = [sys.executable, "-m", "copilot_driver.report", str(folder)]
    return Run(
        argv,
        {"PATH": "/usr/bin:/bin", "HOME": str(tmp), "COPILOT_CONNECTION_TOKEN": TOKEN},
        [
            "is a folder without events.jsonl and without session folders holding one "
            f"(expected {folder / 'events.jsonl'} or {folder / '<sessionId>' / 'events.jsonl'})"
        ],
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
    no_github_token_on_a_terminal,
    no_github_token_in_github_actions,
    driver_run_without_the_harness,
    harness_given_a_prompt_file_that_does_not_exist,
    harness_given_two_prompt_files,
    gh_aw_driver_file_without_the_package,
    adapters_run_without_their_extra,
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
    assert ended.returncode == run.exit_code, output
    errors = [line for line in ended.stderr.splitlines() if " error: " in line]
    assert len(errors) == run.error_lines, output  # the mistake, and nothing else
    for fragment in run.says:
        assert fragment in errors[0], errors[0]
    for fragment in run.never_says:
        assert fragment not in output, output
    for secret in SECRETS:
        assert secret not in output
    assert ended.stdout == ""


# -- what a new user runs first, that must work ----------------------------------------------


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


def test_the_harness_help_shows_its_forms_and_main_variables(tmp_path: Path) -> None:
    run = harness(tmp_path, [], "--help")
    ended = _run(run.argv, run.env, tmp_path)
    assert ended.returncode == 0, ended.stderr
    usage = ended.stdout
    assert usage.startswith("usage: copilot-driver-harness [--copilot PATH] [--port PORT] ")
    assert " [PROMPT_FILE] [-- DRIVER [ARG ...]]\n" in usage
    assert "copilot-driver-harness prompt.md\n" in usage
    assert "copilot-driver-harness prompt.md -- python3 .github/drivers/copilot-driver.py" in usage
    for name in ("GH_AW_PROMPT", "COPILOT_MODEL", "COPILOT_GITHUB_TOKEN", "COPILOT_CLI_PATH"):
        assert f"\n  {name} " in usage or f" {name}" in usage, name
    assert '"Copilot Requests" permission' in usage


@pytest.mark.parametrize("asked", [["--help"], ["-h"], ["--version"], ["run", "--help"]])
def test_the_adapters_answer_help_without_their_extra(tmp_path: Path, asked: list[str]) -> None:
    """-S: no site-packages, so neither PyYAML nor httpx-sse (the extra) can be imported."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(SRC)}
    probe = _run([sys.executable, "-S", "-c", "import yaml"], env, tmp_path)
    assert "ModuleNotFoundError" in probe.stderr  # the extra is really missing
    ended = _run([sys.executable, "-S", "-m", "copilot_driver.adapters", *asked], env, tmp_path)
    assert ended.returncode == 0, ended.stderr
    assert ended.stderr == ""
    if asked == ["--version"]:
        assert ended.stdout == f"python -m copilot_driver.adapters {copilot_driver.__version__}\n"
    elif asked[0] != "run":
        assert "`run` needs the adapters' extra: " in ended.stdout
        assert "pip install 'copilot-driver[adapters]'" in ended.stdout


# -- the harness, given what the driver said and what the CLI refused ------------------------


def test_a_configuration_error_the_harness_finds_is_said_once_before_anything_starts(
    tmp_path: Path,
) -> None:
    """`copilot-driver-harness prompt.md` with the model left out: the harness finds it
    before the sidecar starts (the stand-in sidecar would never answer; a sidecar log
    would show it started), says it once in the driver's words, and starts nothing."""
    (tmp_path / "prompt.md").write_text("Say hello.\n", encoding="utf-8")
    run = harness(
        tmp_path,
        [],
        "prompt.md",
        "--sandbox",
        "off",
        COPILOT_CLI_PATH=str(_stand_in_cli(tmp_path)),
        GH_AW_SESSION_STATE_BASE_DIR=str(tmp_path / "state"),
    )
    del run.env["COPILOT_MODEL"]
    ended = _run(run.argv, run.env, tmp_path)
    assert ended.returncode == 2, ended.stderr
    errors = [line for line in ended.stderr.splitlines() if " error: " in line]
    assert errors == [
        "[copilot-driver-harness] error: COPILOT_MODEL is not set: set it to the model name "
        "(e.g. gpt-5-mini)"
    ], ended.stderr
    assert "how to fix" not in ended.stderr  # the line names its fix
    assert not (tmp_path / "state").exists()
    assert GITHUB_TOKEN not in ended.stderr + ended.stdout


def test_a_configuration_error_only_the_driver_finds_is_said_once_with_its_fix(
    tmp_path: Path,
) -> None:
    """A provider URL without a scheme is the driver's to read: it refuses it (the
    stand-in sidecar never answers), said once, then the harness's fix."""
    (tmp_path / "prompt.md").write_text("Say hello.\n", encoding="utf-8")
    run = harness(
        tmp_path,
        [],
        "prompt.md",
        "--sandbox",
        "off",
        COPILOT_CLI_PATH=str(_stand_in_cli(tmp_path)),
        COPILOT_PROVIDER_BASE_URL="models.example/v1",
        GH_AW_SESSION_STATE_BASE_DIR=str(tmp_path / "state"),
    )
    ended = _run(run.argv, run.env, tmp_path)
    assert ended.returncode == 2, ended.stderr
    said = [line for line in ended.stderr.splitlines() if " error: " in line]
    assert len(said) == 1, ended.stderr
    assert said[0].startswith("[copilot-sdk-driver] error: COPILOT_PROVIDER_BASE_URL "), said
    assert "GH_AW_PROMPT" not in ended.stderr
    assert GITHUB_TOKEN not in ended.stderr + ended.stdout
    assert ended.stderr.rstrip("\n").endswith(
        "[copilot-driver-harness] how to fix: `python -m copilot_driver --help` lists every "
        "variable the driver reads"
    )


def test_a_classic_token_is_refused_before_anything_starts(tmp_path: Path) -> None:
    """The Copilot CLI refuses a classic token, but only once a sidecar and a session
    exist: the harness says so first, exit 2, and starts nothing (the stand-in CLI would
    never answer; a sidecar log would show it started)."""
    (tmp_path / "prompt.md").write_text("Say hello.\n", encoding="utf-8")
    run = harness(
        tmp_path,
        [],
        "prompt.md",
        "--sandbox",
        "off",
        COPILOT_CLI_PATH=str(_stand_in_cli(tmp_path)),
        COPILOT_GITHUB_TOKEN=CLASSIC_TOKEN,
        COPILOT_MODEL="gpt-5-mini",
        GH_AW_SESSION_STATE_BASE_DIR=str(tmp_path / "state"),
    )
    ended = _run(run.argv, run.env, tmp_path)
    assert ended.returncode == 2, ended.stderr
    errors = [line for line in ended.stderr.splitlines() if " error: " in line]
    assert errors == [
        "[copilot-driver-harness] error: COPILOT_GITHUB_TOKEN holds a classic personal access "
        "token (ghp_...), which the Copilot CLI refuses; nothing was started. Set "
        "COPILOT_GITHUB_TOKEN to another token (`export COPILOT_GITHUB_TOKEN=$(gh auth token)`): "
        f"{ACCEPTED_TOKENS}"
    ], ended.stderr
    assert not list((tmp_path / "state").glob("sidecar-*.log"))
    assert CLASSIC_TOKEN not in ended.stderr + ended.stdout
