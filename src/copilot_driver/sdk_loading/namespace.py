"""A module namespace that builds each definition on its first lookup.

`LazyNamespace` is the module's `__dict__` and the globals of everything it runs.
A lookup of a name not built yet reaches `__missing__` (a dict subclass's hook),
which runs the statement binding it, after the statements it needs, under one
lock for every lazy module (a statement's needs may be in another module only
through its imports, which ran at import time, so one lock cannot deadlock with
another). The paths that reach `__missing__`:

- `module.X` and `from module import X`: `LazyModule.__getattr__`;
- a function's global names (`LOAD_GLOBAL` indexes a non-exact dict), so a
  generated `from_dict` finds the classes it names; a builtin name also misses
  into Python here and falls back to the builtins, a few hundred nanoseconds;
- `typing.get_type_hints`, which evaluates string annotations with the module's
  `__dict__` as the locals mapping.

A class body reads its globals without that hook, so the splitter lists what a
statement reads while it runs (`needs`) and those are built first. `dict.get`,
`in` and iteration see only what is built; `dir()` lists everything.

`LazyModule` stands in `sys.modules`: an object whose `__dict__` is the
namespace. It is not a `types.ModuleType` (a module's `__dict__` cannot be
replaced), so `importlib.reload` and `inspect.ismodule` refuse it.
"""

from __future__ import annotations

import importlib
import marshal
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from types import CodeType
from typing import Any

BUILD_LOCK = threading.RLock()
"""Held while a statement is built; re-entrant, as building one may build its needs.
Never held while a module's import-time statements run (`SdkFinder.exec_module`):
they wait for other modules' import locks, whose holders may be waiting for this."""


@dataclass(frozen=True)
class Pending:
    """A lazy statement not run yet."""

    index: int
    names: tuple[str, ...]
    needs: tuple[str, ...]
    code: bytes


class LazyNamespace(dict[str, Any]):
    """A module's globals: built names are plain entries; the others build on lookup."""

    __slots__ = ("_pending", "_reexport_from")

    def __init__(self, pending: Iterable[Pending], reexport_from: str | None = None) -> None:
        super().__init__()
        self._pending: dict[str, Pending] = {}
        for statement in pending:
            for name in statement.names:
                self._pending[name] = statement
        self._reexport_from = reexport_from

    def reexport(self, names: Iterable[str]) -> None:
        """Names fetched from `reexport_from` on their first lookup."""
        for name in names:
            self._pending[name] = Pending(index=-1, names=(name,), needs=(), code=b"")

    def __missing__(self, name: str) -> Any:
        statement = self._pending.get(name)
        if statement is None:
            raise KeyError(name)
        if statement.index < 0:
            # Re-exported: the target module builds it under the lock; only the import
            # (done, as this module's own imports ran first) is outside.
            assert self._reexport_from is not None
            value = getattr(importlib.import_module(self._reexport_from), name)
            return self.setdefault(name, value)
        with BUILD_LOCK:
            if not dict.__contains__(self, name):
                self._build(statement)
        return dict.__getitem__(self, name)

    def unbuilt(self) -> list[str]:
        return [name for name in self._pending if not dict.__contains__(self, name)]

    def _build(self, statement: Pending) -> None:
        # Every need is bound by an earlier statement: run them all in source order.
        todo = {statement.index: statement}
        stack = list(statement.needs)
        while stack:
            need = stack.pop()
            needed = self._pending.get(need)
            if needed is None or dict.__contains__(self, need) or needed.index in todo:
                continue
            todo[needed.index] = needed
            stack.extend(needed.needs)
        # Entries stay in `_pending`: a lookup racing this build finds its name in
        # the dict once the lock is released.
        for index in sorted(todo):
            built = todo[index]
            if not all(dict.__contains__(self, bound) for bound in built.names):
                code: CodeType = marshal.loads(built.code)  # noqa: S302 - our own cache
                exec(code, self)  # noqa: S102 - the SDK's own statement, verified


class LazyModule:
    """What `sys.modules` holds for a lazily loaded SDK module."""

    def __init__(self, namespace: LazyNamespace) -> None:
        self.__dict__ = namespace

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__[name]
        except KeyError:
            module = self.__dict__.get("__name__", "?")
            raise AttributeError(f"module {module!r} has no attribute {name!r}") from None

    def __dir__(self) -> list[str]:
        namespace: LazyNamespace = self.__dict__  # type: ignore[assignment]
        return sorted({*namespace, *namespace.unbuilt()})

    def __repr__(self) -> str:
        name = self.__dict__.get("__name__", "?")
        origin = self.__dict__.get("__file__", "?")
        return f"<module {name!r} from {origin!r} (definitions built on first use)>"
