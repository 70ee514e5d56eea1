"""The driver's lifecycle (spec 3.2), from a valid configuration to a result.

    connect -> start the client -> on a GitHub token, check the account (its
    sign-in, the model in its catalog) -> create the session (permission
    handler, event sink) -> send the prompt and wait -> map the result -> clean up

Every step is raced against SIGTERM/SIGINT, the tool-denials guard and a
lost sidecar, and bounded in time; the run never waits for an SDK call
beyond its deadline (spec 4.5: the guard settles the run even if
`send_and_wait` never does). The cleanup (abort an unfinished turn,
disconnect the session, close and flush the events file, stop the client)
runs in `finally`, whatever happened before; each part has its own deadline
and a part that stalls is abandoned, not awaited, so the rest still run
(spec 7.3). The last log entry is the run's summary: `session.completed` on
success, `error` otherwise.

The order of the steps, their deadlines and the cleanup are here; each step's
SDK call is made through sdk.py, the start-up entries and session options come
from startup.py, the tool guards' records from guards.py, and the result and
its last entry from result.py.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable
from typing import Any

from copilot_driver.compatibility import untested_versions
from copilot_driver.driver.account import Account, AccountError
from copilot_driver.driver.account_check import TurnErrors, check_account
from copilot_driver.driver.config import DriverConfig
from copilot_driver.driver.connection import (
    READY_WAIT_S,
    NotificationGuard,
    ProtocolErrors,
    create_client,
    sidecar_ready,
)
from copilot_driver.driver.failures import (
    Failure,
    Phase,
    as_raised,
    describe_failure,
    describe_incomplete_events,
    describe_send_timeout,
    describe_stop,
)
from copilot_driver.driver.guards import ToolGuards
from copilot_driver.driver.heartbeat import Heartbeat
from copilot_driver.driver.idle import AnswerWatch
from copilot_driver.driver.liveness import SidecarWatchdog
from copilot_driver.driver.result import conclude
from copilot_driver.driver.sdk import SdkClient, SdkSession, sdk_version
from copilot_driver.driver.sink import EventsSink
from copilot_driver.driver.startup import log_start, session_options
from copilot_driver.driver.stop import SidecarLostError, StopRequestedError, StopRequests
from copilot_driver.driver.tasks import StepAbandonedError, bounded, first_of, run_to_the_end
from copilot_driver.env import IDLE_MS
from copilot_driver.exit_codes import ExitCode
from copilot_driver.inert_text import inert
from copilot_driver.logs import DriverLog, configure_logging
from copilot_driver.permissions.policy import Policy
from copilot_driver.records import policy_record
from copilot_driver.redaction import Redactor
from copilot_driver.runner_reads import runner_may_read
from copilot_driver.vocabulary import LogEvent, RunResult

START_TIMEOUT_S = 4.0
"""Connecting and the `connect` handshake. A local sidecar answers in
milliseconds; one that accepts and never answers must be given up within the
5 s the liveness contract allows (the watchdog only starts once connected)."""
VERSION_TIMEOUT_S = 1.0
"""The sidecar's CLI version, once the session exists: asked for beside the session (one
local round trip, well under a millisecond), so it is normally in already."""
CREATE_TIMEOUT_S = 30.0
SEND_GRACE_S = 5.0
"""Beyond the SDK's own send timeout, before the driver gives up on the SDK too."""
DECISIONS_TIMEOUT_S = 1.0
"""For permission decisions already made to reach the runtime before the abort."""
ABORT_TIMEOUT_S = 2.0
DISCONNECT_TIMEOUT_S = 3.0
EVENTS_CLOSE_TIMEOUT_S = 5.0
STOP_TIMEOUT_S = 3.0
SHUTDOWN_TIMEOUT_S = 1.0
"""For tasks still running after the run (abandoned SDK calls) to take their cancellation."""


