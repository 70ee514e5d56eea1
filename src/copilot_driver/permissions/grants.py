"""What a shell rule grants beyond its words: code execution. Pure.

`shell(python:*)` reads like "let the agent use python", and it is: python
runs whatever program it is given, one the agent just wrote included. The
same holds for every program that runs code by design: interpreters,
package managers (install scripts, `npm run`), build tools and test runners
(the Makefile, the test files), databases with a shell escape, a search
tool that runs preprocessors, and git (the repository's hooks and
configured programs). The policy cannot take that back with a table of
options, so it says it: each allow rule naming such a program is reported
once at start (`permissions.grants_code_execution`, and a notice under
GitHub Actions). What contains that code is the harness's sandbox.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from copilot_driver.permissions.bash import ShellParseError, parse_command


def _each(kind: str, names: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), kind)


RUNS_CODE_BY_DESIGN: Mapping[str, str] = {
    **_each(
        "an interpreter: it runs any program it is given",
        """
        python python2 python3 pypy pypy3 node nodejs bun deno perl ruby php lua luajit Rscript
        julia tclsh java jshell osascript pwsh powershell
        """,
    ),
    **_each(
        "a package manager: it runs install scripts and project scripts",
        "npm pnpm yarn pip pip3 pipx uv poetry pdm hatch cargo go gem bundle composer dotnet",
    ),
    **_each(
        "a build tool: it runs the commands of the build files",
        "make gmake cmake ninja meson bazel gradle gradlew mvn ant just task scons",
    ),
    **_each(
        "a test runner: it runs the test files",
        "pytest tox nox jest vitest mocha rspec phpunit ctest",
    ),
    **_each("a database client with a shell escape", "sqlite3 psql mysql mariadb duckdb"),
    "rg": "a search tool that runs the preprocessor `--pre` names",
    "git": "version control that runs the repository's hooks and the programs its "
    "configuration names",
}
"""Program name -> why a rule naming it grants running code."""


@dataclass(frozen=True)
class CodeGrant:
    rule: str
    """As written: `shell(python:*)`."""
    program: str
    why: str

    def describe(self) -> str:
        return (
            f"the rule {self.rule} grants running code: `{self.program}` is {self.why}. "
            "The permission policy cannot narrow that; the harness's sandbox "
            "(--sandbox workspace) is what keeps it inside the workspace"
        )


def code_execution_grants(shell_rules: Iterable[str]) -> list[CodeGrant]:
    """The allow rules (insides of `shell(...)`) that grant running code, in order."""
    grants = []
    for body in shell_rules:
        try:
            first = parse_command(body.strip().removesuffix(":*"))[0]
        except ShellParseError:
            continue  # reported as unusable, or an exact rule outside the literal subset
        program = first.name.rsplit("/", 1)[-1]
        why = RUNS_CODE_BY_DESIGN.get(program)
        if why is None and program.startswith("python"):
            why = RUNS_CODE_BY_DESIGN["python"]
        if why is not None:
            grants.append(CodeGrant(f"shell({body})", program, why))
    return grants
