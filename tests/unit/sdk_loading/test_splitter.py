"""`sdk_loading.splitter`: what it accepts, what it declines (naming the line and the
reason), and that a lazily built definition keeps its source's file and line numbers."""

from __future__ import annotations

import importlib
import marshal
import traceback
from collections.abc import Callable
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from copilot_driver.sdk_loading import install_cache
from copilot_driver.sdk_loading.build import split_sdk
from copilot_driver.sdk_loading.cache import SDK_MODULES
from copilot_driver.sdk_loading.splitter import (
    SplitDeclinedError,
    exported_names,
    split_module,
)
from helpers.synthetic_sdk import (
    RPC,
    SESSION_EVENTS,
    SOURCES,
    isolated_sdk_import,
)

HEADER = "\n".join(
    [
        "from __future__ import annotations",
        "",
        "from dataclasses import dataclass",
        "from enum import Enum",
        "",
    ]
)
"""Lines 1-4 of every declined source below."""


def _split(source: str, name: str = "copilot.generated.rpc") -> None:
    split_module(name, source, "/sdk/copilot/generated/rpc.py", star_names={})


def _line_of(source: str, text: str) -> int:
    return source.splitlines().index(text) + 1


def test_the_synthetic_sdk_is_accepted(sdk_dir: Path) -> None:
    modules = split_sdk(sdk_dir)
    assert list(modules) == list(SDK_MODULES)
    rpc = modules["copilot.generated.rpc"]
    lazy = {name: item for item in rpc.lazy for name in item.names}
    assert {"AbortRequest", "SessionMode", "ProviderTokenHandler", "AnyResult"} <= set(lazy)
    assert {"from_str", "explode", "UNSET_SENTINEL", "T", "AbortOutcome"} <= set(lazy)
    # What a definition reads while it runs, and only that: not its functions' bodies.
    assert lazy["ModelInfoExtended"].needs == ("ModelInfo",)
    assert lazy["ModeSetRequest"].needs == ("SessionMode", "UNSET_SENTINEL")
    assert lazy["AnyResult"].needs == ("AbortResult", "ModeSetResult")
    assert lazy["AbortRequest"].needs == ()
    assert lazy["SessionModeApi"].needs == ("UNSET_SENTINEL",)
    assert rpc.reexport_from is None
    assert rpc.doc is not None
    assert rpc.doc.strip().startswith("AUTO-GENERATED FILE")
    events = modules["copilot.generated.session_events"]
    events_lazy = {name: item for item in events.lazy for name in item.names}
    assert events_lazy["Attachment"].needs == ("AttachmentBlob", "AttachmentFile")
    public = modules["copilot.rpc"]
    assert public.lazy == ()
    assert public.reexport_from == "copilot.generated.rpc"
    assert public.reexported == exported_names(RPC, "rpc.py")
    assert modules["copilot.session_events"].reexported == exported_names(SESSION_EVENTS, "se.py")


def test_statements_are_sorted_into_eager_and_lazy_in_source_order() -> None:
    source = HEADER + dedent(
        """\
        __all__ = ["A", "f"]

        class A(Enum):
            X = 1

        def f() -> A:
            return A.X
        """
    )
    split = split_module("m.x", source, "x.py", star_names={})
    eager = [marshal.loads(code) for code in split.eager]  # noqa: S302 - our own bytes
    assert [min(line for *_, line in code.co_lines() if line) for code in eager] == [1, 3, 4, 5]
    assert [item.names for item in split.lazy] == [("A",), ("f",)]
    assert [item.needs for item in split.lazy] == [(), ()]


def test_type_checking_imports_are_kept_and_never_run() -> None:
    source = HEADER + "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import nowhere\n"
    split = split_module("m.x", source, "x.py", star_names={})
    namespace: dict[str, Any] = {}
    for code in split.eager:
        exec(marshal.loads(code), namespace)  # noqa: S102, S302 - our own test source
    assert "nowhere" not in namespace


