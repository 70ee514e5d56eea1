"""First contact: the wheel, installed the way a user installs it, runs the demo and the harness.

The wheel is built from this tree (`python -m build --wheel --no-isolation`:
hatchling comes with the `test` extra, so nothing is fetched) and installed
with its `testing` extra into a FRESH virtualenv (not editable, no system
site-packages). The dependencies come from `.cache/wheels/`, which `make
setup` fills once with `pip download` (the wheels `copilot-driver[testing]`
needs): the install is `--no-index`, so the test itself never uses the network.

The Copilot CLI is found as a user's would be: `copilot` on PATH (a temporary
bin folder holding a link to the provisioned binary), never COPILOT_CLI_PATH.
"""

from __future__ import annotations

import email.parser
import email.policy
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import Message
from pathlib import Path

import pytest

from copilot_driver import __version__
from copilot_driver.testing import ScriptedModelServer, harness_environment
from copilot_driver.testing.fixtures import missing_component
from helpers.wheels import WHEELHOUSE, build_wheel

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
REPOSITORY = PYPROJECT["project"]["urls"]["Repository"]
DIST_INFO = f"copilot_driver-{__version__}.dist-info"
ANSWER = "Hello from the wheel."


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This tree's wheel, built without the network."""
    return build_wheel(tmp_path_factory.mktemp("dist"))


def _metadata(wheel: Path) -> Message:
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read(f"{DIST_INFO}/METADATA").decode("utf-8")
    return email.parser.Parser(policy=email.policy.compat32).parsestr(text)


# -- what PyPI shows -------------------------------------------------------------------


