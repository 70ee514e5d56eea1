"""Unit tests for `copilot_driver.cli`: arguments, configuration errors, exit status.

Only paths that end before the SDK is loaded are exercised here (no sidecar, no network).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from copilot_driver import __version__
from copilot_driver.cli import main

PREFIX = "[copilot-sdk-driver] error: "
TOKEN = "cli-canary-token-5d1e8f"
DRIVER_VARIABLES = (
    "GH_AW_PROMPT",
    "COPILOT_SDK_URI",
    "COPILOT_CONNECTION_TOKEN",
    "COPILOT_MODEL",
    "COPILOT_SDK_SEND_TIMEOUT_MS",
    "COPILOT_SDK_LOG_LEVEL",
    "COPILOT_DRIVER_LOG_FORMAT",
    "GITHUB_WORKSPACE",
    "GH_AW_SESSION_STATE_BASE_DIR",
    "COPILOT_PROVIDER_BASE_URL",
    "COPILOT_PROVIDER_TYPE",
    "COPILOT_PROVIDER_WIRE_API",
    "COPILOT_PROVIDER_API_KEY",
)
REQUIRED = ("GH_AW_PROMPT", "COPILOT_SDK_URI", "COPILOT_CONNECTION_TOKEN", "COPILOT_MODEL")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No driver variable set in os.environ."""
    for name in DRIVER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def _subprocess_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in DRIVER_VARIABLES}
    env.update(extra)
    return env


def _error_lines(stderr: str) -> list[str]:
    lines = stderr.splitlines()
    assert lines, "nothing was written on stderr"
    for line in lines:
        assert line.startswith(PREFIX), line
    return lines


