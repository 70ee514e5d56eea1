"""Unit tests for `copilot_driver.driver.config`: every rule and fallback of spec section 4.

Compliance tests carry their spec ids (T-CSD-001..006, T-CSD-008) in their names.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.driver.address import normalise_sdk_uri
from copilot_driver.driver.config import ConfigError, DriverConfig, load_config
from copilot_driver.driver.provider import ProviderConfig
from copilot_driver.driver.settings import parse_routing_effort, parse_send_timeout_ms
from copilot_driver.variable import DEFAULT_SEND_TIMEOUT_MS, MAX_SEND_TIMEOUT_MS

TOKEN = "tok-SECRET-7f3a9c2e"
API_KEY = "key-SECRET-b81d04aa"
PLATFORM_TOKENS = ("GITHUB_TOKEN", "GH_TOKEN", "COPILOT_GITHUB_TOKEN")
REQUIRED = ("GH_AW_PROMPT", "COPILOT_SDK_URI", "COPILOT_CONNECTION_TOKEN", "COPILOT_MODEL")


@pytest.fixture
def prompt_file(tmp_path: Path) -> Path:
    path = tmp_path / "prompt.txt"
    path.write_text("Say hello.\n", encoding="utf-8")
    return path


@pytest.fixture
def env(prompt_file: Path) -> dict[str, str]:
    """A minimal valid environment."""
    return {
        "GH_AW_PROMPT": str(prompt_file),
        "COPILOT_SDK_URI": "127.0.0.1:3002",
        "COPILOT_CONNECTION_TOKEN": TOKEN,
        "COPILOT_MODEL": "gpt-4.1",
    }


def _problems(env: Mapping[str, str], cwd: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(env, cwd=cwd)
    return caught.value.problems


def _only_problem(env: Mapping[str, str], cwd: Path) -> str:
    problems = _problems(env, cwd)
    assert len(problems) == 1, problems
    return problems[0]


# -- a valid configuration ------------------------------------------------------------


def test_valid_minimal_environment(env: dict[str, str], prompt_file: Path, tmp_path: Path) -> None:
    config = load_config(env, cwd=tmp_path)
    assert isinstance(config, DriverConfig)
    assert config.prompt == "Say hello.\n"
    assert config.prompt_path == prompt_file
    assert config.sdk_uri == "127.0.0.1:3002"
    assert config.connection_token == TOKEN
    assert config.model == "gpt-4.1"
    assert config.send_timeout_ms == 600_000
    assert config.log_level == "warning"
    assert config.log_format == "json"
    assert config.working_directory == tmp_path
    assert config.provider is None
    assert config.notices == ()
    assert config.secrets == (TOKEN,)


def test_model_value_is_stripped(env: dict[str, str], tmp_path: Path) -> None:
    env["COPILOT_MODEL"] = "  claude-sonnet-4 \n"
    assert load_config(env, cwd=tmp_path).model == "claude-sonnet-4"


# -- T-CSD-001..003 and COPILOT_MODEL: required variables ---------------------------------


@pytest.mark.parametrize("value", [None, "", "   ", "\t\n"])
def test_t_csd_001_missing_prompt_is_a_config_error(
    env: dict[str, str], tmp_path: Path, value: str | None
) -> None:
    if value is None:
        del env["GH_AW_PROMPT"]
    else:
        env["GH_AW_PROMPT"] = value
    problem = _only_problem(env, tmp_path)
    assert "GH_AW_PROMPT" in problem
    assert ("not set" if value is None else "is set but blank") in problem


@pytest.mark.parametrize("value", [None, "", "   ", "\t"])
def test_t_csd_002_missing_sdk_uri_is_a_config_error(
    env: dict[str, str], tmp_path: Path, value: str | None
) -> None:
    if value is None:
        del env["COPILOT_SDK_URI"]
    else:
        env["COPILOT_SDK_URI"] = value
    problem = _only_problem(env, tmp_path)
    assert "COPILOT_SDK_URI" in problem
    assert ("not set" if value is None else "is set but blank") in problem


@pytest.mark.parametrize("value", [None, "", "   ", "\n\t "])
def test_t_csd_003_missing_connection_token_is_a_config_error(
    env: dict[str, str], tmp_path: Path, value: str | None
) -> None:
    if value is None:
        del env["COPILOT_CONNECTION_TOKEN"]
    else:
        env["COPILOT_CONNECTION_TOKEN"] = value
    problem = _only_problem(env, tmp_path)
    assert "COPILOT_CONNECTION_TOKEN" in problem
    assert ("not set" if value is None else "is set but blank") in problem


def test_t_csd_003_error_text_never_contains_the_token(env: dict[str, str], tmp_path: Path) -> None:
    # The token is present; every other variable is wrong, so every problem message is built.
    env.update(
        {
            "GH_AW_PROMPT": str(tmp_path / "missing.txt"),
            "COPILOT_SDK_URI": "ftp://nowhere:1",
            "COPILOT_MODEL": " ",
            "GITHUB_WORKSPACE": str(tmp_path / "no-such-dir"),
            "COPILOT_PROVIDER_API_KEY": API_KEY,
        }
    )
    with pytest.raises(ConfigError) as caught:
        load_config(env, cwd=tmp_path)
    text = str(caught.value) + "\n".join(caught.value.problems) + repr(caught.value)
    assert len(caught.value.problems) == 5
    assert TOKEN not in text
    assert API_KEY not in text


def test_missing_model_is_a_config_error(env: dict[str, str], tmp_path: Path) -> None:
    del env["COPILOT_MODEL"]
    problem = _only_problem(env, tmp_path)
    assert "COPILOT_MODEL" in problem


@pytest.mark.parametrize("value", ["", "   ", "\n"])
def test_blank_model_is_a_config_error(env: dict[str, str], tmp_path: Path, value: str) -> None:
    env["COPILOT_MODEL"] = value
    problem = _only_problem(env, tmp_path)
    assert "COPILOT_MODEL" in problem


def test_all_missing_variables_are_reported_together(tmp_path: Path) -> None:
    problems = _problems({}, tmp_path)
    assert len(problems) == len(REQUIRED)
    for name, problem in zip(REQUIRED, problems, strict=True):
        assert name in problem
    # one problem per variable: no message names two required variables
    for problem in problems:
        assert sum(name in problem for name in REQUIRED) == 1


def test_config_error_message_joins_the_problems(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({}, cwd=tmp_path)
    assert str(caught.value) == "; ".join(caught.value.problems)


# -- T-CSD-004: log level -------------------------------------------------------------


@pytest.mark.parametrize("value", ["verbose", "", "  ", "trace", "warn", "debug2", "0"])
def test_t_csd_004_invalid_log_level_falls_back_to_warning(
    env: dict[str, str], tmp_path: Path, value: str
) -> None:
    env["COPILOT_SDK_LOG_LEVEL"] = value
    config = load_config(env, cwd=tmp_path)
    assert config.log_level == "warning"
    if value:
        assert len(config.notices) == 1
        assert "COPILOT_SDK_LOG_LEVEL" in config.notices[0]
        assert "warning" in config.notices[0]


def test_t_csd_004_unset_log_level_is_warning_without_notice(
    env: dict[str, str], tmp_path: Path
) -> None:
    config = load_config(env, cwd=tmp_path)
    assert config.log_level == "warning"
    assert config.notices == ()


def test_t_csd_004_empty_log_level_records_no_notice(env: dict[str, str], tmp_path: Path) -> None:
    env["COPILOT_SDK_LOG_LEVEL"] = ""
    assert load_config(env, cwd=tmp_path).notices == ()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("none", "none"),
        ("error", "error"),
        ("warning", "warning"),
        ("info", "info"),
        ("debug", "debug"),
        ("all", "all"),
        ("DEBUG", "debug"),
        ("Info", "info"),
        (" all ", "all"),
    ],
)
def test_t_csd_004_valid_log_levels_are_used(
    env: dict[str, str], tmp_path: Path, value: str, expected: str
) -> None:
    env["COPILOT_SDK_LOG_LEVEL"] = value
    config = load_config(env, cwd=tmp_path)
    assert config.log_level == expected
    assert config.notices == ()


# -- T-CSD-005/006: send timeout ------------------------------------------------------


def test_t_csd_005_unset_send_timeout_defaults_to_600000(
    env: dict[str, str], tmp_path: Path
) -> None:
    config = load_config(env, cwd=tmp_path)
    assert config.send_timeout_ms == 600_000
    assert DEFAULT_SEND_TIMEOUT_MS == 600_000
    assert config.send_timeout_s == 600.0
    assert config.notices == ()


@pytest.mark.parametrize(
    "value",
    [
        "abc",
        "0",
        "-1",
        "1.5",
        "1e3",
        "0x10",
        str(2**64),
        "2147483648",
        "",
        " ",
        "+5",
        "10ms",
        "\uff11\uff12\uff13",
    ],  # full-width digits
)
def test_t_csd_006_invalid_send_timeout_falls_back(
    env: dict[str, str], tmp_path: Path, value: str
) -> None:
    env["COPILOT_SDK_SEND_TIMEOUT_MS"] = value
    config = load_config(env, cwd=tmp_path)
    assert config.send_timeout_ms == 600_000
    assert config.send_timeout_s == 600.0
    if value:
        assert len(config.notices) == 1
        assert "COPILOT_SDK_SEND_TIMEOUT_MS" in config.notices[0]
        assert "600000" in config.notices[0]
    else:
        assert config.notices == ()


def test_t_csd_006_huge_digit_string_falls_back(env: dict[str, str], tmp_path: Path) -> None:
    # Longer than Python's int-from-string digit limit (4300): must still fall back.
    env["COPILOT_SDK_SEND_TIMEOUT_MS"] = "9" * 5000
    config = load_config(env, cwd=tmp_path)
    assert config.send_timeout_ms == 600_000


@pytest.mark.parametrize(
    ("value", "expected"),
    [(" 42 ", 42), ("1500", 1500), ("1", 1), (str(2**31 - 1), 2**31 - 1), ("600000", 600_000)],
)
def test_t_csd_006_valid_send_timeout_is_used(
    env: dict[str, str], tmp_path: Path, value: str, expected: int
) -> None:
    env["COPILOT_SDK_SEND_TIMEOUT_MS"] = value
    config = load_config(env, cwd=tmp_path)
    assert config.send_timeout_ms == expected
    assert config.send_timeout_s == expected / 1000
    assert config.notices == ()


def test_send_timeout_notice_does_not_flood(env: dict[str, str], tmp_path: Path) -> None:
    env["COPILOT_SDK_SEND_TIMEOUT_MS"] = "x" * 1000 + "\nsecond line"
    (notice,) = load_config(env, cwd=tmp_path).notices
    assert "\n" not in notice
    assert len(notice) < 300


@given(st.text())
def test_parse_send_timeout_ms_always_returns_a_sane_int(raw: str) -> None:
    value = parse_send_timeout_ms(raw, [])
    assert type(value) is int
    assert 1 <= value <= MAX_SEND_TIMEOUT_MS == 2**31 - 1


@given(st.integers(min_value=1, max_value=2**31 - 1))
def test_parse_send_timeout_ms_accepts_every_positive_int(value: int) -> None:
    notices: list[str] = []
    assert parse_send_timeout_ms(str(value), notices) == value
    assert notices == []


# -- T-CSD-008: platform tokens are never read ----------------------------------------


class RecordingEnv(Mapping[str, str]):
    """A read-only environment that records every key looked up."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self._values = dict(values)
        self.accessed: list[str] = []

    def __getitem__(self, key: str) -> str:
        self.accessed.append(key)
        return self._values[key]

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        self.accessed.append(key)
        return self._values.get(key, default)

    def __contains__(self, key: object) -> bool:
        self.accessed.append(str(key))
        return key in self._values

    def __iter__(self) -> Iterator[str]:
        self.accessed.append("<iter>")
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


