"""The fingerprint's behaviour part: a sample instance per dataclass, built from its type
hints, through `to_dict`, `from_dict` and pickle (`Samples.round_trip`); and the texts
both parts share. Build time only, like fingerprint.py.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import hashlib
import json
import pickle
import re
import types
import typing
import uuid
from collections.abc import Callable
from typing import Any

# A nested dataclass deeper than this is left out (its field's default or None used) so a
# recursive schema still has a finite sample.
_SAMPLE_DEPTH = 4
# Longer texts (a big class's JSON) are kept as their length and digest.
_LONGEST_KEPT_TEXT = 1000
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_FIXED_DATETIME = datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
_FIXED_TIMEDELTA = datetime.timedelta(seconds=90)
_FIXED_UUID = uuid.UUID(int=1)
_SIMPLE_SAMPLES: dict[object, object] = {
    str: "s",
    int: 1,
    float: 1.5,
    bool: True,
    Any: "s",
    object: "s",
    datetime.datetime: _FIXED_DATETIME,
    datetime.timedelta: _FIXED_TIMEDELTA,
    uuid.UUID: _FIXED_UUID,
}
UNION_ORIGINS = (typing.Union, types.UnionType)
UNION_ORIGINS = (typing.Union, types.UnionType)


@dataclasses.dataclass(frozen=True)
class _NoSample:
    """Why no sample value can be built for a type (too deep, or a type it does not know)."""

    reason: str


class Samples:
    """Samples of one `describe()` call, each a pure function of (class, depth), so the
    cache never makes a sample depend on the order classes are described in."""

    def __init__(
        self,
        hints: Callable[[type], dict[str, Any]],
        type_repr: Callable[[object], str],
    ) -> None:
        self._hints = hints
        self._type_repr = type_repr
        # A sample, or why none can be built (a `_NoSample`), per (class, depth).
        self._samples: dict[tuple[type, int], object] = {}

    def round_trip(self, cls: type) -> str:
        try:
            sample = self._dataclass_sample(cls, 0)
        except Exception as error:
            return f"round trip: sample failed {failure(error)}"
        if isinstance(sample, _NoSample):
            return f"round trip: no sample ({sample.reason})"
        step = "to_dict"  # the step that raised, said with the failure
        try:
            as_dict = sample.to_dict()  # type: ignore[attr-defined]
            step = "json"
            as_json = json.dumps(as_dict, sort_keys=True, default=str)
            step = "from_dict"
            again = cls.from_dict(as_dict)  # type: ignore[attr-defined]
            step = "to_dict again"
            same_dict = again.to_dict() == as_dict
            step = "=="
            same_object = again == sample
        except Exception as error:
            return f"round trip: failed in {step} {failure(error)}"
        pickled = pickle_round_trip(sample)
        verdict = "ok" if same_object and same_dict and pickled == "equal" else "unequal"
        return (
            f"round trip: {verdict} from_dict==sample:{same_object}"
            f" to_dict==dict:{same_dict} pickle:{pickled} json={kept_text(as_json)}"
        )

    # The sample builders return a `_NoSample` rather than raise one: the package's
    # exceptions all derive from `CopilotDriverError`, which this is not.

    def _dataclass_sample(self, cls: type, depth: int) -> object:
        """A deterministic instance of `cls`; a pure function of (cls, depth), so the
        cache never makes it depend on the order classes are described in."""
        if depth > _SAMPLE_DEPTH:
            return _NoSample(f"deeper than {_SAMPLE_DEPTH}")
        if (cls, depth) not in self._samples:
            values = self._field_samples(cls, depth)
            sample = values if isinstance(values, _NoSample) else cls(**values)
            self._samples[(cls, depth)] = sample
        return self._samples[(cls, depth)]

    def _field_samples(self, cls: type, depth: int) -> dict[str, object] | _NoSample:
        """Keyword arguments for `cls`: a sample per field, or its default if it has none."""
        hints = self._hints(cls)
        values: dict[str, object] = {}
        for field in dataclasses.fields(cls):
            if not field.init:
                continue
            value = self._sample(hints[field.name], depth + 1)
            if not isinstance(value, _NoSample):
                values[field.name] = value
            elif field.default is dataclasses.MISSING and (
                field.default_factory is dataclasses.MISSING
            ):
                return value
        return values

    def _sample(self, hint: object, depth: int) -> object:
        if hint in _SIMPLE_SAMPLES:
            return _SIMPLE_SAMPLES[hint]
        if hint is None or hint is type(None):
            return None
        origin = typing.get_origin(hint)
        if origin is not None:
            return self._generic_sample(origin, typing.get_args(hint), depth)
        if isinstance(hint, type):
            return self._class_sample(hint, depth)
        return _NoSample(f"unknown type {self._type_repr(hint)}")

    def _class_sample(self, cls: type, depth: int) -> object:
        if issubclass(cls, enum.Enum):
            return next(iter(cls))
        if dataclasses.is_dataclass(cls):
            return self._dataclass_sample(cls, depth)
        if cls is list:
            return ["s"]
        if cls is dict:
            return {"k": "s"}
        return _NoSample(f"unknown class {qualified_name(cls)}")

    def _generic_sample(self, origin: object, arguments: tuple[Any, ...], depth: int) -> object:
        if origin in UNION_ORIGINS:
            return self._union_sample(arguments, depth)
        if origin is typing.Literal:
            return arguments[0]
        if origin is list:
            item = self._sample(arguments[0], depth) if arguments else "s"
            return item if isinstance(item, _NoSample) else [item]
        if origin is dict:
            value = self._sample(arguments[1], depth) if arguments else "s"
            return value if isinstance(value, _NoSample) else {"k": value}
        return _NoSample(f"unknown generic {self._type_repr(origin)}")

    def _union_sample(self, alternatives: tuple[Any, ...], depth: int) -> object:
        """The first alternative a sample can be built for; None only as the last resort,
        so optional fields are filled and their to_dict branches taken."""
        ordered = [a for a in alternatives if a is not type(None)]
        for alternative in ordered:
            sample = self._sample(alternative, depth)
            if not isinstance(sample, _NoSample):
                return sample
        if len(ordered) < len(alternatives):
            return None
        return _NoSample("no alternative of a union")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def kept_text(text: str) -> str:
    if len(text) <= _LONGEST_KEPT_TEXT:
        return text
    return f"<{len(text)} chars sha256={_digest(text)}>"


def qualified_name(value: Any) -> str:
    return f"{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', '?')}"


def pickle_round_trip(value: object) -> str:
    try:
        again = pickle.loads(pickle.dumps(value, protocol=4))  # noqa: S301 - our own bytes
    except Exception as error:
        return failure(error)
    if again is value:
        return "identical"
    return "equal" if again == value else "unequal"


def failure(error: BaseException) -> str:
    return f"{type(error).__name__}: {ADDRESS.sub('', str(error))}"
