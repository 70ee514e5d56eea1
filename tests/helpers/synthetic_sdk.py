# ruff: noqa: E501 - the generated sources have long lines, as the real ones do
"""A small stand-in for github-copilot-sdk's package, for the lazy loader's unit tests.

`write_synthetic_sdk(root)` writes `root/copilot/` with the four modules the loader
handles (`cache.SDK_MODULES`) shaped like the real ones: generated modules with
`from __future__ import annotations`, imports, helper functions, `@dataclass`
classes whose `from_dict`/`to_dict` name other classes and helpers, `Enum`s, a
`Protocol`, union aliases, a literal `__all__`; and re-export modules
(`from .generated.rpc import *`, an aliased re-export, `__all__` built from the
generated one). `build_cache` writes the build's split (`sdk_loading.build.split_sdk`)
where `install()` looks, without the build's verification.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import json
import os
import re
import subprocess
import sys
import types
import typing
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from textwrap import dedent

import copilot_driver
from copilot_driver.sdk_loading.build import split_sdk
from copilot_driver.sdk_loading.cache import cache_path, source_hashes, write_cache

SRC = Path(copilot_driver.__file__).resolve().parents[1]
"""The `src` folder of the copilot_driver under test (for a child's PYTHONPATH)."""
TESTS = Path(__file__).resolve().parents[1]

SESSION_EVENTS = dedent(
    '''\
    """
    AUTO-GENERATED FILE - DO NOT EDIT
    Generated from: session-events.schema.json
    """

    from __future__ import annotations

    from collections.abc import Callable
    from dataclasses import dataclass, field
    from enum import Enum
    from typing import Any, ClassVar, TypeVar, cast

    T = TypeVar("T")
    EnumT = TypeVar("EnumT", bound=Enum)


    def from_str(x: Any) -> str:
        assert isinstance(x, str)
        return x


    def from_none(x: Any) -> Any:
        assert x is None
        return x


    def from_union(fs: list[Callable[[Any], T]], x: Any) -> T:
        for f in fs:
            try:
                return f(x)
            except Exception:
                pass
        assert False


    def from_list(f: Callable[[Any], T], x: Any) -> list[T]:
        assert isinstance(x, list)
        return [f(y) for y in x]


    def to_enum(c: type[EnumT], x: Any) -> EnumT:
        assert isinstance(x, c)
        return x.value


    def to_class(c: type[T], x: Any) -> dict:
        assert isinstance(x, c)
        return cast(Any, x).to_dict()


    class AbortReason(Enum):
        """Why the current turn was aborted."""

        USER = "user"
        TIMEOUT = "timeout"


    class PermissionDecisionSource(Enum):
        RULE = "rule"
        USER = "user"


    @dataclass
    class AttachmentFile:
        """A file attached to a message."""

        path: str
        display_name: str | None = None
        type: ClassVar[str] = "file"

        @staticmethod
        def from_dict(obj: Any) -> 'AttachmentFile':
            assert isinstance(obj, dict)
            path = from_str(obj.get("path"))
            display_name = from_union([from_str, from_none], obj.get("displayName"))
            return AttachmentFile(path, display_name)

        def to_dict(self) -> dict:
            result: dict = {"type": self.type, "path": from_str(self.path)}
            if self.display_name is not None:
                result["displayName"] = from_union([from_str, from_none], self.display_name)
            return result


    @dataclass
    class AttachmentBlob:
        data: str
        mime_type: str = "application/octet-stream"
        type: ClassVar[str] = "blob"

        @staticmethod
        def from_dict(obj: Any) -> 'AttachmentBlob':
            assert isinstance(obj, dict)
            data = from_str(obj.get("data"))
            mime_type = from_str(obj.get("mimeType", "application/octet-stream"))
            return AttachmentBlob(data, mime_type)

        def to_dict(self) -> dict:
            return {"type": self.type, "data": from_str(self.data), "mimeType": self.mime_type}


    Attachment = AttachmentFile | AttachmentBlob


    def _load_Attachment(obj: Any) -> "Attachment":
        assert isinstance(obj, dict)
        kind = obj.get("type")
        match kind:
            case "file": return AttachmentFile.from_dict(obj)
            case "blob": return AttachmentBlob.from_dict(obj)
        raise ValueError(f"unknown attachment type {kind!r}")


    @dataclass
    class SessionEvent:
        """One event of a session."""

        id: str
        reason: AbortReason | None = None
        attachments: list[Attachment] = field(default_factory=list)

        @staticmethod
        def from_dict(obj: Any) -> 'SessionEvent':
            assert isinstance(obj, dict)
            id = from_str(obj.get("id"))
            reason = from_union([AbortReason, from_none], obj.get("reason"))
            attachments = from_list(_load_Attachment, obj.get("attachments", []))
            return SessionEvent(id, reason, attachments)

        def to_dict(self) -> dict:
            result: dict = {"id": from_str(self.id)}
            if self.reason is not None:
                result["reason"] = to_enum(AbortReason, self.reason)
            result["attachments"] = [item.to_dict() for item in self.attachments]
            return result


    __all__ = [
        "AbortReason",
        "Attachment",
        "AttachmentBlob",
        "AttachmentFile",
        "PermissionDecisionSource",
        "SessionEvent",
    ]
    '''
)

RPC = dedent(
    '''\
    """
    AUTO-GENERATED FILE - DO NOT EDIT
    Generated from: api.schema.json
    """
    from __future__ import annotations

    from typing import ClassVar, TYPE_CHECKING

    from .session_events import AbortReason, Attachment, PermissionDecisionSource, SessionEvent, _load_Attachment

    if TYPE_CHECKING:
        from .._jsonrpc import JsonRpcClient

    from collections.abc import Callable
    from dataclasses import dataclass, field
    from enum import Enum
    from typing import Any, Protocol, TypeVar, cast

    T = TypeVar("T")
    EnumT = TypeVar("EnumT", bound=Enum)
    UNSET_SENTINEL = object()


    def from_str(x: Any) -> str:
        assert isinstance(x, str)
        return x

    def from_none(x: Any) -> Any:
        assert x is None
        return x

    def from_bool(x: Any) -> bool:
        assert isinstance(x, bool)
        return x

    def from_int(x: Any) -> int:
        assert isinstance(x, (int, float)) and not isinstance(x, bool)
        assert not isinstance(x, float) or x.is_integer()
        return int(x)

    def from_union(fs, x):
        for f in fs:
            try:
                return f(x)
            except Exception:
                pass
        assert False

    def from_list(f: Callable[[Any], T], x: Any) -> list[T]:
        assert isinstance(x, list)
        return [f(y) for y in x]

    def to_class(c: type[T], x: Any) -> dict:
        assert isinstance(x, c)
        return cast(Any, x).to_dict()

    def to_enum(c: type[EnumT], x: Any) -> EnumT:
        assert isinstance(x, c)
        return x.value

    # Experimental: this type is part of an experimental API and may change or be removed.
    @dataclass
    class AbortRequest:
        """Parameters for aborting the current turn"""

        reason: AbortReason | None = None
        """Finite reason code describing why the current turn was aborted"""

        @staticmethod
        def from_dict(obj: Any) -> 'AbortRequest':
            assert isinstance(obj, dict)
            reason = from_union([AbortReason, from_none], obj.get("reason"))
            return AbortRequest(reason)

        def to_dict(self) -> dict:
            result: dict = {}
            if self.reason is not None:
                result["reason"] = from_union([lambda x: to_enum(AbortReason, x), from_none], self.reason)
            return result

    @dataclass
    class AbortResult:
        """Result of aborting the current turn"""

        success: bool
        error: str | None = None

        @staticmethod
        def from_dict(obj: Any) -> 'AbortResult':
            assert isinstance(obj, dict)
            success = from_bool(obj.get("success"))
            error = from_union([from_str, from_none], obj.get("error"))
            return AbortResult(success, error)

        def to_dict(self) -> dict:
            result: dict = {}
            result["success"] = from_bool(self.success)
            if self.error is not None:
                result["error"] = from_union([from_str, from_none], self.error)
            return result

    class SessionMode(Enum):
        """The agent's mode."""

        INTERACTIVE = "interactive"
        PLAN = "plan"
        AUTOPILOT = "autopilot"

    class BuiltinToolInputSchemaType(Enum):
        OBJECT = "object"

    @dataclass
    class ModelLimits:
        max_prompt_tokens: int = 4096
        max_output_tokens: int | None = None

        @staticmethod
        def from_dict(obj: Any) -> 'ModelLimits':
            assert isinstance(obj, dict)
            max_prompt_tokens = from_int(obj.get("maxPromptTokens", 4096))
            max_output_tokens = from_union([from_int, from_none], obj.get("maxOutputTokens"))
            return ModelLimits(max_prompt_tokens, max_output_tokens)

        def to_dict(self) -> dict:
            result: dict = {"maxPromptTokens": from_int(self.max_prompt_tokens)}
            if self.max_output_tokens is not None:
                result["maxOutputTokens"] = from_int(self.max_output_tokens)
            return result

    @dataclass
    class ModelInfo:
        """A model the session can use."""

        id: str
        limits: ModelLimits
        tags: list[str] = field(default_factory=list)
        kind: ClassVar[str] = "model"

        @staticmethod
        def from_dict(obj: Any) -> 'ModelInfo':
            assert isinstance(obj, dict)
            id = from_str(obj.get("id"))
            limits = ModelLimits.from_dict(obj.get("limits"))
            tags = from_list(from_str, obj.get("tags", []))
            return ModelInfo(id, limits, tags)

        def to_dict(self) -> dict:
            return {"id": from_str(self.id), "limits": to_class(ModelLimits, self.limits), "tags": list(self.tags)}

    @dataclass
    class ModelInfoExtended(ModelInfo):
        vendor: str = "unknown"

    @dataclass
    class ModeSetRequest:
        """Switch the session's mode."""

        session_id: str
        mode: SessionMode = SessionMode.INTERACTIVE
        attachments: list[Attachment] | None = None
        value: Any = UNSET_SENTINEL

        @staticmethod
        def from_dict(obj: Any) -> 'ModeSetRequest':
            assert isinstance(obj, dict)
            session_id = from_str(obj.get("sessionId"))
            mode = SessionMode(obj.get("mode", "interactive"))
            attachments = from_union([lambda x: from_list(_load_Attachment, x), from_none], obj.get("attachments"))
            value = obj["value"] if "value" in obj else UNSET_SENTINEL
            return ModeSetRequest(session_id, mode, attachments, value)

        def to_dict(self) -> dict:
            result: dict = {"sessionId": from_str(self.session_id), "mode": to_enum(SessionMode, self.mode)}
            if self.attachments is not None:
                result["attachments"] = [item.to_dict() for item in self.attachments]
            if self.value is not UNSET_SENTINEL:
                result["value"] = self.value
            return result

    @dataclass
    class ModeSetResult:
        mode: SessionMode
        source: PermissionDecisionSource | None = None

        @staticmethod
        def from_dict(obj: Any) -> 'ModeSetResult':
            assert isinstance(obj, dict)
            mode = SessionMode(obj.get("mode"))
            source = from_union([PermissionDecisionSource, from_none], obj.get("source"))
            return ModeSetResult(mode, source)

        def to_dict(self) -> dict:
            result: dict = {"mode": to_enum(SessionMode, self.mode)}
            if self.source is not None:
                result["source"] = to_enum(PermissionDecisionSource, self.source)
            return result

    AnyResult = AbortResult | ModeSetResult

    DEFAULT_MODE = SessionMode.PLAN

    def rpc_from_dict(s: Any) -> ModeSetRequest:
        return ModeSetRequest.from_dict(s)

    def rpc_to_dict(x: ModeSetRequest) -> Any:
        return to_class(ModeSetRequest, x)

    def explode(reason: str) -> None:
        raise RuntimeError(f"exploded: {reason}")

    class SessionModeApi:
        def __init__(self, client: "JsonRpcClient", session_id: str) -> None:
            self._client = client
            self._session_id = session_id

        async def set(self, params: ModeSetRequest, *, timeout: float | None = None, extra: Any = UNSET_SENTINEL) -> ModeSetResult:
            params_dict = {k: v for k, v in params.to_dict().items() if v is not None}
            return ModeSetResult.from_dict(await self._client.request("session.mode.set", params_dict, **_timeout_kwargs(timeout)))

    def _timeout_kwargs(timeout: float | None) -> dict:
        return {} if timeout is None else {"timeout": timeout}

    # Experimental: this API group is experimental and may change or be removed.
    class ProviderTokenHandler(Protocol):
        async def get_token(self, params: AbortRequest) -> AbortResult:
            "Asks the SDK client to get a bearer token."
            pass

    # Backward-compatible public aliases retained across typed-review generation.
    AbortOutcome = AbortResult

    __all__ = [
        "AbortOutcome",
        "AbortRequest",
        "AbortResult",
        "AnyResult",
        "BuiltinToolInputSchemaType",
        "DEFAULT_MODE",
        "ModeSetRequest",
        "ModeSetResult",
        "ModelInfo",
        "ModelInfoExtended",
        "ModelLimits",
        "ProviderTokenHandler",
        "SessionMode",
        "SessionModeApi",
        "explode",
        "rpc_from_dict",
        "rpc_to_dict",
    ]
    '''
)

PUBLIC_RPC = dedent(
    '''\
    """Public re-export of the JSON-RPC request/response types."""

    from .generated.rpc import *  # noqa: F401, F403
    from .generated.rpc import (
        BuiltinToolInputSchemaType as UIElicitationSchemaType,  # noqa: F401
    )
    from .generated.rpc import __all__ as _generated_all
    from .generated.session_events import PermissionDecisionSource

    __all__ = [*_generated_all, "PermissionDecisionSource", "UIElicitationSchemaType"]
    '''
)

PUBLIC_SESSION_EVENTS = dedent(
    '''\
    """Public re-export of the session event types."""

    from .generated.session_events import *  # noqa: F401, F403
    from .generated.session_events import __all__  # noqa: F401
    '''
)

SOURCES: dict[str, str] = {
    "generated/session_events.py": SESSION_EVENTS,
    "generated/rpc.py": RPC,
    "session_events.py": PUBLIC_SESSION_EVENTS,
    "rpc.py": PUBLIC_RPC,
}
"""Each of `cache.SDK_MODULES`'s files, relative to `copilot/`."""

PACKAGE_INIT = (
    '"""A synthetic copilot SDK."""\n\n'
    "from . import rpc as rpc\n"
    "from . import session_events as session_events\n"
)
GENERATED_INIT = '"""Internal: code-generated protocol types."""\n'

PUBLIC_MODULES = ("copilot.rpc", "copilot.session_events")


def write_synthetic_sdk(root: Path, overrides: Mapping[str, str] | None = None) -> Path:
    """`root/copilot/` written (with `overrides` of SOURCES); its folder, resolved."""
    sdk_dir = root.resolve() / "copilot"
    (sdk_dir / "generated").mkdir(parents=True, exist_ok=True)
    (sdk_dir / "__init__.py").write_text(PACKAGE_INIT, encoding="utf-8")
    (sdk_dir / "generated" / "__init__.py").write_text(GENERATED_INIT, encoding="utf-8")
    for relative, source in {**SOURCES, **(overrides or {})}.items():
        (sdk_dir / relative).write_text(source, encoding="utf-8")
    importlib.invalidate_caches()
    return sdk_dir


def build_cache(sdk_dir: Path, cache_dir: Path) -> Path:
    """The cache `install()` looks for, written for the SDK at `sdk_dir`."""
    path = cache_path(cache_dir, sdk_dir, source_hashes(sdk_dir))
    write_cache(path, split_sdk(sdk_dir))
    return path


def run_child(
    code: str, sdk_dir: Path, *flags: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """`code` run by a fresh interpreter that imports `copilot` from `sdk_dir` (and
    `copilot_driver` and `helpers` from the sources under test)."""
    path = os.pathsep.join([str(sdk_dir.parent), str(SRC), str(TESTS)])
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": path,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        **env,
    }
    return subprocess.run(
        [sys.executable, *flags, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=environment,
    )


def _sdk_module_names() -> list[str]:
    return [name for name in sys.modules if name == "copilot" or name.startswith("copilot.")]


@contextmanager
def isolated_sdk_import(sdk_dir: Path) -> Iterator[None]:
    """A `copilot` importable from `sdk_dir` in this process, and afterwards every
    `copilot` module, `sys.path` and `sys.meta_path` as they were before."""
    saved_modules = {name: sys.modules.pop(name) for name in _sdk_module_names()}
    saved_path = list(sys.path)
    saved_meta_path = list(sys.meta_path)
    sys.path.insert(0, str(sdk_dir.parent))
    importlib.invalidate_caches()
    try:
        yield
    finally:
        for name in _sdk_module_names():
            del sys.modules[name]
        sys.modules.update(saved_modules)
        sys.path[:] = saved_path
        sys.meta_path[:] = saved_meta_path
        sys.path_importer_cache.pop(str(sdk_dir.parent), None)
        importlib.invalidate_caches()


_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _plain(text: str) -> str:
    return _ADDRESS.sub(" at 0x?", text)


def describe(module_name: str, name: str) -> str:
    """One public name of a module, described by what it is and does (addresses masked)."""
    module = importlib.import_module(module_name)
    value = getattr(module, name)
    facts: dict[str, object] = {"repr": _plain(repr(value)), "type": repr(type(value))}
    if isinstance(value, type):
        facts["module"] = value.__module__
        facts["qualname"] = value.__qualname__
        facts["mro"] = [f"{base.__module__}.{base.__qualname__}" for base in value.__mro__]
        facts["attributes"] = sorted(vars(value))
        facts["hints"] = _plain(repr(typing.get_type_hints(value)))
        facts["doc"] = value.__doc__
        if dataclasses.is_dataclass(value):
            facts["fields"] = [
                (
                    item.name,
                    str(item.type),
                    _plain(repr(item.default)),
                    _plain(repr(item.default_factory)),
                )
                for item in dataclasses.fields(value)
            ]
        if issubclass(value, enum.Enum):
            facts["members"] = [(member.name, member.value) for member in value]
        facts["protocol"] = bool(getattr(value, "_is_protocol", False))
        facts["source"] = inspect.getsource(value)
    elif isinstance(value, types.FunctionType):
        facts["module"] = value.__module__
        facts["qualname"] = value.__qualname__
        facts["where"] = (value.__code__.co_filename, value.__code__.co_firstlineno)
        facts["signature"] = _plain(str(inspect.signature(value)))
        facts["hints"] = _plain(repr(typing.get_type_hints(value)))
        facts["source"] = inspect.getsource(value)
    return json.dumps(facts, sort_keys=True, default=repr)


def describe_all(order: list[tuple[str, str]] | None = None) -> dict[str, str]:
    """`describe` of every public name of the two public modules, in `order` if given."""
    if order is None:
        order = [
            (module_name, name)
            for module_name in PUBLIC_MODULES
            for name in importlib.import_module(module_name).__all__
        ]
    return {f"{module_name}.{name}": describe(module_name, name) for module_name, name in order}