def test_t_csd_008_platform_tokens_are_never_read(env: dict[str, str], tmp_path: Path) -> None:
    with_tokens = RecordingEnv({**env, **{name: f"canary-{name}" for name in PLATFORM_TOKENS}})
    without_tokens = RecordingEnv(env)

    config_with = load_config(with_tokens, cwd=tmp_path)
    config_without = load_config(without_tokens, cwd=tmp_path)

    for recorder in (with_tokens, without_tokens):
        assert recorder.accessed, "the recorder saw no lookups at all"
        for name in PLATFORM_TOKENS:
            assert name not in recorder.accessed
    assert config_with == config_without
    assert config_with.secrets == (TOKEN,)
    assert not any("canary" in str(value) for value in vars(config_with).values())


def test_t_csd_008_platform_tokens_do_not_replace_the_connection_token(
    env: dict[str, str], tmp_path: Path
) -> None:
    del env["COPILOT_CONNECTION_TOKEN"]
    env.update({name: f"canary-{name}" for name in PLATFORM_TOKENS})
    recorder = RecordingEnv(env)
    problem = _only_problem(recorder, tmp_path)
    assert "COPILOT_CONNECTION_TOKEN" in problem
    assert "canary" not in problem
    for name in PLATFORM_TOKENS:
        assert name not in recorder.accessed


