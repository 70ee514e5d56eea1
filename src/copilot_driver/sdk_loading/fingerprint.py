"""A fingerprint of the SDK's public generated modules: the proof tool for lazy loading.

The SDK's generated modules (`copilot.generated.rpc`, `copilot.generated.session_events`)
are huge, and the SDK loading loads them lazily. The proof that lazy loading changes
nothing a caller can observe is an equality: a child process that imports the SDK eagerly
and one that imports it lazily (first touching the public names in a shuffled order) must
produce the same `describe()`; `difference()` says what differs when they don't.

`describe()` maps "module:name" to one text per public name (every name of each public
module's `__all__`), reached only through the public modules (`importlib.import_module`
then `getattr`). A text is lines of "part: value"; it holds no ids, no addresses and no
set or hash order, so it is the same in every process. It compares:

- classes: module, qualname, metaclass, bases, MRO, docstring, the raw (string)
  annotations, every entry of the class `__dict__` (functions by their code), dataclass
  parameters and fields, Enum members and aliases, Protocol-ness, and
  `typing.get_type_hints`, which evaluates the string annotations in the module's
  namespace -- the hard path for a lazy loader;
- functions: signature, defaults and a digest of the code object (bytecode, names,
  variables, constants with nested code, line table, exception table), with its file's
  basename, first line and name in the clear;
- which public names are the very same object (aliases, the re-exports shared by both
  modules, the sentinel a dataclass defaults to), and which public class a type hint,
  base or default is, so a class or sentinel created twice is seen;
- behaviour: for every dataclass with `from_dict`/`to_dict`, a sample instance built from
  its type hints goes through `to_dict`, `from_dict` and pickle ("round trip: ok" when
  all three agree, else what they did or raised); every Enum member goes through pickle.

What it cannot see: the private helpers (`from_str`, `_load_*`) except through the
behaviour of the public classes that call them; the branches of `from_dict`/`to_dict` one
sample does not take (one sample per class, None only where nothing else can be built);
classes without dataclass fields (`Data`) in behaviour; the type hints of a dataclass's
own methods (its fields' are evaluated); closure cells; column positions in the code
(tracebacks only); anything outside the public modules' `__all__`; object identity
beyond the public names. Pickle finds classes by their `__module__`, so the round trips
import `copilot.generated.*` the way any user's pickle does; nothing else does.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import importlib
import inspect
import marshal
import os
import random
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from copilot_driver.sdk_loading.fingerprint_samples import (
    ADDRESS,
    UNION_ORIGINS,
    Samples,
    failure,
    pickle_round_trip,
    qualified_name,
)

PUBLIC_MODULES: tuple[str, ...] = ("copilot.rpc", "copilot.session_events")

# How much of each differing part `difference` shows.
_SHOWN_PART = 300

# Class `__dict__` entries left out: the annotations, docstring, module and dataclass
# parameters have their own lines; pickle caches `__slotnames__` on a class the first time
# one of its instances is pickled, which depends on the order classes are described in.
_UNDESCRIBED_MEMBERS = frozenset(
    {"__annotations__", "__doc__", "__module__", "__dataclass_params__", "__slotnames__"}
)
# Values whose repr is already the same in every process (the fast path: most constants).
_PLAIN_TYPES = frozenset({str, int, float, bool, complex, bytes, type(None)})


def public_names(module_names: Sequence[str] = PUBLIC_MODULES) -> list[tuple[str, str]]:
    """(module, name) for every name of each module's `__all__`, in `__all__` order."""
    return [
        (module_name, name)
        for module_name in module_names
        for name in importlib.import_module(module_name).__all__
    ]


def describe(
    module_names: Sequence[str] = PUBLIC_MODULES, *, order_seed: int | None = None
) -> dict[str, str]:
    """Each public name's description under the key "module:name", keys sorted. With
    `order_seed` the names are first touched, then described, in an order shuffled by
    `random.Random(order_seed)`; with None, in `__all__` order."""
    access_order = public_names(module_names)
    if order_seed is not None:
        random.Random(order_seed).shuffle(access_order)
    # Every name is touched before any is described: the lazy loader meets the names in
    # exactly the shuffled order.
    objects = {
        f"{module_name}:{name}": getattr(importlib.import_module(module_name), name)
        for module_name, name in access_order
    }
    describer = _Describer(objects, packages={name.partition(".")[0] for name in module_names})
    descriptions = {key: describer.describe(value) for key, value in objects.items()}
    return {key: descriptions[key] for key in sorted(descriptions)}


