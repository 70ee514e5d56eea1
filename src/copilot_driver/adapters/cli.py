"""`python -m copilot_driver.adapters run`: one agent session from the command line.

Prints every normalised event as one JSON line on stdout (secrets masked; DEL,
C1 controls and `##[` as JSON escapes, which a terminal and the Actions runner
leave alone), logs to stderr (inert as well; other libraries' logs only from
WARNING up, unless --log-level debug), and ends with an exit status a script
can act on:

    0    every turn completed
    1    a turn failed (the agent or its model reported an error)
    2    bad usage: arguments, the prompt, the WORKFLOW.md or what it names
    4    the session could not start (workspace, binary, credential)
    124  a turn hit turn_timeout_ms or stall_timeout_ms
    130  interrupted (SIGINT); 143 terminated (SIGTERM)

Every problem found before the agent starts is reported at once, one
`[copilot-driver-adapters] error: ...` line each. A relative --workspace is
taken from the current directory (with worker.ssh_hosts it must be absolute).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from copilot_driver import __version__
from copilot_driver.adapters._extra import missing_extra
from copilot_driver.adapters.cli_inputs import Inputs, read_inputs
from copilot_driver.adapters.core.agent_events import AgentEvent
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.registry import adapter_kinds
from copilot_driver.adapters.core.runner import TurnRunner
from copilot_driver.command_line import CommandParser, error_line, refuse
from copilot_driver.exit_codes import AdapterExitCode, for_signal
from copilot_driver.inert_text import inert_line, inert_log
from copilot_driver.redaction import Redactor, url_userinfo_secrets
from copilot_driver.secret_variables import ADAPTER_SECRETS, secrets_in
from copilot_driver.vocabulary import AdapterErrorKind

COMMAND = "copilot-driver-adapters"
LOG_LEVELS = ("debug", "info", "warning", "error")
OWN_LOGGERS = "copilot_driver"

log = logging.getLogger("copilot_driver.adapters")


class _RedactingFormatter(logging.Formatter):
    def __init__(self, redactor: Redactor) -> None:
        super().__init__("%(name)s %(levelname)s: %(message)s")
        self._redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        return inert_log(self._redactor.text(super().format(record)))


def _quiet_libraries(record: logging.LogRecord) -> bool:
    """Other libraries' INFO (httpx's `HTTP Request: POST ...` for every model call)
    is noise at the default level; their warnings and errors still show."""
    return record.name.partition(".")[0] == OWN_LOGGERS or record.levelno >= logging.WARNING


def _parser(missing: str | None = None) -> CommandParser:
    """The command line; `missing`: what the adapters' extra lacks, said in --help."""
    epilog = __doc__.split("\n\n", 1)[1] if __doc__ else ""
    if missing is not None:
        epilog += f"\n`run` needs the adapters' extra: {missing}\n"
    parser = CommandParser(
        prog="python -m copilot_driver.adapters",
        command=COMMAND,
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="run", required=True)
    run = commands.add_parser(
        "run", help="run one session of turns and print its events", command=COMMAND
    )
    run.add_argument("--kind", help=f"agent kind: {', '.join(adapter_kinds())} (or agent.kind)")
    run.add_argument(
        "--workspace",
        required=True,
        help="the directory the agent works in; a relative path is taken from the current "
        "directory (with worker.ssh_hosts: the absolute path on the host)",
    )
    prompts = run.add_mutually_exclusive_group(required=True)
    prompts.add_argument(
        "--prompt", action="append", help="the prompt; repeat it for more turns in one session"
    )
    prompts.add_argument("--prompt-file", help="a UTF-8 file holding the prompt")
    run.add_argument("--workflow", help="WORKFLOW.md with agent settings front matter")
    run.add_argument("--resume", metavar="SESSION_ID", help="continue this agent session")
    run.add_argument(
        "--log-level",
        default="info",
        type=str.lower,
        choices=LOG_LEVELS,
        help="stderr's level (default info); debug also shows other libraries' logs",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    missing = missing_extra()
    parser = _parser(missing)
    args = parser.parse_args(arguments)  # --help and --version answer without the extra
    if missing is not None:  # only a session needs it
        return refuse(COMMAND, missing)
    redactor = Redactor(secrets_in(os.environ, ADAPTER_SECRETS))
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_RedactingFormatter(redactor))
    if args.log_level != "debug":
        handler.addFilter(_quiet_libraries)
    logging.basicConfig(level=args.log_level.upper(), handlers=[handler], force=True)

    inputs = read_inputs(args, Path.cwd())
    if not isinstance(inputs, Inputs):
        for line in inputs.lines():
            _fail(redactor, line)
        return inputs.exit_code
    redactor = _workflow_redactor(inputs)
    handler.setFormatter(_RedactingFormatter(redactor))
    return asyncio.run(_run(inputs, redactor))


def _workflow_redactor(inputs: Inputs) -> Redactor:
    """The environment's secrets, and those the workflow's options point at: a key's
    variable (`api_key_env`) and the userinfo of a URL option
    (`base_url: https://user:key@host/v1`)."""
    options = inputs.workflow.options
    named = [v for k, v in options.items() if k.endswith("_env") and isinstance(v, str)]
    in_urls = [
        secret
        for key, value in options.items()
        if key.endswith("url") and isinstance(value, str)
        for secret in url_userinfo_secrets(value)
    ]
    return Redactor([*secrets_in(os.environ, (*ADAPTER_SECRETS, *named)), *in_urls])


def _fail(redactor: Redactor, message: str) -> None:
    """The command's error line: the shared form, masked."""
    sys.stderr.write(error_line(COMMAND, redactor.text(message)) + "\n")


async def _run(inputs: Inputs, redactor: Redactor) -> int:
    main_task = asyncio.current_task()
    assert main_task is not None
    received: list[signal.Signals] = []

    def interrupt(signum: signal.Signals) -> None:
        received.append(signum)
        main_task.cancel(f"stopped by {signum.name}")

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, interrupt, signum)

    def emit(event: AgentEvent) -> None:
        sys.stdout.write(inert_line(redactor.json_line(event.to_dict())) + "\n")
        sys.stdout.flush()

    runner = TurnRunner(inputs.adapter, inputs.workflow.limits, redactor=redactor)
    try:
        try:
            session = await runner.start_session(inputs.workspace, resume_session_id=inputs.resume)
        except AgentError as exc:
            _fail(redactor, f"the session could not start: {exc}")
            return AdapterExitCode.START_FAILED
        try:
            for prompt in inputs.prompts:
                result = await runner.run_turn(session, prompt, on_event=emit)
                turn = f"turn {session.turns_started} of session {result.session_id or '?'}"
                if result.error is None:
                    log.info("%s: completed", turn)
                    continue
                _fail(redactor, f"{turn}: {result.error}")
                if result.error.kind is AdapterErrorKind.TURN_TIMEOUT:
                    return AdapterExitCode.TIMEOUT
                return AdapterExitCode.TURN_FAILED
        except AgentError as exc:
            _fail(redactor, str(exc))
            return AdapterExitCode.TURN_FAILED
        finally:
            await runner.stop_session(session)
    except asyncio.CancelledError:
        if not received:
            raise
        signum = received[0]
        _fail(redactor, f"stopped by {signum.name}")
        return for_signal(signum)
    return AdapterExitCode.OK
