"""`sdk_loading.namespace` and `finder`: the synthetic SDK imported lazily through the
real import hook behaves as its eager import does, building each definition (and only
what it needs) on first lookup, from every path a lookup can take."""

from __future__ import annotations

import importlib
import json
import pickle
import random
import sys
import threading
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copilot_driver.sdk_loading import install_cache
from copilot_driver.sdk_loading.namespace import LazyModule, LazyNamespace, Pending
from helpers.synthetic_sdk import (
    PUBLIC_MODULES,
    RPC,
    build_cache,
    describe_all,
    isolated_sdk_import,
    run_child,
    write_synthetic_sdk,
)

IMPORTED_BY_RPC = {
    # generated/rpc.py's own imports, and what it imports from session_events
    "Any",
    "Callable",
    "ClassVar",
    "Enum",
    "Protocol",
    "TYPE_CHECKING",
    "TypeVar",
    "annotations",
    "cast",
    "dataclass",
    "field",
    "AbortReason",
    "Attachment",
    "PermissionDecisionSource",
    "SessionEvent",
    "_load_Attachment",
    # copilot/rpc.py's `from .generated.rpc import X as Y`, at import time
    "BuiltinToolInputSchemaType",
}

PAYLOADS: list[tuple[str, dict[str, Any]]] = [
    ("AbortRequest", {"reason": "user"}),
    ("AbortRequest", {}),
    ("AbortResult", {"success": False, "error": "no"}),
    ("ModelInfo", {"id": "m", "limits": {"maxPromptTokens": 8, "maxOutputTokens": 2}}),
    ("ModeSetRequest", {"sessionId": "s", "mode": "plan", "value": [1]}),
    (
        "ModeSetRequest",
        {"sessionId": "s", "attachments": [{"type": "blob", "data": "x"}, {"type": "file"}]},
    ),
    ("ModeSetRequest", {"sessionId": "s", "attachments": [{"type": "file", "path": "p"}]}),
    ("ModeSetResult", {"mode": "autopilot", "source": "rule"}),
]


def _names(module: object) -> set[str]:
    """The non-dunder names built in a module's namespace."""
    return {name for name in vars(module) if not name.startswith("__")}


def _rpc() -> Any:
    return importlib.import_module("copilot.generated.rpc")


def _round_trips() -> list[object]:
    """Each payload read by `from_dict` and written back by `to_dict` (or the failure)."""
    rpc = importlib.import_module("copilot.rpc")
    found: list[object] = []
    for name, payload in PAYLOADS:
        try:
            found.append(getattr(rpc, name).from_dict(payload).to_dict())
        except Exception as error:
            found.append(type(error).__name__)
    return found