def difference(
    expected: Mapping[str, str], actual: Mapping[str, str], *, limit: int = 5
) -> list[str]:
    """Lines saying which names one side lacks, then up to `limit` differing names with the
    first part of their descriptions that differs; [] when both are equal."""
    lines = [f"missing from actual: {key}" for key in sorted(expected.keys() - actual.keys())]
    lines += [f"missing from expected: {key}" for key in sorted(actual.keys() - expected.keys())]
    differing = [
        key for key in sorted(expected.keys() & actual.keys()) if expected[key] != actual[key]
    ]
    for key in differing[:limit]:
        expected_part, actual_part = _first_differing_part(expected[key], actual[key])
        lines.append(f"{key} differs: expected {expected_part!r}, actual {actual_part!r}")
    if len(differing) > limit:
        lines.append(f"... and {len(differing) - limit} more differing names")
    return lines


def _first_differing_part(expected: str, actual: str) -> tuple[str, str]:
    expected_parts, actual_parts = expected.splitlines(), actual.splitlines()
    for index in range(max(len(expected_parts), len(actual_parts))):
        expected_part = expected_parts[index] if index < len(expected_parts) else "<absent>"
        actual_part = actual_parts[index] if index < len(actual_parts) else "<absent>"
        if expected_part != actual_part:
            return expected_part[:_SHOWN_PART], actual_part[:_SHOWN_PART]
    return "<equal parts>", "<equal parts>"


