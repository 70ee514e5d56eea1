"""`copilot_driver.errors`: one root for every exception the package defines, and the
tree at the top of errors.py naming each of them where it lives."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import copilot_driver
from copilot_driver import errors
from copilot_driver.errors import CopilotDriverError


def _package_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined in the package, by `module.Name`; modules that run
    when imported (`__main__`) are read through their importable twins."""
    found: dict[str, type[BaseException]] = {}
    for module_info in pkgutil.walk_packages(copilot_driver.__path__, "copilot_driver."):
        if module_info.name.endswith("__main__"):
            continue
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
            ):
                found[f"{module.__name__}.{name}"] = value
    return found


def test_every_exception_of_the_package_has_the_one_root() -> None:
    found = _package_exceptions()

    assert len(found) > 30
    outside = {
        name for name, cls in found.items() if not issubclass(cls, CopilotDriverError)
    } - errors.OUTSIDE_THE_ROOT
    assert not outside, f"derive these from CopilotDriverError: {sorted(outside)}"


def test_the_tree_in_errors_names_each_exception_where_it_lives() -> None:
    tree = errors.__doc__ or ""
    named = set(
        re.findall(r"(?<![\w.])(_?[A-Z]\w*Error)\b[^\n]*?\s(copilot_driver(?:\.\w+)+)", tree)
    )
    defined = {
        (cls.__qualname__, cls.__module__)
        for cls in _package_exceptions().values()
        if cls is not CopilotDriverError
    }

    assert named == defined


def test_the_root_stays_an_exception_and_keeps_the_standard_bases() -> None:
    found = _package_exceptions()

    assert issubclass(CopilotDriverError, Exception)
    # Callers that catch the standard classes keep catching them.
    assert issubclass(found["copilot_driver.driver.sink.EventsFileError"], OSError)
    assert issubclass(found["copilot_driver.permissions.config.ServerArgsError"], ValueError)
    # Escapes `except Exception` on purpose: a stop before the driver started.
    stopped = found["copilot_driver.cli.StoppedBeforeStartError"]
    assert "copilot_driver.cli.StoppedBeforeStartError" in errors.OUTSIDE_THE_ROOT
    assert not issubclass(stopped, Exception)
