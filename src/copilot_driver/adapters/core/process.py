"""An agent subprocess that can always be stopped, and whose output is read safely.

- Own process group (a new session), so stopping the agent also stops
  everything it started (a shell, a tool, a node child).
- Graceful stop: SIGTERM to the group, up to `grace_s` for it to exit, then
  SIGKILL to the group. The agent gets its chance to flush and report.
- stderr is drained concurrently into a bounded tail, so a chatty agent can
  never block on a full pipe, and its last words are there for the error.
- stdout is split into lines by hand with a cap: a line over the cap is
  reported as a `LineOverflow` and skipped, and reading goes on.
- The agent is killed with the process that started it (PR_SET_PDEATHSIG),
  so an orchestrator killed with SIGKILL leaves no agent behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from copilot_driver.processes import die_with_parent

log = logging.getLogger(__name__)

MAX_LINE_BYTES = 10 * 1024 * 1024
STOP_GRACE_S = 5.0
AFTER_EXIT_DRAIN_S = 1.0
PIPES_CLOSE_WAIT_S = 3.0
_CHUNK = 64 * 1024
_STDERR_TAIL_LINES = 50


@dataclass(frozen=True)
class LineOverflow:
    """A stdout line longer than the cap; its bytes were dropped."""

    size: int


class AgentProcess:
    def __init__(self, process: asyncio.subprocess.Process, argv: Sequence[str]) -> None:
        self._process = process
        self.argv = tuple(argv)
        self._stderr_tail: deque[str] = deque(maxlen=_STDERR_TAIL_LINES)
        self._stderr_task = asyncio.create_task(self._drain_stderr())
        self._stopping: asyncio.Task[int] | None = None
        self._owns_group = _leads_own_group(process.pid)

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        cwd: Path | str | None,
        env: Mapping[str, str] | None = None,
        stdin_pipe: bool = False,
    ) -> AgentProcess:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=asyncio.subprocess.PIPE if stdin_pipe else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            preexec_fn=die_with_parent,
        )
        log.debug("agent process %d started: %s", process.pid, argv[0])
        return cls(process, argv)

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    @property
    def stdin(self) -> asyncio.StreamWriter | None:
        return self._process.stdin

    def stderr_tail(self) -> str:
        return "\n".join(self._stderr_tail)

    async def lines(
        self, max_line_bytes: int = MAX_LINE_BYTES
    ) -> AsyncIterator[str | LineOverflow]:
        """stdout, one decoded line at a time (without the newline), until EOF.

        Once the agent has exited, reading stops after `AFTER_EXIT_DRAIN_S`
        of silence even without EOF: a background child that inherited
        stdout must not keep the turn open.
        """
        buffer = bytearray()
        dropping = 0  # > 0 while skipping the rest of an over-long line
        async for chunk in self._stdout_chunks():
            start = 0
            while True:
                newline = chunk.find(b"\n", start)
                piece = chunk[start:] if newline < 0 else chunk[start:newline]
                if dropping:
                    dropping += len(piece)
                elif len(buffer) + len(piece) > max_line_bytes:
                    dropping = len(buffer) + len(piece)
                    buffer.clear()
                else:
                    buffer += piece
                if newline < 0:
                    break
                if dropping:
                    yield LineOverflow(dropping)
                    dropping = 0
                else:
                    yield buffer.decode("utf-8", "replace").rstrip("\r")
                    buffer.clear()
                start = newline + 1
        if dropping:
            yield LineOverflow(dropping)
        elif buffer:
            yield buffer.decode("utf-8", "replace").rstrip("\r")

    async def _stdout_chunks(self) -> AsyncIterator[bytes]:
        stream = self._process.stdout
        assert stream is not None
        exited = asyncio.ensure_future(self._exit())
        read: asyncio.Future[bytes] | None = None
        try:
            while True:
                read = asyncio.ensure_future(stream.read(_CHUNK))
                await asyncio.wait({read, exited}, return_when=asyncio.FIRST_COMPLETED)
                if not read.done():
                    try:
                        await asyncio.wait_for(asyncio.shield(read), AFTER_EXIT_DRAIN_S)
                    except TimeoutError:
                        log.debug("agent %d exited; its stdout stays open: stop reading", self.pid)
                        return
                chunk = read.result()
                read = None
                if not chunk:
                    return
                yield chunk
        finally:
            for future in (read, exited):
                if future is not None and not future.done():
                    future.cancel()

    async def wait(self) -> int:
        """The exit status (negative: killed by that signal), stderr drained (up to 1 s)."""
        code = await self._exit()
        await asyncio.wait({self._stderr_task}, timeout=AFTER_EXIT_DRAIN_S)
        return code

    async def _exit(self) -> int:
        """The exit status, as soon as the process has exited.

        asyncio's own `Process.wait()` also waits for every pipe to close,
        which a background grandchild holding stdout or stderr can delay
        forever; a pidfd says when the process itself is gone.
        """
        process = self._process
        if process.returncode is not None:
            return process.returncode
        if not self._owns_group or not hasattr(os, "pidfd_open"):
            return await process.wait()
        try:
            fd = os.pidfd_open(process.pid)
        except OSError:
            fd = -1  # already reaped: the returncode is about to be set
        if fd >= 0:
            loop = asyncio.get_running_loop()
            gone: asyncio.Future[None] = loop.create_future()

            def readable() -> None:
                if not gone.done():
                    gone.set_result(None)

            loop.add_reader(fd, readable)
            try:
                await gone
            finally:
                loop.remove_reader(fd)
                os.close(fd)
        while process.returncode is None:  # the child watcher reports it just after
            await asyncio.sleep(0.005)
        return process.returncode

    async def stop(self, grace_s: float = STOP_GRACE_S) -> int:
        """SIGTERM to the group, wait up to `grace_s`, then SIGKILL. Safe to call twice.

        Shielded: a caller cancelled while waiting still leaves the stop
        running to its end, so the group is never left half-stopped.
        """
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop(grace_s))
        return await asyncio.shield(self._stopping)

    async def _stop(self, grace_s: float) -> int:
        if self._process.returncode is None:
            self._signal_group(signal.SIGTERM)
            try:
                await asyncio.wait_for(self._exit(), timeout=grace_s)
            except TimeoutError:
                log.warning("agent process %d ignored SIGTERM for %g s; killing", self.pid, grace_s)
        # Kill whatever is left in the group, even when the leader is gone:
        # a tool the agent started may still be running.
        self._signal_group(signal.SIGKILL)
        code = await self._exit()
        # With the group gone the pipes close; let asyncio see it, so the
        # transport is not left to be finalised after the loop has ended. Only
        # a process outside the group (one that left it) can make this wait.
        await asyncio.wait({self._stderr_task}, timeout=PIPES_CLOSE_WAIT_S)
        self._stderr_task.cancel()
        await asyncio.gather(self._stderr_task, return_exceptions=True)
        await asyncio.sleep(0)
        return code

    def _signal_group(self, signum: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if self._owns_group:
                os.killpg(self._process.pid, signum)
            elif self._process.returncode is None:
                # Not a group this process created (a test double's made-up
                # pid): signal only the process object, never a foreign group.
                self._process.send_signal(signum)

    async def _drain_stderr(self) -> None:
        stream = self._process.stderr
        assert stream is not None
        pending = b""
        while chunk := await stream.read(_CHUNK):
            *complete, pending = (pending + chunk).split(b"\n")
            pending = pending[-_CHUNK:]
            for raw in complete:
                line = raw.decode("utf-8", "replace").rstrip()
                if line:
                    self._stderr_tail.append(line[:1000])
                    log.debug("agent stderr: %s", line[:1000])
        if pending.strip():
            self._stderr_tail.append(pending.decode("utf-8", "replace").rstrip()[:1000])


def _leads_own_group(pid: int) -> bool:
    """True for a child of ours leading its own group, checked once at spawn
    (when it is certainly still in the process table), so a group signal can
    never reach processes this one did not start."""
    if pid <= 1:
        return False
    try:
        if os.getpgid(pid) != pid:
            return False
        stat = Path(f"/proc/{pid}/stat").read_text()
    except ProcessLookupError:
        return False
    except OSError:
        return True  # no /proc: the process-group check above has to do
    # The second field (the command name) may hold spaces and parentheses.
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[1]) == os.getpid()
