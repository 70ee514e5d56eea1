"""Unit tests for `copilot_driver.adapters.core.process.AgentProcess`.

Real subprocesses (`sys.executable -c SCRIPT`): line splitting with a cap,
stderr draining, and the stop sequence (SIGTERM to the group, grace, SIGKILL).
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
import textwrap
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.adapters.core.process import MAX_LINE_BYTES, AgentProcess, LineOverflow

if TYPE_CHECKING:
    from unit.adapters.conftest import Pids

Spawn = Callable[[str], Awaitable[AgentProcess]]
Line = str | LineOverflow

IGNORE_SIGTERM_AND_SLEEP = """
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
time.sleep(60)
"""

SLEEP = """
import time
print("ready", flush=True)
time.sleep(60)
"""


def _write_stdout(data: bytes) -> str:
    return f"import sys; sys.stdout.buffer.write({data!r}); sys.stdout.flush()"


def _write_line_in_chunks(size: int, chunk: int = 64 * 1024) -> str:
    """A script printing one `size`-byte line in `chunk`-byte writes, then `after`."""
    return textwrap.dedent(
        f"""
        import sys
        out = sys.stdout.buffer
        left = {size}
        block = b"x" * {chunk}
        while left:
            n = min(left, {chunk})
            out.write(block[:n])
            left -= n
        out.write(b"\\nafter\\n")
        out.flush()
        """
    )


async def _collect(process: AgentProcess, **kwargs: int) -> list[Line]:
    async def read() -> list[Line]:
        return [line async for line in process.lines(**kwargs)]

    return await asyncio.wait_for(read(), timeout=30)


async def _first_line(process: AgentProcess) -> Line:
    lines = cast(AsyncGenerator[Line, None], process.lines())
    try:
        return await asyncio.wait_for(anext(lines), timeout=10)
    finally:
        await lines.aclose()


@pytest.fixture
async def spawn() -> AsyncIterator[Spawn]:
    """Start `python -c SCRIPT`; every process started is stopped at the end."""
    started: list[AgentProcess] = []

    async def _spawn(script: str) -> AgentProcess:
        process = await AgentProcess.spawn([sys.executable, "-c", script], cwd=None)
        started.append(process)
        return process

    yield _spawn
    for process in started:
        await process.stop(grace_s=0.5)
    await asyncio.sleep(0.05)  # let asyncio see the killed processes' pipes close


# -- lines() -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"one\ntwo\n", ["one", "two"]),
        (b"one\r\ntwo\r\n", ["one", "two"]),
        (b"one\ntwo", ["one", "two"]),
        (b"one\r\nlast\r", ["one", "last"]),
        (b"", []),
        (b"\n\n", ["", ""]),
        (b"a\xffb\n", ["a\ufffdb"]),
        (b"caf\xc3\xa9 \xe2\x9c\x93\n", ["caf\u00e9 \u2713"]),
        (b"cut \xc3", ["cut \ufffd"]),
        (b'{"type":"x"}\n{"type":"y"}\n', ['{"type":"x"}', '{"type":"y"}']),
    ],
    ids=[
        "lf",
        "crlf",
        "no-final-newline",
        "final-cr",
        "empty",
        "blank-lines",
        "invalid-utf8",
        "utf8",
        "truncated-utf8",
        "json",
    ],
)
async def test_lines_split_and_decode(spawn: Spawn, data: bytes, expected: list[str]) -> None:
    process = await spawn(_write_stdout(data))
    assert await _collect(process) == expected
    assert await process.wait() == 0


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            b"short\n" + b"x" * 5000 + b"\nnext\n",
            ["short", LineOverflow(5000), "next"],
        ),
        (b"y" * 1000 + b"\nnext\n", ["y" * 1000, "next"]),
        (b"y" * 1001 + b"\nnext\n", [LineOverflow(1001), "next"]),
        (b"first\n" + b"z" * 1500, ["first", LineOverflow(1500)]),
        (b"x" * 2000 + b"\n" + b"x" * 3000 + b"\n", [LineOverflow(2000), LineOverflow(3000)]),
    ],
    ids=["overflow-then-next", "at-cap", "cap-plus-one", "overflow-at-eof", "two-overflows"],
)
async def test_lines_over_the_cap_are_reported_and_skipped(
    spawn: Spawn, data: bytes, expected: list[Line]
) -> None:
    process = await spawn(_write_stdout(data))
    assert await _collect(process, max_line_bytes=1000) == expected


async def test_overflow_spanning_many_reads(spawn: Spawn) -> None:
    process = await spawn(
        textwrap.dedent(
            """
            import sys
            out = sys.stdout.buffer
            out.write(b"before\\n")
            for _ in range(300):
                out.write(b"x" * 1000)
                out.flush()
            out.write(b"\\nafter\\n")
            out.flush()
            """
        )
    )
    assert await _collect(process, max_line_bytes=1000) == [
        "before",
        LineOverflow(300_000),
        "after",
    ]


@pytest.mark.parametrize(
    ("size", "overflows"),
    [(MAX_LINE_BYTES, False), (MAX_LINE_BYTES + 1, True), (MAX_LINE_BYTES + 500_000, True)],
    ids=["exactly-10MiB", "10MiB-plus-one", "10.5MiB"],
)
async def test_default_cap_is_10_mib(spawn: Spawn, size: int, overflows: bool) -> None:
    assert MAX_LINE_BYTES == 10 * 1024 * 1024
    process = await spawn(_write_line_in_chunks(size))
    lines = await _collect(process)
    assert len(lines) == 2
    assert lines[1] == "after"
    if overflows:
        assert lines[0] == LineOverflow(size)
    else:
        assert lines[0] == "x" * size


# A property over arbitrary read boundaries, with a stand-in for the pipe
# (the splitting logic must not depend on where one read() ends).


class _ScriptedStream:
    def __init__(self, chunks: Sequence[bytes]) -> None:
        self._chunks = list(chunks)

    async def read(self, _n: int) -> bytes:
        return self._chunks.pop(0) if self._chunks else b""


class _FakeProcess:
    """Exits once its stdout has been read to the end."""

    pid = 0  # no real process: AgentProcess never signals a group for it

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self.stdout = _ScriptedStream(chunks)
        self.stderr = _ScriptedStream([])
        self.returncode: int | None = None

    async def wait(self) -> int:
        while self.stdout._chunks:
            await asyncio.sleep(0)
        self.returncode = 0
        return 0


def _reference_lines(data: bytes, cap: int) -> list[Line]:
    pieces = data.split(b"\n")
    last = pieces.pop()
    if last:
        pieces.append(last)
    return [
        LineOverflow(len(p)) if len(p) > cap else p.decode("utf-8", "replace").rstrip("\r")
        for p in pieces
    ]


async def _lines_of(chunks: Sequence[bytes], cap: int) -> list[Line]:
    fake = cast(asyncio.subprocess.Process, _FakeProcess(chunks))
    process = AgentProcess(fake, ["fake"])
    lines = [line async for line in process.lines(max_line_bytes=cap)]
    assert await process.wait() == 0
    return lines


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\r", b"\r\n", b"\xff", b"\xc3\xa9"])),
    cuts=st.lists(st.integers(min_value=0, max_value=200)),
    cap=st.integers(min_value=0, max_value=12),
)
def test_lines_property_independent_of_read_boundaries(
    parts: list[bytes], cuts: list[int], cap: int
) -> None:
    data = b"".join(parts)
    bounds = sorted({c for c in cuts if 0 < c < len(data)})
    chunks = [data[a:b] for a, b in zip([0, *bounds], [*bounds, len(data)], strict=True)]
    chunks = [c for c in chunks if c]
    assert asyncio.run(_lines_of(chunks, cap)) == _reference_lines(data, cap)


# -- stderr --------------------------------------------------------------------


async def test_megabytes_of_stderr_are_drained_and_the_tail_kept(spawn: Spawn) -> None:
    process = await spawn(
        textwrap.dedent(
            """
            import sys
            sys.stderr.write("".join(f"err {i:06d} {'y' * 40}\\n" for i in range(100_000)))
            sys.stderr.write("z" * 5000 + "\\n")
            sys.stderr.write("last words without newline")
            sys.stderr.flush()
            print("done", flush=True)
            """
        )
    )
    assert await _collect(process) == ["done"]
    assert await asyncio.wait_for(process.wait(), timeout=30) == 0
    tail = process.stderr_tail().splitlines()
    assert len(tail) == 50
    assert tail[-3] == f"err 099999 {'y' * 40}"
    assert tail[-2] == "z" * 1000  # one long line is cut, not the whole tail
    assert tail[-1] == "last words without newline"


async def test_stderr_written_before_stdout_does_not_block_the_agent(spawn: Spawn) -> None:
    # 4 MB on stderr before anything on stdout: a pipe nobody reads holds 64 KB.
    process = await spawn(
        "import sys; sys.stderr.write('e' * 4_000_000 + '\\n'); sys.stderr.flush(); print('ok')"
    )
    assert await _collect(process) == ["ok"]
    assert await process.wait() == 0


# -- stop() --------------------------------------------------------------------


async def test_stop_escalates_to_sigkill_after_the_grace(spawn: Spawn, pids: Pids) -> None:
    process = await spawn(IGNORE_SIGTERM_AND_SLEEP)
    assert await _first_line(process) == "ready"
    started = time.monotonic()
    code = await asyncio.wait_for(process.stop(grace_s=0.5), timeout=10)
    elapsed = time.monotonic() - started
    assert code == -signal.SIGKILL
    assert 0.45 <= elapsed < 4
    assert not pids.alive(process.pid)


async def test_stop_of_a_cooperative_process_is_a_sigterm(spawn: Spawn) -> None:
    process = await spawn(SLEEP)
    assert await _first_line(process) == "ready"
    started = time.monotonic()
    code = await asyncio.wait_for(process.stop(grace_s=5), timeout=10)
    assert code == -signal.SIGTERM
    assert time.monotonic() - started < 2  # did not sit out the grace


@pytest.mark.parametrize(
    "grandchild_ignores_sigterm", [False, True], ids=["plain", "grandchild-ignores-sigterm"]
)
async def test_stop_kills_the_whole_group(
    spawn: Spawn, pids: Pids, grandchild_ignores_sigterm: bool
) -> None:
    grandchild = (
        "import signal, sys, time\n"
        + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if grandchild_ignores_sigterm else "")
        + "print('up', flush=True)\n"
        + "time.sleep(60)\n"
    )
    process = await spawn(
        textwrap.dedent(
            f"""
            import subprocess, sys, time
            child = subprocess.Popen([sys.executable, "-c", {grandchild!r}],
                                     stdout=subprocess.PIPE)
            child.stdout.readline()
            print(child.pid, flush=True)
            time.sleep(60)
            """
        )
    )
    line = await _first_line(process)
    assert isinstance(line, str)
    grandchild_pid = int(line)
    assert pids.alive(grandchild_pid)
    started = time.monotonic()
    await asyncio.wait_for(process.stop(grace_s=0.5), timeout=10)
    assert await pids.gone_async(grandchild_pid), "the grandchild survived stop()"
    # The leader died on SIGTERM: the SIGKILL for what was left needed no grace.
    assert time.monotonic() - started < 2


async def test_stop_twice_is_safe(spawn: Spawn) -> None:
    process = await spawn(IGNORE_SIGTERM_AND_SLEEP)
    assert await _first_line(process) == "ready"
    first, second = await asyncio.wait_for(
        asyncio.gather(process.stop(grace_s=0.5), process.stop(grace_s=0.5)), timeout=10
    )
    third = await asyncio.wait_for(process.stop(grace_s=0.5), timeout=2)
    assert first == second == third == -signal.SIGKILL
    assert process.returncode == -signal.SIGKILL


@pytest.mark.parametrize("wait_first", [True, False], ids=["after-wait", "without-wait"])
async def test_stop_after_a_normal_exit_returns_the_exit_code(
    spawn: Spawn, wait_first: bool
) -> None:
    process = await spawn("import sys; print('bye'); sys.exit(3)")
    assert await _collect(process) == ["bye"]
    if wait_first:
        assert await process.wait() == 3
    assert await asyncio.wait_for(process.stop(grace_s=5), timeout=2) == 3
    assert await asyncio.wait_for(process.stop(grace_s=5), timeout=2) == 3


async def test_a_cancelled_stop_still_completes(spawn: Spawn) -> None:
    process = await spawn(IGNORE_SIGTERM_AND_SLEEP)
    assert await _first_line(process) == "ready"
    stopping = asyncio.create_task(process.stop(grace_s=0.5))
    await asyncio.sleep(0.1)  # inside the grace: SIGTERM sent, ignored
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    assert process.returncode is None  # not yet killed: the grace is still running
    # Nobody awaits the stop any more, and it still ends the process.
    started = time.monotonic()
    while process.returncode is None and time.monotonic() - started < 5:
        await asyncio.sleep(0.02)
    assert process.returncode == -signal.SIGKILL
    assert await asyncio.wait_for(process.stop(grace_s=0.5), timeout=1) == -signal.SIGKILL


# -- wait() --------------------------------------------------------------------

# A tool the agent started in the background with its stdout redirected
# keeps the inherited stderr open after the agent itself has exited.
BACKGROUND_TOOL_KEEPS_STDERR = """
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3)"],
                 stdout=subprocess.DEVNULL)
