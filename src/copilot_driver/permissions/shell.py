"""Shell commands: split into segments, match against `shell(...)` rules. Fail closed.

The policy approves a shell request only when EVERY segment of the command
is allowed, so the parser's job is to find every command the shell would
run. It understands exactly one shape, a list of simple commands:

    [NAME=value ...] word [word ...] [redirection ...]  ( && || | |& ; newline )  ...

with POSIX quoting ('...', "...", backslash), comments, `$VAR` and
`${VAR}` in arguments, and redirections. Anything that could run a command
the segments do not show raises ShellParseError and is denied (unless plain
`shell` is allowed): command and process substitution, backticks,
subshells and groups, here-documents, background `&`, shell keywords,
non-literal command names, `$'...'`, unterminated quotes, NUL bytes.
Wrappers that run their arguments as a command (`eval`, `bash -c`, `sudo`,
`xargs`, `env`, ...) are never matched by a rule either.

Rules (spec 5.3, 5.4, matched per segment):
    shell(NAME:*)            the segment's command name is NAME (word boundary)
    shell(git checkout:*)    the segment's words start with `git checkout`
    shell(NAME)              no space: the command name is NAME
    shell(git status -s)     with spaces: the whole segment is exactly this

Beyond the spec, as defence in depth, a prefix or name rule does not cover
a segment that (a) assigns a variable that changes what runs (PATH, LD_*,
GIT_SSH_COMMAND, ...), (b) expands a variable (`git $X` could hide
`-c ...`), (c) redirects output to a file (anything but /dev/null or
another descriptor), or (d) passes an option known to make an allowed
program run another command (`git -c`, `git rebase --exec`, `find -exec`,
...). An exact rule that spells the segment out still does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_BRACED_VARIABLE = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_SPECIAL_PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]|[@*#?$!-]")
_GLOB_CHARS = frozenset("*?[")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")

KEYWORDS = frozenset(
    {
        "!",
        "{",
        "}",
        "[[",
        "]]",
        "case",
        "coproc",
        "do",
        "done",
        "elif",
        "else",
        "esac",
        "fi",
        "for",
        "function",
        "if",
        "in",
        "select",
        "then",
        "time",
        "until",
        "while",
    }
)
"""Reserved words: a compound command can hide other commands."""

WRAPPERS = frozenset(
    {
        ".",
        "ash",
        "bash",
        "builtin",
        "busybox",
        "chroot",
        "chrt",
        "command",
        "coproc",
        "csh",
        "dash",
        "doas",
        "env",
        "eval",
        "exec",
        "expect",
        "fish",
        "flock",
        "ionice",
        "ksh",
        "ltrace",
        "mksh",
        "nice",
        "nohup",
        "nsenter",
        "parallel",
        "pkexec",
        "runuser",
        "script",
        "setsid",
        "sh",
        "source",
        "stdbuf",
        "strace",
        "su",
        "sudo",
        "taskset",
        "tcsh",
        "time",
        "timeout",
        "trap",
        "unshare",
        "watch",
        "xargs",
        "zsh",
    }
)
"""Programs that run their arguments as another command: never matched by a rule."""

RISKY_VARIABLES = re.compile(
    r"(PATH|HOME|XDG_.*|IFS|ENV|BASH_ENV|BASH_FUNC_.*|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|CDPATH"
    r"|LD_.*|DYLD_.*|GIT_.*|SSH_ASKPASS|.*_COMMAND|.*PAGER|.*EDITOR|VISUAL|.*ASKPASS"
    r"|PYTHON.*|NODE_OPTIONS|NODE_PATH|PERL5.*|PERLLIB|RUBYOPT|RUBYLIB|JAVA_TOOL_OPTIONS"
    r"|_JAVA_OPTIONS|TERMINFO|LESSOPEN|LESSCLOSE|MANPAGER|BROWSER)"
)
"""Variables whose value can make a command run something else."""

SAFE_REDIRECT_TARGETS = frozenset({"/dev/null"})


@dataclass(frozen=True)
class Redirection:
    operator: str
    """`>`, `>>`, `>|`, `&>`, `&>>`, `<`, `<>`, `>&`, `<&` (with the fd, e.g. `2>&`)."""
    target: str

    @property
    def writes_a_file(self) -> bool:
        """True unless it only duplicates a descriptor or reads/writes /dev/null."""
        if self.operator.endswith("&") and (self.target.isdigit() or self.target == "-"):
            return False
        if self.target in SAFE_REDIRECT_TARGETS:
            return False
        operator = self.operator.lstrip("0123456789")
        return operator == "<>" or not operator.startswith("<")


@dataclass(frozen=True)
class Segment:
    """One simple command of a command line."""

    text: str
    words: tuple[str, ...]
    """Unquoted words after the leading assignments; `words[0]` is the command name."""
    assignments: tuple[str, ...] = ()
    redirections: tuple[Redirection, ...] = ()
    expands_variables: bool = False
    """Some word holds `$VAR`: its value (options, even) is unknown until run time."""
    expands_braces: bool = False
    """Some word is a brace expansion (`{-c,x}` becomes two words, `-c x`)."""

    @property
    def name(self) -> str:
        return self.words[0]

    def shape(self) -> tuple[tuple[str, ...], tuple[str, ...], tuple[Redirection, ...]]:
        """What an exact rule must equal: spacing and quoting do not matter."""
        return (self.assignments, self.words, self.redirections)


class ShellParseError(ValueError):
    """The command is not a plain list of simple commands (always denied)."""


@dataclass
class _Word:
    chars: list[str] = field(default_factory=list)
    start: int = 0
    quoted: bool = False
    expanded: bool = False
    globbed: bool = False
    raw_head: str = ""
    """The unquoted source text the word began with (for assignment detection)."""
    plain: list[str] = field(default_factory=list)
    """The word with quoted characters blanked out (for brace-expansion detection)."""


def parse_command(text: str) -> list[Segment]:
    """Split `text` into segments; raise ShellParseError for anything else."""
    return _Parser(text).parse()


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.segments: list[Segment] = []
        self.pieces: list[tuple[str, object]] = []  # ("word", _Word) | ("redir", op)
        self.word: _Word | None = None
        self.segment_start = 0
        self.previous_separator: str | None = None

    def parse(self) -> list[Segment]:
        if "\x00" in self.text:
            raise ShellParseError("a NUL byte")
        text = self.text
        while self.i < len(text):
            char = text[self.i]
            nxt = text[self.i + 1] if self.i + 1 < len(text) else ""
            if char in " \t":
                self._end_word()
                self.i += 1
            elif char == "\n":
                self._end_word()
                if self.pieces or self.previous_separator not in ("&&", "||", "|", "|&"):
                    self._end_segment("\n")
                self.i += 1  # (after `&&`, `||`, `|` a newline continues the command)
            elif char == "\\":
                self._backslash(nxt)
            elif char == "'":
                self._single_quoted()
            elif char == '"':
                self._double_quoted()
            elif char == "`":
                raise ShellParseError("command substitution (backticks)")
            elif char == "$":
                self._dollar(nxt)
            elif char == "#" and self.word is None:
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
            elif char in "()":
                raise ShellParseError("a subshell, group or function definition")
            elif char == ";":
                if nxt in (";", "&"):
                    raise ShellParseError(f"`;{nxt}` (case syntax)")
                self._end_word()
                self._end_segment(";")
                self.i += 1
            elif char == "&":
                self._ampersand(nxt)
            elif char == "|":
                self._end_word()
                operator = "||" if nxt == "|" else "|&" if nxt == "&" else "|"
                self._end_segment(operator)
                self.i += len(operator)
            elif char in "<>":
                self._redirection(char, nxt)
            else:
                word = self._current_word()
                if char in _GLOB_CHARS:
                    word.globbed = True
                word.chars.append(char)
                word.plain.append(char)
                word.raw_head += char if not word.quoted else ""
                self.i += 1
        self._end_word()
        self._end_segment(None)
        if not self.segments:
            raise ShellParseError("an empty command")
        return self.segments

    # -- lexical pieces ----------------------------------------------------

    def _current_word(self) -> _Word:
        if self.word is None:
            self.word = _Word(start=self.i)
        return self.word

    def _backslash(self, nxt: str) -> None:
        if nxt == "\n":  # line continuation
            self.i += 2
            return
        if not nxt:
            raise ShellParseError("a trailing backslash")
        word = self._current_word()
        word.chars.append(nxt)
        word.quoted = True
        self.i += 2

    def _single_quoted(self) -> None:
        end = self.text.find("'", self.i + 1)
        if end < 0:
            raise ShellParseError("an unterminated single quote")
        word = self._current_word()
        word.chars.extend(self.text[self.i + 1 : end])
        word.quoted = True
        self.i = end + 1

    def _double_quoted(self) -> None:
        word = self._current_word()
        word.quoted = True
        text, i = self.text, self.i + 1
        while i < len(text):
            char = text[i]
            if char == '"':
                self.i = i + 1
                return
            if char == "`":
                raise ShellParseError("command substitution (backticks)")
            if char == "\\" and i + 1 < len(text):
                escaped = text[i + 1]
                if escaped == "\n":
                    i += 2
                    continue
                if escaped in '"\\$`':
                    word.chars.append(escaped)
                    i += 2
                    continue
            if char == "$":
                i = self._expansion(i, word)
                continue
            word.chars.append(char)
            i += 1
        raise ShellParseError("an unterminated double quote")

    def _dollar(self, nxt: str) -> None:
        if nxt == "[":
            raise ShellParseError("arithmetic expansion ($[...])")
        if nxt == "'":
            raise ShellParseError("ANSI-C quoting ($'...')")
        if nxt == '"':
            raise ShellParseError('locale quoting ($"...")')
        word = self._current_word()
        self.i = self._expansion(self.i, word)

    def _expansion(self, i: int, word: _Word) -> int:
        """Consume `$...` at `i`; allow only plain parameters. Return the next index."""
        rest = self.text[i + 1 :]
        if rest.startswith("("):
            raise ShellParseError("command substitution ($(...))")
        if rest.startswith("{"):
            braced = _BRACED_VARIABLE.match(rest)
            if not braced:
                raise ShellParseError("a parameter expansion with operators (${...})")
            length = braced.end()
        else:
            plain = _SPECIAL_PARAMETER.match(rest)
            if not plain:  # a lone `$` is a literal dollar sign
                word.chars.append("$")
                return i + 1
            length = plain.end()
        word.chars.append(self.text[i : i + 1 + length])
        word.expanded = True
        return i + 1 + length

    def _ampersand(self, nxt: str) -> None:
        if nxt == "&":
            self._end_word()
            self._end_segment("&&")
            self.i += 2
        elif nxt == ">":
            self._redirection("&", ">")
        else:
            raise ShellParseError("a background job (&)")

    def _redirection(self, char: str, nxt: str) -> None:
        text, i = self.text, self.i
        if char in "<>" and nxt == "(":
            raise ShellParseError("process substitution")
        if char == "<" and nxt == "<":
            raise ShellParseError("a here-document or here-string")
        # A word of digits glued to the operator is its file descriptor.
        fd = ""
        word = self.word
        if (
            word is not None
            and not word.quoted
            and "".join(word.chars).isdigit()
            and word.start + len(word.chars) == i
        ):
            fd = "".join(word.chars)
            self.word = None
        self._end_word()
        for operator in ("&>>", "&>", ">>", ">|", ">&", "<&", "<>", ">", "<"):
            if text.startswith(operator, i):
                break
        self.i = i + len(operator)
        self.pieces.append(("redir", fd + operator))

    def _end_word(self) -> None:
        if self.word is not None:
            self.pieces.append(("word", self.word))
            self.word = None

    # -- segments ----------------------------------------------------------

    def _end_segment(self, separator: str | None) -> None:
        pieces, self.pieces = self.pieces, []
        text = self.text[self.segment_start : self.i].strip()
        self.segment_start = self.i + (len(separator) if separator else 0)
        previous, self.previous_separator = self.previous_separator, separator
        if not pieces:
            # Blank lines and a trailing `;` are fine; an empty operand is not.
            if separator in (None, "\n") and previous in (None, ";", "\n"):
                return
            raise ShellParseError(
                f"an empty command before `{separator or 'the end'}`"
                if separator not in (None, "\n")
                else f"a missing command after `{previous}`"
            )
        self.segments.append(self._segment(text, pieces))

    def _segment(self, text: str, pieces: list[tuple[str, object]]) -> Segment:
        assignments: list[str] = []
        words: list[str] = []
        redirections: list[Redirection] = []
        expands = False
        braces = False
        index = 0
        while index < len(pieces):
            kind, value = pieces[index]
            if kind == "redir":
                if index + 1 >= len(pieces) or pieces[index + 1][0] != "word":
                    raise ShellParseError(f"a redirection `{value}` without a target")
                target = pieces[index + 1][1]
                assert isinstance(target, _Word)
                redirections.append(Redirection(str(value), "".join(target.chars)))
                index += 2
                continue
            assert isinstance(value, _Word)
            word = "".join(value.chars)
            expands = expands or value.expanded
            braces = braces or bool(_BRACE_EXPANSION.search("".join(value.plain)))
            if not words and _ASSIGNMENT.match(value.raw_head):
                assignments.append(word)
            else:
                if not words:
                    self._check_command_name(value, word)
                words.append(word)
            index += 1
        if not words:
            raise ShellParseError("an assignment or redirection without a command")
        return Segment(text, tuple(words), tuple(assignments), tuple(redirections), expands, braces)

    @staticmethod
    def _check_command_name(value: _Word, name: str) -> None:
        if value.expanded:
            raise ShellParseError("a command name that is not literal")
        if value.globbed:
            raise ShellParseError("a command name with glob characters")
        if not name:
            raise ShellParseError("an empty command name")
        if not value.quoted and name in KEYWORDS:
            raise ShellParseError(f"the shell keyword `{name}`")


# -- rules -------------------------------------------------------------------

_FIND_EXECUTING = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)

# git, the program a `shell(git:*)` rule is most often written for, can be
# told to run other programs in many ways. These are the known ones.
_GIT_GLOBAL_WITH_VALUE = frozenset(
    {
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--config-env",
        "--super-prefix",
        "--attr-source",
        "--list-cmds",
    }
)
_GIT_RUNNING_LONG_OPTIONS = (
    "--config-env",
    "--exec-path",
    "--exec",
    "--upload-pack",
    "--receive-pack",
    "--extcmd",
    "--tool",
    "--open-files-in-pager",
    "--output",
    "--tree-filter",
    "--index-filter",
    "--msg-filter",
    "--commit-filter",
    "--env-filter",
    "--parent-filter",
    "--tag-name-filter",
    "--smtp-server",
    "--sendmail-cmd",
    "--to-cmd",
    "--cc-cmd",
    "--header-cmd",
)
"""Long options that run a program or write a file; git accepts unique prefixes too."""
_GIT_RUNNING_SHORT_OPTIONS = {
    "rebase": "x",
    "difftool": "xt",
    "mergetool": "t",
    "clone": "u",
    "ls-remote": "u",
    "grep": "O",
}
"""Per subcommand, short options (also bundled, as in `-qx`) that run a program."""
_GIT_RUNNING_SUBCOMMANDS = frozenset(
    {
        "filter-branch",
        "instaweb",
        "send-email",
        "daemon",
        "web--browse",
        "credential",
        "credential-store",
        "credential-cache",
        "p4",
        "svn",
        "remote-ext",
        "remote-fd",
        "upload-pack",
        "receive-pack",
        "upload-archive",
        "shell",
        "archimport",
        "cvsimport",
        "cvsserver",
        "quiltimport",
        "difftool",
        "mergetool",
    }
)
_GIT_RUNNING_ACTIONS = {"bisect": "run", "submodule": "foreach"}
_GIT_CONFIG_READS = frozenset(
    {
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "--list",
        "-l",
    }
)


def executing_option(segment: Segment) -> str | None:
    """An argument that makes an allowed program run another one, if any.

    Best effort, not a sandbox: `shell(git:*)` still allows all of git's
    ordinary work. Narrower rules (`shell(git status:*)`) are stricter.
    """
    arguments = segment.words[1:]
    if segment.name == "find":
        return next((a for a in arguments if a in _FIND_EXECUTING), None)
    if segment.name == "git":
        return _git_running(arguments)
    return None


def _git_running(arguments: tuple[str, ...]) -> str | None:
    index = 0
    while index < len(arguments) and arguments[index].startswith("-"):
        option = arguments[index]
        name = option.split("=", 1)[0]
        if name in ("-c", "--config-env") or option.startswith("-c"):
            return option  # `git -c alias.x='!cmd' x` runs cmd
        if _abbreviates(name, _GIT_RUNNING_LONG_OPTIONS):
            return option
        index += 2 if option in _GIT_GLOBAL_WITH_VALUE else 1
    if index >= len(arguments):
        return None
    subcommand, rest = arguments[index], arguments[index + 1 :]
    if subcommand in _GIT_RUNNING_SUBCOMMANDS:
        return subcommand
    if subcommand == "config" and not _git_config_reads(rest):
        return "config (writing configuration can make git run programs)"
    action = _GIT_RUNNING_ACTIONS.get(subcommand)
    positional = [a for a in rest if not a.startswith("-")]
    if action is not None and action in positional[:2]:
        return f"{subcommand} {action}"
    letters = _GIT_RUNNING_SHORT_OPTIONS.get(subcommand, "")
    for argument in rest:
        if argument == "--":
            break
        if argument.startswith("--"):
            if _abbreviates(argument.split("=", 1)[0], _GIT_RUNNING_LONG_OPTIONS):
                return argument
        elif argument.startswith("-") and any(letter in argument[1:] for letter in letters):
            return argument
    return None


def _abbreviates(name: str, options: tuple[str, ...]) -> bool:
    """`--exe` stands for `--exec`: git accepts any unique prefix of a long option."""
    return name.startswith("--") and len(name) > 3 and any(o.startswith(name) for o in options)


def _git_config_reads(rest: tuple[str, ...]) -> bool:
    """Whether `git config ...` only reads (`--get`, `--list`, `get`, one key)."""
    if any(argument in _GIT_CONFIG_READS for argument in rest):
        return True
    positional = [a for a in rest if not a.startswith("-")]
    if positional[:1] in (["get"], ["list"]):
        return True
    flags = [a for a in rest if a.startswith("-")]
    scopes = {"--global", "--system", "--local", "--worktree", "--show-origin", "--show-scope"}
    return len(positional) == 1 and all(flag in scopes for flag in flags)


@dataclass(frozen=True)
class ShellRules:
    """The `shell(...)` entries of an allowlist, compiled once."""

    names: frozenset[str] = frozenset()
    """`shell(NAME)` and `shell(NAME:*)`: the command name alone decides."""
    prefixes: tuple[tuple[str, ...], ...] = ()
    """`shell(git checkout:*)`: the segment's first words."""
    exact: frozenset[tuple[tuple[str, ...], tuple[str, ...], tuple[Redirection, ...]]] = frozenset()
    """`shell(git status -s)`: whole segments, by shape."""
    unusable: tuple[str, ...] = ()
    """Rules that could not be understood: they never match anything."""

    @staticmethod
    def compile(rules: list[str]) -> ShellRules:
        names: set[str] = set()
        prefixes: list[tuple[str, ...]] = []
        exact: set[tuple[tuple[str, ...], tuple[str, ...], tuple[Redirection, ...]]] = set()
        unusable: list[str] = []
        for rule in rules:
            body = rule.strip()
            try:
                if body.endswith(":*"):
                    (segment,) = parse_command(body[:-2])
                    if segment.assignments or segment.redirections:
                        raise ShellParseError("a prefix rule with assignments or redirections")
                    if segment.name in WRAPPERS:
                        raise ShellParseError("a wrapper is never matched by a rule")
                    if len(segment.words) == 1:
                        names.add(segment.name)
                    else:
                        prefixes.append(segment.words)
                elif not any(c.isspace() for c in body):
                    (segment,) = parse_command(body)
                    if segment.assignments or segment.redirections or len(segment.words) != 1:
                        raise ShellParseError("not a command name")
                    if segment.name in WRAPPERS:
                        raise ShellParseError("a wrapper is never matched by a rule")
                    names.add(segment.name)
                else:
                    (segment,) = parse_command(body)
                    exact.add(segment.shape())
            except ValueError:  # ShellParseError, or not exactly one segment
                unusable.append(rule)
        return ShellRules(frozenset(names), tuple(prefixes), frozenset(exact), tuple(unusable))

    def allows(self, segment: Segment) -> bool:
        """Whether some rule covers this one segment."""
        if segment.shape() in self.exact:
            return True
        if segment.name in WRAPPERS or segment.name.rsplit("/", 1)[-1] in WRAPPERS:
            return False
        if not (
            segment.name in self.names or any(segment.words[: len(p)] == p for p in self.prefixes)
        ):
            return False
        return risk(segment) is None

    def verdict(self, segments: list[Segment]) -> str | None:
        """None when every segment is allowed, else why not (for the log)."""
        for segment in segments:
            if not self.allows(segment):
                reason = risk(segment)
                detail = f" ({reason})" if reason else ""
                return f"`{segment.text}` matches no shell rule{detail}"
        return None


def risk(segment: Segment) -> str | None:
    """Why a prefix or name rule should not cover this segment, if anything."""
    if segment.name in WRAPPERS or segment.name.rsplit("/", 1)[-1] in WRAPPERS:
        return f"`{segment.name}` runs another command"
    for assignment in segment.assignments:
        variable = assignment.split("=", 1)[0].rstrip("+")
        if RISKY_VARIABLES.fullmatch(variable):
            return f"it sets {variable}"
    if segment.expands_variables:
        return "it expands a variable, whose value could hide options"
    if segment.expands_braces:
        return "it uses brace expansion, which could produce options"
    for redirection in segment.redirections:
        if redirection.writes_a_file:
            return f"it redirects output to {redirection.target}"
    option = executing_option(segment)
    if option is not None:
        return f"`{option}` makes {segment.name} run another command"
    return None