DECLINED = [
    pytest.param(
        HEADER + "\n@register\nclass A:\n    x: int = 0\n",
        "line 7: decorator 'register'",
        id="unknown-decorator",
    ),
    pytest.param(
        HEADER + "import functools\n\n@functools.total_ordering\nclass A:\n    pass\n",
        "line 8: decorator 'functools.total_ordering'",
        id="dotted-decorator",
    ),
    pytest.param(
        HEADER + "\n@dataclass(frozen=True)\nclass A:\n    x: int = 0\n",
        "line 7: decorator 'dataclass(frozen=True)'",
        id="called-decorator",
    ),
    pytest.param(
        HEADER + "\nclass A(Exception):\n    pass\n",
        "line 6: base class 'Exception'",
        id="foreign-base",
    ),
    pytest.param(
        HEADER + "import enum\n\nclass A(enum.IntEnum):\n    X = 1\n",
        "line 7: base class 'enum.IntEnum'",
        id="dotted-base",
    ),
    pytest.param(
        HEADER + "from abc import ABCMeta\n\nclass A(metaclass=ABCMeta):\n    pass\n",
        "line 7: class keywords (metaclass=ABCMeta)",
        id="metaclass",
    ),
    pytest.param(
        HEADER + "X = 0\n\ndef bump() -> None:\n    global X\n    X += 1\n",
        "line 7: a `global` statement",
        id="global",
    ),
    pytest.param(
        HEADER + "X = lambda: [Y for _ in ()]\nY = 1\ndef f():\n    g = lambda: 0\n"
        "    def h():\n        global Y\n",
        "line 7: a `global` statement",
        id="global-nested",
    ),
    pytest.param(
        HEADER + "X = (Y := 3)\n",
        "line 5: an assignment expression (:=) outside a function",
        id="walrus-module",
    ),
    pytest.param(
        HEADER + "\nclass A:\n    x = (y := 1)\n",
        "line 6: an assignment expression (:=) outside a function",
        id="walrus-class",
    ),
    pytest.param(HEADER + "X = 1\nX = 2\n", "line 6: 'X' is bound twice", id="bound-twice"),
    pytest.param(
        HEADER + "def f():\n    pass\n\nclass f:\n    pass\n",
        "line 8: 'f' is bound twice",
        id="def-then-class",
    ),
    pytest.param(
        HEADER + "import json\njson = 1\n", "line 6: 'json' is bound twice", id="import-rebound"
    ),
    pytest.param(
        HEADER + "X = Y\n\nclass Y:\n    pass\n",
        "line 5: reads 'Y' before it is bound",
        id="reads-later-name",
    ),
    pytest.param(
        HEADER + "\n@dataclass\nclass A:\n    x: int = len(B)\n\nB = [1]\n",
        "line 7: reads 'B' before it is bound",
        id="field-default-reads-later-name",
    ),
    pytest.param(
        HEADER + "\nclass A(B):\n    pass\n\nclass B:\n    pass\n",
        "line 6: reads 'B' before it is bound",
        id="base-defined-later",
    ),
    pytest.param(
        HEADER + "list = list\n",
        "line 5: reads 'list' before it is bound",
        id="shadows-a-builtin-it-reads",
    ),
    pytest.param(
        "from dataclasses import dataclass\n\n@dataclass\nclass A:\n    x: int = 0\n",
        "no `from __future__ import annotations`",
        id="no-future-import",
    ),
    pytest.param(
        "from __future__ import annotations\nfrom pydantic.dataclasses import dataclass\n",
        "'dataclass' is not imported from dataclasses",
        id="foreign-dataclass",
    ),
    pytest.param(
        "from __future__ import annotations\nfrom dataclasses import field as dataclass\n",
        "'dataclass' is not imported from dataclasses",
        id="aliased-dataclass",
    ),
    pytest.param(
        "from __future__ import annotations\nfrom aenum import Enum\n",
        "'Enum' is not imported from enum",
        id="foreign-enum",
    ),
    pytest.param(
        "from __future__ import annotations\nfrom typing_extensions import Protocol\n",
        "'Protocol' is not imported from typing",
        id="foreign-protocol",
    ),
    pytest.param(HEADER + 'print("hello")\n', "line 5: a Expr statement", id="call"),
    pytest.param(HEADER + "for i in range(3):\n    pass\n", "line 5: a For statement", id="for"),
    pytest.param(
        HEADER + "try:\n    import json\nexcept ImportError:\n    json = None\n",
        "line 5: a Try statement",
        id="try",
    ),
    pytest.param(HEADER + "X: int = 1\n", "line 5: a AnnAssign statement", id="annotated"),
    pytest.param(HEADER + "A, B = 1, 2\n", "line 5: an assignment to something", id="tuple"),
    pytest.param(HEADER + "X = 1\nX += 1\n", "line 6: a AugAssign statement", id="augmented"),
    pytest.param(HEADER + "if True:\n    import json\n", "line 5: a If statement", id="plain-if"),
    pytest.param(HEADER + "async def f():\n    pass\n", "line 5: a AsyncFunctionDef", id="async"),
    pytest.param(
        HEADER + "from os import *\n", "line 5: `from os import *` is not understood", id="star"
    ),
    pytest.param(
        HEADER + "__all__ = [A.__name__]\n\nclass A:\n    pass\n",
        "line 5: reads 'A' before it is bound",
        id="dunder-reads-later-name",
    ),
    pytest.param(
        HEADER + "class A:\n    pass\n\n__all__ = [A.__name__]\n",
        "line 8: an import-time statement reads a lazy name",
        id="dunder-reads-lazy-name",
    ),
]