print("spawned", flush=True)
"""


async def _exited_with_stderr_open(spawn: Spawn) -> AgentProcess:
    process = await spawn(BACKGROUND_TOOL_KEEPS_STDERR)
    assert await _collect(process) == ["spawned"]
    deadline = time.monotonic() + 5
    while process.returncode is None and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert process.returncode == 0
    return process


async def test_wait_returns_the_code(spawn: Spawn) -> None:
    process = await spawn("import sys; sys.stderr.write('oops\\n'); sys.exit(7)")
    assert await _collect(process) == []
    assert await process.wait() == 7
    assert process.stderr_tail() == "oops"


async def test_wait_returns_when_a_background_child_keeps_stderr_open(spawn: Spawn) -> None:
    """BUG: wait() bounds the stderr drain to 1 s but lets the TimeoutError escape."""
    process = await _exited_with_stderr_open(spawn)
    assert await asyncio.wait_for(process.wait(), timeout=5) == 0


async def test_wait_propagates_a_cancellation_while_draining_stderr(spawn: Spawn) -> None:
    """BUG: wait() swallows its caller's cancellation during the stderr drain."""
    process = await _exited_with_stderr_open(spawn)
    waiting = asyncio.create_task(process.wait())
    await asyncio.sleep(0.2)  # in the stderr drain now (the process has exited)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(waiting, timeout=5)


