"""One SDK module's source -> the statements a lazy namespace builds one at a time.

Build time only (it imports `ast`; the driver's runs never load it). Each top-level
statement is compiled on its own, with its original line numbers, and sorted into:

- *eager*: imports, `if TYPE_CHECKING:` blocks and dunder assignments (`__all__`),
  run in order when the module is imported;
- *lazy*: a class, a function or a plain `NAME = expression`, run on the first
  lookup of a name it binds, after the lazy names it reads while it runs (its
  *needs*: a class body's base classes, field defaults, decorators, function
  defaults; not what its functions read later, which the namespace finds itself);
- *re-exported*: the names of `from .target import *`, each fetched from the
  target module on its first lookup.

Anything else is declined (`SplitDeclinedError`) and the SDK is imported eagerly: a
decorator other than `dataclass`, a base class other than `Enum`, `Protocol` or a
class of the same module, class keywords (a metaclass), `global`, `nonlocal`, `:=`,
a name bound twice, a statement that reads a lazy name defined further down (eager
code would see a builtin or fail there), a module without `from __future__ import
annotations` (annotations would run at definition time), or any other statement.
A base class or decorator runs code when a class is defined (registries,
`__init_subclass__`); only those known not to are accepted, so building in a
different order cannot change what a class is.
"""

from __future__ import annotations
import __future__

import ast
import copy
import marshal

from copilot_driver.errors import CopilotDriverError
from copilot_driver.sdk_loading.cache import CachedModule
from copilot_driver.sdk_loading.namespace import Pending

KNOWN_DECORATORS = frozenset({"dataclass"})
"""Decorators whose effect on a class is the same whenever it is built."""
KNOWN_BASES = frozenset({"Enum", "Protocol"})
"""Base classes (besides the module's own accepted classes) that register nothing."""
_KNOWN_SOURCES = {"dataclass": "dataclasses", "Enum": "enum", "Protocol": "typing"}
"""Where each known name must be imported from, so a shadowing import is declined."""


_DEFINITIONS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.AnnAssign)
"""Statements whose annotations would run at definition time without the future import."""


class SplitDeclinedError(CopilotDriverError):
    """The source holds something the splitter does not understand: import it eagerly."""


def split_module(
    name: str, source: str, filename: str, *, star_names: dict[str, tuple[str, ...]]
) -> CachedModule:
    """`source` split into eager and lazy statements, as the loader runs them (each lazy
    statement's `index` is its place among them); `star_names` gives the exported names
    of each module a `from X import *` may name (absolute names).

    Raises SplitDeclinedError when anything is outside what this module understands."""
    tree = ast.parse(source, filename)
    body = list(tree.body)
    doc = ast.get_docstring(tree, clean=False)
    if doc is not None:
        body = body[1:]
    future_flags = _future_flags(body)
    if not future_flags and any(isinstance(item, _DEFINITIONS) for item in body):
        raise SplitDeclinedError(f"{name}: no `from __future__ import annotations`")
    _check_known_sources(name, body)
    split = _Splitter(name, filename, future_flags, star_names)
    split.import_context = _imports(body)
    first_binding = _first_bindings(body)
    for index, statement in enumerate(body):
        where = f"{name} line {statement.lineno}"
        reads = _definition_time_reads(statement, where)
        for read in reads:
            # A name read before the statement binding it has run: eager code sees a
            # builtin or fails, but the lazy namespace would build the later definition.
            if first_binding.get(read, -1) >= index:
                raise SplitDeclinedError(f"{where}: reads {read!r} before it is bound")
        split.add(index, statement, reads, where)
    return CachedModule(
        doc=doc,
        eager=tuple(split.eager),
        lazy=tuple(split.lazy),
        reexport_from=split.reexport_from,
        reexported=tuple(split.reexported),
    )


