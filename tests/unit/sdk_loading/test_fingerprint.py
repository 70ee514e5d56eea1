"""The fingerprint of the SDK's public generated modules: the same in every process and
access order, complete, and able to see a real change in the SDK's objects."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import copilot_driver
from copilot_driver.sdk_loading import fingerprint
from copilot_driver.sdk_loading.fingerprint import describe, difference, public_names

# The `src` folder this test runs against, so the children describe with the same code.
_SOURCES = Path(copilot_driver.__file__).resolve().parents[1]

# Measured on github-copilot-sdk 1.0.27: 1,721 of its 1,726 dataclasses with
# from_dict/to_dict round-trip (1,252 on 1.0.13); the rest fail alike in every process.
_ROUND_TRIP_FLOOR = 1000

_DESCRIBE = """
import json, sys
from copilot_driver.sdk_loading.fingerprint import describe
seed = None if sys.argv[1] == "none" else int(sys.argv[1])
with open(sys.argv[2], "w") as output:
    json.dump(describe(order_seed=seed), output)
"""

# Real changes to the SDK's real objects, made before describing.
_CHANGES = """
import dataclasses
import enum
import copilot.generated.rpc as generated
import copilot.session_events as events
# A function's code: from_str now behaves as from_none, so rpc's string fields fail.
generated.from_str.__code__ = generated.from_none.__code__
# An Enum value (the last member: samples use the first).
events.AbortReason.AUTOPILOT_CREDIT_LIMIT._value_ = "changed"
# A dataclass field's default.
dataclasses.fields(generated.PingResult)[0].default = "changed"
# A class built twice, as a faulty lazy loader might: the namespace rpc's annotations are
# evaluated in holds a copy, alike in everything but identity.
generated.AbortReason = enum.Enum(
    "AbortReason",
    [(member.name, member.value) for member in events.AbortReason],
    module=events.AbortReason.__module__,
    qualname="AbortReason",
)
"""


def _child(
    seed: int | None, output: Path, *, hash_seed: int, changes: str = ""
) -> subprocess.Popen[bytes]:
    # These sources first, then whatever this process was given (another SDK to try).
    search_path = [str(_SOURCES), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(search_path),
        "PYTHONHASHSEED": str(hash_seed),
        "COPILOT_SKIP_CLI_DOWNLOAD": "1",
    }
    script = textwrap.dedent(changes) + _DESCRIBE
    argv = [sys.executable, "-c", script, "none" if seed is None else str(seed), str(output)]
    return subprocess.Popen(argv, env=env, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def fingerprints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """Four children at once (each imports the SDK and describes it, ~3 s): two shuffled
    orders under different hash seeds, __all__ order, and __all__ order after real changes."""
    folder = tmp_path_factory.mktemp("fingerprints")
    # name: (order seed, hash seed, changes made first)
    runs: dict[str, tuple[int | None, int, str]] = {
        "shuffled 1": (1, 0, ""),
        "shuffled 2": (12345, 12345, ""),
        "all order": (None, 777, ""),
        "changed": (None, 0, _CHANGES),
    }
    outputs = {name: folder / f"{index}.json" for index, name in enumerate(runs)}
    children = {
        name: _child(seed, outputs[name], hash_seed=hash_seed, changes=changes)
        for name, (seed, hash_seed, changes) in runs.items()
    }
    for name, child in children.items():
        _, stderr = child.communicate(timeout=120)
        assert child.returncode == 0, f"{name}: {stderr.decode()}"
    return {name: json.loads(output.read_text()) for name, output in outputs.items()}


def test_two_processes_with_other_hash_seeds_and_access_orders_agree(
    fingerprints: dict[str, dict[str, str]],
) -> None:
    assert difference(fingerprints["shuffled 1"], fingerprints["shuffled 2"]) == []
    assert fingerprints["shuffled 1"] == fingerprints["shuffled 2"]


def test_a_shuffled_access_order_agrees_with_the_all_order(
    fingerprints: dict[str, dict[str, str]],
) -> None:
    assert difference(fingerprints["all order"], fingerprints["shuffled 1"]) == []


def test_every_public_name_is_described(fingerprints: dict[str, dict[str, str]]) -> None:
    names = public_names()
    assert len(names) > 1500  # both generated modules (1,855 names on 1.0.13), not empty
    assert sorted(fingerprints["all order"]) == sorted(f"{m}:{n}" for m, n in names)


def test_public_names_follow_each_modules_all() -> None:
    for module_name in fingerprint.PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        expected = [(module_name, name) for name in module.__all__]
        assert public_names([module_name]) == expected


def test_most_dataclasses_round_trip(fingerprints: dict[str, dict[str, str]]) -> None:
    descriptions = fingerprints["all order"].values()
    round_trips = sum(text.count("\nround trip: ok ") for text in descriptions)
    assert round_trips >= _ROUND_TRIP_FLOOR


def test_a_description_names_what_it_compares(fingerprints: dict[str, dict[str, str]]) -> None:
    """The parts the eager/lazy proof relies on are really there, spelled stably."""
    request = fingerprints["all order"]["copilot.rpc:AbortRequest"]
    assert "kind: dataclass" in request
    assert "member from_dict: staticmethod of code AbortRequest.from_dict@rpc.py:" in request
    # The hint names the class the public module holds, by identity.
    assert (
        "type hints: {reason: copilot.generated.session_events.AbortReason (public) | None}"
        in request
    )
    assert "round trip: ok " in request
    function = fingerprints["all order"]["copilot.rpc:rpc_from_dict"]
    assert "globals='copilot.generated.rpc'" in function
    assert "return: copilot.generated.rpc.RPC (public)}" in function
    # The sentinel dataclasses default to (public since 1.0.21): named, not addressed.
    sentinel = fingerprints["all order"].get("copilot.rpc:UNSET_SENTINEL")
    if sentinel is not None:
        expected = "value: <builtins.object instance> (is copilot.rpc:UNSET_SENTINEL)"
        assert sentinel.endswith(expected)
    assert " at 0x" not in "".join(fingerprints["all order"].values())


def test_the_fingerprint_sees_real_changes(fingerprints: dict[str, dict[str, str]]) -> None:
    lines = difference(fingerprints["all order"], fingerprints["changed"], limit=10_000)
    by_name = {line.split(" differs: ")[0]: line for line in lines}
    assert "round trip: failed in to_dict AssertionError" in by_name["copilot.rpc:AbortResult"]
    assert "AUTOPILOT_CREDIT_LIMIT='changed'" in by_name["copilot.session_events:AbortReason"]
    assert 'expected "field message: ' in by_name["copilot.rpc:PingResult"]
    assert "default='changed'" in by_name["copilot.rpc:PingResult"]
    copy_hint = by_name["copilot.rpc:AbortRequest"]
    assert "AbortReason (public) | None}" in copy_hint.split(", actual ")[0]
    assert "AbortReason | None}" in copy_hint.split(", actual ")[1]
    assert not any(line.startswith("missing") for line in lines)


# A stand-in for the generated modules, small enough to describe in-process: each kind of
# object they hold, and the standard types a sample is built for.
_STAND_IN = """
from __future__ import annotations

