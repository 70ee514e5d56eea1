"""The bash oracle, shared by the oracle tests: stubs only, or the machine's real programs."""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot_driver.testing.argv_printer import ArgvPrinter, ArgvPrinterUnavailableError
from copilot_driver.testing.bash_oracle import BashOracle, OracleUnavailableError
from copilot_driver.testing.fixtures import missing_component
from helpers import adjacency
from helpers.awk_syntax import AWKS
from helpers.bash_syntax import PAYLOADS, PROGRAMS
from helpers.shell_corpus import make_workspace

REAL_PROGRAMS = (
    *("git", "sed", "grep", "find", "tar", "cat", "wc", "head", "ls", "touch"),
    *("sort", "zip", "rsync", "scp", "make"),
    *AWKS,
)
"""Run for real by `real_oracle`: what they do with their options is observed too, and
a `touch` payload leaves its marker file (rsync and scp reach no host: ssh stays a stub).
AWKS: `awk` and every other awk implementation installed (gawk, mawk, original-awk)."""


def _oracle(
    folder: Path,
    programs: tuple[str, ...] = (),
    real: tuple[str, ...] = (),
    template: Path | None = None,
) -> BashOracle:
    try:
        return BashOracle(folder, programs, real=real, template=template)
    except OracleUnavailableError as error:
        missing_component("the bash oracle (strace)", error)


@pytest.fixture(scope="session")
def workspace_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_workspace(tmp_path_factory.mktemp("oracle-workspace") / "workspace")


@pytest.fixture(scope="session")
def stub_oracle(tmp_path_factory: pytest.TempPathFactory) -> BashOracle:
    """Every program is an inert stub: what bash itself does is all there is to see."""
    return _oracle(tmp_path_factory.mktemp("stub-oracle"), programs=PROGRAMS + PAYLOADS)


@pytest.fixture(scope="session")
def adjacency_oracle(tmp_path_factory: pytest.TempPathFactory) -> BashOracle:
    """The strace oracle with stubs for the adjacency generator's programs."""
    return _oracle(
        tmp_path_factory.mktemp("adjacency-oracle"),
        programs=adjacency.PROGRAMS + adjacency.DENIED,
    )


@pytest.fixture(scope="session")
def argv_printer(tmp_path_factory: pytest.TempPathFactory) -> ArgvPrinter:
    """bash with argv printers for the adjacency generator's programs (see argv_printer)."""
    statuses = {**adjacency.STATUSES, **dict.fromkeys(adjacency.DENIED, 0)}
    try:
        return ArgvPrinter(tmp_path_factory.mktemp("argv-printer"), statuses)
    except ArgvPrinterUnavailableError as error:
        missing_component("bash and dash (the argv printers)", error)


@pytest.fixture(scope="session")
def real_oracle(tmp_path_factory: pytest.TempPathFactory, workspace_template: Path) -> BashOracle:
    """git, sed, tar, find, ... for real, in a copy of the shared workspace."""
    return _oracle(
        tmp_path_factory.mktemp("real-oracle"), real=REAL_PROGRAMS, template=workspace_template
    )
