"""The import hook: the four SDK modules from a verified cache, as lazy namespaces.

`SdkFinder` sits first on `sys.meta_path` and answers only for the modules of
the cache it was given, at the very files that cache was built from; every other
import goes on as usual. Loading a module runs its import-time statements (its
imports, `__all__`) and leaves every definition to be built on first lookup.
"""

from __future__ import annotations

import marshal
from collections.abc import Mapping, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import CodeType, ModuleType
from typing import TYPE_CHECKING, cast

from copilot_driver.sdk_loading.cache import SDK_MODULES, CachedModule
from copilot_driver.sdk_loading.namespace import LazyModule, LazyNamespace

if TYPE_CHECKING:
    from importlib.abc import Loader


class SdkFinder:
    """A meta path finder and its loader (duck-typed: `importlib.abc` costs ~8 ms to import)."""

    def __init__(self, sdk_dir: Path, modules: Mapping[str, CachedModule]) -> None:
        self.sdk_dir = sdk_dir
        self.modules = dict(modules)

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        if fullname not in self.modules:
            return None
        origin = self.sdk_dir / SDK_MODULES[fullname]
        # Only the package the cache was built from: a parent package loaded from
        # another folder imports its submodules as usual.
        if path is None or origin.parent not in [Path(entry).resolve() for entry in path]:
            return None
        spec = ModuleSpec(fullname, cast("Loader", self), origin=str(origin))
        spec.has_location = True
        return spec

    def create_module(self, spec: ModuleSpec) -> LazyModule:
        cached = self.modules[spec.name]
        namespace = LazyNamespace(cached.lazy, cached.reexport_from)
        namespace.reexport(cached.reexported)
        namespace["__doc__"] = cached.doc
        return LazyModule(namespace)

    def exec_module(self, module: ModuleType) -> None:
        # Not under BUILD_LOCK: the import system's lock on this module already keeps
        # other importers out, and these imports wait for other modules' locks, which
        # a thread importing one of those while it waits for BUILD_LOCK would hold.
        name = module.__name__
        namespace = module.__dict__
        for code_bytes in self.modules[name].eager:
            code: CodeType = marshal.loads(code_bytes)  # noqa: S302 - our own cache
            exec(code, namespace)  # noqa: S102 - the SDK's own statement, verified