import datetime
import uuid
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol, TypeVar

T = TypeVar("T", bound=int)
SENTINEL = object()
WORDS = frozenset({"delta", "alpha", "charlie", "bravo"})


class Colour(Enum):
    RED = "red"
    BLUE = "blue"
    CRIMSON = "red"


@dataclass
class Stamp:
    at: datetime.datetime
    lasting: datetime.timedelta
    id: uuid.UUID
    colour: Colour
    tags: list[str] = field(default_factory=list)
    extra: Any = SENTINEL

    @staticmethod
    def from_dict(obj: Any) -> Stamp:
        return Stamp(
            datetime.datetime.fromisoformat(obj["at"]),
            datetime.timedelta(seconds=obj["lasting"]),
            uuid.UUID(obj["id"]),
            Colour(obj["colour"]),
            list(obj["tags"]),
            obj.get("extra", SENTINEL),
        )

    def to_dict(self) -> dict[str, Any]:
        result = {
            "at": self.at.isoformat(),
            "lasting": self.lasting.total_seconds(),
            "id": str(self.id),
            "colour": self.colour.value,
            "tags": self.tags,
        }
        if self.extra is not SENTINEL:
            result["extra"] = self.extra
        return result


Stamps = Stamp | list[Stamp]


class Handler(Protocol):
    def handle(self, stamp: Stamp) -> Colour | None: ...