class Lifecycle:
    """One run of the driver; `run()` returns its RunResult."""

    def __init__(
        self, config: DriverConfig, log: DriverLog, redactor: Redactor, stop: StopRequests
    ) -> None:
        self.config = config
        self.log = log
        self.redactor = redactor
        self.stop = stop
        self.sink = EventsSink(
            config.session_state_base_dir,
            redactor,
            on_error=lambda message: log.error(LogEvent.EVENTS_WRITE_FAILED, message),
        )
        self.policy = Policy(config.permissions, mask=redactor.text)
        # First in the events file (it waits for the session's folder like every record).
        self.sink.write_record(policy_record(config.permissions.in_force()))
        self._client: SdkClient | None = None
        self._session: SdkSession | None = None
        self._turn_open = False
        self._watchdog: SidecarWatchdog | None = None
        self._keep_alive: Heartbeat | None = None
        self._notifications = NotificationGuard(self._unreadable_notification, self._flooded)
        self._protocol_errors = ProtocolErrors(self._notifications)
        self._guards = ToolGuards(config, self.sink, stop, log)
        self._answers = AnswerWatch(config.idle_ms / 1000)
        self._account: Account | None = None
        """The subscription path's account, once checked (account_check.py)."""
        self._turn_errors = TurnErrors()

    async def run(self) -> RunResult:
        """Steps 2 to 7 of spec 3.2 (step 1, the configuration, is already resolved)."""
        started = time.monotonic()
        output = ""
        failure: Failure | None = None
        phase = Phase.CONNECT
        self._protocol_errors.attach()
        try:
            log_start(self.config, self.policy, self.log, self.redactor)
            client = await self._start_client()
            if self.config.on_subscription:
                phase = Phase.ACCOUNT
                self._account = await check_account(client, self.config.model, self.stop, self.log)
            phase = Phase.SESSION_CREATION
            session = await self._create_session(client)
            phase = Phase.TURN
            output = await self._send_prompt(session)
        except Exception as error:  # (stop requests and timeouts included)
            failure = self._outcome_of(error, phase)
        finally:
            await self._cleanup()
            self._protocol_errors.detach()
        if failure is None:
            failure = self._after_the_answer()
        return conclude(
            failure,
            output=output,
            duration_ms=round((time.monotonic() - started) * 1000),
            session_id=self._session.session_id if self._session else None,
            events_file=self.sink.path,
            policy=self.config.permissions.in_force(),
            redactor=self.redactor,
            log=self.log,
        )

    async def _start_client(self) -> SdkClient:
        """Step 2: connect to the sidecar (once the harness says it listens), then watch it."""
        if self.config.sdk_ready_fd is not None:
            await self.stop.race(
                sidecar_ready(self.config.sdk_ready_fd, self.config.sdk_uri),
                timeout=READY_WAIT_S,
            )
        self._client = client = SdkClient(create_client(self.config, self._notifications))
        await self.stop.race(client.start(), timeout=START_TIMEOUT_S)
        self.log.info(
            LogEvent.CLIENT_STARTED, "connected to the Copilot sidecar", sdkUri=self.config.sdk_uri
        )
        self._watchdog = self._watch_sidecar(client)
        return client

    async def _create_session(self, client: SdkClient) -> SdkSession:
        """Steps 3 and 4: the session, created with its permission and event handlers.
        The sidecar's CLI version is asked for beside it, so the check adds no time."""
        cli_version = asyncio.ensure_future(self._cli_version(client))
        try:
            options = session_options(
                self.config, self.policy, self.log, self.redactor, self._guards, self._on_event
            )
            self._session = session = await self.stop.race(
                client.create_session(options), timeout=CREATE_TIMEOUT_S
            )
        except BaseException:
            cli_version.cancel()
            raise
        self.log.bind(sessionId=session.session_id)
        events_path = self.sink.attach(session.session_id)
        self.log.info(
            LogEvent.SESSION_CREATED,
            f"session {session.session_id} created",
            model=self.config.model,
            eventsFile=str(events_path),
        )
        await self._check_versions(cli_version)
        return session

    async def _cli_version(self, client: SdkClient) -> str | None:
        try:
            return await client.cli_version()
        except Exception as error:  # an unknown version is no reason to stop
            self.log.debug(LogEvent.COMPATIBILITY_UNKNOWN, f"no Copilot CLI version: {error!r}")
            return None

    async def _check_versions(self, cli_version: asyncio.Future[str | None]) -> None:
        """One `compatibility` warning when the sidecar's CLI or the installed SDK is not a
        tested version. Never fails the run: a stop request is raised by the next step."""
        try:
            version = await self.stop.race(cli_version, timeout=VERSION_TIMEOUT_S)
        except Exception:
            cli_version.cancel()
            version = None
        untested = untested_versions(version, sdk_version())
        if untested is not None:
            self.log.warning(LogEvent.COMPATIBILITY, untested.message(), **untested.fields())

    async def _send_prompt(self, session: SdkSession) -> str:
        """Step 5: send the prompt and wait for the answer (or, once the answer is in, for
        a session that never goes idle to stay quiet past the idle watchdog)."""
        self.log.info(
            LogEvent.PROMPT_DISPATCHED,
            "sending the prompt and waiting for the session to finish",
            promptChars=len(self.config.prompt),
            sendTimeoutMs=self.config.send_timeout_ms,
        )
        self._turn_open = True
        self._start_keep_alive()
        try:
            finished, reply = await self.stop.race(
                first_of(
                    session.send_and_wait(self.config.prompt, timeout=self.config.send_timeout_s),
                    self._answers.settled(),
                ),
                timeout=self.config.send_timeout_s + SEND_GRACE_S,
            )
        except (StopRequestedError, TimeoutError):
            raise  # the runtime is still working on the turn: cleanup aborts it
        except BaseException:
            self._turn_open = False  # the turn ended by itself (e.g. a session error)
            raise
        if finished == 1:  # the idle watchdog: cleanup aborts the turn that never ended
            self.log.warning(
                LogEvent.SESSION_IDLE_TIMEOUT,
                f"the session answered but did not go idle within {self.config.idle_ms} ms "
                f"({IDLE_MS.name}); ending it with its answer",
            )
            return reply
        self._turn_open = False
        return reply

    def _outcome_of(self, failure: Exception, phase: Phase) -> Failure:
        """What ended the run early, as its exit code, error kind and message."""
        if isinstance(failure, StopRequestedError):
            return describe_stop(failure, phase)
        if isinstance(failure, TimeoutError) and phase == Phase.TURN:
            return describe_send_timeout(self.config.send_timeout_ms)
        if isinstance(failure, AccountError):
            return failure.failure
        explained = self._turn_errors.explain(failure, self._account)
        if explained is not None and self.config.on_subscription:
            return explained
        self.log.debug(LogEvent.ERROR_DETAIL, "failure detail", exception=repr(as_raised(failure)))
        return describe_failure(
            failure,
            phase=phase,
            sdk_uri=self.config.sdk_uri,
            connected=self._client is None or self._client.connected(),
        )

    def _after_the_answer(self) -> Failure | None:
        """What the cleanup found once the answer was in.

        A signal during cleanup still means the run was stopped (the answer is
        kept in the result and on stdout); an answer already received never
        turns the guard's failure into success; and an events file that stopped
        being written means the audit trail is incomplete: all are reported
        rather than hidden behind exit 0.
        """
        if self.stop.reason is not None and not isinstance(self.stop.reason, SidecarLostError):
            return describe_stop(self.stop.reason, Phase.CLEANUP)
        if self.sink.error is not None:
            return describe_incomplete_events(self.sink.error)
        return None

    def _on_event(self, event: Any) -> None:
        """Every session event: to the events file, and to the idle and sidecar watchdogs."""
        if self._watchdog is not None:
            self._watchdog.heard()
        self.sink.handle(event)
        self._answers.observe(event)
        self._turn_errors.observe(event)

    def _start_keep_alive(self) -> None:
        """Under gh-aw's harness, an entry whenever the log has been silent for a while
        during the turn: its post-result watchdog ends a driver that stays silent."""
        if self.config.keep_alive_s is None:
            return

        def beat(silent_s: float) -> None:
            self.log.info(
                LogEvent.DRIVER_WAITING,
                f"the turn is still in flight: nothing new for {silent_s:.0f} s",
                silentMs=round(silent_s * 1000),
            )

        self._keep_alive = Heartbeat(self.config.keep_alive_s, lambda: self.log.last_entry_at, beat)
        self._keep_alive.start()

    def _watch_sidecar(self, client: SdkClient) -> SidecarWatchdog:
        uri = self.config.sdk_uri

        def lost(why: str) -> None:
            unreadable = self._protocol_errors.last
            if unreadable:  # the SDK closed the connection because of what it read
                self.stop.lose_sidecar(f"the Copilot sidecar at {uri} {unreadable}")
            else:
                self.stop.lose_sidecar(f"the Copilot sidecar at {uri} stopped responding: {why}")

        watchdog = SidecarWatchdog(ping=client.ping, connected=client.connected, on_lost=lost)
        watchdog.start()
        return watchdog

    def _unreadable_notification(self, detail: str) -> None:
        self.log.warning(
            LogEvent.SIDECAR_UNREADABLE_NOTIFICATION,
            f"the Copilot sidecar at {self.config.sdk_uri} sent a notification the SDK "
            f"could not read ({detail}); it is ignored",
        )

    def _flooded(self, count: int, first: str) -> None:
        self.stop.lose_sidecar(
            f"the Copilot sidecar at {self.config.sdk_uri} sent {count} notifications the "
            f"SDK could not read (the first: {first}); it was given up"
        )

    async def _cleanup(self) -> None:
        """Best effort and bounded: every step runs even if an earlier one failed."""
        if self._keep_alive is not None:
            await self._keep_alive.stop()
        if self._watchdog is not None:
            await self._watchdog.stop()
        session, client = self._session, self._client
        # A lost sidecar cannot answer an abort or a disconnect: waiting for
        # their timeouts would only delay the exit.
        sidecar_lost = isinstance(self.stop.reason, SidecarLostError)
        if session is not None and not sidecar_lost and self._turn_open:
            # Denials already decided are delivered as denials, not turned into
            # cancellations by the abort overtaking them.
            await self._guards.decisions.delivered(DECISIONS_TIMEOUT_S)
            # The runtime emits `abort` and `assistant.turn_end` before it answers,
            # and the SDK dispatches in wire order: once this returns, the events
            # file can show how the turn ended.
            await self._bounded("abort the turn", session.abort(), ABORT_TIMEOUT_S)
        self._guards.turn_stopped()  # withheld permission requests end now
        if session is not None and not sidecar_lost:
            await self._bounded(
                "disconnect the session", session.disconnect(), DISCONNECT_TIMEOUT_S
            )
        await asyncio.to_thread(self.sink.close, EVENTS_CLOSE_TIMEOUT_S)
        if client is not None:
            await self._bounded("stop the client", client.stop(), STOP_TIMEOUT_S)

    async def _bounded(self, what: str, step: Awaitable[Any], timeout: float) -> None:
        """One cleanup step, abandoned at its deadline (see `tasks.bounded`)."""
        try:
            await bounded(step, timeout)
        except StepAbandonedError:
            self.log.warning(LogEvent.CLEANUP_TIMEOUT, f"could not {what} within {timeout:g}s")
        except Exception as error:  # cleanup is best effort; the outcome is already known
            self.log.debug(LogEvent.CLEANUP_FAILED, f"could not {what}: {error}")


def run_driver(config: DriverConfig) -> int:
    """Run one session; print the answer on stdout; return the exit status."""
    redactor = Redactor(config.secrets)
    log = configure_logging(config.log_format, config.log_level, redactor)
    stop = StopRequests()

    async def main() -> RunResult:
        stop.install(asyncio.get_running_loop())
        return await Lifecycle(config, log, redactor, stop).run()

    try:
        result = run_to_the_end(main(), SHUTDOWN_TIMEOUT_S)
    except Exception as error:  # a bug in the driver itself: still one clear line
        log.error(LogEvent.ERROR, f"unhandled driver error: {type(error).__name__}: {error}")
        return int(ExitCode.FAILURE)
    if result.has_output:
        answer = redactor.text(result.output).rstrip("\n") + "\n"
        read = runner_may_read(sys.stdout, in_actions=config.github_actions)
        sys.stdout.write(inert(answer, in_actions=read))
        sys.stdout.flush()
    return ExitCode.FAILURE if result.exit_code is None else result.exit_code
