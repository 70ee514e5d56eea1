"""The driver's lifecycle (spec 3.2), from a valid configuration to a result.

    connect -> start the client -> create the session (permission handler,
    event sink) -> send the prompt and wait -> map the result -> clean up

Every step is raced against SIGTERM/SIGINT, the tool-denials guard and a
lost sidecar, and bounded in time; the run never waits for an SDK call
beyond its deadline (spec 4.5: the guard settles the run even if
`send_and_wait` never does). The cleanup (abort an unfinished turn,
disconnect the session, close and flush the events file, stop the client)
runs in `finally`, whatever happened before; each part has its own deadline
and a part that stalls is abandoned, not awaited, so the rest still run
(spec 7.3). The last log entry is the run's summary: `session.completed` on
success, `error` otherwise.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from copilot_driver.compatibility import COMPATIBILITY_EVENT, untested_versions
from copilot_driver.driver.config import DriverConfig
from copilot_driver.driver.connection import (
    READY_WAIT_S,
    NotificationGuard,
    ProtocolErrors,
    create_client,
    is_connected,
    release_transport,
    sidecar_ready,
)
from copilot_driver.driver.failures import (
    Failure,
    Phase,
    describe_failure,
    describe_incomplete_events,
    describe_send_timeout,
    describe_stop,
)
from copilot_driver.driver.idle import AnswerWatch
from copilot_driver.driver.liveness import SidecarWatchdog
from copilot_driver.driver.result import write_result
from copilot_driver.driver.sink import EventsSink
from copilot_driver.driver.stop import (
    SidecarLostError,
    StopRequestedError,
    StopRequests,
    ToolCallBudgetExceededError,
    ToolDenialsExceededError,
)
from copilot_driver.driver.tasks import StepAbandonedError, bounded, first_of, run_to_the_end
from copilot_driver.exit_codes import ExitCode
from copilot_driver.logs import DriverLog, configure_logging
from copilot_driver.permissions.budget import Debit, ToolCallBudget
from copilot_driver.permissions.handler import (
    DecisionsInFlight,
    DenialGuard,
    DenialLogger,
    github_actions_annotation,
    github_actions_notice,
    github_actions_warning,
    make_permission_handler,
)
from copilot_driver.permissions.policy import Policy
from copilot_driver.records import (
    budget_debit_record,
    budget_record,
    denial_record,
    guard_record,
)
from copilot_driver.redaction import Redactor
from copilot_driver.vocabulary import RESULT_FILE_NAME, Denial, RunResult

if TYPE_CHECKING:
    from copilot import CopilotClient, CopilotSession

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

T = TypeVar("T")


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
            on_error=lambda message: log.error("events.write_failed", message),
        )
        self.policy = Policy(config.permissions, mask=redactor.text)
        self._client: CopilotClient | None = None
        self._session: CopilotSession | None = None
        self._turn_open = False
        self._watchdog: SidecarWatchdog | None = None
        self._notifications = NotificationGuard(self._unreadable_notification, self._flooded)
        self._protocol_errors = ProtocolErrors(self._notifications)
        self._decisions = DecisionsInFlight()
        self._guard = DenialGuard(config.max_tool_denials, self._guard_tripped)
        self._answers = AnswerWatch(config.idle_ms / 1000)
        limit = config.tool_contract.max_tool_calls if config.tool_contract else None
        self._budget = (
            ToolCallBudget(
                limit,
                on_debit=self._budget_debit,
                on_denied=self._budget_denied,
                on_overrun=self._budget_overrun,
            )
            if limit
            else None
        )

    async def run(self) -> RunResult:
        """Steps 2 to 7 of spec 3.2 (step 1, the configuration, is already resolved)."""
        started = time.monotonic()
        output = ""
        failure: Failure | None = None
        phase = Phase.CONNECT
        self._protocol_errors.attach()
        try:
            self._log_start()
            client = await self._start_client()
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
        return self._finish(started, output, failure)

    async def _start_client(self) -> CopilotClient:
        """Step 2: connect to the sidecar (once the harness says it listens), then watch it."""
        if self.config.sdk_ready_fd is not None:
            await self.stop.race(
                sidecar_ready(self.config.sdk_ready_fd, self.config.sdk_uri),
                timeout=READY_WAIT_S,
            )
        self._client = client = create_client(self.config, self._notifications)
        await self.stop.race(client.start(), timeout=START_TIMEOUT_S)
        self.log.info(
            "client.started", "connected to the Copilot sidecar", sdkUri=self.config.sdk_uri
        )
        self._watchdog = self._watch_sidecar(client)
        return client

    async def _create_session(self, client: CopilotClient) -> CopilotSession:
        """Steps 3 and 4: the session, created with its permission and event handlers.
        The sidecar's CLI version is asked for beside it, so the check adds no time."""
        cli_version = asyncio.ensure_future(self._cli_version(client))
        try:
            self._session = session = await self.stop.race(
                client.create_session(**self._session_options()), timeout=CREATE_TIMEOUT_S
            )
        except BaseException:
            cli_version.cancel()
            raise
        self.log.bind(sessionId=session.session_id)
        events_path = self.sink.attach(session.session_id)
        self.log.info(
            "session.created",
            f"session {session.session_id} created",
            model=self.config.model,
            eventsFile=str(events_path),
        )
        await self._check_versions(cli_version)
        return session

    async def _cli_version(self, client: CopilotClient) -> str | None:
        try:
            return (await client.get_status()).version
        except Exception as error:  # an unknown version is no reason to stop
            self.log.debug("compatibility.unknown", f"no Copilot CLI version: {error!r}")
            return None

    async def _check_versions(self, cli_version: asyncio.Future[str | None]) -> None:
        """One `compatibility` warning when the sidecar's CLI or the installed SDK is not a
        tested version. Never fails the run: a stop request is raised by the next step."""
        import copilot  # already loaded by the client

        try:
            version = await self.stop.race(cli_version, timeout=VERSION_TIMEOUT_S)
        except Exception:
            cli_version.cancel()
            version = None
        untested = untested_versions(version, getattr(copilot, "__version__", None))
        if untested is not None:
            self.log.warning(COMPATIBILITY_EVENT, untested.message(), **untested.fields())

    async def _send_prompt(self, session: CopilotSession) -> str:
        """Step 5: send the prompt and wait for the answer (or, once the answer is in, for
        a session that never goes idle to stay quiet past the idle watchdog)."""
        self.log.info(
            "prompt.dispatched",
            "sending the prompt and waiting for the session to finish",
            promptChars=len(self.config.prompt),
            sendTimeoutMs=self.config.send_timeout_ms,
        )
        self._turn_open = True
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
                "session.idle_timeout",
                f"the session answered but did not go idle within {self.config.idle_ms} ms "
                "(GH_AW_SDK_IDLE_MS); ending it with its answer",
            )
            return str(reply)
        self._turn_open = False
        return _reply_text(reply)

    def _finish(self, started: float, output: str, failure: Failure | None) -> RunResult:
        """Step 6: the result, its file, and the run's last log entry."""
        result = RunResult(
            exit_code=failure.exit_code if failure else ExitCode.OK,
            output=output,
            duration_ms=round((time.monotonic() - started) * 1000),
            session_id=self._session.session_id if self._session else None,
            error=failure.message if failure else None,
            error_kind=failure.kind if failure else None,
        )
        result_file = self._write_result(result)
        summary: dict[str, Any] = {
            "exitCode": result.exit_code,
            "hasOutput": result.has_output,
            "durationMs": result.duration_ms,
        }
        if result_file:
            summary["resultFile"] = result_file
        if failure is None:
            self.log.info("session.completed", "session completed", **summary)
        else:
            self.log.error("error", failure.message, errorKind=failure.kind, **summary)
        return result

    def _outcome_of(self, failure: Exception, phase: Phase) -> Failure:
        """What ended the run early, as its exit code, error kind and message."""
        if isinstance(failure, StopRequestedError):
            return describe_stop(failure, phase)
        if isinstance(failure, TimeoutError) and phase == Phase.TURN:
            return describe_send_timeout(self.config.send_timeout_ms)
        self.log.debug("error.detail", "failure detail", exception=repr(failure))
        return describe_failure(
            failure,
            phase=phase,
            sdk_uri=self.config.sdk_uri,
            connected=self._client is None or is_connected(self._client),
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

    def _guard_tripped(self, count: int, threshold: int) -> None:
        """The denial that reached the threshold was just logged: record the guard's
        event at once (spec 4.5: preserved whatever the cleanup meets), then stop."""
        stop = ToolDenialsExceededError(count, threshold)
        self.sink.write_record(guard_record(count, threshold, stop.explanation))
        self.stop.stop_for(stop)

    def _on_event(self, event: Any) -> None:
        """Every session event: to the events file, and to the idle watchdog."""
        self.sink.handle(event)
        self._answers.observe(event)

    def _budget_debit(self, debit: Debit) -> None:
        self.sink.write_record(
            budget_debit_record(debit.tool, debit.session_id, debit.count, debit.limit)
        )

    def _budget_denied(self, debit: Debit) -> None:
        self.log.warning(
            "tool_call_budget.denied",
            f"permission denied by the tool-call budget: {debit.tool} (call {debit.count}, "
            f"budget {debit.limit}); the model is told to answer without tools",
            toolName=debit.tool,
            callCount=debit.count,
            maxToolCalls=debit.limit,
        )

    def _budget_overrun(self, debit: Debit) -> None:
        """The model ignored the budget's denials: record it at once, then stop."""
        stop = ToolCallBudgetExceededError(debit.tool, debit.count, debit.limit)
        self.log.warning(
            "guard.tool_call_budget_exceeded",
            str(stop),
            toolName=debit.tool,
            maxToolCalls=debit.limit,
        )
        self.sink.write_record(
            budget_record(debit.tool, debit.session_id, debit.count, debit.limit, stop.explanation)
        )
        self.stop.stop_for(stop)

    def _record_denial(self, denial: Denial) -> None:
        """The policy's reason and the allowing rule, beside the runtime's events."""
        self.sink.write_record(denial_record(denial))

    def _log_start(self) -> None:
        config = self.config
        self.log.info(
            "connection.start",
            f"connecting to the Copilot sidecar at {config.sdk_uri}",
            sdkUri=config.sdk_uri,
            model=config.model,
            sendTimeoutMs=config.send_timeout_ms,
            logLevel=config.log_level,
            workingDirectory=str(config.working_directory),
            provider=config.provider.shown_url if config.provider else None,
        )
        for notice in config.notices:
            self.log.warning("config.fallback", notice)
        permissions = config.permissions
        self.log.info(
            "permissions.config",
            f"tool permissions: {permissions.describe()}",
            permissionMode=permissions.mode,
            allowedTools=list(permissions.allowed_tools),
            permissionSource=permissions.source,
            maxToolDenials=config.max_tool_denials,
        )
        if config.tool_contract is not None:
            tools = config.tool_contract.available_tools()
            self.log.info(
                "tools.config",
                f"the model may see {len(tools)} tools (from the tool contract)",
                availableTools=tools,
                maxToolCalls=config.tool_contract.max_tool_calls,
            )
        for problem in self.policy.rule_problems:
            self.log.warning(
                "permissions.unusable_rule",
                problem.describe(),
                rule=problem.rule,
                suggestion=problem.suggestion,
            )
            if self.config.github_actions:
                github_actions_warning(
                    "Copilot tool permission rule matches only its own text"
                    if problem.literal
                    else "Copilot tool permission rule matches no request",
                    self.redactor.text(problem.describe()),
                )
        for grant in self.policy.code_execution_grants:
            self.log.info(
                "permissions.grants_code_execution",
                grant.describe(),
                rule=grant.rule,
                program=grant.program,
            )
            if self.config.github_actions:
                github_actions_notice(
                    "Copilot tool permission rule grants running code",
                    self.redactor.text(grant.describe()),
                )

    def _session_options(self) -> dict[str, Any]:
        secondary: list[DenialLogger] = [self._record_denial]
        if self.config.github_actions:
            secondary.append(github_actions_annotation(self.redactor))
        options: dict[str, Any] = {
            "model": self.config.model,
            "working_directory": str(self.config.working_directory),
            # Always registered: without a handler the runtime denies every request.
            "on_permission_request": make_permission_handler(
                self.policy,
                self.log,
                secondary=secondary,
                guard=self._guard,
                in_flight=self._decisions,
            ),
            # Registered at creation so `session.start` is captured too.
            "on_event": self._on_event,
        }
        if self.config.provider is not None:
            options["provider"] = self.config.provider.to_sdk()
        if self.config.catalog is not None:
            options.update(self.config.catalog.to_sdk())
        if self.config.tool_contract is not None:
            options["available_tools"] = self.config.tool_contract.available_tools()
        if self._budget is not None:
            options["hooks"] = {"on_pre_tool_use": self._budget.pre_tool_use}
        if self.config.reasoning_effort is not None:
            options["reasoning_effort"] = self.config.reasoning_effort
        return options

    def _watch_sidecar(self, client: CopilotClient) -> SidecarWatchdog:
        uri = self.config.sdk_uri

        def lost(why: str) -> None:
            unreadable = self._protocol_errors.last
            if unreadable:  # the SDK closed the connection because of what it read
                self.stop.lose_sidecar(f"the Copilot sidecar at {uri} {unreadable}")
            else:
                self.stop.lose_sidecar(f"the Copilot sidecar at {uri} stopped responding: {why}")

        watchdog = SidecarWatchdog(
            ping=client.ping,
            connected=lambda: is_connected(client),
            on_lost=lost,
        )
        watchdog.start()
        return watchdog

    def _unreadable_notification(self, detail: str) -> None:
        self.log.warning(
            "sidecar.unreadable_notification",
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
        if self._watchdog is not None:
            await self._watchdog.stop()
        session, client = self._session, self._client
        # A lost sidecar cannot answer an abort or a disconnect: waiting for
        # their timeouts would only delay the exit.
        sidecar_lost = isinstance(self.stop.reason, SidecarLostError)
        if session is not None and not sidecar_lost and self._turn_open:
            # Denials already decided are delivered as denials, not turned into
            # cancellations by the abort overtaking them.
            await self._decisions.delivered(DECISIONS_TIMEOUT_S)
            # The runtime emits `abort` and `assistant.turn_end` before it answers,
            # and the SDK dispatches in wire order: once this returns, the events
            # file can show how the turn ended.
            await self._bounded("abort the turn", session.abort(), ABORT_TIMEOUT_S)
        self._guard.turn_stopped()  # withheld permission requests end now
        if self._budget is not None:
            self._budget.turn_stopped()
        if session is not None and not sidecar_lost:
            await self._bounded(
                "disconnect the session", session.disconnect(), DISCONNECT_TIMEOUT_S
            )
        await asyncio.to_thread(self.sink.close, EVENTS_CLOSE_TIMEOUT_S)
        if client is not None:
            release_transport(client)  # see connection.py: stop() would wait 1 s on its reader
            await self._bounded("stop the client", client.stop(), STOP_TIMEOUT_S)

    async def _bounded(self, what: str, step: Awaitable[Any], timeout: float) -> None:
        """One cleanup step, abandoned at its deadline (see `tasks.bounded`)."""
        try:
            await bounded(step, timeout)
        except StepAbandonedError:
            self.log.warning("cleanup.timeout", f"could not {what} within {timeout:g}s")
        except Exception as error:  # cleanup is best effort; the outcome is already known
            self.log.debug("cleanup.failed", f"could not {what}: {error}")

    def _write_result(self, result: RunResult) -> str | None:
        if self.sink.path is None:
            return None
        path = self.sink.path.with_name(RESULT_FILE_NAME)
        try:
            write_result(path, result, self.redactor)
        except OSError as error:
            self.log.error("result.write_failed", f"cannot write {path}: {error.strerror}")
            return None
        return str(path)


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
        log.error("error", f"unhandled driver error: {type(error).__name__}: {error}")
        return int(ExitCode.FAILURE)
    if result.has_output:
        sys.stdout.write(redactor.text(result.output).rstrip("\n") + "\n")
        sys.stdout.flush()
    return ExitCode.FAILURE if result.exit_code is None else result.exit_code


def _reply_text(reply: Any) -> str:
    content = getattr(getattr(reply, "data", None), "content", None)
    return content if isinstance(content, str) else ""
