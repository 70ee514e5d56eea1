"""`copilot-driver` / `python -m copilot_driver`: arguments, validation, exit status.

Imports nothing heavy: the configuration is validated first, and only a
valid configuration loads the SDK (via `driver`). A configuration error
prints `[copilot-sdk-driver] error: ...` lines and exits 2 in milliseconds.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from types import FrameType
from typing import NoReturn

from copilot_driver import LOG_PREFIX, __version__
from copilot_driver.command_line import error_line
from copilot_driver.driver.config import ConfigError, load_config
from copilot_driver.env import CONNECTION_TOKEN, SDK_URI
from copilot_driver.env_docs import usage_lines
from copilot_driver.exit_codes import ExitCode, for_signal
from copilot_driver.redaction import Redactor
from copilot_driver.secret_variables import secrets_in

USAGE = f"""\
usage: copilot-driver [COPILOT_BINARY]

Runs one GitHub Copilot agent session against a harness-managed Copilot CLI
sidecar and prints the final answer on stdout. All configuration comes from
the environment:

{usage_lines()}
Run it through copilot-driver-harness (`copilot-driver-harness prompt.md`),
which starts the sidecar and sets COPILOT_SDK_URI and COPILOT_CONNECTION_TOKEN.
A leading positional argument (the copilot binary a harness may pass) is
ignored. Exit status: 0 success, 1 runtime failure, 2 configuration error,
3 tool-denials guard, 6 tool-call budget, 124 send timeout, 128+N stopped by
signal N.
"""


class StoppedBeforeStartError(BaseException):
    """SIGTERM or SIGINT before the lifecycle took the signals over.

    A BaseException so no `except Exception` on the way (the SDK import, the
    driver's own last-resort handler) can swallow it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _stop_before_start(signum: int, frame: FrameType | None) -> None:
    raise StoppedBeforeStartError(signum)


def main(argv: list[str] | None = None) -> int:
    """Validate, then run; a signal before the run began exits 128+N with one line.

    Until the lifecycle installs its own handlers (which clean up a started
    session), SIGTERM would kill the process without a word and SIGINT would
    print a traceback; nothing has been started yet, so there is nothing to
    clean up either.
    """
    previous = {
        signum: signal.signal(signum, _stop_before_start)
        for signum in (signal.SIGTERM, signal.SIGINT)
    }
    try:
        return _validate_and_run(sys.argv[1:] if argv is None else argv)
    except StoppedBeforeStartError as stopped:
        _error(f"stopped by {stopped} before the session started; nothing was left running")
        return for_signal(stopped.signum)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _validate_and_run(args: list[str]) -> int:
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return int(ExitCode.OK)
    if args and args[0] == "--version":
        sys.stdout.write(f"copilot-driver {__version__}\n")
        return int(ExitCode.OK)
    options = [arg for arg in args if arg.startswith("-")]
    if options or len(args) > 1:
        # A secret pasted on the command line by mistake is echoed masked: the
        # argument on its own (so a secret cut at its edges, `--token=<first
        # characters>`, is caught), then the message (whose repr escapes the argument).
        redactor = _environment_redactor()
        unexpected = redactor.text(options[0] if options else args[1])
        _error(
            redactor.text(
                f"unexpected argument {unexpected!r}: configuration comes from the "
                "environment (see --help)"
            )
        )
        return int(ExitCode.CONFIG)

    try:
        config = load_config(os.environ)
    except ConfigError as error:
        # Defence in depth: these messages never include secrets by design.
        redactor = _environment_redactor()
        for problem in _direct_run(error.problems):
            _error(redactor.text(problem))
        return int(ExitCode.CONFIG)

    # The SDK's generated modules lazily where verified (else as usual), then the SDK.
    from copilot_driver.sdk_loading import install

    install(config.sdk_loading)
    from copilot_driver.driver.lifecycle import run_driver  # loads the SDK: only now

    return run_driver(config)


def run() -> NoReturn:
    """The process entry point (`python -m copilot_driver`, `copilot-driver`).

    Once `main` has returned, everything the run wrote is flushed and closed
    (the events file is fsynced, result.json replaced atomically), so the
    process leaves at once: the interpreter's teardown of the SDK's large
    module graph would add ~0.1 s to every workflow step for nothing.
    """
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    logging.shutdown()
    os._exit(code)


HARNESS_HINT = (
    "the driver talks to a Copilot CLI sidecar, which copilot-driver-harness starts for you "
    "(and sets this and COPILOT_CONNECTION_TOKEN): run `copilot-driver-harness prompt.md` "
    "(or `python -m copilot_driver.harness prompt.md`) with COPILOT_MODEL and "
    "COPILOT_GITHUB_TOKEN set"
)


def _direct_run(problems: list[str]) -> list[str]:
    """The driver run by hand, without the harness that gives it the sidecar's address
    and token: the first of the two missing variables names the harness as the fix."""
    missing = [f"{variable.name} is not set" for variable in (SDK_URI, CONNECTION_TOKEN)]
    if not all(any(problem.startswith(text) for problem in problems) for text in missing):
        return problems
    return [
        f"{missing[0]}: {HARNESS_HINT}" if problem.startswith(missing[0]) else problem
        for problem in problems
    ]


def _environment_redactor() -> Redactor:
    """Masks the environment's secrets in errors printed before a configuration exists."""
    return Redactor(secrets_in(os.environ))


def _error(message: str) -> None:
    sys.stderr.write(error_line(LOG_PREFIX.strip("[]"), message) + "\n")
    sys.stderr.flush()