class _Splitter:
    """The statements sorted so far, and every name bound so far."""

    def __init__(
        self, name: str, filename: str, future_flags: int, star_names: dict[str, tuple[str, ...]]
    ) -> None:
        self.package = name.rpartition(".")[0]
        self.filename = filename
        self.future_flags = future_flags
        self.star_names = star_names
        self.eager: list[bytes] = []
        self.lazy: list[Pending] = []
        self.bound_at: dict[str, int] = {}
        """Every module-level name -> the index of the statement binding it."""
        self.lazy_names: set[str] = set()
        self.reexport_from: str | None = None
        self.reexported: list[str] = []
        self.import_context: list[ast.stmt] = []
        """The module's imports, which the compiler treats apart (`_compiled`)."""

    def add(self, index: int, statement: ast.stmt, reads: set[str], where: str) -> None:
        star = _star_import(statement, self.package)
        if star is not None:
            self._star(index, star, where)
            return
        binds = _bound_names(statement, where)
        if _is_eager(statement):
            if reads & self.lazy_names:
                raise SplitDeclinedError(f"{where}: an import-time statement reads a lazy name")
            for bound in binds:
                if bound in self.reexported and self.bound_at[bound] < index:
                    self.reexported.remove(bound)  # bound again here: eager code keeps this one
                    del self.bound_at[bound]
                self._bind(bound, index, where)
            self.eager.append(self._compiled(statement, with_imports=False))
            return
        for bound in binds:
            self._bind(bound, index, where)
        _check_class(statement, where, self.lazy_names)
        needs = tuple(sorted(reads & self.lazy_names))
        code = self._compiled(statement)
        self.lazy.append(Pending(len(self.lazy), binds, needs, code))
        self.lazy_names.update(binds)

    def _star(self, index: int, star: str, where: str) -> None:
        if self.reexport_from is not None or star not in self.star_names:
            raise SplitDeclinedError(f"{where}: `from {star} import *` is not understood")
        self.reexport_from = star
        self.reexported = list(self.star_names[star])
        for exported in self.reexported:
            self._bind(exported, index, where)

    def _bind(self, name: str, index: int, where: str) -> None:
        if name in self.bound_at:
            raise SplitDeclinedError(f"{where}: {name!r} is bound twice")
        self.bound_at[name] = index

    def _compiled(self, statement: ast.stmt, *, with_imports: bool = True) -> bytes:
        """The statement alone, with its own line numbers and the module's future flags.

        The module's imports of the names it uses come first under `if False:`, which
        runs nothing but lets the compiler see which names are imported: it compiles
        `imported.f(...)` differently (no method-call shortcut), and the code must be the
        eager one's."""
        body = [statement]
        used = {node.id for node in ast.walk(statement) if isinstance(node, ast.Name)}
        context = _imports_of(self.import_context, used) if with_imports else []
        if context:
            never = ast.copy_location(ast.Constant(value=False), statement)
            imports = ast.If(test=never, body=context, orelse=[])
            body.insert(0, ast.copy_location(imports, statement))
        module = ast.Module(body=body, type_ignores=[])
        flags = self.future_flags
        code = compile(module, self.filename, "exec", flags=flags, dont_inherit=True)
        return marshal.dumps(code)


def _imports_of(imports: list[ast.stmt], names: set[str]) -> list[ast.stmt]:
    """The parts of `imports` that bind one of `names`."""
    kept: list[ast.stmt] = []
    for statement in imports:
        assert isinstance(statement, ast.Import | ast.ImportFrom)
        aliases = [
            alias
            for alias in statement.names
            if (alias.asname or alias.name).partition(".")[0] in names
        ]
        if aliases:
            part = copy.copy(statement)
            part.names = aliases
            kept.append(part)
    return kept


def _imports(body: list[ast.stmt]) -> list[ast.stmt]:
    """Every import of the module (those under `if TYPE_CHECKING:` too), but future and
    star imports, which may not stand inside an `if`."""
    found: list[ast.stmt] = []
    for statement in body:
        inner = statement.body if isinstance(statement, ast.If) else [statement]
        for item in inner:
            if isinstance(item, ast.Import) or (
                isinstance(item, ast.ImportFrom)
                and item.module != "__future__"
                and all(alias.name != "*" for alias in item.names)
            ):
                found.append(item)
    return found


def exported_names(source: str, filename: str) -> tuple[str, ...]:
    """A module's literal `__all__` (what `from it import *` binds)."""
    for statement in ast.parse(source, filename).body:
        if (
            isinstance(statement, ast.Assign)
            and [_target_name(target) for target in statement.targets] == ["__all__"]
            and isinstance(statement.value, ast.List | ast.Tuple)
            and all(
                isinstance(item, ast.Constant) and isinstance(item.value, str)
                for item in statement.value.elts
            )
        ):
            return tuple(str(item.value) for item in statement.value.elts)  # type: ignore[attr-defined]
    raise SplitDeclinedError(f"{filename}: no literal `__all__`")


def _future_flags(body: list[ast.stmt]) -> int:
    for statement in body:
        if not (isinstance(statement, ast.ImportFrom) and statement.module == "__future__"):
            break
        if any(alias.name == "annotations" for alias in statement.names):
            return __future__.annotations.compiler_flag
    return 0


