"""`copilot_driver.report.sandbox`: the harness's `sandbox.json`, written and read back."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.report import (
    SANDBOX_FILE,
    SandboxSummary,
    load_timeline,
    parse_timeline,
    read_sandbox_file,
    sandbox_record,
)
from copilot_driver.report.sandbox import sandbox_from_json
from helpers.report_samples import (
    POLICY_DENIAL_SESSION,
    json_values,
    sandbox_session,
    sandbox_summaries,
)

UNKNOWN = SandboxSummary("unknown")


def _read(tmp_path: Path, content: Any) -> SandboxSummary | None:
    path = tmp_path / SANDBOX_FILE
    text = content if isinstance(content, str) else json.dumps(content)
    path.write_text(text, encoding="utf-8")
    return read_sandbox_file(path)


def test_the_record_is_the_documented_json_object() -> None:
    summary = SandboxSummary(
        mode="workspace",
        allowed_hosts=("127.0.0.1:43121", "githubcopilot.com:443"),
        egress_denied=(("evil.example:443", 7), ("pypi.org:443", 1)),
        passed_env=("NPM_CONFIG_REGISTRY",),
        egress_allowed=(("api.github.com:443", 2), ("api.individual.githubcopilot.com:443", 5)),
    )

    record = sandbox_record(summary)

    assert record == {
        "mode": "workspace",
        "allowedHosts": ["127.0.0.1:43121", "githubcopilot.com:443"],
        "egressAllowed": {"api.individual.githubcopilot.com:443": 5, "api.github.com:443": 2},
        "egressDenied": {"evil.example:443": 7, "pypi.org:443": 1},
        "passedEnv": ["NPM_CONFIG_REGISTRY"],
    }
    assert list(record["egressAllowed"]) == [  # type: ignore[call-overload]
        "api.individual.githubcopilot.com:443",
        "api.github.com:443",
    ]
    assert read_back(summary) == summary
    assert list(json.loads(json.dumps(record))["egressDenied"]) == [
        "evil.example:443",
        "pypi.org:443",
    ]


def read_back(summary: SandboxSummary) -> SandboxSummary:
    return sandbox_from_json(json.loads(json.dumps(sandbox_record(summary))))


def test_a_missing_file_is_none(tmp_path: Path) -> None:
    assert read_sandbox_file(tmp_path / SANDBOX_FILE) is None
    assert read_sandbox_file(tmp_path / "no-folder" / SANDBOX_FILE) is None
    (tmp_path / "a-file").write_text("")
    assert read_sandbox_file(tmp_path / "a-file" / SANDBOX_FILE) is None


def test_a_file_that_cannot_be_read_says_the_mode_is_unknown(tmp_path: Path) -> None:
    (tmp_path / SANDBOX_FILE).mkdir()

    assert read_sandbox_file(tmp_path / SANDBOX_FILE) == UNKNOWN


@pytest.mark.parametrize(
    "content",
    ["", "not json", '{"mode": "off",', "[1, 2]", '"off"', "null", "3", "[" * 100_000],
)
def test_content_that_is_not_an_object_says_the_mode_is_unknown(
    tmp_path: Path, content: str
) -> None:
    assert _read(tmp_path, content) == UNKNOWN


def test_bytes_that_are_not_utf8_are_replaced(tmp_path: Path) -> None:
    path = tmp_path / SANDBOX_FILE
    path.write_bytes(b'{"mode": "workspace", "allowedHosts": ["caf\xe9:443"]}')

    assert read_sandbox_file(path) == SandboxSummary("workspace", ("caf\ufffd:443",))


def test_each_field_of_the_wrong_type_is_ignored_on_its_own(tmp_path: Path) -> None:
    base = {
        "mode": "workspace",
        "allowedHosts": ["a:1"],
        "egressDenied": {"b:2": 3},
        "passedEnv": ["HOME"],
    }
    cases: dict[str, tuple[Any, SandboxSummary]] = {
        "mode": (3, SandboxSummary("unknown", ("a:1",), (("b:2", 3),), ("HOME",))),
        "allowedHosts": ("a:1", SandboxSummary("workspace", (), (("b:2", 3),), ("HOME",))),
        "egressDenied": ([["b:2", 3]], SandboxSummary("workspace", ("a:1",), (), ("HOME",))),
        "passedEnv": ({"HOME": "/root"}, SandboxSummary("workspace", ("a:1",), (("b:2", 3),))),
    }
    for key, (wrong, expected) in cases.items():
        assert _read(tmp_path, {**base, key: wrong}) == expected, key
        missing = {k: v for k, v in base.items() if k != key}
        assert _read(tmp_path, missing) == expected, key


def test_list_items_that_are_not_strings_are_dropped(tmp_path: Path) -> None:
    content = {
        "mode": "off",
        "allowedHosts": ["a:1", 2, None, ["b:2"], {"c": 3}, True, "d:4"],
        "passedEnv": [1, "TERM", None],
    }

    assert _read(tmp_path, content) == SandboxSummary("off", ("a:1", "d:4"), (), ("TERM",))


def test_only_whole_non_negative_counts_are_kept(tmp_path: Path) -> None:
    denied = {
        "zero:1": 0,
        "negative:1": -1,
        "fraction:1": 1.5,
        "float:1": 3.0,
        "boolean:1": True,
        "string:1": "3",
        "null:1": None,
        "huge:1": 2**63,
        "largest:1": 2**63 - 1,
        "nan:1": float("nan"),
        "list:1": [1],
        "ok:1": 4,
    }

    summary = _read(tmp_path, {"mode": "workspace", "egressDenied": denied})

    assert summary is not None
    assert summary.egress_denied == (("largest:1", 2**63 - 1), ("ok:1", 4), ("zero:1", 0))


def test_denied_hosts_are_most_denied_first_then_by_name(tmp_path: Path) -> None:
    denied = {"c:1": 2, "b:1": 9, "a:1": 2, "d:1": 9}

    summary = _read(tmp_path, {"mode": "workspace", "egressDenied": denied})

    assert summary is not None
    assert summary.egress_denied == (("b:1", 9), ("d:1", 9), ("a:1", 2), ("c:1", 2))
    assert summary.denied_connections == 22


def test_extra_keys_and_a_blank_mode(tmp_path: Path) -> None:
    content = {"mode": "  ", "allowedHosts": ["a:1"], "version": 2, "egressUnknown": {"x": 1}}

    assert _read(tmp_path, content) == SandboxSummary("unknown", ("a:1",))


@pytest.mark.parametrize(
    ("allowed", "read"),
    [
        ({"a:443": 3, "b:443": 9}, (("b:443", 9), ("a:443", 3))),
        ({"a:1": True, "b:1": 1.0, "c:1": -1, "d:1": 2**63, "e:1": "2", "f:1": 0}, (("f:1", 0),)),
        (["a:443"], ()),
        ("a:443", ()),
        (None, ()),
    ],
)
def test_egress_allowed_is_read_as_tolerantly_as_the_refusals(
    tmp_path: Path, allowed: object, read: tuple[tuple[str, int], ...]
) -> None:
    summary = _read(tmp_path, {"mode": "workspace", "egressAllowed": allowed})
    assert summary is not None
    assert summary.egress_allowed == read


def test_a_file_from_before_egress_allowed_was_recorded_reads_as_none_reached(
    tmp_path: Path,
) -> None:
    summary = _read(tmp_path, {"mode": "workspace", "egressDenied": {"x:443": 1}})
    assert summary is not None
    assert summary.egress_allowed == ()
    assert summary.allowed_connections == 0


def test_load_timeline_reads_the_sandbox_beside_the_events_file(tmp_path: Path) -> None:
    folder = sandbox_session(tmp_path / "session", {"mode": "off", "passedEnv": ["CI"]})

    expected = SandboxSummary("off", passed_env=("CI",))
    assert load_timeline(folder).sandbox == expected
    assert load_timeline(folder / "events.jsonl").sandbox == expected
    assert load_timeline(POLICY_DENIAL_SESSION).sandbox is None
    assert parse_timeline([]).sandbox is None


@settings(max_examples=200, deadline=None)
@given(sandbox_summaries)
def test_what_is_written_is_read_back(summary: SandboxSummary) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / SANDBOX_FILE
        path.write_text(json.dumps(sandbox_record(summary)), encoding="utf-8")

        assert read_sandbox_file(path) == summary


@settings(max_examples=300, deadline=None)
@given(
    json_values
    | st.dictionaries(
        st.sampled_from(["mode", "allowedHosts", "egressDenied", "passedEnv"]) | st.text(),
        json_values,
    )
)
def test_any_content_is_read_without_raising(value: Any) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / SANDBOX_FILE
        path.write_text(json.dumps(value), encoding="utf-8")

        summary = read_sandbox_file(path)

    assert summary is not None
    assert isinstance(summary.mode, str)
    assert all(isinstance(host, str) for host in summary.allowed_hosts)
    assert all(type(count) is int and count >= 0 for _, count in summary.egress_denied)
    assert all(isinstance(name, str) for name in summary.passed_env)


def test_a_summary_puts_the_most_denied_hosts_first_whatever_it_is_given() -> None:
    summary = SandboxSummary("workspace", egress_denied=(("a:1", 1), ("c:1", 5), ("b:1", 5)))

    assert summary.egress_denied == (("b:1", 5), ("c:1", 5), ("a:1", 1))
    assert summary == SandboxSummary(
        "workspace", egress_denied=(("b:1", 5), ("c:1", 5), ("a:1", 1))
    )
