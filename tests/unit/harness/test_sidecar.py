"""The sidecar edge: finding the CLI, starting it, knowing when it is ready."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from pytest_subprocess import FakeProcess
from pytest_subprocess.fake_popen import FakePopen

from copilot_driver.compatibility import RECOMMENDED_CLI_VERSION
from copilot_driver.harness import sidecar as sidecar_module
from copilot_driver.harness.sidecar import (
    PROVISIONED_CLI,
    Sidecar,
    SidecarError,
    locate_copilot_cli,
)

BINARY = "/opt/fake/bin/copilot"
TOKEN = "f3c1a9e07b2d4c6e8a0b1c2d3e4f5a6b"
READY = "CLI server listening on port 4321"
BASE_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp/sidecar-home"}


@pytest.fixture
def killpg_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Record process-group signals instead of sending them.

    pytest-subprocess gives its fake processes small made-up pids (1, 2, ...),
    so a real `os.killpg(pid, ...)` from `Sidecar.stop()` would signal an
    unrelated process group of this machine.
    """
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "killpg", lambda pgid, signum: calls.append((pgid, signum)))
    return calls


@pytest.fixture
def fake(fp: FakeProcess, killpg_calls: list[tuple[int, int]]) -> FakeProcess:
    return fp


def register(fp: FakeProcess, **kwargs: Any) -> None:
    fp.register([BINARY, fp.any()], **kwargs)


# -- Sidecar.start on a fake process -----------------------------------------


def test_start_reads_the_port_from_the_ready_line(fake: FakeProcess) -> None:
    register(fake, stdout=["Copilot CLI 1.0.102", READY])
    sidecar = Sidecar.start(BINARY, token=TOKEN, env=BASE_ENV, ready_timeout=5)
    try:
        assert sidecar.port == 4321
        assert sidecar.uri == "http://127.0.0.1:4321"
    finally:
        sidecar.stop()


def test_the_sign_in_arguments_replace_no_auto_login(fake: FakeProcess) -> None:
    register(fake, stdout=[READY])
    login = ["--no-auto-login", "--auth-token-env", "COPILOT_GITHUB_TOKEN"]
    sidecar = Sidecar.start(BINARY, token=TOKEN, env=BASE_ENV, ready_timeout=5, login_args=login)
    try:
        argv = list(cast(FakePopen, sidecar.process).args)
    finally:
        sidecar.stop()

    assert argv[3:6] == login
    assert argv.count("--no-auto-login") == 1


def test_start_argv_and_environment(fake: FakeProcess) -> None:
    register(fake, stdout=[READY])
    caller_env = dict(BASE_ENV)
    sidecar = Sidecar.start(BINARY, token=TOKEN, env=caller_env, ready_timeout=5)
    try:
        process = cast(FakePopen, sidecar.process)
        argv = list(process.args)
        kwargs = process.kwargs
    finally:
        sidecar.stop()

    assert argv[0] == BINARY
    for flag in ("--headless", "--no-auto-update", "--no-auto-login"):
        assert flag in argv
    assert argv[-2:] == ["--port", "0"]
    assert argv[argv.index("--log-level") + 1] == "info"
    assert kwargs is not None
    assert kwargs["env"] == {**BASE_ENV, "COPILOT_CONNECTION_TOKEN": TOKEN}
    assert caller_env == BASE_ENV, "the caller's mapping must not be modified"
    assert kwargs["start_new_session"] is True
    assert kwargs["stdin"] == subprocess.DEVNULL
    assert kwargs["stdout"] == subprocess.PIPE
    assert kwargs["stderr"] == subprocess.PIPE
    assert fake.call_count([BINARY, fake.any()]) == 1


def test_start_passes_port_log_level_and_extra_args(fake: FakeProcess) -> None:
    register(fake, stdout=["CLI server listening on port 5555"])
    sidecar = Sidecar.start(
        BINARY,
        token=TOKEN,
        env=BASE_ENV,
        port=5555,
        log_level="debug",
        extra_args=["--allow-all-tools"],
        ready_timeout=5,
    )
    try:
        argv = list(cast(FakePopen, sidecar.process).args)
        assert sidecar.port == 5555
    finally:
        sidecar.stop()
    assert argv[argv.index("--log-level") + 1] == "debug"
    assert "--allow-all-tools" in argv
    assert argv[-2:] == ["--port", "5555"]