# -- --help / --version ---------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_exits_zero(flag: str, capsys: pytest.CaptureFixture[str], clean_env: object) -> None:
    assert main([flag]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("usage: copilot-driver")
    for name in REQUIRED:
        assert name in out
    assert err == ""


def test_version_exits_zero(capsys: pytest.CaptureFixture[str], clean_env: object) -> None:
    assert main(["--version"]) == 0
    out, err = capsys.readouterr()
    assert out == f"copilot-driver {__version__}\n"
    assert err == ""


# -- configuration errors -------------------------------------------------------------


def test_config_error_exits_2_with_prefixed_lines(
    capsys: pytest.CaptureFixture[str], clean_env: object
) -> None:
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = _error_lines(err)
    assert len(lines) == len(REQUIRED)
    for name, line in zip(REQUIRED, lines, strict=True):
        assert name in line


def test_config_error_is_fast(capsys: pytest.CaptureFixture[str], clean_env: object) -> None:
    started = time.monotonic()
    assert main([]) == 2
    assert time.monotonic() - started < 0.2
    capsys.readouterr()


def test_config_error_with_invalid_prompt(
    capsys: pytest.CaptureFixture[str], clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    clean_env.setenv("GH_AW_PROMPT", str(tmp_path / "missing.txt"))
    clean_env.setenv("COPILOT_SDK_URI", "3002")
    clean_env.setenv("COPILOT_CONNECTION_TOKEN", TOKEN)
    clean_env.setenv("COPILOT_MODEL", "gpt-4.1")
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = _error_lines(err)
    assert "GH_AW_PROMPT file does not exist" in line
    assert TOKEN not in err


def test_config_error_never_prints_the_token_or_key(
    capsys: pytest.CaptureFixture[str], clean_env: pytest.MonkeyPatch
) -> None:
    key = "cli-canary-key-0a9b"
    clean_env.setenv("COPILOT_CONNECTION_TOKEN", TOKEN)
    clean_env.setenv("COPILOT_PROVIDER_API_KEY", key)
    # Values that *contain* the secrets and are echoed by their error messages:
    # the CLI's redaction must still mask them (defence in depth).
    clean_env.setenv("COPILOT_SDK_URI", f"h_{TOKEN}:1")
    clean_env.setenv("COPILOT_PROVIDER_BASE_URL", f"ftp://{key}")
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = _error_lines(err)
    assert any("COPILOT_SDK_URI is invalid" in line for line in lines)
    assert any("COPILOT_PROVIDER_BASE_URL" in line for line in lines)
    assert "***" in err
    assert TOKEN not in err
    assert key not in err


# -- arguments ------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["--foo"], ["-x"], ["/usr/bin/copilot", "--foo"]])
def test_unknown_option_exits_2(
    argv: list[str], capsys: pytest.CaptureFixture[str], clean_env: object
) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = _error_lines(err)
    assert "unexpected argument" in line
    assert argv[-1] in line


def test_second_positional_argument_exits_2(
    capsys: pytest.CaptureFixture[str], clean_env: object
) -> None:
    assert main(["/usr/bin/copilot", "extra"]) == 2
    (line,) = _error_lines(capsys.readouterr().err)
    assert "'extra'" in line


def test_leading_positional_argument_is_ignored(
    capsys: pytest.CaptureFixture[str], clean_env: object
) -> None:
    assert main(["/opt/copilot/bin/copilot"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = _error_lines(err)
    assert "unexpected argument" not in err
    assert len(lines) == len(REQUIRED)
    assert "GH_AW_PROMPT" in lines[0]


@pytest.mark.parametrize(
    "argv",
    [
        ["/usr/bin/copilot", TOKEN],
        [f"--token={TOKEN}"],
        [f"--{TOKEN}"],
        ["/usr/bin/copilot", f"--token={TOKEN[:14]}"],
        ["/usr/bin/copilot", f"{TOKEN[-13:]}"],
    ],
)
@pytest.mark.parametrize("around", ["", "\n", "  "])
def test_unexpected_argument_masks_the_environment_secrets(
    argv: list[str],
    around: str,
    capsys: pytest.CaptureFixture[str],
    clean_env: pytest.MonkeyPatch,
) -> None:
    # The token in the environment may carry a pasted newline or spaces: the
    # argument, typed without them, is masked all the same.
    clean_env.setenv("COPILOT_CONNECTION_TOKEN", around + TOKEN + around)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = _error_lines(err)
    assert "unexpected argument" in line
    assert "***" in line
    assert TOKEN[:12] not in line
    assert TOKEN[-12:] not in line


def test_unexpected_argument_masks_the_provider_key(
    capsys: pytest.CaptureFixture[str], clean_env: pytest.MonkeyPatch
) -> None:
    key = "cli-canary-key-0a9b-7f7f"
    clean_env.setenv("COPILOT_PROVIDER_API_KEY", key)
    assert main(["/usr/bin/copilot", "--key", key]) == 2
    assert "--key" in capsys.readouterr().err
    assert main(["/usr/bin/copilot", key]) == 2
    err = capsys.readouterr().err
    assert key not in err
    assert "'***'" in err


def test_main_reads_sys_argv_by_default(
    capsys: pytest.CaptureFixture[str], clean_env: pytest.MonkeyPatch
) -> None:
    clean_env.setattr(sys, "argv", ["copilot-driver", "--version"])
    assert main() == 0
    assert capsys.readouterr().out == f"copilot-driver {__version__}\n"


# -- in a fresh interpreter -----------------------------------------------------------


def test_config_error_never_imports_the_sdk() -> None:
    code = (
        "import sys; from copilot_driver.cli import main; rc = main([]); "
        'print(rc, "copilot" in sys.modules)'
    )
    completed = subprocess.run(
        [sys.executable, "-c", code],
        env=_subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.stdout.strip() == "2 False", completed.stderr
    _error_lines(completed.stderr)


def test_module_entry_point_never_prints_the_token(tmp_path: Path) -> None:
    token = "Zq9canaryTOKEN4471"
    completed = subprocess.run(
        [sys.executable, "-m", "copilot_driver", "/usr/bin/copilot"],
        env=_subprocess_env(
            COPILOT_CONNECTION_TOKEN=token,
            # echoed by its error message: must come out masked
            COPILOT_SDK_URI=f"bad_{token}:1",
            GH_AW_PROMPT=str(tmp_path / "missing.txt"),
            COPILOT_MODEL=" ",
            COPILOT_DRIVER_LOG_FORMAT="text",
        ),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 2
    assert completed.stdout == ""
    lines = _error_lines(completed.stderr)
    assert len(lines) == 3
    assert "bad_***" in completed.stderr
    assert token not in completed.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["{secret}"],
        ["/usr/bin/copilot", "{secret}"],
        ["--token={secret}"],
        ["/usr/bin/copilot", "--token={cut}"],
    ],
)
def test_module_entry_point_never_echoes_a_secret_argument(args: list[str]) -> None:
    """`python -m copilot_driver <secret>`: a lone positional argument is the ignored
    copilot binary (the configuration errors follow); any other is refused. Either way
    exit 2, and the secret from the environment never reaches stderr."""
    secret = "Zq9canaryTOKEN4471-argv-9c1d"
    argv = [arg.format(secret=secret, cut=secret[:15]) for arg in args]
    completed = subprocess.run(
        [sys.executable, "-m", "copilot_driver", *argv],
        env=_subprocess_env(COPILOT_CONNECTION_TOKEN=secret + "\n"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 2
    assert completed.stdout == ""
    lines = _error_lines(completed.stderr)
    assert secret[:12] not in completed.stderr
    assert secret[-12:] not in completed.stderr
    if len(argv) == 1 and not argv[0].startswith("-"):
        assert "unexpected argument" not in completed.stderr
        assert len(lines) == len(REQUIRED) - 1  # the token is set
    else:
        (line,) = lines
        assert "unexpected argument '" in line
        assert "***" in line


def test_config_error_masks_a_token_echoed_in_repr_form(
    capsys: pytest.CaptureFixture[str], clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Some problems quote the offending value with repr(), which escapes a value holding
    # both quote kinds differently from JSON; the redaction must still catch the token.
    token = "Zq9-canary\"token'quoted"
    clean_env.setenv("COPILOT_CONNECTION_TOKEN", token)
    clean_env.setenv("COPILOT_SDK_URI", f"[{token}]:1")
    assert main(["/usr/bin/copilot"]) == 2
    err = capsys.readouterr().err
    assert any("COPILOT_SDK_URI is invalid" in line for line in _error_lines(err))
    assert "Zq9-canary" not in err


@pytest.mark.parametrize(
    ("args", "code", "stream", "expected"),
    [
        (["--version"], 0, "stdout", "copilot-driver "),
        (["--help"], 0, "stdout", "GH_AW_PROMPT"),
        ([], 2, "stderr", "error"),
    ],
)
def test_the_process_entry_point_flushes_before_leaving(
    args: list[str], code: int, stream: str, expected: str
) -> None:
    """`run()` leaves with os._exit: what was written to a pipe must still arrive."""
    completed = subprocess.run(
        [sys.executable, "-m", "copilot_driver", *args],
        env={"PATH": os.environ.get("PATH", "")},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert completed.returncode == code
    assert expected in getattr(completed, stream)


def test_a_signal_before_the_run_began_exits_128_plus_n_with_one_line(
    tmp_path: Path,
) -> None:
    """Between the interpreter's start and the lifecycle's own handlers,
    SIGTERM would kill silently and SIGINT print a traceback."""
    prompt = tmp_path / "prompt.md"
    prompt.write_text("hello")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "GH_AW_PROMPT": str(prompt),
        "COPILOT_SDK_URI": "127.0.0.1:9",
        "COPILOT_CONNECTION_TOKEN": TOKEN,
        "COPILOT_MODEL": "m",
    }
    # The signal is raised inside validation, exactly where an early one lands.
    code = (
        "import os, signal, sys\n"
        "import copilot_driver.driver.config as config\n"
        "real = config.load_config\n"
        "def load(env, **kw):\n"
        "    os.kill(os.getpid(), signal.SIGNAL)\n"
        "    return real(env, **kw)\n"
        "config.load_config = load\n"
        "import copilot_driver.cli as cli\n"
        "cli.load_config = load\n"
        "sys.exit(cli.main([]))\n"
    )
    for name, status in (("SIGTERM", 143), ("SIGINT", 130)):
        completed = subprocess.run(
            [sys.executable, "-c", code.replace("SIGNAL", name)],
            env=env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert completed.returncode == status, completed.stderr
        assert completed.stderr == (
            f"{PREFIX}stopped by {name} before the session started; nothing was left running\n"
        )
        assert "Traceback" not in completed.stderr
