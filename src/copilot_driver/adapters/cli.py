"""`python -m copilot_driver.adapters run`: one agent session from the command line.

Prints every normalised event as one JSON line on stdout (secrets masked; DEL,
C1 controls and `##[` as JSON escapes, which a terminal and the Actions runner
leave alone), logs to stderr (inert as well), and ends with an exit status a
script can act on:

    0    every turn completed
    1    a turn failed (the agent or its model reported an error)
    2    bad usage: arguments, the prompt file, or the WORKFLOW.md
    3    the session could not start (workspace, binary, credential)
    124  a turn hit turn_timeout_ms or stall_timeout_ms
    130  interrupted (SIGINT); 143 terminated (SIGTERM)
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
from copilot_driver.adapters.core.agent_events import AgentEvent
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.registry import adapter_kinds, get_adapter, preflight
from copilot_driver.adapters.core.runner import TurnRunner
from copilot_driver.adapters.core.workflow import (
    Workflow,
    WorkflowError,
    load_workflow,
    parse_workflow,
)
from copilot_driver.env import ADAPTER_SECRETS, secrets_in
from copilot_driver.exit_codes import AdapterExitCode, for_signal
from copilot_driver.inert_text import inert_line, inert_log
from copilot_driver.redaction import Redactor, url_userinfo_secrets
from copilot_driver.vocabulary import AdapterErrorKind

log = logging.getLogger("copilot_driver.adapters")


class _RedactingFormatter(logging.Formatter):
    def __init__(self, redactor: Redactor) -> None:
        super().__init__("%(name)s %(levelname)s: %(message)s")
        self._redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        return inert_log(self._redactor.text(super().format(record)))


def _parser(missing: str | None = None) -> argparse.ArgumentParser:
    """The command line; `missing`: what the adapters' extra lacks, said in --help."""
    epilog = __doc__.split("\n\n", 1)[1] if __doc__ else ""
    if missing is not None:
        epilog += f"\n`run` needs the adapters' extra: {missing}\n"
    parser = argparse.ArgumentParser(
        prog="python -m copilot_driver.adapters",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run one session of turns and print its events")
    run.add_argument("--kind", help=f"agent kind: {', '.join(adapter_kinds())} (or agent.kind)")
    run.add_argument("--workspace", required=True, type=Path, help="absolute workspace directory")
    prompts = run.add_mutually_exclusive_group(required=True)
    prompts.add_argument(
        "--prompt", action="append", help="the prompt; repeat it for more turns in one session"
    )
    prompts.add_argument("--prompt-file", type=Path, help="a UTF-8 file holding the prompt")
    run.add_argument("--workflow", type=Path, help="WORKFLOW.md with agent settings front matter")
    run.add_argument("--resume", metavar="SESSION_ID", help="continue this agent session")
    run.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    missing = missing_extra()
    parser = _parser(missing)
    args = parser.parse_args(arguments)  # --help and --version answer without the extra
    if missing is not None:  # only a session needs it
        sys.stderr.write(f"copilot-driver adapters: error: {missing}\n")
        return AdapterExitCode.USAGE
    redactor = Redactor(secrets_in(os.environ, ADAPTER_SECRETS))
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_RedactingFormatter(redactor))
    logging.basicConfig(level=args.log_level.upper(), handlers=[handler], force=True)

    try:
        workflow = _workflow(args)
        prompts = _prompts(args)
    except (WorkflowError, ValueError) as exc:
        log.error("%s", exc)
        return AdapterExitCode.USAGE
    # An adapter option naming a key's variable (`api_key_env`) names a secret too,
    # and so does the userinfo of a URL option (`base_url: https://user:key@host/v1`).
    named = [v for k, v in workflow.options.items() if k.endswith("_env") and isinstance(v, str)]
    in_urls = [
        secret
        for key, value in workflow.options.items()
        if key.endswith("url") and isinstance(value, str)
        for secret in url_userinfo_secrets(value)
    ]
    redactor = Redactor([*secrets_in(os.environ, (*ADAPTER_SECRETS, *named)), *in_urls])
    handler.setFormatter(_RedactingFormatter(redactor))
    return asyncio.run(_run(workflow, args.workspace, prompts, args.resume, redactor))


def _workflow(args: argparse.Namespace) -> Workflow:
    if args.workflow is not None:
        return load_workflow(args.workflow, kind=args.kind)
    if not args.kind:
        raise ValueError(f"give --kind ({', '.join(adapter_kinds())}) or a --workflow")
    return parse_workflow({}, kind=args.kind, source="--kind")


def _prompts(args: argparse.Namespace) -> list[str]:
    if args.prompt_file is not None:
        try:
            prompts = [args.prompt_file.read_text(encoding="utf-8")]
        except UnicodeDecodeError:
            raise ValueError(f"{args.prompt_file}: the prompt file is not UTF-8 text") from None
        except OSError as exc:
            raise ValueError(
                f"{args.prompt_file}: cannot read the prompt file: {exc.strerror}"
            ) from None
    else:
        prompts = list(args.prompt)
    for prompt in prompts:
        if not prompt.strip():
            raise ValueError("the prompt is empty")
        if "\x00" in prompt:
            raise ValueError(
                "the prompt contains a NUL byte, which no agent command line can carry"
            )
    return prompts


async def _run(
    workflow: Workflow,
    workspace: Path,
    prompts: list[str],
    resume: str | None,
    redactor: Redactor,
) -> int:
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

    config = workflow.adapter_config()
    runner = TurnRunner(get_adapter(workflow.kind, config), workflow.limits, redactor=redactor)
    try:
        try:
            preflight(workflow.kind, config)
            session = await runner.start_session(workspace, resume_session_id=resume)
        except AgentError as exc:
            log.error("the session could not start: %s", redactor.text(str(exc)))
            return AdapterExitCode.START_FAILED
        try:
            for prompt in prompts:
                result = await runner.run_turn(session, prompt, on_event=emit)
                summary = redactor.text(str(result.error)) if result.error else "completed"
                log.log(
                    logging.ERROR if result.error else logging.INFO,
                    "turn %d of session %s: %s",
                    session.turns_started,
                    result.session_id or "?",
                    summary,
                )
                if result.error is not None:
                    if result.error.kind is AdapterErrorKind.TURN_TIMEOUT:
                        return AdapterExitCode.TIMEOUT
                    return AdapterExitCode.TURN_FAILED
        except AgentError as exc:
            log.error("%s", redactor.text(str(exc)))
            return AdapterExitCode.TURN_FAILED
        finally:
            await runner.stop_session(session)
    except asyncio.CancelledError:
        if not received:
            raise
        signum = received[0]
        log.error("stopped by %s", signum.name)
        return for_signal(signum)
    return AdapterExitCode.OK
