"""Which events file a PATH given to the command means.

A new user points the command at what they have at hand: the events file, its
session folder, the `result.json` beside it (the file the driver names in its
log), or the state folder holding every session. Each is answered with the
events file a person would have picked, and a note saying which it was, rather
than with "No events" or a refusal.

A folder of sessions reports the newest (by its events file's modification
time: the run just made, which is what one looks at nearly every time); the
note names it and lists the others, so another is one copy-paste away.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from copilot_driver.report.sandbox import SANDBOX_FILE
from copilot_driver.vocabulary import EVENTS_FILE_NAME, RESULT_FILE_NAME

GIVE_EVENTS = (
    f"give the session's {EVENTS_FILE_NAME} or its folder (the driver's log names the "
    f"result.json beside it), or the state folder holding the session folders"
)
"""The fix, for every PATH that does not lead to an events file."""
OTHERS_LISTED = 10
"""Other sessions of a state folder named in the note, at most (newest first)."""
_BESIDE_EVENTS = {
    RESULT_FILE_NAME: "the driver's result file",
    SANDBOX_FILE: "the harness's sandbox record",
}
"""Files a session folder holds beside its events file: given one, read the events."""


@dataclass(frozen=True)
class Resolved:
    events: Path
    """The events file to read (it may still be missing or unreadable)."""
    notes: tuple[str, ...] = field(default=())
    """What was chosen instead of PATH itself, and why; one line each."""


def resolve_events(path: Path) -> Resolved | str:
    """The events file PATH means, or why there is none (one line, naming what was
    expected, then the fix)."""
    if path.is_dir():
        return _in_folder(path)
    name = _BESIDE_EVENTS.get(path.name)
    if name is None:
        return Resolved(path)  # an events file, or a missing one: reading it says which
    events = path.with_name(EVENTS_FILE_NAME)
    if not events.is_file():
        return (
            f"{path} is {name}, not an events file, and there is no "
            f"{EVENTS_FILE_NAME} beside it (expected {events}); {GIVE_EVENTS}"
        )
    return Resolved(events, (f"{path} is {name}; reporting the events file beside it, {events}",))


def _in_folder(folder: Path) -> Resolved | str:
    """The folder's own events file, else the newest of its sessions' events files."""
    own = folder / EVENTS_FILE_NAME
    if own.is_file():
        return Resolved(own)
    try:
        sessions = _sessions(folder)
    except OSError as error:
        return f"cannot list {folder}: {error.strerror or error}; {GIVE_EVENTS}"
    if not sessions:
        return (
            f"{folder} is a folder without {EVENTS_FILE_NAME} and without session "
            f"folders holding one (expected {own} or "
            f"{folder / '<sessionId>' / EVENTS_FILE_NAME}); {GIVE_EVENTS}"
        )
    (newest, modified), others = sessions[0], sessions[1:]
    return Resolved(newest, _folder_notes(folder, newest, modified, others))


def _sessions(folder: Path) -> list[tuple[Path, float]]:
    """`<folder>/<session>/events.jsonl` files with their modification times, newest
    first (ties by name, so the choice is the same on every run)."""
    found = []
    for child in folder.iterdir():
        events = child / EVENTS_FILE_NAME
        try:
            if events.is_file():
                found.append((events, events.stat().st_mtime))
        except OSError:
            continue  # a session folder we may not read is not one we can report
    return sorted(found, key=lambda item: (-item[1], item[0].parent.name))


def _folder_notes(
    folder: Path, newest: Path, modified: float, others: list[tuple[Path, float]]
) -> tuple[str, ...]:
    which = f"the newest of its {len(others) + 1:,} sessions" if others else "its only session"
    chosen = (
        f"{folder} holds no {EVENTS_FILE_NAME} of its own; reporting {which}, "
        f"{newest.parent.name} ({EVENTS_FILE_NAME} modified {_clock(modified)}): {newest}"
    )
    if not others:
        return (chosen,)
    listed = [f"{events.parent.name} ({_clock(at)})" for events, at in others[:OTHERS_LISTED]]
    more = len(others) - OTHERS_LISTED
    tail = f", and {more:,} more" if more > 0 else ""
    plural = "s" if len(others) > 1 else ""
    return (
        chosen,
        f"{len(others):,} other session{plural}, newest first: {', '.join(listed)}{tail}",
    )


def _clock(mtime: float) -> str:
    return datetime.fromtimestamp(mtime, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
