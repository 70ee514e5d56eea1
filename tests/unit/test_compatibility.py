"""The tested Copilot CLI version lives in one Python constant, equal to the Makefile's pin."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.version import Version

from copilot_driver import compatibility
from copilot_driver.compatibility import (
    RECOMMENDED_CLI_VERSION,
    TESTED_CLI_VERSIONS,
    TESTED_SDK_VERSIONS,
    untested_versions,
)

MAKEFILE = Path(__file__).resolve().parents[2] / "Makefile"


def makefile_cli_version() -> str:
    found = re.search(r"^COPILOT_CLI_VERSION\s*:?=\s*(\S+)\s*$", MAKEFILE.read_text(), re.M)
    assert found is not None, "the Makefile no longer sets COPILOT_CLI_VERSION"
    return found.group(1)


def test_the_makefile_provisions_the_recommended_version() -> None:
    assert makefile_cli_version() == RECOMMENDED_CLI_VERSION


def test_the_recommended_version_is_a_tested_one() -> None:
    assert RECOMMENDED_CLI_VERSION in TESTED_CLI_VERSIONS
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", version) for version in TESTED_CLI_VERSIONS)


# -- the tested SDK versions, and the one home of both lists -------------------------------

ROOT = MAKEFILE.parent


def _makefile_value(name: str) -> str:
    found = re.search(rf"^{name}\s*:?=\s*(\S+)\s*$", MAKEFILE.read_text(), re.M)
    assert found is not None, f"the Makefile no longer sets {name}"
    return found.group(1)


def _sdk_requirement() -> Requirement:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (sdk,) = [
        Requirement(text)
        for text in project["dependencies"]
        if Requirement(text).name == "github-copilot-sdk"
    ]
    return sdk


def test_the_sdk_requirement_spans_the_tested_versions_up_to_the_next_minor() -> None:
    specifier = _sdk_requirement().specifier
    oldest, newest = Version(TESTED_SDK_VERSIONS[0]), Version(TESTED_SDK_VERSIONS[-1])
    assert sorted(TESTED_SDK_VERSIONS, key=Version) == list(TESTED_SDK_VERSIONS)
    assert str(specifier) == f"<{newest.major}.{newest.minor + 1},>={oldest}"
    assert all(specifier.contains(version) for version in TESTED_SDK_VERSIONS)


def test_the_makefile_installs_the_newest_tested_sdk() -> None:
    assert _makefile_value("COPILOT_SDK_VERSION") == TESTED_SDK_VERSIONS[-1]


def test_the_action_installs_the_recommended_cli_by_default() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["inputs"]["copilot-version"]["default"] == RECOMMENDED_CLI_VERSION


# -- the decision: untested_versions (pure) ---------------------------------------------------

CLI, SDK = TESTED_CLI_VERSIONS[-1], TESTED_SDK_VERSIONS[-1]


def test_tested_versions_are_no_warning() -> None:
    for cli in TESTED_CLI_VERSIONS:
        for sdk in TESTED_SDK_VERSIONS:
            assert untested_versions(cli, sdk) is None


def test_an_untested_cli_is_a_warning_with_the_fields_and_the_fix() -> None:
    found = untested_versions("9.9.9", SDK)

    assert found is not None
    assert found.fields() == {
        "cliVersion": "9.9.9",
        "testedCliVersions": list(TESTED_CLI_VERSIONS),
        "sdkVersion": SDK,
        "testedSdkVersions": list(TESTED_SDK_VERSIONS),
    }
    assert found.message() == (
        "the Copilot CLI sidecar is 9.9.9, a version this driver was not tested with "
        f"(tested: {', '.join(TESTED_CLI_VERSIONS)}); if the run misbehaves, run the "
        f"Copilot CLI {RECOMMENDED_CLI_VERSION}; the run goes on"
    )


def test_an_untested_sdk_is_a_warning_naming_the_pip_install() -> None:
    found = untested_versions(CLI, "1.0.0")

    assert found is not None
    assert (found.cli_untested, found.sdk_untested) == (False, True)
    assert found.message().startswith("github-copilot-sdk 1.0.0 is installed, a version ")
    assert f"pip install 'github-copilot-sdk=={SDK}'" in found.message()


def test_both_untested_are_one_warning_naming_both() -> None:
    found = untested_versions("9.9.9", "1.0.0")

    assert found is not None
    assert (found.cli_untested, found.sdk_untested) == (True, True)
    first, second = found.message().split("; if the run misbehaves")[:2]
    assert "Copilot CLI sidecar is 9.9.9" in first
    assert "github-copilot-sdk 1.0.0" in second


@pytest.mark.parametrize(("cli", "sdk"), [(None, SDK), (CLI, None), (None, None)])
def test_an_unknown_version_is_never_called_untested(cli: str | None, sdk: str | None) -> None:
    assert untested_versions(cli, sdk) is None
    assert untested_versions(None, None, tested_cli=(), tested_sdk=()) is None


def test_an_unknown_cli_beside_an_untested_sdk_says_so() -> None:
    found = untested_versions(None, "1.0.0")

    assert found is not None
    assert found.fields()["cliVersion"] is None
    assert "Copilot CLI" not in found.message()


def test_versions_are_compared_exactly_after_trimming() -> None:
    assert untested_versions(f" {CLI}\n", SDK) is None
    assert untested_versions(f"{CLI}-1", SDK) is not None  # a prerelease is another version
    assert untested_versions(f"v{CLI}", SDK) is not None


def test_an_empty_tested_list_still_reads_as_a_sentence() -> None:
    found = untested_versions(CLI, SDK, tested_cli=())

    assert found is not None
    assert found.message() == (
        f"the Copilot CLI sidecar is {CLI}, and no version of it is listed as tested; "
        "the run goes on"
    )


def test_the_tested_lists_are_read_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A patched module list is what the driver uses (the e2e wrapper relies on it)."""
    monkeypatch.setattr(compatibility, "TESTED_CLI_VERSIONS", ("0.0.1",))
    found = untested_versions(CLI, SDK)

    assert found is not None
    assert found.tested_cli_versions == ("0.0.1",)
    assert untested_versions(CLI, SDK, tested_cli=(CLI,)) is None


@given(
    cli=st.sampled_from([*TESTED_CLI_VERSIONS, "9.9.9", None]),
    sdk=st.sampled_from([*TESTED_SDK_VERSIONS, "0.0.0", None]),
)
def test_a_warning_exactly_when_a_known_version_is_untested(
    cli: str | None, sdk: str | None
) -> None:
    found = untested_versions(cli, sdk)
    expected = (cli is not None and cli not in TESTED_CLI_VERSIONS) or (
        sdk is not None and sdk not in TESTED_SDK_VERSIONS
    )
    assert (found is not None) == expected