def test_t_csd_008_absent_platform_tokens_are_not_an_error(
    env: dict[str, str], tmp_path: Path
) -> None:
    assert not any(name in env for name in PLATFORM_TOKENS)
    config = load_config(env, cwd=tmp_path)
    assert config.notices == ()
    assert config.connection_token == TOKEN


# -- the prompt file ------------------------------------------------------------------


def test_prompt_file_that_does_not_exist(env: dict[str, str], tmp_path: Path) -> None:
    env["GH_AW_PROMPT"] = str(tmp_path / "nope.txt")
    problem = _only_problem(env, tmp_path)
    assert "does not exist" in problem
    assert "nope.txt" in problem


def test_prompt_path_with_a_tilde_says_it_is_not_expanded(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    env["GH_AW_PROMPT"] = "~/prompts/task.md"
    problem = _only_problem(env, tmp_path)
    assert "`~` is not expanded in environment variables" in problem
    assert "write $HOME/prompts/task.md instead" in problem
    assert "the file is there" not in problem  # it is nowhere


def test_prompt_path_with_a_tilde_shows_where_the_file_is(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "task.md").write_text("Say hello.\n", encoding="utf-8")
    env["GH_AW_PROMPT"] = "~/task.md"
    problem = _only_problem(env, tmp_path)
    assert f"write $HOME/task.md instead (the file is there: {tmp_path / 'task.md'})" in problem


def test_prompt_path_with_another_users_tilde_asks_for_the_full_path(
    env: dict[str, str], tmp_path: Path
) -> None:
    env["GH_AW_PROMPT"] = "~no-such-user-here/task.md"
    problem = _only_problem(env, tmp_path)
    assert "`~` is not expanded" in problem
    assert "write the full path instead" in problem


def test_prompt_path_with_a_tilde_never_echoes_a_secret(
    env: dict[str, str], tmp_path: Path
) -> None:
    env["GH_AW_PROMPT"] = f"~/{TOKEN}"
    problem = _only_problem(env, tmp_path)
    assert "write $HOME/" in problem
    assert TOKEN not in problem


def test_relative_prompt_path_names_the_directory_it_was_resolved_against(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    env["GH_AW_PROMPT"] = "prompts/task.md"
    problem = _only_problem(env, tmp_path)
    assert f"the driver's working directory {tmp_path} " in problem
    assert f"(tried {tmp_path / 'prompts' / 'task.md'})" in problem
    assert "give an absolute path" in problem


def test_absolute_prompt_path_that_does_not_exist_names_no_directory(
    env: dict[str, str], tmp_path: Path
) -> None:
    env["GH_AW_PROMPT"] = str(tmp_path / "nope.txt")
    problem = _only_problem(env, tmp_path)
    assert (
        problem
        == f"GH_AW_PROMPT file does not exist: {tmp_path / 'nope.txt'}: point it at the prompt file"
    )


def test_prompt_path_is_a_directory(env: dict[str, str], tmp_path: Path) -> None:
    env["GH_AW_PROMPT"] = str(tmp_path)
    problem = _only_problem(env, tmp_path)
    assert "directory" in problem
    assert "GH_AW_PROMPT" in problem


def test_prompt_path_is_a_fifo_and_does_not_block(env: dict[str, str], tmp_path: Path) -> None:
    fifo = tmp_path / "prompt.fifo"
    os.mkfifo(fifo)
    env["GH_AW_PROMPT"] = str(fifo)
    outcome: list[BaseException | object] = []

    def attempt() -> None:
        try:
            outcome.append(load_config(env, cwd=tmp_path))
        except BaseException as error:  # collected and checked below
            outcome.append(error)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(5)
    if worker.is_alive():
        # unblock the reader so the thread can end, then fail
        with open(fifo, "wb"):
            pass
        pytest.fail("load_config blocked on a FIFO prompt path")
    (error,) = outcome
    assert isinstance(error, ConfigError)
    assert len(error.problems) == 1
    assert "not a regular file" in error.problems[0]


def test_prompt_with_invalid_utf8(env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"caf\xe9 au lait")
    env["GH_AW_PROMPT"] = str(bad)
    problem = _only_problem(env, tmp_path)
    assert "UTF-8" in problem
    assert "offset 3" in problem


@pytest.mark.parametrize(("content", "offset"), [(b"\x00", 0), (b"fix the bug\x00\x01", 11)])
def test_prompt_with_a_nul_byte_is_not_text(
    env: dict[str, str], tmp_path: Path, content: bytes, offset: int
) -> None:
    binary = tmp_path / "binary.bin"
    binary.write_bytes(content)
    env["GH_AW_PROMPT"] = str(binary)
    problem = _only_problem(env, tmp_path)
    assert "not text" in problem
    assert f"NUL byte at offset {offset}" in problem


@pytest.mark.parametrize(
    "content", [b"", b"   ", b"\n\n\t \r\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf \n"]
)
def test_prompt_that_is_empty_or_blank(env: dict[str, str], tmp_path: Path, content: bytes) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(content)
    env["GH_AW_PROMPT"] = str(empty)
    problem = _only_problem(env, tmp_path)
    assert "empty" in problem


def test_prompt_utf8_bom_is_stripped(env: dict[str, str], tmp_path: Path) -> None:
    with_bom = tmp_path / "bom.txt"
    with_bom.write_bytes(b"\xef\xbb\xbfR\xc3\xa9sum\xc3\xa9 the repo.")
    env["GH_AW_PROMPT"] = str(with_bom)
    assert load_config(env, cwd=tmp_path).prompt == "Résumé the repo."


def test_prompt_is_kept_verbatim(env: dict[str, str], tmp_path: Path) -> None:
    text = "  line one\r\nline two ✓\n\n"
    path = tmp_path / "verbatim.txt"
    path.write_bytes(text.encode("utf-8"))
    env["GH_AW_PROMPT"] = str(path)
    assert load_config(env, cwd=tmp_path).prompt == text


def test_prompt_path_through_a_file_component(
    env: dict[str, str], tmp_path: Path, prompt_file: Path
) -> None:
    # stat() fails with ENOTDIR: reported as a problem, not an exception
    env["GH_AW_PROMPT"] = str(prompt_file / "child.txt")
    problem = _only_problem(env, tmp_path)
    assert "GH_AW_PROMPT" in problem


def test_prompt_path_is_shortened_in_the_error(env: dict[str, str], tmp_path: Path) -> None:
    env["GH_AW_PROMPT"] = str(tmp_path / ("x" * 2000))
    problem = _only_problem(env, tmp_path)
    assert len(problem) < 500


# Unreadable prompt files (chmod 000) are not tested: these tests run as root in this
# environment, where permission bits do not stop reading, so the case cannot be produced.


# -- COPILOT_SDK_URI ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1234", "127.0.0.1:1234"),
        (" 1234 ", "127.0.0.1:1234"),
        ("localhost:80", "localhost:80"),
        ("127.0.0.1:3002", "127.0.0.1:3002"),
        ("http://127.0.0.1:3002", "127.0.0.1:3002"),
        ("http://127.0.0.1:3002/", "127.0.0.1:3002"),
        ("HTTP://Sidecar.local:9", "Sidecar.local:9"),
        ("https://host:1", "host:1"),
        ("[::1]:5", "[::1]:5"),
        ("http://[::1]:65535/", "[::1]:65535"),
        ("host:65535", "host:65535"),
    ],
)
def test_normalise_sdk_uri_accepts(raw: str, expected: str) -> None:
    assert normalise_sdk_uri(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "ftp://x:1",
        "http://h:1/path",
        "http://h:1?q=1",
        "host",
        "host:0",
        "host:65536",
        "host:abc",
        "host:",
        ":",
        ":80",
        "a:b:c",
        "0",
        "65536",
        "[nothex]:5",
        "[::1]:",
        "http://",
        "user@host:1",
        "",
    ],
)
def test_normalise_sdk_uri_rejects(raw: str) -> None:
    with pytest.raises(ValueError, match=r"\S"):
        normalise_sdk_uri(raw)