class _Describer:
    """Describes the objects of one `describe()` call; knows which public names hold
    which objects, so that sameness is described by public name, never by id."""

    def __init__(self, objects: Mapping[str, object], *, packages: set[str]) -> None:
        # ids are only compared here, while `objects` keeps every object alive; the
        # descriptions name the public keys instead.
        keys_by_id: dict[int, list[str]] = {}
        for key in sorted(objects):
            keys_by_id.setdefault(id(objects[key]), []).append(key)
        self._public_keys_by_id = keys_by_id
        # Classes of these top-level packages are described in full; others (`list`,
        # `typing.Any`, aliased by a public name) by name only.
        self._packages = packages
        self._type_hints: dict[type | types.FunctionType, dict[str, Any]] = {}
        self._samples = Samples(self._hints, self._type_repr)

    # -- dispatch ------------------------------------------------------------------------

    def describe(self, value: object) -> str:
        lines = [f"same object as: {self._public_keys_by_id[id(value)]}"]
        if isinstance(value, type):
            lines += self._class_lines(value)
        elif isinstance(value, types.FunctionType):
            lines += self._function_lines(value)
        elif isinstance(value, typing.TypeVar):
            lines += self._type_variable_lines(value)
        elif typing.get_origin(value) is not None:
            lines += ["kind: type expression", f"type: {self._type_repr(value)}"]
        else:
            lines += [
                f"kind: value of {qualified_name(type(value))}",
                f"value: {self._repr(value)}",
            ]
        text = "\n".join(line.replace("\n", "\\n") for line in lines)
        # Addresses can hide in any text (a dataclass's generated docstring shows its
        # defaults' reprs): none survives.
        return ADDRESS.sub("", text)

    # -- names and values ----------------------------------------------------------------

    def _public_mark(self, value: object) -> str:
        keys = self._public_keys_by_id.get(id(value))
        return f" (is {' '.join(keys)})" if keys else ""

    def _class_ref(self, cls: type) -> str:
        # "(public)": this very class is one a public module holds; a class built twice
        # (the copy a lazy loader's namespace would hold) loses the mark. Which names hold
        # it is said once, on its own "same object as" line.
        public = " (public)" if id(cls) in self._public_keys_by_id else ""
        return qualified_name(cls) + public

    def _type_repr(self, hint: object) -> str:
        """A type hint with each class it names by module, qualname and public name."""
        origin = typing.get_origin(hint)
        if origin is not None:
            arguments = [self._type_repr(argument) for argument in typing.get_args(hint)]
            if origin in UNION_ORIGINS:
                return " | ".join(arguments)
            return f"{self._type_repr(origin)}[{', '.join(arguments)}]"
        if hint is None or hint is type(None):
            return "None"
        if isinstance(hint, type):
            return self._class_ref(hint)
        return self._repr(hint)

    def _repr(self, value: object) -> str:
        """A repr the same in every process: no addresses, sets sorted, shared objects
        named by their public name."""
        if type(value) in _PLAIN_TYPES:
            return repr(value)
        if isinstance(value, enum.Enum):
            return f"{value.name}={value.value!r} of {self._class_ref(type(value))}"
        if isinstance(value, type):
            return self._class_ref(value)
        if isinstance(value, types.FunctionType):
            return f"function {qualified_name(value)}{self._public_mark(value)}"
        if isinstance(value, types.CodeType):
            return self._code_fingerprint(value)
        if isinstance(value, tuple | list):
            return type(value).__name__ + "(" + ", ".join(self._repr(item) for item in value) + ")"
        if isinstance(value, set | frozenset):
            return type(value).__name__ + "{" + ", ".join(sorted(map(self._repr, value))) + "}"
        if isinstance(value, dict):
            # Insertion order: the order of definition, the same in every process.
            items = (f"{self._repr(k)}: {self._repr(v)}" for k, v in value.items())
            return "{" + ", ".join(items) + "}"
        if type(value).__repr__ is object.__repr__:
            # A sentinel like `object()`: its type, and which public name it is.
            return f"<{qualified_name(type(value))} instance>{self._public_mark(value)}"
        return ADDRESS.sub("", repr(value)) + self._public_mark(value)

    # -- functions -----------------------------------------------------------------------

    def _function_lines(self, function: types.FunctionType) -> list[str]:
        try:
            signature = str(inspect.signature(function))
        except (TypeError, ValueError, NameError) as error:
            signature = f"<no signature: {type(error).__name__}>"
        return [
            "kind: function",
            f"qualified name: {qualified_name(function)}",
            f"signature: {signature}",
            f"function: {self._function_summary(function, with_hints=True)}",
        ]

    def _function_summary(self, function: types.FunctionType, *, with_hints: bool) -> str:
        summary = (
            f"{self._code_fingerprint(function.__code__)}"
            f" name={qualified_name(function)}"
            # The namespace the code's global names are looked up in: a lazy loader's
            # functions must still see the generated module's.
            f" globals={function.__globals__.get('__name__')!r}"
            f" defaults={self._repr(function.__defaults__)}"
            f" kwdefaults={self._repr(function.__kwdefaults__)}"
            f" annotations={self._repr(function.__annotations__)}"
        )
        if with_hints:
            summary += f" type hints={self._hints_repr(function)}"
        wrapped = getattr(function, "__wrapped__", None)
        if isinstance(wrapped, types.FunctionType):
            summary += f" wrapping {self._function_summary(wrapped, with_hints=False)}"
        return summary

    def _code_fingerprint(self, code: types.CodeType) -> str:
        """Where the code is in the clear, everything it does as one digest."""
        # Plain constants (most of them: JSON keys, docstrings) stay themselves, so one
        # repr of the whole tuple below describes them; the rest (nested code) as text.
        constants = tuple(
            constant if type(constant) in _PLAIN_TYPES else ("<", self._repr(constant))
            for constant in code.co_consts
        )
        names = (code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars)
        # Bytes and ints only, so marshal's format 2 (no back-references, which follow
        # reference counts) is exact, and much faster than repr for the line tables.
        numbers = marshal.dumps(
            (
                code.co_code,
                code.co_argcount,
                code.co_posonlyargcount,
                code.co_kwonlyargcount,
                code.co_flags,
                # The lazy loader compiles each statement alone with its original line
                # numbers: the (start, end, line) ranges must be the same.
                tuple(code.co_lines()),
                code.co_exceptiontable,
            ),
            2,
        )
        digest = hashlib.sha256(numbers)
        digest.update(repr((names, constants)).encode())
        place = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"
        return f"code {code.co_qualname}@{place} digest={digest.hexdigest()[:20]}"

    def _member_repr(self, name: str, member: object, *, with_hints: bool) -> str:
        """What a class `__dict__` entry is: functions by their code, and with their type
        hints when `with_hints`."""
        if name == "__dataclass_fields__" and isinstance(member, dict):
            # The fields themselves are described one by one (`field ...` lines).
            return self._repr(list(member))
        if isinstance(member, types.FunctionType):
            return self._function_summary(member, with_hints=with_hints)
        if isinstance(member, staticmethod | classmethod):
            function = self._member_repr(name, member.__func__, with_hints=with_hints)
            return f"{type(member).__name__} of {function}"
        if isinstance(member, property):
            accessors = (member.fget, member.fset, member.fdel)
            return "property " + " / ".join(
                self._member_repr(name, each, with_hints=with_hints) for each in accessors
            )
        return self._repr(member)

    # -- other values --------------------------------------------------------------------

    def _type_variable_lines(self, variable: typing.TypeVar) -> list[str]:
        return [
            "kind: TypeVar",
            f"name: {variable.__name__}",
            f"bound: {self._type_repr(variable.__bound__)}",
            f"constraints: {[self._type_repr(c) for c in variable.__constraints__]}",
            f"variance: co={variable.__covariant__} contra={variable.__contravariant__}",
        ]

    # -- classes -------------------------------------------------------------------------

    def _class_lines(self, cls: type) -> list[str]:
        if cls.__module__.partition(".")[0] not in self._packages:
            return [f"kind: outside class {self._class_ref(cls)}"]
        lines = [
            f"kind: {self._class_kind(cls)}",
            f"qualified name: {qualified_name(cls)}",
            f"metaclass: {self._class_ref(type(cls))}",
            f"bases: {[self._class_ref(base) for base in cls.__bases__]}",
            f"mro: {[self._class_ref(base) for base in cls.__mro__]}",
            f"doc: {cls.__doc__!r}",
            f"annotations: {self._repr(inspect.get_annotations(cls))}",
            f"protocol: {getattr(cls, '_is_protocol', False)}"
            f" runtime={getattr(cls, '_is_runtime_protocol', False)}",
        ]
        # The API and handler classes' methods with their type hints, which name the
        # request and result classes; a dataclass's methods without (its hints are its
        # fields', on the class; evaluating every from_dict's too would double the time).
        with_hints = not dataclasses.is_dataclass(cls)
        lines += [
            f"member {name}: {self._member_repr(name, cls.__dict__[name], with_hints=with_hints)}"
            for name in sorted(cls.__dict__)
            if name not in _UNDESCRIBED_MEMBERS
        ]
        lines.append(f"type hints: {self._hints_repr(cls)}")
        if dataclasses.is_dataclass(cls):
            lines += self._dataclass_lines(cls)
        if issubclass(cls, enum.Enum):
            lines += self._enum_lines(cls)
        return lines

    @staticmethod
    def _class_kind(cls: type) -> str:
        if issubclass(cls, enum.Enum):
            return "enum"
        if dataclasses.is_dataclass(cls):
            return "dataclass"
        if getattr(cls, "_is_protocol", False):
            return "protocol"
        return "class"

    def _hints_repr(self, owner: type | types.FunctionType) -> str:
        """`typing.get_type_hints`: the string annotations evaluated in the namespace of
        the module that defines them."""
        try:
            hints = self._hints(owner)
        except Exception as error:  # Eager and lazy must then fail alike.
            return failure(error)
        return "{" + ", ".join(f"{name}: {self._type_repr(t)}" for name, t in hints.items()) + "}"

    def _hints(self, owner: type | types.FunctionType) -> dict[str, Any]:
        if owner not in self._type_hints:
            self._type_hints[owner] = typing.get_type_hints(owner)
        return self._type_hints[owner]

    def _dataclass_lines(self, cls: type) -> list[str]:
        lines = [f"dataclass params: {self._repr(cls.__dict__.get('__dataclass_params__'))}"]
        lines += [f"field {f.name}: {self._field_repr(f)}" for f in dataclasses.fields(cls)]
        if callable(getattr(cls, "from_dict", None)) and callable(getattr(cls, "to_dict", None)):
            lines.append(self._samples.round_trip(cls))
        return lines

    def _field_repr(self, field: dataclasses.Field[Any]) -> str:
        factory = field.default_factory
        factory_name = "-" if factory is dataclasses.MISSING else qualified_name(factory)
        default = "-" if field.default is dataclasses.MISSING else self._repr(field.default)
        return (
            f"type={field.type!r} default={default} default_factory={factory_name}"
            f" init={field.init} repr={field.repr} compare={field.compare} hash={field.hash}"
            f" kw_only={field.kw_only} metadata={self._repr(dict(field.metadata))}"
        )

    def _enum_lines(self, cls: type[enum.Enum]) -> list[str]:
        lines = [f"enum member {member.name}: {member.value!r}" for member in cls]
        lines += [
            f"enum alias {alias}: {member.name}"
            for alias, member in cls.__members__.items()
            if alias != member.name
        ]
        lines += [f"enum pickle {member.name}: {pickle_round_trip(member)}" for member in cls]
        return lines