def load(obj: Any) -> Stamp:
    return Stamp.from_dict(obj)


__all__ = ["T", "SENTINEL", "WORDS", "Colour", "Stamp", "Stamps", "Handler", "load"]
"""


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The stand-in's module name, importable for the module's tests (module scope, so
    hypothesis may run a test many times with it)."""
    folder = tmp_path_factory.mktemp("stand_in")
    (folder / "fingerprint_stand_in.py").write_text(_STAND_IN)
    sys.path.insert(0, str(folder))
    try:
        yield "fingerprint_stand_in"
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("fingerprint_stand_in", None)


def test_each_kind_of_object_is_described_stably(stand_in: str) -> None:
    described = describe([stand_in])
    assert list(described) == sorted(f"{stand_in}:{name}" for _, name in public_names([stand_in]))
    assert " at 0x" not in "".join(described.values())
    assert "bound: builtins.int" in described[f"{stand_in}:T"]
    words = "value: frozenset{'alpha', 'bravo', 'charlie', 'delta'}"
    assert words in described[f"{stand_in}:WORDS"]
    colour = described[f"{stand_in}:Colour"]
    assert "enum member RED: 'red'\nenum member BLUE: 'blue'\nenum alias CRIMSON: RED" in colour
    assert "enum pickle RED: identical" in colour
    stamp = described[f"{stand_in}:Stamp"]
    assert f"default=<builtins.object instance> (is {stand_in}:SENTINEL)" in stamp
    assert "default_factory=builtins.list" in stamp
    assert f"colour: {stand_in}.Colour (public)" in stamp
    assert "\nround trip: ok " in stamp
    assert '"at": "2024-01-02T03:04:05+00:00"' in stamp
    assert "kind: protocol" in described[f"{stand_in}:Handler"]
    assert f"return: {stand_in}.Stamp (public)" in described[f"{stand_in}:load"]
    assert "kind: type expression" in described[f"{stand_in}:Stamps"]


@given(order_seed=st.integers())
def test_any_access_order_gives_the_same_descriptions(stand_in: str, order_seed: int) -> None:
    assert describe([stand_in], order_seed=order_seed) == describe([stand_in])


def test_difference_of_equal_fingerprints_is_empty() -> None:
    assert difference({"m:a": "x\ny"}, {"m:a": "x\ny"}) == []


def test_difference_names_missing_and_differing_names() -> None:
    expected = {"m:a": "kind: class\ndoc: 'a'", "m:b": "kind: value", "m:c": "same"}
    actual = {"m:a": "kind: class\ndoc: 'A'", "m:c": "same", "m:d": "new"}
    assert difference(expected, actual) == [
        "missing from actual: m:b",
        "missing from expected: m:d",
        "m:a differs: expected \"doc: 'a'\", actual \"doc: 'A'\"",
    ]


def test_difference_shows_a_description_cut_short() -> None:
    assert difference({"m:a": "one\ntwo"}, {"m:a": "one"}) == [
        "m:a differs: expected 'two', actual '<absent>'"
    ]


def test_difference_shows_at_most_limit_names() -> None:
    expected = {f"m:{index}": "x" for index in range(8)}
    actual = dict.fromkeys(expected, "y")
    lines = difference(expected, actual, limit=3)
    assert lines[:3] == [f"m:{index} differs: expected 'x', actual 'y'" for index in range(3)]
    assert lines[3:] == ["... and 5 more differing names"]


_DESCRIPTIONS = st.dictionaries(st.text(min_size=1), st.text(), min_size=1)


@given(_DESCRIPTIONS, st.data())
def test_difference_finds_any_one_changed_name(
    descriptions: dict[str, str], data: st.DataObject
) -> None:
    assert difference(descriptions, dict(descriptions)) == []
    key = data.draw(st.sampled_from(sorted(descriptions)))
    changed = {**descriptions, key: descriptions[key] + "\nchanged"}
    [line] = difference(descriptions, changed)
    assert line.startswith(f"{key} differs: ")
    removed = {k: v for k, v in descriptions.items() if k != key}
    assert difference(descriptions, removed) == [f"missing from actual: {key}"]