@pytest.mark.parametrize(
    ("raw", "fix"),
    [
        ("localhost", "'localhost' has no port: write localhost:PORT"),
        ("localhost:", "'localhost:' has no port: write localhost:PORT"),
        ("http://127.0.0.1", "'127.0.0.1' has no port: write http://127.0.0.1:PORT"),
        ("https://sidecar/", "'sidecar' has no port: write https://sidecar:PORT"),
        ("[::1]", "[::1] has no port: write [::1]:PORT"),
        ("http://[::1]:", "[::1] has no port: write http://[::1]:PORT"),
        ("::1:8080", "an IPv6 address needs brackets around it before the port: write [::1]:8080"),
        ("http://fe80::2:80", "write http://[fe80::2]:80"),
        ("::1", "write [::1]:PORT if all of it is the address"),
        (":80", "there is no host before `:`: write HOST:PORT, or the port alone"),
        ("a:b:c", "'a:b:c' is not PORT, HOST:PORT or [IPv6]:PORT"),
        ("host:99999", "port '99999' is not a number from 1 to 65535"),
    ],
)
def test_an_sdk_uri_without_its_port_or_brackets_says_what_to_write(raw: str, fix: str) -> None:
    with pytest.raises(ValueError, match=r"\S") as caught:
        normalise_sdk_uri(raw)
    assert fix in str(caught.value)


def test_invalid_sdk_uri_is_a_config_problem(env: dict[str, str], tmp_path: Path) -> None:
    env["COPILOT_SDK_URI"] = "ftp://x:1"
    problem = _only_problem(env, tmp_path)
    assert problem.startswith("COPILOT_SDK_URI is invalid:")


def test_sdk_uri_is_normalised_in_the_config(env: dict[str, str], tmp_path: Path) -> None:
    env["COPILOT_SDK_URI"] = "http://localhost:4321/"
    assert load_config(env, cwd=tmp_path).sdk_uri == "localhost:4321"


@given(st.text())
def test_normalise_sdk_uri_returns_host_port_or_raises_value_error(raw: str) -> None:
    try:
        result = normalise_sdk_uri(raw)
    except ValueError:
        return
    host, sep, port = result.rpartition(":")
    assert sep == ":"
    assert host
    assert port.isascii()
    assert port.isdigit()
    assert 1 <= int(port) <= 65535


