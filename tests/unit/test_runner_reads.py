"""Whether the Actions runner may read a stream (`runner_reads`)."""

from __future__ import annotations

import io
import os
from pathlib import Path

from copilot_driver.runner_reads import runner_may_read


def test_outside_actions_no_stream_is_read() -> None:
    assert not runner_may_read(io.StringIO(), in_actions=False)
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as pipe:
        assert not runner_may_read(pipe, in_actions=False)
    os.close(read_end)


def test_a_redirect_to_a_file_is_not_read(tmp_path: Path) -> None:
    with (tmp_path / "summary.md").open("w") as file:
        assert not runner_may_read(file, in_actions=True)


def test_a_pipe_or_a_buffer_is_read() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as pipe:
        assert runner_may_read(pipe, in_actions=True)
    os.close(read_end)
    assert runner_may_read(io.StringIO(), in_actions=True)
