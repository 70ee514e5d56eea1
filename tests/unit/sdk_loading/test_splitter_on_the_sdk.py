"""The splitter on the installed SDK: its statements run the eager import's bytecode.

Each statement is compiled alone, yet every function and class body in it must be
the very code object a whole-module compile makes (bytecode, constants, names,
line table, first line): the compiler's choices depend on the module around a
statement (it compiles a call on an imported name without the method-call
shortcut), which the splitter reproduces.
"""

from __future__ import annotations

import ast
import marshal
from pathlib import Path
from types import CodeType

import pytest

from copilot_driver.sdk_loading import sdk_folder
from copilot_driver.sdk_loading.splitter import split_module

MODULES = {
    "copilot.generated.rpc": "generated/rpc.py",
    "copilot.generated.session_events": "generated/session_events.py",
}


def _nested_code(
    code: CodeType, found: dict[tuple[str, int], CodeType]
) -> dict[tuple[str, int], CodeType]:
    for constant in code.co_consts:
        if isinstance(constant, CodeType):
            found[(constant.co_qualname, constant.co_firstlineno)] = constant
            _nested_code(constant, found)
    return found


@pytest.mark.parametrize("name", list(MODULES))
def test_every_definition_compiles_to_the_eager_imports_code(name: str) -> None:
    sdk = sdk_folder()
    assert sdk is not None
    path = Path(sdk) / MODULES[name]
    source = path.read_text(encoding="utf-8")
    whole = _nested_code(compile(ast.parse(source), str(path), "exec", dont_inherit=True), {})

    split = split_module(name, source, str(path), star_names={})
    pieces: dict[tuple[str, int], CodeType] = {}
    for statement in split.lazy:
        _nested_code(marshal.loads(statement.code), pieces)  # noqa: S302 - our own output

    assert len(whole) > 1000
    assert pieces.keys() == whole.keys()
    differing = [key for key, code in whole.items() if pieces[key] != code]
    assert not differing, differing[:5]
