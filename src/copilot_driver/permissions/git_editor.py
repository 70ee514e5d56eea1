"""Which git commands start the editor, and which options give them their message instead. Pure.

`commit` without a message, `tag -a` without one, `notes add` and `notes edit`,
and any of them with an option that starts the editor whatever else is given:
the editor is core.editor or $EDITOR, a program of the environment's choosing,
so git.py does not cover these commands. Options are read as git reads them:
clusters of short letters, long options in any abbreviation, values glued or
in the next argument.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from copilot_driver.permissions.options import cluster_letters, words


@dataclass(frozen=True)
class Message:
    """How a subcommand that would start the editor is given its message instead."""

    flags: str
    """Short options without a value."""
    valued: str
    """Short options with a value: the rest of the cluster, else the next argument."""
    optional: str
    """Short options whose value is only the rest of the cluster (`-S[keyid]`)."""
    gives: str
    """Of `valued`, those that give the message (`-m`, `-F`, `-C`)."""
    edits: str
    """Short options that start the editor whatever else is given (`-e`)."""
    long_gives: frozenset[str]
    """Long options that give the message, spelled in full (an abbreviation counts as none)."""
    long_edits: tuple[str, ...]
    """Long options that start the editor, in any abbreviation."""
    long_valued: frozenset[str]
    """Long options whose value may be the next argument."""
    long_flags: frozenset[str]
    """Long options without a value; after any other, the next argument may be its value."""


_COMMIT = Message(
    flags="aiopnsvqzh",
    valued="mFCct",
    optional="uS",
    gives="mFC",
    edits="ec",
    long_gives=frozenset(words("message file reuse-message no-edit fixup")),
    long_edits=("edit", "reedit-message"),
    long_valued=frozenset(
        words(
            """
            author date template cleanup fixup squash trailer pathspec-from-file message file
            reuse-message reedit-message
            """
        )
    ),
    long_flags=frozenset(
        words(
            """
            all patch interactive include only amend no-verify verify signoff no-signoff quiet
            verbose allow-empty allow-empty-message reset-author short branch porcelain long null
            dry-run status no-status no-post-rewrite no-gpg-sign no-edit
            """
        )
    ),
)
_TAG = Message(
    flags="asfdlvi",
    valued="mFu",
    optional="n",
    gives="mF",
    edits="e",
    long_gives=frozenset(words("message file")),
    long_edits=("edit",),
    long_valued=frozenset(words("message file local-user cleanup contains points-at sort")),
    long_flags=frozenset(words("annotate sign no-sign force delete list verify")),
)
_TAG_ANNOTATES = ("annotate", "sign", "local-user")
"""`git tag` long options that make the tag annotated (so want a message), in any abbreviation."""
_NOTES = Message(
    flags="f",
    valued="mFCc",
    optional="",
    gives="mFC",
    edits="c",
    long_gives=frozenset(words("message file reuse-message")),
    long_edits=("reedit-message", "edit"),
    long_valued=frozenset(words("message file reuse-message reedit-message")),
    long_flags=frozenset(words("force allow-empty no-stripspace stripspace")),
)


_VALUE, _MAYBE, _ARGUMENT = "value", "maybe", "argument"
"""What the argument after an option is: its value, perhaps its value, or an argument."""


def _given(args: tuple[str, ...], spec: Message) -> tuple[bool, str | None]:
    """(a message is given, the option that starts the editor whatever is given).

    An argument that may be the value of the option before it is searched for options
    that start the editor, but never counts as giving the message."""
    given, certain, index = False, True, 0
    while index < len(args) and not (args[index] == "--" and certain):
        arg = args[index]
        following = args[index + 1] if index + 1 < len(args) else ""
        index += 1
        if not arg.startswith("-") or arg == "-":
            certain = True  # a value, or an argument
            continue
        read = _long if arg.startswith("--") else _short
        gives, edits, then = read(arg, following, spec)
        if edits:
            return given, arg
        given = given or (certain and gives)
        if certain and then == _VALUE:
            index += 1
        else:
            certain = then == _ARGUMENT
    return given, None


def _long(arg: str, following: str, spec: Message) -> tuple[bool, bool, str]:
    """(gives the message, starts the editor, what follows) for `--name[=value]`."""
    name, equals, value = arg[2:].partition("=")
    if name and any(edit.startswith(name) for edit in spec.long_edits):
        return False, True, _ARGUMENT
    if name == "fixup" and (value if equals else following).startswith(("amend:", "reword:")):
        return False, True, _ARGUMENT  # `--fixup=amend:X` and `reword:X` edit the message
    if equals or name in spec.long_flags:
        then = _ARGUMENT
    else:
        then = _VALUE if name in spec.long_valued else _MAYBE
    return name in spec.long_gives, False, then


def _short(arg: str, following: str, spec: Message) -> tuple[bool, bool, str]:
    """(gives the message, starts the editor, what follows) for a `-xyz` cluster: flags,
    then at most one letter with a value, as git reads it; or a letter it does not know."""
    letters = cluster_letters(arg, spec.flags, spec.valued + spec.optional)
    if any(letter in letters for letter in spec.edits):
        return False, True, _ARGUMENT
    before, last = letters[:-1], letters[-1]
    known = spec.flags + spec.valued + spec.optional
    if last not in known or before.strip(spec.flags):
        return False, False, _MAYBE
    then = _VALUE if last in spec.valued and len(letters) == len(arg) - 1 else _ARGUMENT
    return last in spec.gives, False, then


def _commit_editor(rest: tuple[str, ...]) -> str | None:
    given, edit = _given(rest, _COMMIT)
    if edit is not None:
        return f"`{edit}` makes `git commit` start the editor"
    return None if given else "`git commit` without -m, -F, -C or --no-edit starts the editor"


def _tag_editor(rest: tuple[str, ...]) -> str | None:
    given, edit = _given(rest, _TAG)
    if edit is not None:
        return f"`{edit}` makes `git tag` start the editor"
    annotated = any(_annotates(arg) for arg in rest)
    return "`git tag -a` without -m or -F starts the editor" if annotated and not given else None


def _annotates(arg: str) -> bool:
    """`-a`, `-s`, `-u` (in any cluster), `--annotate`, `--sign`, `--local-user` (in any
    abbreviation): the tag is annotated, so it wants a message."""
    if arg.startswith("--"):
        name = arg[2:].split("=", 1)[0]
        return bool(name) and any(full.startswith(name) for full in _TAG_ANNOTATES)
    return arg.startswith("-") and bool(set(arg) & set("asu"))


def _notes_editor(rest: tuple[str, ...]) -> str | None:
    index = 0
    while index < len(rest) and rest[index].startswith("-"):
        index += 2 if rest[index] == "--ref" else 1
    action = rest[index] if index < len(rest) else "list"
    if action == "edit":
        return "`git notes edit` starts the editor"
    if action not in ("add", "append"):
        return None
    given, edit = _given(rest[index + 1 :], _NOTES)
    if edit is not None or not given:
        return f"`git notes {action}` without -m, -F or -C starts the editor"
    return None


_CHECKS: dict[str, Callable[[tuple[str, ...]], str | None]] = {
    "commit": _commit_editor,
    "tag": _tag_editor,
    "notes": _notes_editor,
}
"""Subcommands that start the editor unless told the message (measured with git 2.39 and a
core.editor that leaves a file)."""


def editor_refusal(subcommand: str, rest: tuple[str, ...]) -> str | None:
    """Why `git SUBCOMMAND REST` starts the editor, or None."""
    check = _CHECKS.get(subcommand)
    return check(rest) if check is not None else None
