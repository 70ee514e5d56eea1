"""The harness's command line (`harness.cli`): its options read whole, every problem
kept; its synopsis made from the parser, and the docs' synopses equal to it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from copilot_driver.harness.cli import (
    PROG,
    Options,
    build_parser,
    read_options,
    synopsis,
    synopsis_items,
    with_prompt,
)

ROOT = Path(__file__).resolve().parents[3]
ERROR = f"[{PROG}] error: "


def harness(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "copilot_driver.harness", *args],
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd or ROOT)},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


# -- the prompt file -------------------------------------------------------------------------


def test_no_prompt_file_leaves_the_environment_as_it_is() -> None:
    env = {"GH_AW_PROMPT": "elsewhere.md"}
    assert with_prompt(env, None) is env


def test_the_prompt_file_becomes_an_absolute_gh_aw_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    env = with_prompt({"GH_AW_PROMPT": "elsewhere.md", "HOME": "/home/u"}, "prompt.md")
    assert env == {"GH_AW_PROMPT": str(tmp_path / "prompt.md"), "HOME": "/home/u"}


# -- the options, read whole ---------------------------------------------------------------


def read(*args: str) -> tuple[Options, list[str]]:
    parsed, unknown = build_parser().parse_known_args(list(args))
    options = read_options(parsed, unknown)
    return options, options.problems


def test_good_options_are_read_with_no_problem() -> None:
    options, problems = read(
        "--port",
        "8123",
        "--ready-timeout",
        "2.5",
        "--retries",
        "0",
        "--retry-delay",
        "1",
        "--sandbox",
        "off",
        "--allow-domain",
        "pypi.org",
        "--allow-domain",
        "[::1]:8080",
        "--pass-env",
        "NPM_TOKEN",
        "--pass-env",
        "NPM_TOKEN",
        "task.md",
    )
    assert problems == []
    assert vars(options) == {
        "prompt": "task.md",
        "copilot": None,
        "port": 8123,
        "ready_timeout": 2.5,
        "retries": 0,
        "retry_delay": 1.0,
        "sandbox": "off",
        "allow_domains": ("pypi.org", "[::1]:8080"),
        "pass_env": ("NPM_TOKEN",),
        "problems": [],
    }


def test_every_bad_option_is_a_problem_of_its_own_and_none_hides_another() -> None:
    options, problems = read(
        "--port",
        "65536",
        "--ready-timeout",
        "0",
        "--retries",
        "-1",
        "--retry-delay",
        "soon",
        "--sandbox",
        "on",
        "--allow-domain",
        "*.pypi.org",
        "--allow-domain",
        "pypi.org",
        "--pass-env",
        "$TOKEN",
        "a.md",
        "b.md",
        "--verbose",
    )
    assert [problem.split(" ", 1)[0] for problem in problems] == [
        "unexpected",
        "unknown",
        "--port",
        "--ready-timeout",
        "--retries",
        "--retry-delay",
        "--sandbox",
        "--allow-domain",
        "--pass-env",
    ]
    assert problems[0].startswith("unexpected argument 'b.md': give one PROMPT_FILE at most")
    assert problems[1] == f"unknown option --verbose: `{PROG} --help` lists the options"
    assert "--sandbox workspace" in problems[6]
    assert problems[7].endswith(
        "--allow-domain pypi.org (it allows pypi.org and every name "
        "under it; no rule allows the subdomains alone)"
    )
    # The good values stay, the bad ones fall back: the run never starts with them anyway.
    assert options.allow_domains == ("pypi.org",)
    assert options.sandbox == "workspace"


# -- one error form ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--port"],
            f"{ERROR}argument --port: expected one argument (`{PROG} --help` lists the options)",
        ),
        (
            ["prompt.md", "--"],
            f"{ERROR}no driver command after `--`: give one (`{PROG} prompt.md -- python3 "
            "driver.py`), or leave `--` out to run this package's driver",
        ),
    ],
)
def test_a_usage_error_is_one_line_in_the_shared_form_and_exit_2(
    args: list[str], line: str, tmp_path: Path
) -> None:
    completed = harness(*args, cwd=tmp_path)
    assert completed.returncode == 2
    assert completed.stderr == line + "\n"
    assert completed.stdout == ""


# -- the synopsis, from the parser ----------------------------------------------------------


def test_the_synopsis_lists_everything_the_parser_takes() -> None:
    parser = build_parser()
    items = " ".join(synopsis_items(parser))
    for action in parser._actions:
        if action.dest in ("help", "version"):
            continue
        shown = action.option_strings[-1] if action.option_strings else action.metavar
        assert f"[{shown}" in items, shown
    for wanted in ("PROMPT_FILE", "--port", "--ready-timeout", "--retry-delay", "-- DRIVER"):
        assert wanted in items
    assert synopsis(parser).endswith(f"\n{PROG} --help | --version")


def test_help_starts_with_the_synopsis(tmp_path: Path) -> None:
    completed = harness("--help", cwd=tmp_path)
    assert completed.returncode == 0
    usage = synopsis(build_parser(), margin=len("usage: "))
    assert completed.stdout.startswith(f"usage: {usage}\n")


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_docs_synopsis_is_the_parsers() -> None:
    """docs/harness.md shows the synopsis as --help wraps it; the README's runs in its
    text: both say what the parser takes, nothing more or less."""
    docs = (ROOT / "docs" / "harness.md").read_text()
    block = re.search(r"```sh\n(copilot-driver-harness \[.*?)```", docs, re.DOTALL)
    assert block is not None
    assert block.group(1) == synopsis(build_parser()) + "\n"
    readme = (ROOT / "README.md").read_text()
    inline = re.search(r"`(copilot-driver-harness \[[^`]*)`", readme)
    assert inline is not None
    assert _flat(inline.group(1)) == _flat(f"{PROG} " + " ".join(synopsis_items(build_parser())))
