"""The split modules of one SDK install, on disk: where, under which key, what format.

One file per SDK install holds its four modules (`SDK_MODULES`), `marshal`-ed,
each statement's code kept as bytes until it is built. Its name is a key over
everything that makes it valid: the sha256 of each of the four sources (so a
re-export module's cache changes with the module it re-exports), Python's
bytecode magic number, this loader's `FORMAT` and the SDK's folder (the code's
file names point there). A file is only ever written whole (a temporary file
renamed over it), after the build verified it. It also records that folder and those
digests, so a later build can tell a cache whose SDK install is gone (`prune`).
Where the files live: `folder`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from copilot_driver.sdk_loading.namespace import Pending

FORMAT = 3
"""This loader's cache format and splitting rules; a change makes every cache stale."""

SDK_MODULES: dict[str, str] = {
    "copilot.generated.session_events": "generated/session_events.py",
    "copilot.generated.rpc": "generated/rpc.py",
    "copilot.session_events": "session_events.py",
    "copilot.rpc": "rpc.py",
}
"""The modules loaded lazily -> their files in the SDK's package folder, in the order
they are split (a re-export module after the module it re-exports)."""


@dataclass(frozen=True)
class CachedModule:
    """One module as the loader runs it."""

    doc: str | None
    eager: tuple[bytes, ...]
    lazy: tuple[Pending, ...]
    reexport_from: str | None
    reexported: tuple[str, ...]


def source_hashes(sdk_dir: Path) -> dict[str, str]:
    """The sha256 of each of the four sources; raises OSError when one is missing."""
    return {
        relative: hashlib.sha256((sdk_dir / relative).read_bytes()).hexdigest()
        for relative in SDK_MODULES.values()
    }


def cache_path(cache_dir: Path, sdk_dir: Path, hashes: Mapping[str, str]) -> Path:
    key = hashlib.sha256()
    key.update(f"{FORMAT}\0{sdk_dir}\0".encode())
    key.update(importlib.util.MAGIC_NUMBER)
    for relative in sorted(hashes):
        key.update(f"\0{relative}\0{hashes[relative]}".encode())
    return cache_dir / f"copilot-sdk-{key.hexdigest()[:32]}.marshal"


@dataclass(frozen=True)
class Origin:
    """What a cache file says it was built from: its format, the SDK folder and the
    sha256 of its four sources (None where the file does not say)."""

    format: int | None
    sdk_dir: str | None
    sources: dict[str, str] | None


def write_cache(
    path: Path,
    modules: Mapping[str, CachedModule],
    *,
    sdk_dir: Path | None = None,
    sources: Mapping[str, str] | None = None,
) -> None:
    """`modules` written whole to `path` (a temporary file renamed over it), with the
    SDK folder and source digests they were split from when given."""
    record = {
        "format": FORMAT,
        "sdkDir": None if sdk_dir is None else str(sdk_dir),
        "sources": None if sources is None else dict(sources),
        "modules": {
            name: (
                module.doc,
                module.eager,
                tuple((item.names, item.needs, item.code) for item in module.lazy),
                module.reexport_from,
                module.reexported,
            )
            for name, module in modules.items()
        },
    }
    import tempfile  # build time only: the driver's runs never write a cache

    # A folder the build makes is the user's alone (the XDG spec's 0700); the driver
    # trusts no cache someone else could write (`folder.writable_by_others`).
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".building-")
    try:
        with os.fdopen(descriptor, "wb") as file:
            marshal.dump(record, file)
        # mkstemp's file is private (0600); readable is enough, never writable by others.
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_cache(path: Path, data: bytes | None = None) -> dict[str, CachedModule]:
    """The modules of a cache file (its bytes `data` when already read); ValueError when
    it is not one this loader wrote."""
    try:
        record: Any = marshal.loads(path.read_bytes() if data is None else data)  # noqa: S302
        if record["format"] == FORMAT and set(record["modules"]) == set(SDK_MODULES):
            return {
                name: CachedModule(
                    doc=doc,
                    eager=tuple(eager),
                    lazy=tuple(
                        Pending(index=index, names=tuple(names), needs=tuple(needs), code=code)
                        for index, (names, needs, code) in enumerate(lazy)
                    ),
                    reexport_from=reexport_from,
                    reexported=tuple(reexported),
                )
                for name, (doc, eager, lazy, reexport_from, reexported) in record["modules"].items()
            }
    # marshal's own ValueError ("bad marshal data"), and any record of another shape.
    except (EOFError, ValueError, TypeError, KeyError, AttributeError) as error:
        raise ValueError(f"{path} is not a readable cache ({error})") from error
    raise ValueError(f"{path} was written by another version of copilot-driver")


def read_origin(path: Path) -> Origin:
    """What the cache file at `path` was built from; ValueError when it is no cache."""
    try:
        record: Any = marshal.loads(path.read_bytes())  # noqa: S302 - our own file
        found = record.get("format")
        sdk_dir = record.get("sdkDir")
        sources = record.get("sources")
    except (EOFError, ValueError, TypeError, AttributeError) as error:
        raise ValueError(f"{path} is not a readable cache ({error})") from error
    return Origin(
        format=found if isinstance(found, int) else None,
        sdk_dir=sdk_dir if isinstance(sdk_dir, str) else None,
        sources=dict(sources) if isinstance(sources, dict) else None,
    )