def _is_eager(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return True
    if isinstance(statement, ast.If):
        return True  # only `if TYPE_CHECKING:` imports get here (_bound_names checks)
    return isinstance(statement, ast.Assign) and all(
        _is_dunder(_target_name(target)) for target in statement.targets
    )


def _bound_names(statement: ast.stmt, where: str) -> tuple[str, ...]:
    """The module-level names a statement binds; declines any other kind of statement."""
    if isinstance(statement, ast.ClassDef | ast.FunctionDef):
        return (statement.name,)
    if isinstance(statement, ast.Import):
        return tuple((alias.asname or alias.name).partition(".")[0] for alias in statement.names)
    if isinstance(statement, ast.ImportFrom):
        if any(alias.name == "*" for alias in statement.names):
            raise SplitDeclinedError(f"{where}: a star import of a module it cannot read")
        return tuple(alias.asname or alias.name for alias in statement.names)
    if isinstance(statement, ast.Assign):
        names = tuple(_target_name(target) for target in statement.targets)
        if "" in names:
            raise SplitDeclinedError(f"{where}: an assignment to something other than a name")
        return names
    if (
        isinstance(statement, ast.If)
        and isinstance(statement.test, ast.Name)
        and statement.test.id == "TYPE_CHECKING"
        and not statement.orelse
        and all(isinstance(inner, ast.Import | ast.ImportFrom) for inner in statement.body)
    ):
        return ()  # never runs its body
    raise SplitDeclinedError(f"{where}: a {type(statement).__name__} statement")


def _target_name(target: ast.expr) -> str:
    return target.id if isinstance(target, ast.Name) else ""


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _first_bindings(body: list[ast.stmt]) -> dict[str, int]:
    """Each name bound by a statement -> the index of the first statement binding it."""
    first: dict[str, int] = {}
    for index, statement in enumerate(body):
        try:
            names = _bound_names(statement, "")
        except SplitDeclinedError:
            continue  # declined when the split gets there
        for name in names:
            first.setdefault(name, index)
    return first


def _star_import(statement: ast.stmt, package: str) -> str | None:
    if not (
        isinstance(statement, ast.ImportFrom) and [alias.name for alias in statement.names] == ["*"]
    ):
        return None
    base = package.rsplit(".", statement.level - 1)[0] if statement.level else ""
    module = statement.module or ""
    return f"{base}.{module}" if base and module else base or module


def _check_class(statement: ast.stmt, where: str, lazy_names: set[str]) -> None:
    """Only decorators and bases that do the same whenever a class is built."""
    if not isinstance(statement, ast.ClassDef | ast.FunctionDef):
        return
    for decorator in statement.decorator_list:
        if not (isinstance(decorator, ast.Name) and decorator.id in KNOWN_DECORATORS):
            raise SplitDeclinedError(f"{where}: decorator {ast.unparse(decorator)!r}")
    if isinstance(statement, ast.FunctionDef):
        return
    if statement.keywords:
        raise SplitDeclinedError(f"{where}: class keywords ({ast.unparse(statement.keywords[0])})")
    for base in statement.bases:
        if not (isinstance(base, ast.Name) and (base.id in KNOWN_BASES or base.id in lazy_names)):
            raise SplitDeclinedError(f"{where}: base class {ast.unparse(base)!r}")


def _check_known_sources(name: str, body: list[ast.stmt]) -> None:
    """The known decorator and base names must be the standard library's own."""
    for statement in body:
        if not isinstance(statement, ast.Import | ast.ImportFrom):
            continue
        origin = statement.module if isinstance(statement, ast.ImportFrom) else None
        for alias in statement.names:
            bound = alias.asname or alias.name
            if bound in _KNOWN_SOURCES and (origin != _KNOWN_SOURCES[bound] or alias.name != bound):
                raise SplitDeclinedError(
                    f"{name}: {bound!r} is not imported from {_KNOWN_SOURCES[bound]}"
                )


class _DefinitionTimeReads(ast.NodeVisitor):
    """The names a statement reads while it runs: everything but function bodies and
    annotations (strings under `from __future__ import annotations`)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.names: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.names.add(node.id)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        self._scan_body_for_rebinding(node.body)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        raise SplitDeclinedError(f"{self.where}: an assignment expression (:=) outside a function")

    def visit_Global(self, node: ast.Global) -> None:
        raise SplitDeclinedError(f"{self.where}: a `global` statement")

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        for inner in node.body:
            self._scan_body_for_rebinding(inner)

    def _scan_body_for_rebinding(self, node: ast.AST) -> None:
        """A function body runs later, but must not rebind module names (`global`)."""
        for inner in ast.walk(node):
            if isinstance(inner, ast.Global):
                self.visit(inner)


def _definition_time_reads(statement: ast.stmt, where: str) -> set[str]:
    reads = _DefinitionTimeReads(where)
    reads.visit(statement)
    return reads.names
