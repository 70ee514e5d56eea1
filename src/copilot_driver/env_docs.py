"""The environment table written out: `copilot-driver --help`'s list of variables
and docs/configuration.md's table (a test keeps that page in sync with
`markdown_table()`)."""

from __future__ import annotations

from collections.abc import Iterable

from copilot_driver.env import DRIVER_VARIABLES
from copilot_driver.variable import Variable


def usage_lines(variables: Iterable[Variable] = DRIVER_VARIABLES) -> str:
    """The variables as `--help` lists them, one per line."""
    rows = list(variables)
    width = max(len(variable.name) for variable in rows) + 2
    return "".join(f"  {variable.name:<{width}}{variable.summary}\n" for variable in rows)


def markdown_table(variables: Iterable[Variable] = DRIVER_VARIABLES) -> str:
    """docs/configuration.md's table of the driver's variables."""
    lines = ["| variable | rule |", "|---|---|"]
    lines += [f"| `{variable.name}` | {variable.rule} |" for variable in variables]
    return "\n".join(lines) + "\n"
