"""The stale caches a build removes from the cache folder (build time only).

One folder holds the caches of every install of the user's, so each new build
looks through it and removes what no run can use any more: a file that is no
cache, one of an older format, one whose SDK folder is gone or no longer holds the
sources it was split from (the SDK was upgraded there), and a build's temporary
file left by a build that was killed. A cache of a newer format (a newer
copilot-driver elsewhere) is kept. So are the caches `LEGACY_DIR` held, beside an
older copilot-driver's package, until a build removes that folder.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from copilot_driver.sdk_loading.cache import FORMAT, read_origin, source_hashes
from copilot_driver.sdk_loading.folder import LEGACY_DIR

PATTERN = "copilot-sdk-*.marshal"
TEMPORARY = (".building-*", ".unverified-*")
ABANDONED_AFTER_S = 24 * 3600
"""A build writes and renames its temporary file within minutes; one a day old is
a killed build's."""


def stale_reason(path: Path) -> str | None:
    """Why the cache at `path` can no longer be used; None when it may still be."""
    try:
        origin = read_origin(path)
    except (OSError, ValueError):
        return "not a readable cache"
    if origin.format is None or origin.format < FORMAT:
        return f"format {origin.format}, older than {FORMAT}"
    if origin.format > FORMAT or origin.sdk_dir is None:
        return None  # a newer copilot-driver's: its own builds decide
    try:
        sources = source_hashes(Path(origin.sdk_dir))
    except OSError:
        return f"its SDK folder {origin.sdk_dir} is gone"
    if origin.sources is not None and sources != origin.sources:
        return f"the SDK in {origin.sdk_dir} changed since"
    return None


def prune(cache_dir: Path, keep: Path, *, now: float | None = None) -> list[str]:
    """Remove the stale caches of `cache_dir` (never `keep`) and the legacy folder's:
    one line per file removed, saying why."""
    removed: list[str] = []
    for path in sorted(cache_dir.glob(PATTERN)):
        reason = None if path == keep else stale_reason(path)
        if reason is not None and _remove(path):
            removed.append(f"{path.name} ({reason})")
    moment = time.time() if now is None else now
    for pattern in TEMPORARY:
        for path in sorted(cache_dir.glob(pattern)):
            with contextlib.suppress(OSError):
                if moment - path.stat().st_mtime > ABANDONED_AFTER_S and _remove(path):
                    removed.append(f"{path.name} (a build's temporary file)")
    removed += _remove_legacy(LEGACY_DIR)
    return removed


def _remove_legacy(folder: Path) -> list[str]:
    """Every cache in the folder an older copilot-driver kept beside its package, and
    the folder, so uninstalling the package leaves nothing behind."""
    removed = [
        f"{path} (beside the package)"
        for pattern in (PATTERN, *TEMPORARY)
        for path in sorted(folder.glob(pattern))
        if _remove(path)
    ]
    with contextlib.suppress(OSError):
        folder.rmdir()
    return removed


def _remove(path: Path) -> bool:
    try:
        path.unlink()
    except OSError:  # another build removed it first, or it is not ours to remove
        return False
    return True


__all__ = ["prune", "stale_reason"]