@pytest.mark.parametrize(("source", "reason"), DECLINED)
def test_anything_not_understood_is_declined_naming_the_line(source: str, reason: str) -> None:
    compile(source, "x.py", "exec")  # each is valid Python: declined, not a syntax error
    with pytest.raises(SplitDeclinedError) as declined:
        _split(source)
    assert reason in str(declined.value)
    assert str(declined.value).startswith("copilot.generated.rpc")


def test_a_second_star_import_is_declined() -> None:
    source = "from .generated.rpc import *\nfrom .generated.session_events import *\n"
    star_names: dict[str, tuple[str, ...]] = {
        "copilot.generated.rpc": ("A",),
        "copilot.generated.session_events": ("B",),
    }
    with pytest.raises(SplitDeclinedError, match=r"copilot\.rpc line 2: `from copilot"):
        split_module("copilot.rpc", source, "rpc.py", star_names=star_names)


def test_a_star_import_of_a_module_split_later_is_declined() -> None:
    with pytest.raises(SplitDeclinedError, match="is not understood"):
        split_module("copilot.rpc", "from .generated.rpc import *\n", "rpc.py", star_names={})


def test_a_name_rebound_by_an_import_after_the_star_import_is_not_reexported() -> None:
    source = dedent(
        """\
        from .generated.rpc import *
        from .generated.session_events import B
        """
    )
    split = split_module(
        "copilot.rpc", source, "rpc.py", star_names={"copilot.generated.rpc": ("A", "B")}
    )
    assert split.reexported == ("A",)


def test_exported_names_needs_a_literal_all() -> None:
    assert exported_names('__all__ = ["b", "a"]\n', "x.py") == ("b", "a")
    with pytest.raises(SplitDeclinedError, match="no literal `__all__`"):
        exported_names("__all__ = [*other]\n", "x.py")
    with pytest.raises(SplitDeclinedError, match="no literal `__all__`"):
        exported_names("X = 1\n", "x.py")


def test_the_real_sdk_module_docstring_is_kept() -> None:
    split = split_module("m.x", '"""Doc."""\nimport json\n', "x.py", star_names={})
    assert split.doc == "Doc."
    assert len(split.eager) == 1


def _failure(call: Callable[[], object]) -> tuple[str, int, str, str | None]:
    """The innermost frame of what `call` raises: file, line, function, source line."""
    try:
        call()
    except Exception as error:
        frame = traceback.extract_tb(error.__traceback__)[-1]
        return frame.filename, frame.lineno or 0, frame.name, frame.line
    raise AssertionError("it did not raise")


def _failures() -> list[tuple[str, int, str, str | None]]:
    rpc = importlib.import_module("copilot.generated.rpc")
    events = importlib.import_module("copilot.session_events")
    return [
        _failure(lambda: rpc.explode("now")),
        _failure(lambda: rpc.from_str(1)),
        _failure(lambda: rpc.AbortRequest.from_dict(None)),
        _failure(lambda: rpc.ModeSetRequest.from_dict({"sessionId": "s", "mode": "nope"})),
        _failure(lambda: events.SessionEvent.from_dict({"id": "e", "attachments": [{}]})),
    ]


def test_line_numbers_and_file_names_are_the_sources(sdk_dir: Path, cache_file: Path) -> None:
    with isolated_sdk_import(sdk_dir):
        eager = _failures()
    with isolated_sdk_import(sdk_dir):
        install_cache(cache_file, sdk_dir)
        lazy = _failures()
        assert type(importlib.import_module("copilot.generated.rpc")).__name__ == "LazyModule"
    assert lazy == eager
    rpc_file = str(sdk_dir / "generated" / "rpc.py")
    assert lazy[0] == (
        rpc_file,
        _line_of(RPC, '    raise RuntimeError(f"exploded: {reason}")'),
        "explode",
        'raise RuntimeError(f"exploded: {reason}")',
    )
    assert lazy[1][:2] == (rpc_file, _line_of(RPC, "    assert isinstance(x, str)"))
    assert lazy[2][2] == "from_dict"
    events_source = SOURCES["generated/session_events.py"]
    assert lazy[4] == (
        str(sdk_dir / "generated" / "session_events.py"),
        _line_of(events_source, '    raise ValueError(f"unknown attachment type {kind!r}")'),
        "_load_Attachment",
        'raise ValueError(f"unknown attachment type {kind!r}")',
    )