@given(st.text())
def test_an_sdk_uri_refusal_is_one_bounded_line(raw: str) -> None:
    try:
        normalise_sdk_uri(raw)
    except ValueError as error:
        said = str(error)
    else:
        return
    assert len(said) <= 300
    assert "\n" not in said


@given(st.integers(min_value=1, max_value=65535))
def test_normalise_sdk_uri_bare_port_means_ipv4_loopback(port: int) -> None:
    assert normalise_sdk_uri(str(port)) == f"127.0.0.1:{port}"
    assert normalise_sdk_uri(f"http://example.org:{port}/") == f"example.org:{port}"


# -- GITHUB_WORKSPACE -----------------------------------------------------------------


def test_workspace_absolute(env: dict[str, str], tmp_path: Path) -> None:
    workspace = tmp_path / "checkout"
    workspace.mkdir()
    env["GITHUB_WORKSPACE"] = str(workspace)
    assert load_config(env, cwd=tmp_path / "elsewhere").working_directory == workspace.resolve()


def test_workspace_relative_is_resolved_against_cwd(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    env["GITHUB_WORKSPACE"] = "a/./b/.."
    config = load_config(env, cwd=tmp_path)
    assert config.working_directory == (tmp_path / "a").resolve()
    assert config.working_directory.is_absolute()


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_workspace_that_is_not_a_directory(
    env: dict[str, str], tmp_path: Path, prompt_file: Path, kind: str
) -> None:
    env["GITHUB_WORKSPACE"] = str(tmp_path / "missing") if kind == "missing" else str(prompt_file)
    problem = _only_problem(env, tmp_path)
    assert problem.startswith("GITHUB_WORKSPACE is not a directory")


@pytest.mark.parametrize("value", [None, "", "  "])
def test_workspace_unset_uses_cwd(env: dict[str, str], tmp_path: Path, value: str | None) -> None:
    if value is not None:
        env["GITHUB_WORKSPACE"] = value
    assert load_config(env, cwd=tmp_path).working_directory == tmp_path


def test_workspace_unset_and_no_cwd_uses_the_process_cwd(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_config(env).working_directory.resolve() == tmp_path.resolve()


# -- provider -------------------------------------------------------------------------


def test_no_provider_variables_means_no_provider(env: dict[str, str], tmp_path: Path) -> None:
    assert load_config(env, cwd=tmp_path).provider is None


def test_provider_base_url_only_defaults_to_openai(env: dict[str, str], tmp_path: Path) -> None:
    env["COPILOT_PROVIDER_BASE_URL"] = "http://127.0.0.1:8080/v1"
    provider = load_config(env, cwd=tmp_path).provider
    assert provider == ProviderConfig(base_url="http://127.0.0.1:8080/v1", type="openai")
    assert provider.wire_api is None
    assert provider.api_key is None
    assert provider.to_sdk() == {"type": "openai", "base_url": "http://127.0.0.1:8080/v1"}


def test_provider_full(env: dict[str, str], tmp_path: Path) -> None:
    env.update(
        {
            "COPILOT_PROVIDER_BASE_URL": "https://models.example/v1",
            "COPILOT_PROVIDER_TYPE": "Azure",
            "COPILOT_PROVIDER_WIRE_API": "RESPONSES",
            "COPILOT_PROVIDER_API_KEY": API_KEY,
        }
    )
    config = load_config(env, cwd=tmp_path)
    assert config.provider is not None
    assert config.provider.to_sdk() == {
        "type": "azure",
        "base_url": "https://models.example/v1",
        "wire_api": "responses",
        "api_key": API_KEY,
    }
    assert API_KEY in config.secrets
    assert TOKEN in config.secrets
    for shown in (repr(config), str(config), repr(config.provider)):
        assert TOKEN not in shown
        assert API_KEY not in shown


def test_repr_does_not_contain_the_prompt_or_secrets(env: dict[str, str], tmp_path: Path) -> None:
    config = load_config(env, cwd=tmp_path)
    assert TOKEN not in repr(config)
    assert "Say hello." not in repr(config)
    assert "gpt-4.1" in repr(config)


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        ({"COPILOT_PROVIDER_TYPE": "bedrock"}, "COPILOT_PROVIDER_TYPE"),
        ({"COPILOT_PROVIDER_WIRE_API": "grpc"}, "COPILOT_PROVIDER_WIRE_API"),
    ],
)
def test_provider_invalid_type_or_wire_api(
    env: dict[str, str], tmp_path: Path, extra: dict[str, str], fragment: str
) -> None:
    env["COPILOT_PROVIDER_BASE_URL"] = "http://127.0.0.1:8080"
    env.update(extra)
    problem = _only_problem(env, tmp_path)
    assert fragment in problem


@pytest.mark.parametrize("url", ["ftp://x", "127.0.0.1:8080", "http://", "https:// space"])
def test_provider_non_http_base_url(env: dict[str, str], tmp_path: Path, url: str) -> None:
    env["COPILOT_PROVIDER_BASE_URL"] = url
    problem = _only_problem(env, tmp_path)
    assert "COPILOT_PROVIDER_BASE_URL" in problem


@pytest.mark.parametrize(
    ("url", "fix"),
    [
        ("api.openai.com/v1", "it has no scheme: write https://api.openai.com/v1"),
        ("localhost:8080/v1", "it has no scheme: write http://localhost:8080/v1"),
        ("127.0.0.1:8080", "it has no scheme: write http://127.0.0.1:8080"),
        ("ftp://x", "write it as https://HOST/PATH, e.g. https://api.openai.com/v1"),
        ("/v1", "write it as https://HOST/PATH, e.g. https://api.openai.com/v1"),
    ],
)
def test_provider_base_url_without_a_scheme_suggests_one(
    env: dict[str, str], tmp_path: Path, url: str, fix: str
) -> None:
    env["COPILOT_PROVIDER_BASE_URL"] = url
    problem = _only_problem(env, tmp_path)
    assert problem.endswith(fix)


