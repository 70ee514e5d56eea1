"""How a program reads its options, as data: the model the program table is written in. Pure.

The table (`programs.PROGRAMS`, `git`) names the options of a program that a name rule
does not cover. To find them in a command, it reads the arguments the way the program
does (getopt, git's parse-options, the interpreters' own loops):

- a `-xyz` cluster is read letter by letter; a letter that takes a value takes the rest
  of the cluster (`sort -k2o` is the key `2o`, not `-o`), or the next argument when the
  cluster ends with it;
- a `--name` is read in any abbreviation (`--u` may be `--upload-pack`), with or
  without `=value`;
- an interpreter's options end at its script (`perl x.pl -e y` hands `-e` to x.pl) or
  at the option that names what to run (`python -m pytest -c x`).

Where the reading is not certain, more arguments are read as options, never fewer: a
letter the entry does not know might take the rest of its cluster or not, so the rest
is searched all the same and never ends the options; an argument that may be the value
of the option before it is searched as an option too and never taken for the script.
A mistake in `flags` or `valued` can therefore only open a hole where it claims
certainty, which is why both list only letters that behave so in every version the
entry covers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property


def words(text: str) -> tuple[str, ...]:
    """A list written as data: words separated by blanks and newlines."""
    return tuple(text.split())


@dataclass(frozen=True)
class Options:
    """A program's options as far as the policy reads them, and those a name rule refuses."""

    short: str = ""
    """Letters refused in a `-xyz` cluster (so also `-qx`, `-xVALUE`), up to the first letter
    that takes a value: with `valued="k"`, `-k2x` is not `-x`."""
    long: tuple[str, ...] = ()
    """`--name`s refused as written, abbreviated to any prefix, and with `=value`."""
    words: frozenset[str] = frozenset()
    """Whole arguments refused (find's `-exec`, zip's `-TT`)."""
    flags: str = ""
    """Letters that take no value: the reading of a cluster passes over them."""
    valued: str = ""
    """Letters that take a value: the rest of their cluster, else the next argument. After
    any other letter the reading is no longer certain (the rest is searched all the same)."""
    stops: str = ""
    """Of the `valued` letters, those after which every argument belongs to what they name
    (python's `-m MODULE ARGS`): not the interpreter's options."""
    script_ends: bool = False
    """The first argument that is no option (the script) ends the options: what follows is
    the script's (perl, python, node, ...), where getopt would read options anywhere."""

    @cached_property
    def _pattern(self) -> re.Pattern[str] | None:
        """All of the refusals as one expression over the arguments joined by NULs (which
        a command never holds), so a long command is scanned at the speed of `re`.
        Compiled on first use: the table holds hundreds, a run reads a few."""
        choices = [re.escape(word) for word in self.words]
        prefixes = {name[:end] for name in self.long for end in range(1, len(name) + 1)}
        if prefixes:
            spelled = "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True))
            choices.append(f"--(?:{spelled})(?:=[^\x00]*)?")
        if self.short:
            choices.append(self._cluster())
        if not choices:
            return None
        return re.compile(f"(?:^|\x00)(?P<arg>{'|'.join(choices)})(?=\x00|$)")

    @cached_property
    def _not_a_flag(self) -> re.Pattern[str]:
        flags = f"[^{re.escape(self.flags)}]" if self.flags else "."
        return re.compile(flags, re.DOTALL)

    def _cluster(self) -> str:
        """A cluster holding a refused letter: after the flags, either that letter, or a
        letter of unknown reading (neither flag nor valued) and a refused letter later."""
        refused = f"[{re.escape(self.short)}]"
        known = re.escape(self.flags + self.valued)
        unknown = f"[^\x00{known}]" if known else "[^\x00]"
        flags = f"[{re.escape(self.flags)}]*" if self.flags else ""
        return f"-(?!-){flags}(?:{refused}|{unknown}[^\x00]*?{refused})[^\x00]*"

    def refused(self, args: Sequence[str]) -> str | None:
        """The first argument these options refuse, quoted for a message, or None."""
        if self._pattern is None:
            return None
        found = self._pattern.search("\x00".join(args[: self.end(args)]))
        return None if found is None else self._describe(found.group("arg"))

    def end(self, args: Sequence[str]) -> int:
        """How many of `args` the program reads as its own options: all of them, unless
        they end at the script (`script_ends`) or at a `stops` letter."""
        if not (self.stops or self.script_ends):
            return len(args)
        maybe_value = False  # the argument may be the value of the option before it
        for index, arg in enumerate(args):
            if arg.startswith("--"):
                maybe_value = "=" not in arg  # `--name VALUE`, or a flag: not certain
            elif arg.startswith("-") and arg != "-":
                found = self._not_a_flag.search(arg, 1)
                if found is None:
                    maybe_value = False
                elif found.group() in self.valued and not maybe_value:
                    if found.group() in self.stops:
                        return index + 1
                    maybe_value = found.end() == len(arg)
                else:
                    maybe_value = True
            elif maybe_value:
                maybe_value = False
            elif self.script_ends:
                return index
        return len(args)

    def _describe(self, arg: str) -> str:
        if arg.startswith("--") and arg not in self.words:
            given = arg[2:].split("=", 1)[0]
            match = next(name for name in self.long if name.startswith(given))
            return f"`{arg}`" if given == match else f"`{arg}` (may abbreviate `--{match}`)"
        letter = next((letter for letter in arg[1:] if letter in self.short), None)
        if arg in self.words or letter is None or len(arg) == 2:
            return f"`{arg}`"
        return f"`{arg}` (holds `-{letter}`)"


def cluster_letters(arg: str, flags: str, valued: str) -> str:
    """The letters of the cluster `arg` that may be options: up to and including the first
    one that takes a value when only flags come before it, else all of them."""
    letters = arg[1:]
    first = len(letters) - len(letters.lstrip(flags))  # the first letter that is no flag
    if first < len(letters) and letters[first] in valued:
        return letters[: first + 1]
    return letters
