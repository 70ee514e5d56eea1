"""What pytest-subprocess's fake process (`fp`) recorded, typed for the tests."""

from __future__ import annotations

from pytest_subprocess import FakeProcess


def recorded_argvs(fp: FakeProcess) -> list[list[str]]:
    """The argv of every process started so far, in order, each word as a string."""
    return [[str(word) for word in call] for call in fp.calls]