def test_provider_base_url_suggestion_never_echoes_the_key(
    env: dict[str, str], tmp_path: Path
) -> None:
    env["COPILOT_PROVIDER_BASE_URL"] = f"models.example/v1?key={API_KEY}"
    env["COPILOT_PROVIDER_API_KEY"] = API_KEY
    problem = _only_problem(env, tmp_path)
    assert "write https://models.example/v1?key=" in problem
    assert API_KEY not in problem


@pytest.mark.parametrize(
    "extra",
    [
        {"COPILOT_PROVIDER_TYPE": "openai"},
        {"COPILOT_PROVIDER_API_KEY": API_KEY},
        {"COPILOT_PROVIDER_WIRE_API": "completions"},
    ],
)
def test_provider_settings_without_base_url(
    env: dict[str, str], tmp_path: Path, extra: dict[str, str]
) -> None:
    env.update(extra)
    problem = _only_problem(env, tmp_path)
    assert "without COPILOT_PROVIDER_BASE_URL" in problem
    assert next(iter(extra)) in problem
    assert API_KEY not in problem


def test_provider_problem_is_reported_with_the_others(tmp_path: Path) -> None:
    problems = _problems({"COPILOT_PROVIDER_TYPE": "openai"}, tmp_path)
    assert len(problems) == len(REQUIRED) + 1
    assert any("COPILOT_PROVIDER_BASE_URL" in problem for problem in problems)


def test_provider_to_sdk_omits_unset_fields() -> None:
    assert ProviderConfig(base_url="http://x").to_sdk() == {
        "type": "openai",
        "base_url": "http://x",
    }
    assert ProviderConfig(base_url="http://x", api_key="k").to_sdk()["api_key"] == "k"
    assert "api_key" not in repr(ProviderConfig(base_url="http://x", api_key="k"))


# -- GH_AW_SESSION_STATE_BASE_DIR -----------------------------------------------------


def test_session_state_base_dir_default(env: dict[str, str], tmp_path: Path) -> None:
    base = load_config(env, cwd=tmp_path).session_state_base_dir
    assert base.as_posix().endswith("gh-aw/sandbox/agent/logs/copilot-session-state")
    assert base == Path(tempfile.gettempdir()) / "gh-aw/sandbox/agent/logs/copilot-session-state"


def test_session_state_base_dir_follows_tmpdir(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    base = load_config(env, cwd=tmp_path).session_state_base_dir
    assert base == tmp_path / "tmp/gh-aw/sandbox/agent/logs/copilot-session-state"


def test_session_state_base_dir_override(env: dict[str, str], tmp_path: Path) -> None:
    env["GH_AW_SESSION_STATE_BASE_DIR"] = str(tmp_path / "state")
    assert load_config(env, cwd=tmp_path).session_state_base_dir == tmp_path / "state"


def test_session_state_base_dir_relative_is_under_cwd(env: dict[str, str], tmp_path: Path) -> None:
    env["GH_AW_SESSION_STATE_BASE_DIR"] = "state"
    assert load_config(env, cwd=tmp_path).session_state_base_dir == tmp_path / "state"


# -- COPILOT_DRIVER_LOG_FORMAT --------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "json"),
        ("", "json"),
        ("json", "json"),
        ("text", "text"),
        ("TEXT", "text"),
        (" json ", "json"),
    ],
)
def test_log_format_valid(
    env: dict[str, str], tmp_path: Path, value: str | None, expected: str
) -> None:
    if value is not None:
        env["COPILOT_DRIVER_LOG_FORMAT"] = value
    config = load_config(env, cwd=tmp_path)
    assert config.log_format == expected
    assert config.notices == ()


@pytest.mark.parametrize("value", ["yaml", "logfmt", " "])
def test_log_format_invalid_falls_back_to_json(
    env: dict[str, str], tmp_path: Path, value: str
) -> None:
    env["COPILOT_DRIVER_LOG_FORMAT"] = value
    config = load_config(env, cwd=tmp_path)
    assert config.log_format == "json"
    (notice,) = config.notices
    assert "COPILOT_DRIVER_LOG_FORMAT" in notice


def test_notices_accumulate_in_order(env: dict[str, str], tmp_path: Path) -> None:
    env.update(
        {
            "COPILOT_SDK_SEND_TIMEOUT_MS": "soon",
            "COPILOT_SDK_LOG_LEVEL": "loud",
            "COPILOT_DRIVER_LOG_FORMAT": "xml",
        }
    )
    notices = load_config(env, cwd=tmp_path).notices
    assert [notice.split("=")[0] for notice in notices] == [
        "COPILOT_SDK_SEND_TIMEOUT_MS",
        "COPILOT_SDK_LOG_LEVEL",
        "COPILOT_DRIVER_LOG_FORMAT",
    ]


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (
            '["--allow-tool", "shell(ls)"',
            "is not valid JSON: line 1 column 29: expected `,` or a closing bracket, "
            "found the end of the text",
        ),
        (
            "['--allow-tool', 'shell(ls)']",
            "is not valid JSON: line 1 column 2: expected a value, found `'`; JSON strings "
            "take double quotes, not single quotes",
        ),
        (
            '["--allow-tool", "shell(ls)",]',
            "is not valid JSON: line 1 column 30: expected a value, found `]`; it has a "
            "trailing comma before `]`: remove that comma",
        ),
        ('{"allowedTools": ["shell(ls)"]}', "is an object, not a JSON array of strings"),
        ('["--allow-tool", 7]', "is not a JSON array of strings: element 2 is a number"),
        ('["--allow-tool", null]', "is not a JSON array of strings: element 2 is null"),
        ('["--allow-tool", ["ls"]]', "is not a JSON array of strings: element 2 is an array"),
        ('["--allow-tool"]', "ends with --allow-tool, which needs a value"),
        ("42", "is a number, not a JSON array of strings"),
    ],
)
def test_unreadable_server_args_are_a_configuration_error(
    env: dict[str, str], tmp_path: Path, raw: str, why: str
) -> None:
    """Spec 1.0.3 fail-closed inputs: set but unreadable is never "no configuration"
    (which approves everything), even beside an explicit policy."""
    env["GH_AW_COPILOT_SDK_SERVER_ARGS"] = raw
    with pytest.raises(ConfigError) as caught:
        load_config(env, cwd=tmp_path)
    (problem,) = caught.value.problems
    assert problem.startswith(f"GH_AW_COPILOT_SDK_SERVER_ARGS {why}"), problem
    assert "e.g. " in problem
    env["GH_AW_COPILOT_SDK_PERMISSIONS"] = '{"allowedTools": ["shell(ls)"]}'
    with pytest.raises(ConfigError):
        load_config(env, cwd=tmp_path)