def test_start_fails_with_the_exit_status_and_output(fake: FakeProcess) -> None:
    register(fake, stderr=["Error: boom"], returncode=1)
    with pytest.raises(SidecarError) as caught:
        Sidecar.start(BINARY, token=TOKEN, env=BASE_ENV, ready_timeout=5)
    message = str(caught.value)
    assert "boom" in message
    assert "status 1" in message
    assert "before listening" in message


def test_start_failure_never_shows_the_token(fake: FakeProcess, tmp_path: Path) -> None:
    register(fake, stderr=[f"Error: bad token {TOKEN}"], returncode=1)
    log_path = tmp_path / "sidecar.log"
    with pytest.raises(SidecarError) as caught:
        Sidecar.start(BINARY, token=TOKEN, env=BASE_ENV, ready_timeout=5, log_path=log_path)
    assert TOKEN not in str(caught.value)
    assert "bad token ***" in str(caught.value)
    assert TOKEN not in log_path.read_text(encoding="utf-8")


def test_start_failure_closes_the_log_file(
    fake: FakeProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[Any] = []
    real_open = open

    def recording_open(*args: Any, **kwargs: Any) -> Any:
        handle = real_open(*args, **kwargs)
        opened.append(handle)
        return handle

    monkeypatch.setattr(sidecar_module, "open", recording_open, raising=False)
    register(fake, stderr=["Error: boom"], returncode=1)
    with pytest.raises(SidecarError, match="boom"):
        Sidecar.start(
            BINARY, token=TOKEN, env=BASE_ENV, ready_timeout=5, log_path=tmp_path / "sidecar.log"
        )
    assert len(opened) == 1
    assert opened[0].closed, "a failed start leaks the sidecar log file"


def test_token_is_masked_in_tail_and_log_file(
    fake: FakeProcess, tmp_path: Path, killpg_calls: list[tuple[int, int]]
) -> None:
    register(
        fake,
        stdout=[f"connection token is {TOKEN}", READY],
        stderr=[f"warning: header Bearer {TOKEN} rejected"],
    )
    log_path = tmp_path / "sidecar.log"
    sidecar = Sidecar.start(BINARY, token=TOKEN, env=BASE_ENV, ready_timeout=5, log_path=log_path)
    status = sidecar.stop()  # joins the readers and closes the log file
    tail = sidecar.tail()
    log = log_path.read_text(encoding="utf-8")

    for text in (tail, log):
        assert TOKEN not in text
        assert "stdout: connection token is ***" in text
        assert "stderr: warning: header Bearer *** rejected" in text
        assert f"stdout: {READY}" in text
    assert status == 0
    # The CLI had already exited: stop() only makes sure its group is gone.
    assert killpg_calls == [(sidecar.process.pid, signal.SIGKILL)]


# -- Sidecar.start on a real tiny process --------------------------------------


def silent_cli(tmp_path: Path, body: str = "") -> Path:
    """An executable that never says it listens and sleeps."""
    script = tmp_path / "silent-copilot"
    script.write_text(
        f"#!{sys.executable}\nimport time\n{body}\ntime.sleep(60)\n", encoding="utf-8"
    )
    script.chmod(0o755)
    return script


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Every real process `Sidecar.start` creates, killed afterwards if still alive."""
    processes: list[subprocess.Popen[bytes]] = []
    real_popen = subprocess.Popen

    class RecordingPopen(real_popen):  # type: ignore[valid-type,misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            processes.append(self)

    monkeypatch.setattr(subprocess, "Popen", RecordingPopen)
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait(5)


def test_ready_timeout_stops_the_process(
    tmp_path: Path, started: list[subprocess.Popen[bytes]]
) -> None:
    binary = silent_cli(tmp_path)
    begun = time.monotonic()
    with pytest.raises(SidecarError, match=r"did not listen within 0\.5s") as caught:
        Sidecar.start(
            binary,
            token=TOKEN,
            env={"PATH": os.environ.get("PATH", "")},
            ready_timeout=0.5,
            log_path=tmp_path / "sidecar.log",
        )
    elapsed = time.monotonic() - begun
    assert "(none)" in str(caught.value)
    assert len(started) == 1
    assert started[0].poll() is not None, "the timed-out CLI must not keep running"
    assert started[0].returncode == -signal.SIGTERM
    assert elapsed < 5


def test_ready_timeout_quotes_the_last_output(
    tmp_path: Path, started: list[subprocess.Popen[bytes]]
) -> None:
    binary = silent_cli(
        tmp_path, body=f"import sys\nprint('still loading {TOKEN}', file=sys.stderr, flush=True)"
    )
    with pytest.raises(SidecarError, match="did not listen") as caught:
        Sidecar.start(
            binary, token=TOKEN, env={"PATH": os.environ.get("PATH", "")}, ready_timeout=1.0
        )
    assert "stderr: still loading ***" in str(caught.value)
    assert TOKEN not in str(caught.value)
    assert started[0].poll() is not None


def test_ready_timeout_kills_a_cli_that_ignores_sigterm(
    tmp_path: Path, started: list[subprocess.Popen[bytes]]
) -> None:
    binary = silent_cli(
        tmp_path, body="import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)"
    )
    with pytest.raises(SidecarError, match="did not listen"):
        Sidecar.start(
            binary, token=TOKEN, env={"PATH": os.environ.get("PATH", "")}, ready_timeout=1.0
        )
    assert started[0].poll() is not None
    assert started[0].returncode == -signal.SIGKILL


# -- locate_copilot_cli -----------------------------------------------------------


def make_executable(folder: Path, name: str = "copilot") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def no_provisioned(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    missing = tmp_path / "provisioned" / "missing-copilot"
    monkeypatch.setattr(sidecar_module, "_provisioned_cli", lambda: missing)
    return missing


def test_explicit_path_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    explicit = make_executable(tmp_path / "explicit")
    from_env = make_executable(tmp_path / "env")
    provisioned = make_executable(tmp_path / "provisioned")
    on_path = make_executable(tmp_path / "bin")
    monkeypatch.setattr(sidecar_module, "_provisioned_cli", lambda: provisioned)
    env = {"COPILOT_CLI_PATH": str(from_env), "PATH": str(on_path.parent)}
    assert locate_copilot_cli(explicit, env=env) == explicit
    assert locate_copilot_cli(str(explicit), env=env) == explicit


def test_copilot_cli_path_comes_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from_env = make_executable(tmp_path / "env", name="any-name")
    provisioned = make_executable(tmp_path / "provisioned")
    on_path = make_executable(tmp_path / "bin")
    monkeypatch.setattr(sidecar_module, "_provisioned_cli", lambda: provisioned)
    env = {"COPILOT_CLI_PATH": str(from_env), "PATH": str(on_path.parent)}
    assert locate_copilot_cli(None, env=env) == from_env


def test_environment_defaults_to_os_environ(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_provisioned: Path
) -> None:
    from_env = make_executable(tmp_path / "env")
    monkeypatch.setenv("COPILOT_CLI_PATH", str(from_env))
    assert locate_copilot_cli() == from_env


def test_provisioned_binary_wins_over_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    provisioned = make_executable(tmp_path / "provisioned")
    on_path = make_executable(tmp_path / "bin")
    monkeypatch.setattr(sidecar_module, "_provisioned_cli", lambda: provisioned)
    assert locate_copilot_cli(None, env={"PATH": str(on_path.parent)}) == provisioned


def test_path_lookup_when_nothing_else_is_there(tmp_path: Path, no_provisioned: Path) -> None:
    on_path = make_executable(tmp_path / "bin")
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {"PATH": os.pathsep.join([str(empty), str(on_path.parent)])}
    assert locate_copilot_cli(None, env=env) == on_path


def test_path_lookup_in_this_checkout(tmp_path: Path) -> None:
    """Unpatched: the provisioned binary wins over PATH when `make setup` made it."""
    provisioned = sidecar_module._provisioned_cli()
    repository = Path(sidecar_module.__file__).resolve().parents[3]
    assert provisioned == repository / PROVISIONED_CLI
    on_path = make_executable(tmp_path / "bin")
    found = locate_copilot_cli(None, env={"PATH": str(on_path.parent)})
    if provisioned.is_file() and os.access(provisioned, os.X_OK):
        assert found == provisioned
    else:
        assert found == on_path


def test_non_executable_on_path_is_not_chosen(tmp_path: Path, no_provisioned: Path) -> None:
    plain = tmp_path / "bin" / "copilot"
    plain.parent.mkdir()
    plain.write_text("not executable", encoding="utf-8")
    plain.chmod(0o644)
    with pytest.raises(SidecarError):
        locate_copilot_cli(None, env={"PATH": str(plain.parent)})


def test_nothing_found_names_every_source_and_what_to_install(
    tmp_path: Path, no_provisioned: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SidecarError) as caught:
        locate_copilot_cli(None, env={"PATH": str(empty)})
    message = str(caught.value)
    assert message.startswith(
        f"no Copilot CLI found (no --copilot, no COPILOT_CLI_PATH, nothing runnable at "
        f"{no_provisioned}, no `copilot` on PATH): "
    )
    assert f"`npm install -g @github/copilot@{RECOMMENDED_CLI_VERSION}`" in message
    assert "with --copilot PATH or COPILOT_CLI_PATH" in message
    assert "in this source checkout, `make setup` provisions it there" in message
    assert "not set" not in message


def test_nothing_found_outside_a_source_checkout_never_mentions_make_setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sidecar_module, "_provisioned_cli", lambda: None)
    with pytest.raises(SidecarError) as caught:
        locate_copilot_cli(None, env={"PATH": str(tmp_path)})
    message = str(caught.value)
    assert "make setup" not in message
    assert "(no --copilot, no COPILOT_CLI_PATH, no `copilot` on PATH)" in message
    assert f"npm install -g @github/copilot@{RECOMMENDED_CLI_VERSION}" in message


def test_a_source_checkout_is_this_project_not_any_with_a_pyproject(tmp_path: Path) -> None:
    ours = tmp_path / "ours" / "pyproject.toml"
    ours.parent.mkdir()
    ours.write_text('[project]\nname = "copilot-driver"\n', encoding="utf-8")
    theirs = tmp_path / "theirs" / "pyproject.toml"
    theirs.parent.mkdir()
    theirs.write_text('[project]\nname = "their-app"\n', encoding="utf-8")
    assert sidecar_module._is_this_project(ours)
    assert not sidecar_module._is_this_project(theirs)
    assert not sidecar_module._is_this_project(tmp_path / "none" / "pyproject.toml")


def test_a_named_binary_that_does_not_exist_is_an_error_not_a_fallback(
    tmp_path: Path, no_provisioned: Path
) -> None:
    """A path the user named must be right: never silently run another binary."""
    on_path = make_executable(tmp_path / "bin")
    missing_explicit = tmp_path / "nope" / "copilot"
    missing_env = tmp_path / "also-nope" / "copilot"
    env = {"COPILOT_CLI_PATH": str(missing_env), "PATH": str(on_path.parent)}

    with pytest.raises(SidecarError) as caught:
        locate_copilot_cli(missing_explicit, env=env)
    assert str(caught.value).startswith(f"--copilot {missing_explicit} does not exist: ")
    assert f"npm install -g @github/copilot@{RECOMMENDED_CLI_VERSION}" in str(caught.value)

    with pytest.raises(SidecarError) as caught:
        locate_copilot_cli(None, env=env)
    assert str(caught.value).startswith(f"COPILOT_CLI_PATH={missing_env} does not exist: ")


def test_a_named_directory_holding_the_binary_suggests_its_path(
    tmp_path: Path, no_provisioned: Path
) -> None:
    binary = make_executable(tmp_path / "prefix" / "bin")
    for folder in (binary.parent, binary.parent.parent):
        with pytest.raises(SidecarError) as caught:
            locate_copilot_cli(None, env={"COPILOT_CLI_PATH": str(folder)})
        assert str(caught.value) == (
            f"COPILOT_CLI_PATH={folder} is a directory: use the binary inside it, {binary}"
        )


def test_a_named_directory_without_the_binary_asks_for_the_binary(
    tmp_path: Path, no_provisioned: Path
) -> None:
    with pytest.raises(SidecarError) as caught:
        locate_copilot_cli(tmp_path, env={})
    assert str(caught.value) == (
        f"--copilot {tmp_path} is a directory: give the path of the `copilot` binary itself"
    )


def test_a_named_file_that_is_not_executable_suggests_chmod(
    tmp_path: Path, no_provisioned: Path
) -> None:
    plain = make_executable(tmp_path / "bin")
    plain.chmod(0o644)
    with pytest.raises(SidecarError) as caught:
        locate_copilot_cli(plain, env={})
    assert str(caught.value) == (
        f"--copilot {plain} is not executable: make it executable (`chmod +x {plain}`)"
    )


def test_a_named_device_is_not_a_regular_file(no_provisioned: Path) -> None:
    with pytest.raises(SidecarError, match=r"^--copilot /dev/null is not a regular file: "):
        locate_copilot_cli("/dev/null", env={})