def test_the_wheel_declares_its_license_as_an_spdx_expression_and_ships_the_file(
    wheel: Path,
) -> None:
    metadata = _metadata(wheel)
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]
    # PEP 639: the expression replaces license classifiers.
    assert not [c for c in metadata.get_all("Classifier", []) if c.startswith("License ::")]
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read(f"{DIST_INFO}/licenses/LICENSE").decode("utf-8")
    assert shipped == (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Copyright (c) 2026 the copilot-driver authors" in shipped


def test_the_wheel_names_the_project_urls_and_the_supported_pythons(wheel: Path) -> None:
    metadata = _metadata(wheel)
    urls = dict(value.split(", ", 1) for value in metadata.get_all("Project-URL", []))
    assert set(urls) == {"Homepage", "Documentation", "Repository", "Issues"}
    assert all(url.startswith(REPOSITORY) for url in urls.values())
    assert urls["Issues"] == f"{REPOSITORY}/issues"
    classifiers = metadata.get_all("Classifier", [])
    for python in ("3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {python}" in classifiers
    assert "Operating System :: POSIX :: Linux" in classifiers
    assert metadata["Requires-Python"] == ">=3.11"
    assert "github-copilot" in metadata["Keywords"].split(",")


def test_the_long_description_is_the_self_contained_pypi_page(wheel: Path) -> None:
    metadata = _metadata(wheel)
    assert metadata["Description-Content-Type"] == "text/markdown"
    page = (ROOT / "docs" / "pypi.md").read_text(encoding="utf-8")
    description = metadata.get_payload()
    assert isinstance(description, str)
    assert description.strip() == page.strip()
    # PyPI resolves no relative link: every link is absolute, into the one repository home.
    links = re.findall(r"\]\(([^)]+)\)|(https?://\S+)", page)
    targets = [inline or bare for inline, bare in links]
    assert targets, "docs/pypi.md links nothing"
    for target in targets:
        assert target.startswith("https://"), f"relative link in docs/pypi.md: {target}"
        if "github.com" in target:
            assert target.startswith(REPOSITORY), f"{target} is not under {REPOSITORY}"


def test_the_wheel_holds_the_package_and_nothing_of_the_repository(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    tops = {name.split("/", 1)[0] for name in names}
    assert tops == {"copilot_driver", DIST_INFO}
    assert "copilot_driver/py.typed" in names
    assert "copilot_driver/compatibility.py" in names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]


# -- installed from the wheel, run as a user runs it -----------------------------------------


@dataclass
class Installed:
    """A fresh virtualenv holding the wheel, and a PATH whose `copilot` is the real CLI."""

    venv: Path
    path: str
    """`copilot`'s folder, then the virtualenv's bin, then the system's."""

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)


def _pip_environment() -> dict[str, str]:
    """pip with no configuration but its arguments: no index, no extra links."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.pop("PYTHONPATH", None)
    return env


@pytest.fixture(scope="module")
def installed(
    wheel: Path, tmp_path_factory: pytest.TempPathFactory, copilot_cli: Path
) -> Installed:
    if not list(WHEELHOUSE.glob("*.whl")):
        missing_component(
            "the dependency wheels",
            FileNotFoundError(f"no wheels in {WHEELHOUSE}: run `make setup`"),
        )
    root = tmp_path_factory.mktemp("installed")
    venv = root / "venv"
    # The base interpreter: a virtualenv made from this one's, not layered on it.
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    install = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-index",
            "--find-links",
            str(WHEELHOUSE),
            f"{wheel}[testing]",
        ],
        env=_pip_environment(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert install.returncode == 0, (
        f"installing the wheel from {WHEELHOUSE} failed (run `make setup` to download "
        f"the dependency wheels again):\n{install.stdout}{install.stderr}"
    )
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "copilot").symlink_to(copilot_cli)
    return Installed(venv, os.pathsep.join((str(bin_dir), str(venv / "bin"), "/usr/bin:/bin")))


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def _user_environment(installed: Installed, home: Path, cache: Path) -> dict[str, str]:
    """A user's shell: a HOME, a PATH, a cache; no COPILOT_CLI_PATH, no PYTHONPATH."""
    home.mkdir(exist_ok=True)
    return {
        "PATH": installed.path,
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "XDG_CACHE_HOME": str(cache),  # where the CLI unpacked itself once (~235 MB)
    }


@pytest.fixture
def user_env(installed: Installed, tmp_path: Path, copilot_cache_home: Path) -> dict[str, str]:
    return _user_environment(installed, tmp_path / "home", copilot_cache_home)


@pytest.mark.e2e
def test_the_installed_package_is_the_wheel_and_reports_its_version(
    installed: Installed, user_env: dict[str, str], tmp_path: Path
) -> None:
    version = _run([installed.bin("copilot-driver"), "--version"], user_env, tmp_path)
    assert (version.returncode, version.stdout) == (0, f"copilot-driver {__version__}\n")
    where = _run(
        [
            installed.bin("python"),
            "-c",
            "import copilot_driver, importlib.metadata as m; "
            "print(copilot_driver.__file__); print(m.version('copilot-driver'))",
        ],
        user_env,
        tmp_path,
    )
    module, distribution = where.stdout.split()
    assert Path(module).is_relative_to(installed.venv), "not the wheel's copy"
    assert distribution == __version__
    # Not editable, no system site-packages: the source tree is nowhere on its path.
    path = _run([installed.bin("python"), "-c", "import sys; print(sys.path)"], user_env, tmp_path)
    assert str(ROOT / "src") not in path.stdout
    cfg = (installed.venv / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in cfg


@pytest.mark.e2e
def test_the_demo_runs_from_the_wheel_with_copilot_on_path(
    installed: Installed, user_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**user_env, "DEMO_OUTPUT": str(tmp_path / "demo-output")}
    demo = _run([installed.bin("python"), "-m", "copilot_driver.testing.demo"], env, tmp_path)

    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "I asked to delete notes.txt" in demo.stdout
    assert "--- exit status: 0 ---" in demo.stdout
    assert "notes.txt still there: True" in demo.stdout
    assert "permission.denied" in demo.stderr
    # It ends with what to try next: the report on the session it made, and the demo
    # again with the rule the log suggested, each by a path that works pasted into a
    # shell whose PATH lacks the virtualenv's bin.
    session = next((tmp_path / "demo-output" / "session-state").iterdir())
    report_line, allow_line = [
        line.strip()
        for line in demo.stdout.split("--- try next ---", 1)[1].splitlines()
        if line.startswith("    ")
    ][:2]
    assert report_line == (
        f"{installed.bin('copilot-driver-report')} "
        f"demo-output/session-state/{session.name} --format markdown"
    )
    assert allow_line == (
        'DEMO_ALLOW=\'["shell(ls:*)", "read", "shell(rm notes.txt)"]\' '
        f"{installed.bin('python')} -m copilot_driver.testing.demo"
    )
    shell = {**env, "PATH": installed.path.replace(str(installed.venv / "bin"), "/nonexistent")}
    report = _run(["bash", "-c", report_line], shell, tmp_path)
    assert report.returncode == 0, report.stderr
    assert "rm notes.txt" in report.stdout

    again = _run(["bash", "-c", allow_line], {**shell, "DEMO_OUTPUT": "demo-allowed"}, tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "notes.txt still there: False" in again.stdout, "the policy let the rm through"


@pytest.mark.e2e
def test_the_demo_runs_on_a_github_token_and_shows_what_github_was_sent(
    installed: Installed, user_env: dict[str, str], tmp_path: Path
) -> None:
    """`DEMO_AUTH=token make demo`: the path most users take, against the local fake of
    GitHub, with the request sequence a newcomer can read."""
    env = {**user_env, "DEMO_OUTPUT": str(tmp_path / "demo-token"), "DEMO_AUTH": "token"}
    demo = _run([installed.bin("python"), "-m", "copilot_driver.testing.demo"], env, tmp_path)

    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "I asked to delete notes.txt" in demo.stdout
    assert "notes.txt still there: True" in demo.stdout
    sent = demo.stdout.split("--- what the Copilot CLI sent to GitHub", 1)[1]
    assert "GET    https://api.github.com/copilot_internal/user -> 200" in sent
    assert "GET    https://api.individual.githubcopilot.com/models -> 200" in sent
    assert sent.count("POST   https://api.individual.githubcopilot.com/responses -> 200") == 3
    assert "model gpt-5-mini" in demo.stdout
    # The report shows the hosts the sandbox let the run reach.
    assert "api.individual.githubcopilot.com:443" in demo.stdout.split("--- timeline ---", 1)[1]

    wrong = _run(
        [installed.bin("python"), "-m", "copilot_driver.testing.demo"],
        {**env, "DEMO_AUTH": "tokens"},
        tmp_path,
    )
    assert wrong.returncode == 2
    assert wrong.stderr.startswith(
        "[copilot-driver-demo] error: DEMO_AUTH='tokens' is not a choice; give `provider`"
    )


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    from copilot_driver.testing import Reply, Script

    with ScriptedModelServer(Script(default=Reply(text=ANSWER))) as server:
        yield server


@pytest.mark.e2e
def test_the_harness_runs_a_session_from_the_wheel_with_copilot_on_path(
    installed: Installed,
    user_env: dict[str, str],
    model: ScriptedModelServer,
    tmp_path: Path,
    copilot_cache_home: Path,
) -> None:
    prompt = tmp_path / "prompt.md"
    prompt.write_text("say hello\n")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = harness_environment(
        tmp_path / "sidecar-home",
        model_base_url=model.base_url,
        prompt_file=prompt,
        workspace=workspace,
        state_dir=tmp_path / "state",
        cache_home=copilot_cache_home,
    )
    env["PATH"] = user_env["PATH"]
    assert "COPILOT_CLI_PATH" not in env
    harness = installed.bin("copilot-driver-harness")

    run = _run([harness], env, workspace)

    assert run.returncode == 0, run.stderr
    assert run.stdout == f"{ANSWER}\n"
    (session,) = (tmp_path / "state").iterdir()
    assert (session / "result.json").is_file()
    # The CLI it ran was the one on PATH: without that folder there is none to find.
    no_copilot = {**env, "PATH": os.pathsep.join(user_env["PATH"].split(os.pathsep)[1:])}
    assert shutil.which("copilot", path=no_copilot["PATH"]) is None
    missing = _run([harness], no_copilot, workspace)
    assert missing.returncode == 2, missing.stderr
    assert "no Copilot CLI" in missing.stderr