def test_an_unreadable_server_args_error_never_echoes_the_value(
    env: dict[str, str], tmp_path: Path
) -> None:
    env["GH_AW_COPILOT_SDK_SERVER_ARGS"] = f"['--allow-tool', '{env['COPILOT_CONNECTION_TOKEN']}']"
    with pytest.raises(ConfigError) as caught:
        load_config(env, cwd=tmp_path)
    assert env["COPILOT_CONNECTION_TOKEN"] not in str(caught.value)


@pytest.mark.parametrize("raw", ["", "  ", '["--headless"]'])
def test_server_args_without_allow_flags_are_no_configuration(
    env: dict[str, str], tmp_path: Path, raw: str
) -> None:
    env["GH_AW_COPILOT_SDK_SERVER_ARGS"] = raw
    config = load_config(env, cwd=tmp_path)
    assert config.notices == ()
    assert config.permissions.source == "none"


def test_deny_flags_are_read_in_every_mode(env: dict[str, str], tmp_path: Path) -> None:
    env["GH_AW_COPILOT_SDK_SERVER_ARGS"] = json.dumps(
        ["--allow-all-tools", "--deny-tool", "shell(rm)", "--deny-tool=write"]
    )
    permissions = load_config(env, cwd=tmp_path).permissions
    assert permissions.mode == "allow-all"
    assert permissions.denied_tools == ("shell(rm)", "write")


@pytest.mark.parametrize("variable", ["COPILOT_SDK_SEND_TIMEOUT_MS", "GH_AW_MAX_TOOL_DENIALS"])
@pytest.mark.parametrize(("raw", "value"), [("00042", 42), (" 007 ", 7)])
def test_leading_zeros_are_read_as_the_whole_number(
    env: dict[str, str], tmp_path: Path, variable: str, raw: str, value: int
) -> None:
    env[variable] = raw
    config = load_config(env, cwd=tmp_path)
    read = config.send_timeout_ms if variable.endswith("_MS") else config.max_tool_denials
    assert read == value
    assert config.notices == ()


@pytest.mark.parametrize("variable", ["COPILOT_SDK_SEND_TIMEOUT_MS", "GH_AW_MAX_TOOL_DENIALS"])
def test_zero_with_leading_zeros_is_still_not_positive(
    env: dict[str, str], tmp_path: Path, variable: str
) -> None:
    env[variable] = "000"
    (notice,) = load_config(env, cwd=tmp_path).notices
    assert notice.startswith(f"{variable}='000'")


# -- gh-aw's routing effort ---------------------------------------------------------------


def test_the_routing_effort_applies_only_when_routing_is_on() -> None:
    notices: list[str] = []
    on = {"GH_AW_MODEL_ROUTING": "1"}
    assert parse_routing_effort({**on, "GH_AW_COPILOT_ROUTING_EFFORT": "High"}, notices) == "high"
    assert parse_routing_effort({"GH_AW_COPILOT_ROUTING_EFFORT": "high"}, notices) is None
    assert parse_routing_effort(on, notices) is None
    assert notices == []
    assert parse_routing_effort({**on, "GH_AW_COPILOT_ROUTING_EFFORT": "minimal"}, notices) is None
    assert notices == [
        "GH_AW_COPILOT_ROUTING_EFFORT='minimal' is not one of low, medium, high, xhigh, max; "
        "using the model's default effort"
    ]


def test_the_ready_fd_is_read_when_the_harness_sets_it(env: dict[str, str], tmp_path: Path) -> None:
    assert load_config(env, cwd=tmp_path).sdk_ready_fd is None
    read_end, write_end = os.pipe()
    try:
        ready = {**env, "COPILOT_SDK_READY_FD": f" {read_end} "}
        assert load_config(ready, cwd=tmp_path).sdk_ready_fd == read_end
        folder = os.open(tmp_path, os.O_RDONLY)
        (problem,) = _problems({**env, "COPILOT_SDK_READY_FD": str(folder)}, tmp_path)
        os.close(folder)
        assert "not an open pipe" in problem
    finally:
        os.close(read_end)
        os.close(write_end)


@pytest.mark.parametrize("raw", ["x", "2", "-3", "³", "1e3", "99999999", "1000"])
def test_a_ready_fd_that_is_not_a_descriptor_is_refused(
    env: dict[str, str], tmp_path: Path, raw: str
) -> None:
    (problem,) = _problems({**env, "COPILOT_SDK_READY_FD": raw}, tmp_path)
    assert problem.startswith("COPILOT_SDK_READY_FD is ")
    assert "only the harness sets it" in problem


# -- issue 27: a secret in the wrong variable, a key in the provider URL -------------------

SECRET_SHAPED = (
    "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5",  # a GitHub token: 40 characters
    "sk-proj-Zq8Lm2Xv7Rt4Kp9Wd3Fh6Jn1Bc5Gs0Ty",  # an API key the redactor knows nothing of
    "Xk9fQ2mZ7LpR4tW8vB3nC6dH1jS5uY0e",  # no prefix: long and high-entropy
)


def _shows_at_most_a_prefix(text: str, secret: str) -> None:
    assert secret[4:] not in text
    assert secret[4:12] not in text


