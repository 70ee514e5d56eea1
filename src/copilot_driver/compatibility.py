"""The Copilot CLI versions this package is tested with; pure, imports nothing.

The Makefile provisions `RECOMMENDED_CLI_VERSION` (its `COPILOT_CLI_VERSION`; a test
keeps the two equal), and error messages name it when they say what to install.

`TESTED_SDK_VERSIONS` are the github-copilot-sdk versions the tests passed on;
pyproject's requirement spans them (a test keeps the two in step). Once connected,
the driver asks `untested_versions` whether the sidecar's CLI or the installed SDK
is outside these lists, and logs one `compatibility` warning if so: never a failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

TESTED_CLI_VERSIONS: tuple[str, ...] = ("1.0.102",)
"""Copilot CLI versions the test suite runs against, oldest first."""

RECOMMENDED_CLI_VERSION = TESTED_CLI_VERSIONS[-1]
"""The version to install: the newest one tested."""

TESTED_SDK_VERSIONS: tuple[str, ...] = (
    "1.0.13",
    "1.0.14",
    "1.0.15",
    "1.0.16",
    "1.0.17",
    "1.0.18",
    "1.0.19",
    "1.0.20",
    "1.0.21",
    "1.0.22",
    "1.0.23",
    "1.0.24",
    "1.0.25",
    "1.0.26",
    "1.0.27",
)
"""github-copilot-sdk versions the tests passed on with the tested CLI, oldest first:
every release from 1.0.13 to 1.0.27 (the driver's e2e tests on each; the whole e2e,
fault and compliance suites on 1.0.13 and 1.0.27). Up to 1.0.11 a session's disconnect
is `session.destroy`, not `session.detach`, and the cleanup fault tests cannot run;
1.0.4 also loses `tool.execution_complete` events. pyproject requires `>=` the oldest
and `<` the next minor version, which would have to be tested again (a test keeps the
two in step)."""

COMPATIBILITY_EVENT = "compatibility"
"""The driver's one warning entry when a version in use is not a tested one."""


@dataclass(frozen=True)
class UntestedVersions:
    """The versions in use, when the CLI's or the SDK's is not a tested one."""

    cli_version: str | None
    """The sidecar's Copilot CLI version (None: it could not be read)."""
    sdk_version: str | None
    tested_cli_versions: tuple[str, ...]
    tested_sdk_versions: tuple[str, ...]

    @property
    def cli_untested(self) -> bool:
        return self.cli_version is not None and self.cli_version not in self.tested_cli_versions

    @property
    def sdk_untested(self) -> bool:
        return self.sdk_version is not None and self.sdk_version not in self.tested_sdk_versions

    def message(self) -> str:
        """One clause per untested part: what is in use, what was tested, what to run."""
        parts = []
        if self.cli_untested:
            parts.append(
                _untested(
                    f"the Copilot CLI sidecar is {self.cli_version}",
                    self.tested_cli_versions,
                    "run the Copilot CLI {}",
                )
            )
        if self.sdk_untested:
            parts.append(
                _untested(
                    f"github-copilot-sdk {self.sdk_version} is installed",
                    self.tested_sdk_versions,
                    "pip install 'github-copilot-sdk=={}'",
                )
            )
        return "; ".join(parts) + "; the run goes on"

    def fields(self) -> dict[str, object]:
        """The log entry's fields."""
        return {
            "cliVersion": self.cli_version,
            "testedCliVersions": list(self.tested_cli_versions),
            "sdkVersion": self.sdk_version,
            "testedSdkVersions": list(self.tested_sdk_versions),
        }


def untested_versions(
    cli_version: str | None,
    sdk_version: str | None,
    *,
    tested_cli: Sequence[str] | None = None,
    tested_sdk: Sequence[str] | None = None,
) -> UntestedVersions | None:
    """None when every known version is a tested one; else what is in use and what was
    tested. An unknown version (None) is never reported as untested. The tested lists
    default to this module's, read at call time."""
    found = UntestedVersions(
        cli_version=cli_version.strip() if cli_version else None,
        sdk_version=sdk_version.strip() if sdk_version else None,
        tested_cli_versions=tuple(TESTED_CLI_VERSIONS if tested_cli is None else tested_cli),
        tested_sdk_versions=tuple(TESTED_SDK_VERSIONS if tested_sdk is None else tested_sdk),
    )
    return found if found.cli_untested or found.sdk_untested else None


def _untested(in_use: str, tested: tuple[str, ...], advice: str) -> str:
    if not tested:
        return f"{in_use}, and no version of it is listed as tested"
    return (
        f"{in_use}, a version this driver was not tested with (tested: {', '.join(tested)}); "
        f"if the run misbehaves, {advice.format(tested[-1])}"
    )