async def test_lines_end_soon_after_exit_when_a_background_child_keeps_stdout_open(
    spawn: Spawn,
) -> None:
    process = await spawn(
        textwrap.dedent(
            """
            import subprocess, sys
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
            print("spawned", flush=True)
            """
        )
    )
    started = time.monotonic()
    assert await _collect(process) == ["spawned"]
    assert time.monotonic() - started < 4  # not held until the grandchild's exit
    assert await asyncio.wait_for(process.wait(), timeout=3) == 0


async def test_wait_after_stop_returns_the_code_when_a_detached_child_holds_stderr(
    spawn: Spawn,
) -> None:
    """BUG: stop() cancels the stderr drain; a later wait() then raises CancelledError."""
    process = await spawn(
        textwrap.dedent(
            """
            import subprocess, sys, time
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"],
                                     stdout=subprocess.DEVNULL, start_new_session=True)
            print(child.pid, flush=True)
            time.sleep(60)
            """
        )
    )
    line = await _first_line(process)
    assert isinstance(line, str)
    detached = int(line)
    try:
        assert await asyncio.wait_for(process.stop(grace_s=0.5), timeout=5) == -signal.SIGTERM
        try:
            code = await asyncio.wait_for(process.wait(), timeout=5)
        except asyncio.CancelledError:
            pytest.fail("wait() raised CancelledError, yet nobody cancelled its caller")
        assert code == -signal.SIGTERM
    finally:
        os.kill(detached, signal.SIGKILL)