@pytest.mark.usefixtures("lazy_sdk")
class TestALazyImport:
    def test_the_modules_are_lazy_and_only_import_time_names_are_built(self) -> None:
        copilot: Any = importlib.import_module("copilot")
        assert copilot.rpc.__name__ == "copilot.rpc"
        for name in ("copilot.generated.rpc", "copilot.generated.session_events", *PUBLIC_MODULES):
            assert isinstance(sys.modules[name], LazyModule), name
            assert isinstance(vars(sys.modules[name]), LazyNamespace)
        assert _names(_rpc()) == IMPORTED_BY_RPC
        assert _names(copilot.rpc) == {
            "PermissionDecisionSource",
            "UIElicitationSchemaType",
            "_generated_all",
        }
        assert _names(copilot.session_events) == set()
        events = sys.modules["copilot.generated.session_events"]
        assert copilot.session_events.__all__ == events.__all__

    def test_the_module_attributes_are_those_of_a_module(self, sdk_dir: Path) -> None:
        rpc = _rpc()
        assert rpc.__name__ == "copilot.generated.rpc"
        assert rpc.__file__ == str(sdk_dir / "generated" / "rpc.py")
        assert rpc.__spec__.name == "copilot.generated.rpc"
        assert rpc.__package__ == "copilot.generated"
        assert rpc.__doc__.startswith("\nAUTO-GENERATED FILE")
        assert rpc.__builtins__ is not None
        assert str(importlib.import_module("copilot.rpc").__doc__).startswith("Public re-export")

    def test_an_attribute_builds_its_statement_and_what_that_needs_only(self) -> None:
        rpc = _rpc()
        extended = rpc.ModelInfoExtended
        assert {"ModelInfoExtended", "ModelInfo"} <= _names(rpc)
        assert "ModelLimits" not in _names(rpc)  # an annotation: read only by get_type_hints
        assert extended.__mro__[1] is rpc.ModelInfo
        request = rpc.ModeSetRequest
        assert {"SessionMode", "UNSET_SENTINEL"} <= _names(rpc)
        assert request(session_id="s").value is rpc.UNSET_SENTINEL
        assert request(session_id="s").mode is rpc.SessionMode.INTERACTIVE

    def test_from_import_and_the_re_exports_are_the_same_objects(self) -> None:
        imported: dict[str, Any] = {}
        exec(  # noqa: S102 - the import under test (a static one would be the real SDK's)
            "from copilot.rpc import AbortOutcome, ModeSetRequest, UIElicitationSchemaType\n"
            "from copilot.session_events import Attachment, SessionEvent",
            imported,
        )
        rpc = _rpc()
        assert imported["ModeSetRequest"] is rpc.ModeSetRequest
        assert imported["AbortOutcome"] is rpc.AbortResult
        assert imported["UIElicitationSchemaType"] is rpc.BuiltinToolInputSchemaType
        public = importlib.import_module("copilot.rpc")
        events = importlib.import_module("copilot.generated.session_events")
        assert public.PermissionDecisionSource is events.PermissionDecisionSource
        for name in set(public.__all__) - {"UIElicitationSchemaType"}:
            source = rpc if hasattr(rpc, name) else events
            assert getattr(public, name) is getattr(source, name), name
        assert imported["SessionEvent"] is events.SessionEvent
        assert imported["Attachment"] == events.AttachmentFile | events.AttachmentBlob

    def test_a_star_import_of_a_lazy_module_brings_every_public_name(self) -> None:
        namespace: dict[str, Any] = {}
        exec("from copilot.rpc import *", namespace)  # noqa: S102 - the import under test
        public = importlib.import_module("copilot.rpc")
        assert set(namespace) - {"__builtins__"} == set(public.__all__)
        assert namespace["ModelInfo"] is _rpc().ModelInfo

    def test_a_functions_global_lookup_builds_the_class_it_names(self) -> None:
        rpc = _rpc()
        rpc_from_dict = rpc.rpc_from_dict
        assert "ModeSetRequest" not in _names(rpc)
        request = rpc_from_dict({"sessionId": "s", "attachments": [{"type": "blob", "data": "d"}]})
        assert "ModeSetRequest" in _names(rpc)
        assert type(request) is rpc.ModeSetRequest
        assert request.attachments[0].mime_type == "application/octet-stream"
        assert rpc.rpc_to_dict(request)["mode"] == "interactive"

    def test_builtins_still_resolve_and_are_not_copied_in(self) -> None:
        rpc = _rpc()
        assert rpc.from_int(3.0) == 3
        with pytest.raises(RuntimeError, match="exploded: now"):
            rpc.explode("now")
        assert "isinstance" not in vars(rpc)
        assert "RuntimeError" not in vars(rpc)

    def test_get_type_hints_resolves_names_not_built_yet(self) -> None:
        rpc = _rpc()
        hints = typing.get_type_hints(rpc.ModelInfo)
        assert hints["limits"] is rpc.ModelLimits
        assert hints["tags"] == list[str]
        assert typing.get_type_hints(rpc.ModeSetResult)["mode"] is rpc.SessionMode
        assert typing.get_type_hints(rpc.rpc_from_dict)["return"] is rpc.ModeSetRequest
        api_hints = typing.get_type_hints(rpc.SessionModeApi.set)
        assert api_hints["return"] is rpc.ModeSetResult

    def test_dir_lists_every_name_built_or_not(self) -> None:
        rpc = _rpc()
        listed = dir(rpc)
        assert listed == sorted(listed)
        assert set(rpc.__all__) <= set(listed)
        assert {"from_str", "UNSET_SENTINEL", "_timeout_kwargs", "__name__"} <= set(listed)
        assert "ModelLimits" not in vars(rpc)  # listing builds nothing
        public = importlib.import_module("copilot.rpc")
        assert set(public.__all__) <= set(dir(public))

    def test_a_missing_attribute_names_the_module(self) -> None:
        rpc = _rpc()
        with pytest.raises(AttributeError, match=r"module 'copilot.generated.rpc' has no attr"):
            _ = rpc.NoSuchName
        assert not hasattr(rpc, "isinstance")  # a builtin is not a module attribute
        assert getattr(rpc, "NoSuchName", 7) == 7
        with pytest.raises(ImportError, match="NoSuchName"):
            exec("from copilot.rpc import NoSuchName", {})  # noqa: S102 - the import under test

    def test_pickle_round_trips_instances_and_enum_members(self) -> None:
        rpc = _rpc()
        request = rpc.ModeSetRequest.from_dict(
            {
                "sessionId": "s",
                "mode": "plan",
                "attachments": [{"type": "file", "path": "p"}],
                "value": 1,
            }
        )
        copy = pickle.loads(pickle.dumps(request))  # noqa: S301 - our own bytes
        assert copy == request
        assert type(copy) is rpc.ModeSetRequest
        assert pickle.loads(pickle.dumps(rpc.SessionMode.PLAN)) is rpc.SessionMode.PLAN  # noqa: S301
        assert pickle.loads(pickle.dumps(rpc.ModelInfo)) is rpc.ModelInfo  # noqa: S301

    def test_classes_and_functions_know_their_module_and_qualname(self) -> None:
        rpc = _rpc()
        for value in (rpc.ModeSetRequest, rpc.SessionMode, rpc.ProviderTokenHandler, rpc.explode):
            assert value.__module__ == "copilot.generated.rpc"
            assert value.__qualname__ == value.__name__
        assert rpc.SessionModeApi.set.__qualname__ == "SessionModeApi.set"
        assert rpc.ModeSetRequest.from_dict.__module__ == "copilot.generated.rpc"
        assert rpc.ProviderTokenHandler._is_protocol

    def test_the_repr_says_the_module_is_lazy(self, sdk_dir: Path) -> None:
        assert repr(_rpc()) == (
            f"<module 'copilot.generated.rpc' from '{sdk_dir / 'generated' / 'rpc.py'}' "
            "(definitions built on first use)>"
        )

    def test_threads_looking_up_the_same_names_get_the_same_objects(self) -> None:
        public = importlib.import_module("copilot.rpc")
        events = importlib.import_module("copilot.session_events")
        names = [(public, name) for name in public.__all__]
        names += [(events, name) for name in events.__all__]
        barrier = threading.Barrier(8)
        results: list[dict[tuple[object, str], int]] = [{} for _ in range(8)]
        errors: list[BaseException] = []

        def look_up(index: int) -> None:
            order = list(names)
            random.Random(index).shuffle(order)
            try:
                barrier.wait()
                for module, name in order:
                    results[index][module, name] = id(getattr(module, name))
            except BaseException as error:
                errors.append(error)

        threads = [threading.Thread(target=look_up, args=(index,)) for index in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert errors == []
        expected = {(module, name): id(getattr(module, name)) for module, name in names}
        assert all(found == expected for found in results)


@pytest.fixture(scope="module")
def eager_description(sdk_dir: Path) -> tuple[dict[str, str], list[object]]:
    """Every public name described, and the payloads' round trips, imported eagerly."""
    with isolated_sdk_import(sdk_dir):
        assert "copilot" not in sys.modules
        described = describe_all()
        assert type(sys.modules["copilot.generated.rpc"]).__name__ == "module"
        return described, _round_trips()


def _lookups() -> list[tuple[str, str]]:
    from copilot_driver.sdk_loading.splitter import exported_names
    from helpers.synthetic_sdk import RPC, SESSION_EVENTS

    rpc_names = (*exported_names(RPC, "rpc.py"), "PermissionDecisionSource")
    rpc_names += ("UIElicitationSchemaType",)
    events_names = exported_names(SESSION_EVENTS, "session_events.py")
    return [("copilot.rpc", name) for name in rpc_names] + [
        ("copilot.session_events", name) for name in events_names
    ]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(order=st.permutations(_lookups()), functions_first=st.booleans())
def test_any_lookup_order_describes_every_name_as_the_eager_import_does(
    sdk_dir: Path,
    cache_file: Path,
    eager_description: tuple[dict[str, str], list[object]],
    order: list[tuple[str, str]],
    functions_first: bool,
) -> None:
    """Names built by attribute lookups in any order, or first by the generated
    functions' own global lookups (`from_dict`), describe the same."""
    with isolated_sdk_import(sdk_dir):
        install_cache(cache_file, sdk_dir)
        round_trips = _round_trips() if functions_first else []
        described = describe_all(order)
        assert isinstance(sys.modules["copilot.generated.rpc"], LazyModule)
        if not functions_first:
            round_trips = _round_trips()
    assert (described, round_trips) == eager_description


def test_a_fresh_lazy_interpreter_matches_a_fresh_eager_one(
    sdk_dir: Path, cache_file: Path
) -> None:
    """Each import in a process of its own: no state shared with this one."""
    code = f"""
import importlib, json, random, sys
from pathlib import Path
if sys.argv[-1] == "lazy":
    from copilot_driver.sdk_loading import install_cache
    install_cache(Path({str(cache_file)!r}), Path({str(sdk_dir)!r}))
from helpers.synthetic_sdk import describe_all
import copilot
order = [(m, n) for m in ("copilot.rpc", "copilot.session_events")
         for n in importlib.import_module(m).__all__]
random.Random(3).shuffle(order)
payloads = json.loads({json.dumps(PAYLOADS)!r})
rpc = importlib.import_module("copilot.rpc")
trips = [getattr(rpc, name).from_dict(payload).to_dict() for name, payload in payloads
         if "attachments" not in payload or all("path" in a or "data" in a
                                                for a in payload["attachments"])]
print(json.dumps({{
    "kind": type(sys.modules["copilot.generated.rpc"]).__name__,
    "described": describe_all(order),
    "trips": trips,
}}))
"""
    outputs = {}
    for mode in ("eager", "lazy"):
        done = run_child(code.replace("sys.argv[-1]", repr(mode)), sdk_dir)
        assert done.returncode == 0, done.stderr
        outputs[mode] = json.loads(done.stdout)
    assert outputs["eager"]["kind"] == "module"
    assert outputs["lazy"]["kind"] == "LazyModule"
    assert outputs["lazy"]["described"] == outputs["eager"]["described"]
    assert outputs["lazy"]["trips"] == outputs["eager"]["trips"]
    assert len(outputs["eager"]["trips"]) == len(PAYLOADS) - 1


def test_a_namespace_without_the_name_raises_key_error() -> None:
    namespace = LazyNamespace([Pending(0, ("A",), (), b"")])
    with pytest.raises(KeyError):
        namespace["B"]
    assert namespace.get("A") is None  # `get` sees only what is built
    assert "A" not in namespace
    assert namespace.unbuilt() == ["A"]


def test_two_threads_importing_the_sdk_at_once_do_not_deadlock(tmp_path: Path) -> None:
    """Thread 1 imports `copilot` (so `generated.rpc`, which imports `session_events`),
    thread 2 `copilot.generated.session_events`, while thread 1 is inside rpc's imports.
    An eager import finishes; the lazy one hung when `exec_module` held BUILD_LOCK:
    thread 2 held session_events' import lock waiting for BUILD_LOCK, thread 1 held
    BUILD_LOCK waiting for session_events' import lock."""
    rpc = RPC.replace(
        "from .session_events import", "import _slow_import\nfrom .session_events import"
    )
    sdk_dir = write_synthetic_sdk(tmp_path, {"generated/rpc.py": rpc})
    (tmp_path / "_slow_import.py").write_text("import time\ntime.sleep(0.3)\n", encoding="utf-8")
    cache = build_cache(sdk_dir, tmp_path / "cache")
    code = f"""
import importlib, os, sys, threading, time
from pathlib import Path
from copilot_driver.sdk_loading import install_cache
install_cache(Path({str(cache)!r}), Path({str(sdk_dir)!r}))

def first():
    import copilot

def second():
    while "_slow_import" not in sys.modules:
        time.sleep(0.001)
    importlib.import_module("copilot.generated.session_events")

threads = [threading.Thread(target=run, daemon=True) for run in (first, second)]
for thread in threads:
    thread.start()
deadline = time.monotonic() + 8
for thread in threads:
    thread.join(max(0, deadline - time.monotonic()))
hung = any(thread.is_alive() for thread in threads)
print("hung" if hung else type(sys.modules["copilot.rpc"].ModeSetRequest).__name__, flush=True)
os._exit(0)
"""
    done = run_child(code, sdk_dir)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "type"