@pytest.mark.parametrize("secret", SECRET_SHAPED)
@pytest.mark.parametrize("variable", ["GH_AW_PROMPT", "COPILOT_SDK_URI", "COPILOT_MODEL"])
def test_a_secret_in_the_wrong_variable_is_refused_without_echoing_it(
    env: dict[str, str], tmp_path: Path, variable: str, secret: str
) -> None:
    env[variable] = secret
    if variable == "COPILOT_MODEL" and not secret.startswith(("ghp_", "sk-")):
        return  # a model name is not guessed at: only a token's prefix refuses one
    problem = _only_problem(env, tmp_path)
    assert problem.startswith(variable)
    _shows_at_most_a_prefix(problem, secret)


@pytest.mark.parametrize("secret", SECRET_SHAPED)
def test_a_secret_as_the_send_timeout_is_noticed_without_echoing_it(
    env: dict[str, str], tmp_path: Path, secret: str
) -> None:
    env["COPILOT_SDK_SEND_TIMEOUT_MS"] = secret
    (notice,) = load_config(env, cwd=tmp_path).notices
    assert notice.startswith("COPILOT_SDK_SEND_TIMEOUT_MS=")
    _shows_at_most_a_prefix(notice, secret)


def test_a_token_shaped_value_shows_its_first_4_characters_and_its_length(
    env: dict[str, str], tmp_path: Path
) -> None:
    env["COPILOT_SDK_SEND_TIMEOUT_MS"] = SECRET_SHAPED[1]
    (notice,) = load_config(env, cwd=tmp_path).notices
    assert "'sk-p… (40 characters)'" in notice


def test_a_long_value_shows_its_first_8_characters_and_its_length(
    env: dict[str, str], tmp_path: Path
) -> None:
    env["COPILOT_SDK_URI"] = "not-a-sidecar-address-" * 3
    problem = _only_problem(env, tmp_path)
    assert "not-a-si… (66 characters)" in problem
    assert "sidecar-address" not in problem


@pytest.mark.parametrize("model", ["ghp_x", "gho_abc", "github_pat_11AB", "sk-ant-api03-x"])
def test_a_token_shaped_model_is_refused_with_the_fix(
    env: dict[str, str], tmp_path: Path, model: str
) -> None:
    env["COPILOT_MODEL"] = model
    problem = _only_problem(env, tmp_path)
    assert problem.startswith(
        "COPILOT_MODEL looks like a token, not a model name: set it to a model such as gpt-5"
    )


def test_a_model_name_that_merely_starts_like_a_word_is_kept(
    env: dict[str, str], tmp_path: Path
) -> None:
    env["COPILOT_MODEL"] = "skywork-o1"
    assert load_config(env, cwd=tmp_path).model == "skywork-o1"


PROVIDER_KEY_IN_URL = "Kp9Wd3Fh6Jn1Bc5Gs0Ty"


def test_the_userinfo_of_the_provider_url_is_masked_and_a_secret(
    env: dict[str, str], tmp_path: Path
) -> None:
    env["COPILOT_PROVIDER_BASE_URL"] = f"https://user:{PROVIDER_KEY_IN_URL}@models.example:8443/v1"
    config = load_config(env, cwd=tmp_path)
    assert config.provider is not None
    assert config.provider.base_url == env["COPILOT_PROVIDER_BASE_URL"]  # the SDK gets it whole
    assert config.provider.shown_url == "https://***@models.example:8443/v1"
    assert PROVIDER_KEY_IN_URL in config.secrets
    assert PROVIDER_KEY_IN_URL not in repr(config)


@pytest.mark.parametrize(
    "base_url",
    [f"user:{PROVIDER_KEY_IN_URL}@models.example/v1", f"ftp://u:{PROVIDER_KEY_IN_URL}@h"],
)
def test_a_refused_provider_url_never_echoes_its_userinfo(
    env: dict[str, str], tmp_path: Path, base_url: str
) -> None:
    env["COPILOT_PROVIDER_BASE_URL"] = base_url
    problem = _only_problem(env, tmp_path)
    assert "COPILOT_PROVIDER_BASE_URL is not an http(s) URL" in problem
    assert PROVIDER_KEY_IN_URL not in problem
    assert "***@" in problem


@pytest.mark.parametrize(
    "uri", [f"http://u:{PROVIDER_KEY_IN_URL}@127.0.0.1:3002", f"u:{PROVIDER_KEY_IN_URL}@h:3002"]
)
def test_credentials_in_the_sdk_uri_are_refused_masked(
    env: dict[str, str], tmp_path: Path, uri: str
) -> None:
    env["COPILOT_SDK_URI"] = uri
    problem = _only_problem(env, tmp_path)
    assert "credentials are not allowed" in problem
    assert PROVIDER_KEY_IN_URL not in problem


# -- COPILOT_DRIVER_SDK_LOADING ---------------------------------------------------------


def test_sdk_loading_is_auto_by_default(env: dict[str, str], tmp_path: Path) -> None:
    config = load_config(env, cwd=tmp_path)
    assert config.sdk_loading == "auto"
    assert config.notices == ()


@pytest.mark.parametrize(("value", "expected"), [("eager", "eager"), (" Auto ", "auto")])
def test_sdk_loading_reads_its_two_choices(
    env: dict[str, str], tmp_path: Path, value: str, expected: str
) -> None:
    env["COPILOT_DRIVER_SDK_LOADING"] = value
    config = load_config(env, cwd=tmp_path)
    assert config.sdk_loading == expected
    assert config.notices == ()


@pytest.mark.parametrize("value", ["off", "lazy", "1", "disabled"])
def test_an_unreadable_sdk_loading_is_eager_with_a_notice(
    env: dict[str, str], tmp_path: Path, value: str
) -> None:
    env["COPILOT_DRIVER_SDK_LOADING"] = value
    config = load_config(env, cwd=tmp_path)
    assert config.sdk_loading == "eager"
    (notice,) = config.notices
    assert notice == f"COPILOT_DRIVER_SDK_LOADING={value!r} is not auto or eager; using eager"