def test_stop_leaves_no_transport_to_finalise_after_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """BUG (minor): `_stop` means to let asyncio see the pipes close, but
    `Process.wait()` returns at once when the exit status is already known, so
    a pipe held by a group member just killed is finalised after the loop."""
    unraisable: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: unraisable.append(u.exc_value))

    async def scenario() -> None:
        process = await AgentProcess.spawn(
            [sys.executable, "-c", BACKGROUND_TOOL_KEEPS_STDERR], cwd=None
        )
        assert await _collect(process) == ["spawned"]
        assert await asyncio.wait_for(process.wait(), timeout=5) == 0
        await asyncio.wait_for(process.stop(grace_s=0.5), timeout=5)

    asyncio.run(scenario())
    gc.collect()
    assert unraisable == []


async def test_only_a_group_this_process_created_is_ever_signalled() -> None:
    """A pid that is not our own group-leading child (a test double's made-up
    pid, init, this process) must never receive a group signal."""
    from copilot_driver.adapters.core.process import _leads_own_group

    assert not _leads_own_group(0)
    assert not _leads_own_group(1)
    assert not _leads_own_group(os.getpid())
    child = await AgentProcess.spawn([sys.executable, "-c", "pass"], cwd=None)
    try:
        assert _leads_own_group(child.pid)
    finally:
        await child.stop()
