"""Hostile environments: every variable the driver reads, set to a hostile value.

The driver's whole configuration is its environment, written by workflows
and harnesses people edit by hand. Each variable of `copilot-driver --help`
is set, one at a time, to each of these values, the rest of the environment
staying valid:

- `empty` and `whitespace` (spaces, a tab, CR LF);
- `huge`: the largest value one environment string can carry. Linux caps
  each `NAME=value` string at MAX_ARG_STRLEN (128 KiB; `execve` fails with
  E2BIG beyond, see the last test), so "1 MB of text" cannot reach a
  process: 128 KiB is the most a harness can ever pass;
- `shell`: `$(...)`, backticks, `;`, `|`, `&&`, quotes, CR LF, each of which
  would create a canary file in the test's folder if anything ran the value
  through a shell (the canary must never exist);
- `secret`: a value containing the connection token, which must never be
  printed (NUL cannot be in an environment at all);
- and, for COPILOT_SDK_SEND_TIMEOUT_MS and GH_AW_MAX_TOOL_DENIALS, the
  spellings `0`, `-1`, `1e3`, ` 42 `, `0x10` and 2**64 in decimal.

Each run has its own folder as its current directory and `TMPDIR`, so even
the default state folder stays inside the test's folder.

Cases, with their bounds:

- `test_a_value_the_driver_cannot_use_is_a_configuration_error` (34 cases,
  ~0.1 s each): exit 2 within CONFIG_ERROR_BOUND_S with only
  `[copilot-sdk-driver] error:` lines, one naming the variable, nothing on
  stdout and nothing started (no state folder). No sidecar: validation comes
  before anything connects (a run that wrongly got further would fail on the
  closed CLOSED_SDK_URI).
- `test_a_hostile_value_still_gives_the_documented_run` (14 variables, 66
  whole runs on one module-wide real sidecar, PARALLEL_RUNS at a time, ~1 s
  each alone): soft settings fall back (one `config.fallback` warning naming
  the variable, the default in effect) and the run completes (exit 0, the
  answer on stdout); blank optional settings mean unset; a wrong token is
  exit 1 `auth_failed`; an unusable state folder is exit 1
  `events_unwritable`; a 42 ms send timeout is exit 124 `send_timeout`; a
  provider key with CR LF is refused (2) or fails the turn (1) but is never
  printed; GITHUB_ACTIONS=true (the control) annotates a denial, no hostile
  value does. Each run within RUN_BOUND_S. A run costs ~1 CPU-second (most
  of it the SDK import), so the batch needs ~35 s of a 2-CPU machine.
- `test_the_shell_value_is_armed`: the control for the canary: `sh` given
  the value does create it.
- `test_the_huge_value_is_the_largest_an_environment_can_carry`: why `huge`
  is 128 KiB.

Every case also proves: no stdout/stderr line longer than MAX_LINE_CHARS (a
128 KiB value is never echoed), the canary does not exist, no secret
(connection token, provider key, planted platform tokens, and the wrong
tokens and keys a case passes) in stdout, stderr or any file the run wrote,
the events file valid JSON Lines to its last line, and no process left
behind (`FaultCase.check`).
"""

from __future__ import annotations

import secrets
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from copilot_driver import LOG_PREFIX
from copilot_driver.testing import (
    Reply,
    Rule,
    Script,
    ScriptedModelServer,
    ToolCall,
    driver_environment,
    start_test_sidecar,
)
from copilot_driver.testing.faults import BoundedProcess, Ended, FaultCase
from copilot_driver.testing.fixtures import parse_log

pytestmark = pytest.mark.e2e

CONFIG_ERROR_BOUND_S = 10.0
"""Validation runs before the SDK is imported: ~0.2 s measured (40 ms in `make
bench`); 10 s absorbs a loaded 2-CPU machine and still proves no wait on
anything (a blocking open, a connection) happened."""
RUN_BOUND_S = 45.0
"""A whole run takes ~1 s alone and a few seconds with PARALLEL_RUNS at once
on a loaded 2-CPU machine; every step of the driver is bounded (connect 4 s,
session creation 30 s), so a run that outlives this bound hung."""
PARALLEL_RUNS = 4
"""Whole runs at once (across all variables): most of a run is the SDK import
(CPU) and round trips to the sidecar (waiting), so a few at once keep both
CPUs busy without starving the sidecar."""
MAX_LINE_CHARS = 2000
"""A log entry with its paths (working directory, events file) is ~500
characters, ~1,000 under a parallel worker's longer temporary folder (and a state
folder that is itself a hostile value); an echoed 128 KiB value is 65 times this."""
MAX_ARG_STRLEN = 128 * 1024
"""Linux's limit for one `NAME=value` environment string, its NUL included."""
SLOW_TRIGGER = "SLOW-TURN"
DENY_TRIGGER = "DENIED-TOOL"
SLOW_REPLY_S = 5.0
"""Long enough that a 42 ms send timeout certainly fires before the answer."""
ANSWER = "environment-faults-answer"
CLOSED_SDK_URI = "127.0.0.1:9"
"""Where configuration-error runs would connect if they wrongly got that far:
nothing listens on the discard port, so such a run fails fast instead of
touching a sidecar."""

TIMEOUT = "COPILOT_SDK_SEND_TIMEOUT_MS"
DENIALS = "GH_AW_MAX_TOOL_DENIALS"
HOSTILE = ("empty", "whitespace", "huge", "shell", "secret")
NUMBERS = ("0", "-1", "1e3", " 42 ", "0x10", str(2**64))
_HUGE_PATTERN = "hostile-env-value~0123456789abcdefghijklmnopqrstuvwxyz|"


def _huge(variable: str) -> str:
    """The longest value `variable` can have (128 KiB less `NAME=` and the NUL)."""
    size = MAX_ARG_STRLEN - len(variable) - 2
    return (_HUGE_PATTERN * (size // len(_HUGE_PATTERN) + 1))[:size]


def _shell(canary: Path) -> str:
    """Every way a shell would run `touch CANARY`, plus quotes and line breaks."""
    c = str(canary)
    return (
        f"x$(touch {c})`touch {c}`;touch {c}|touch {c}&&touch {c} 'single' \"double\" "
        f"\\\r\ntouch {c}\n$(touch {c})"
    )


def _value(kind: str, variable: str, canary: Path, token: str) -> str:
    if kind == "empty":
        return ""
    if kind == "whitespace":
        return " \t \r\n "
    if kind == "huge":
        return _huge(variable)
    if kind == "shell":
        return _shell(canary)
    if kind == "secret":
        return f"v-{token}-v"
    return kind  # a literal (the number spellings)


@dataclass
class Run:
    """One driver run of a case: where it ran, what it was given, what it left."""

    variable: str
    kind: str
    value: str
    folder: Path
    env: dict[str, str]
    ended: Ended | None = None
    error: AssertionError | None = None
    """Why the run could not be collected (HungError)."""

    @property
    def label(self) -> str:
        return f"{self.variable}={self.kind!r}"

    @property
    def entries(self) -> list[dict[str, Any]]:
        assert self.ended is not None
        return parse_log(self.ended.stderr)

    def entry(self, event: str) -> dict[str, Any]:
        found = [entry for entry in self.entries if entry.get("event") == event]
        assert len(found) == 1, f"expected one {event} entry, got {len(found)}"
        return found[0]


def _prepare(
    fault: FaultCase,
    variable: str,
    kind: str,
    *,
    sdk_uri: str,
    token: str,
    model_base_url: str,
    prompt: str = "Say hello",
) -> Run:
    """A case folder (cwd, TMPDIR, prompt, workspace, state) and its environment."""
    folder = fault.tmp_path / f"{variable}-{kind.strip() or 'blank'}"
    workspace = folder / "workspace"
    workspace.mkdir(parents=True)
    prompt_file = folder / "prompt.md"
    prompt_file.write_text(prompt, encoding="utf-8")
    env = driver_environment(
        prompt_file=prompt_file,
        sdk_uri=sdk_uri,
        token=token,
        model_base_url=model_base_url,
        state_dir=folder / "state",
        workspace=workspace,
        TMPDIR=str(folder),  # the default state folder stays in the test's folder
    )
    value = _value(kind, variable, fault.tmp_path / "canary", token)
    env[variable] = value
    return Run(variable, kind, value, folder, env)


def _start(fault: FaultCase, run: Run) -> BoundedProcess:
    return fault.start(run.env, cwd=run.folder)


def _check_common(fault: FaultCase, run: Run) -> None:
    """What every case must show, whatever its outcome."""
    assert run.ended is not None
    canary = fault.tmp_path / "canary"
    assert not canary.exists(), "a shell ran part of the value"
    for stream, text in (("stdout", run.ended.stdout), ("stderr", run.ended.stderr)):
        for line in text.splitlines():
            assert len(line) <= MAX_LINE_CHARS, (
                f"a {len(line)}-character {stream} line (the value echoed?): {line[:300]}..."
            )


def _assert_not_echoed(run: Run, marker: str) -> None:
    """For a secret-carrying variable whose value cannot be a `fault.secrets`
    entry (its canary path is in every log line), a marker of it must not
    appear anywhere the run wrote."""
    assert run.ended is not None
    assert marker not in run.ended.stdout + run.ended.stderr, "the value was printed"
    for path in run.folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert marker.encode() not in path.read_bytes(), f"the value is in {path}"


# -- configuration errors: exit 2, nothing started -----------------------------

CONFIG_ERRORS: list[tuple[str, str]] = [
    *(("GH_AW_PROMPT", kind) for kind in HOSTILE),
    *(("COPILOT_SDK_URI", kind) for kind in HOSTILE),
    ("COPILOT_CONNECTION_TOKEN", "empty"),
    ("COPILOT_CONNECTION_TOKEN", "whitespace"),
    ("COPILOT_MODEL", "empty"),
    ("COPILOT_MODEL", "whitespace"),
    *(("GITHUB_WORKSPACE", kind) for kind in ("huge", "shell", "secret")),
    # Blank means unset: then the provider's type and key are set without it.
    *(("COPILOT_PROVIDER_BASE_URL", kind) for kind in HOSTILE),
    # `key`: the provider key (mixed case) pasted into the wrong variable.
    *(("COPILOT_PROVIDER_TYPE", kind) for kind in ("huge", "shell", "secret", "key")),
    *(("COPILOT_PROVIDER_WIRE_API", kind) for kind in ("huge", "shell", "secret", "key")),
    *(("GH_AW_COPILOT_SDK_PERMISSIONS", kind) for kind in ("huge", "shell", "secret")),
    # Set but not a JSON array of strings: never "no configuration", which approves all.
    *(("GH_AW_COPILOT_SDK_SERVER_ARGS", kind) for kind in ("huge", "shell", "secret")),
    # A 128 KiB key is no API key, and the CLI 1.0.102 sidecar cannot take it:
    # measured, it stops answering at 8 KiB and spins at full CPU, for good,
    # from 16 KiB; 4 KiB works. The driver must refuse it before connecting.
    ("COPILOT_PROVIDER_API_KEY", "huge"),
]


@pytest.mark.parametrize(("variable", "kind"), CONFIG_ERRORS)
def test_a_value_the_driver_cannot_use_is_a_configuration_error(
    fault: FaultCase, variable: str, kind: str
) -> None:
    """Exit 2 at once, one clear line per problem naming the variable, nothing started."""
    token = secrets.token_hex(32)
    fault.secrets.append(token)
    run = _prepare(
        fault,
        variable,
        kind,
        sdk_uri=CLOSED_SDK_URI,
        token=token,
        model_base_url="http://127.0.0.1:9/v1",
    )
    if variable == "COPILOT_PROVIDER_API_KEY":
        fault.secrets.append(run.value)
    if kind == "key":
        key = f"Provider-Key-{secrets.token_urlsafe(24)}"
        run.env.update(COPILOT_PROVIDER_API_KEY=key, **{variable: f"v-{key}-v"})
        # A lower-cased key is still the key (case is a few bits of it, or none).
        fault.secrets += [key, key.lower()]
    run.ended = _start(fault, run).end(bound_s=CONFIG_ERROR_BOUND_S)
    fault.check(run.ended, exit_code=2, mentions=[variable], state_dir=run.folder / "state")
    _check_common(fault, run)
    assert run.ended.stdout == ""
    assert not (run.folder / "state").exists(), "a configuration error started a run"
    assert not (run.folder / "gh-aw").exists(), "a configuration error started a run"
    naming = [line for line in run.ended.stderr.splitlines() if variable in line]
    assert naming, f"no line names {variable}"
    assert all(line.startswith(f"{LOG_PREFIX} error: ") for line in naming)


# -- whole runs against one sidecar --------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What a run with this value must end with."""

    exit_codes: tuple[int, ...] = (0,)
    """The documented exit code (two when either of two fixes is right)."""
    error_kind: str | None = None
    fallback: bool | None = False
    """A `config.fallback` warning naming the variable: required, forbidden, or None
    when either is fine (an empty value is the same as unset)."""
    verify: Callable[[Run], None] | None = None
    prompt: str = "Say hello"
    context: tuple[tuple[str, str], ...] = ()
    """Valid settings the case needs besides the hostile one (a policy, say)."""


def _send_timeout(expected: int) -> Callable[[Run], None]:
    def verify(run: Run) -> None:
        assert run.entry("connection.start")["sendTimeoutMs"] == expected
        assert run.entry("prompt.dispatched")["sendTimeoutMs"] == expected

    return verify


def _max_denials(expected: int) -> Callable[[Run], None]:
    def verify(run: Run) -> None:
        assert run.entry("permissions.config")["maxToolDenials"] == expected

    return verify


def _log_level_warning(run: Run) -> None:
    assert run.entry("connection.start")["logLevel"] == "warning"


def _json_log(run: Run) -> None:
    assert run.ended is not None
    lines = [line for line in run.ended.stderr.splitlines() if line.strip()]
    assert len(run.entries) == len(lines), "not every stderr line is JSON"


def _unrestricted(run: Run) -> None:
    assert run.entry("permissions.config")["permissionMode"] == "unrestricted"


def _denied_without_annotation(run: Run) -> None:
    assert run.entry("permission.denied")["requestKind"] == "shell"
    assert run.ended is not None
    assert "::warning" not in run.ended.stderr, "an annotation without GITHUB_ACTIONS=true"


def _denied_with_annotation(run: Run) -> None:
    """The control: the real value does annotate, so the check above is not vacuous."""
    assert run.entry("permission.denied")["requestKind"] == "shell"
    assert run.ended is not None
    assert run.ended.stderr.count("\n::warning ") == 1, "no annotation with GITHUB_ACTIONS=true"


def _cwd_is_the_workspace(run: Run) -> None:
    working = run.entry("connection.start")["workingDirectory"]
    assert Path(working) == run.folder.resolve()


def _events_under(base: Callable[[Run], Path]) -> Callable[[Run], None]:
    def verify(run: Run) -> None:
        files = list(base(run).glob("*/events.jsonl"))
        assert len(files) == 1, f"no events file under {base(run)}"

    return verify


def _default_state_folder(run: Run) -> Path:
    return run.folder / "gh-aw/sandbox/agent/logs/copilot-session-state"


def _literal_state_folder(run: Run) -> Path:
    return run.folder / run.value.strip()


def _fallback_of(variable: str) -> dict[str, Outcome]:
    """A soft setting: any unusable value is ignored with a warning, the run completes."""
    default = {TIMEOUT: _send_timeout(600_000), DENIALS: _max_denials(5)}.get(variable)
    if variable == "COPILOT_SDK_LOG_LEVEL":
        default = _log_level_warning
    if variable == "COPILOT_DRIVER_LOG_FORMAT":
        default = _json_log
    outcomes = {kind: Outcome(fallback=True, verify=default) for kind in HOSTILE}
    outcomes["empty"] = Outcome(fallback=None, verify=default)
    return outcomes


def _numbers_of(variable: str) -> dict[str, Outcome]:
    outcomes = {}
    for number in NUMBERS:
        if number == " 42 ":  # documented: surrounding spaces allowed
            continue
        fallback = _send_timeout(600_000) if variable == TIMEOUT else _max_denials(5)
        outcomes[number] = Outcome(fallback=True, verify=fallback)
    if variable == TIMEOUT:
        outcomes[" 42 "] = Outcome(
            exit_codes=(124,),
            error_kind="send_timeout",
            verify=_send_timeout(42),
            prompt=f"{SLOW_TRIGGER}: answer slowly",
        )
    else:
        outcomes[" 42 "] = Outcome(verify=_max_denials(42))
    return outcomes


_ONE_DENIAL: dict[str, Any] = {
    "prompt": f"{DENY_TRIGGER}: run a command",
    "context": (("GH_AW_COPILOT_SDK_PERMISSIONS", '{"allowedTools": ["read"]}'),),
}
"""A turn whose one shell request the policy denies (so an annotation could show)."""


def _same(kinds: tuple[str, ...], outcome: Outcome) -> dict[str, Outcome]:
    return dict.fromkeys(kinds, outcome)


RUNS: dict[str, dict[str, Outcome]] = {
    # Any non-blank token is sent; the sidecar refuses a wrong one (documented exit 1).
    "COPILOT_CONNECTION_TOKEN": _same(
        ("huge", "shell", "secret"), Outcome(exit_codes=(1,), error_kind="auth_failed")
    ),
    # A model name is at most 200 printable characters: the shell value (it
    # holds a CR LF) and the 128 KiB one are configuration errors; the secret
    # one is passed on (the scripted provider ignores it) and never echoed.
    "COPILOT_MODEL": {
        "secret": Outcome(),
        **_same(("shell", "huge"), Outcome(exit_codes=(2,))),
    },
    "GITHUB_WORKSPACE": _same(("empty", "whitespace"), Outcome(verify=_cwd_is_the_workspace)),
    "GH_AW_SESSION_STATE_BASE_DIR": {
        **_same(("empty", "whitespace"), Outcome(verify=_events_under(_default_state_folder))),
        # A name no folder can have: documented as exit 1 `events_unwritable`
        # (found when the session exists); refused up front (exit 2) is right too.
        "huge": Outcome(exit_codes=(1, 2), error_kind="events_unwritable"),
        # Relative names are folders under the current directory, taken literally.
        **_same(("shell", "secret"), Outcome(verify=_events_under(_literal_state_folder))),
    },
    TIMEOUT: {**_fallback_of(TIMEOUT), **_numbers_of(TIMEOUT)},
    DENIALS: {**_fallback_of(DENIALS), **_numbers_of(DENIALS)},
    "COPILOT_SDK_LOG_LEVEL": _fallback_of("COPILOT_SDK_LOG_LEVEL"),
    "COPILOT_DRIVER_LOG_FORMAT": _fallback_of("COPILOT_DRIVER_LOG_FORMAT"),
    # Only `true` turns denial annotations on; anything else is off, silently.
    "GITHUB_ACTIONS": {
        **_same(HOSTILE, Outcome(verify=_denied_without_annotation, **_ONE_DENIAL)),
        "true": Outcome(verify=_denied_with_annotation, **_ONE_DENIAL),
    },
    # Documented: blank or without allow flags means no configuration.
    "GH_AW_COPILOT_SDK_SERVER_ARGS": _same(("empty", "whitespace"), Outcome(verify=_unrestricted)),
    # Blank means unset for the optional settings.
    "GH_AW_COPILOT_SDK_PERMISSIONS": _same(("empty", "whitespace"), Outcome(verify=_unrestricted)),
    "COPILOT_PROVIDER_TYPE": _same(("empty", "whitespace"), Outcome()),
    "COPILOT_PROVIDER_WIRE_API": _same(("empty", "whitespace"), Outcome()),
    "COPILOT_PROVIDER_API_KEY": {
        **_same(("empty", "whitespace", "secret"), Outcome()),
        # CR LF can never be in an HTTP header: refusing the key (exit 2) or failing
        # the turn (exit 1) are both right; printing any part of it is not.
        "shell": Outcome(exit_codes=(1, 2), fallback=None),
    },
}

SECRET_CARRYING = ("COPILOT_CONNECTION_TOKEN", "COPILOT_PROVIDER_API_KEY")


@dataclass
class Batch:
    """Every whole run of the module, one FaultCase (own folder, own checks) per variable."""

    faults: dict[str, FaultCase]
    runs: dict[str, list[tuple[Run, Outcome]]]
    seconds: float = 0.0


@pytest.fixture(scope="module")
def whole_runs(
    copilot_cli: Path, copilot_cache_home: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Batch]:
    """One real sidecar and scripted model; all 66 runs, PARALLEL_RUNS at a time.

    Run as one batch rather than test by test: a run is ~1 s, mostly the SDK
    import, and a pool spanning every variable keeps both CPUs busy to the
    end. The test for each variable then checks its own runs with the same
    `FaultCase` checks as the `fault` fixture.
    """
    shell = ToolCall("bash", {"command": "echo denied", "description": "a denied command"})
    script = Script(
        rules=(
            Rule(SLOW_TRIGGER, (Reply(text="too late", delay_s=SLOW_REPLY_S),)),
            Rule(DENY_TRIGGER, (Reply(tool_calls=(shell,)), Reply(text=ANSWER))),
        ),
        default=Reply(text=ANSWER),
    )
    with ScriptedModelServer(script) as model:
        sidecar = start_test_sidecar(
            tmp_path_factory.mktemp("env-sidecar"),
            model_base_url=model.base_url,
            binary=copilot_cli,
            cache_home=copilot_cache_home,
        )
        batch = Batch(faults={}, runs={})
        try:
            for variable, outcomes in RUNS.items():
                fault = FaultCase(tmp_path_factory.mktemp(variable))
                fault.secrets.append(sidecar.token)
                batch.faults[variable] = fault
                batch.runs[variable] = []
                for kind, outcome in outcomes.items():
                    run = _prepare(
                        fault,
                        variable,
                        kind,
                        sdk_uri=sidecar.uri,
                        token=sidecar.token,
                        model_base_url=model.base_url,
                        prompt=outcome.prompt,
                    )
                    run.env.update(outcome.context)
                    if variable in SECRET_CARRYING and kind not in ("shell", "empty", "whitespace"):
                        fault.secrets.append(run.value)  # a token or key, even a wrong one
                    batch.runs[variable].append((run, outcome))
                fault.watch()  # the sidecar is the test's own, not a leftover

            def execute(item: tuple[FaultCase, Run]) -> None:
                fault, run = item
                run.ended = _start(fault, run).end(bound_s=RUN_BOUND_S)

            work = [
                (batch.faults[variable], run)
                for variable, runs in batch.runs.items()
                for run, _ in runs
            ]
            started = time.monotonic()
            with ThreadPoolExecutor(max_workers=PARALLEL_RUNS) as pool:
                # A run that hung is reported by its own variable's test.
                for item, error in zip(work, _gather(pool, execute, work), strict=True):
                    if error is not None:
                        item[1].error = error
            batch.seconds = time.monotonic() - started
            yield batch
        finally:
            for fault in batch.faults.values():
                fault.kill_all()
            sidecar.stop()


def _gather(
    pool: ThreadPoolExecutor,
    work: Callable[[tuple[FaultCase, Run]], None],
    items: list[tuple[FaultCase, Run]],
) -> list[AssertionError | None]:
    futures = [pool.submit(work, item) for item in items]
    errors: list[AssertionError | None] = []
    for future in futures:
        error = future.exception()
        if error is not None and not isinstance(error, AssertionError):
            raise error
        errors.append(error)
    return errors


def _check_run(fault: FaultCase, run: Run, outcome: Outcome) -> None:
    if run.error is not None:
        raise run.error  # HungError: it outlived RUN_BOUND_S
    assert run.ended is not None
    if run.variable in SECRET_CARRYING and run.kind == "shell":
        _assert_not_echoed(run, "$(touch")
    code = run.ended.exit_code
    assert code in outcome.exit_codes, (
        f"exit {code}, expected {outcome.exit_codes}; stderr tail: {run.ended.stderr[-2000:]}"
    )
    fault.check(
        run.ended,
        exit_code=code,
        error_kind=outcome.error_kind,
        mentions=[run.variable] if code == 2 else [],
        state_dir=run.folder,
    )
    _check_common(fault, run)
    if code == 0:
        assert run.ended.stdout == f"{ANSWER}\n", f"stdout {run.ended.stdout!r}"
    fallbacks = [entry for entry in run.entries if entry.get("event") == "config.fallback"]
    if outcome.fallback is True:
        assert len(fallbacks) == 1, "expected one config.fallback warning"
        assert fallbacks[0]["level"] == "warning"
        assert str(fallbacks[0]["message"]).startswith(f"{run.variable}="), fallbacks[0]
    elif outcome.fallback is False:
        assert not fallbacks, f"unexpected {fallbacks}"
    if outcome.verify is not None:
        outcome.verify(run)


@pytest.mark.parametrize("variable", list(RUNS))
def test_a_hostile_value_still_gives_the_documented_run(whole_runs: Batch, variable: str) -> None:
    """Each value of the variable was a whole run on the real sidecar; every value's
    failures are reported together."""
    fault = whole_runs.faults[variable]
    runs = whole_runs.runs[variable]
    failures = []
    for run, outcome in runs:
        try:
            _check_run(fault, run, outcome)
        except AssertionError as error:
            failures.append(f"{run.label}: {str(error)[:1500]}")
    seconds = ", ".join(
        f"{run.kind.strip()}={run.ended.seconds:.1f}s" for run, _ in runs if run.ended
    )
    assert not failures, (
        f"{len(failures)} of {len(runs)} values failed ({seconds}; the batch of all "
        f"variables took {whole_runs.seconds:.0f}s):\n" + "\n".join(failures)
    )


def test_the_shell_value_is_armed(tmp_path: Path) -> None:
    """The control for every canary check: a shell given the value does create it."""
    canary = tmp_path / "canary"
    # In tmp_path: `touch CANARY 'single' "double"` creates those names too.
    subprocess.run(
        ["/bin/sh", "-c", f"echo {_shell(canary)}"],
        capture_output=True,
        check=False,
        cwd=tmp_path,
    )
    assert canary.exists()


def test_the_huge_value_is_the_largest_an_environment_can_carry() -> None:
    """Why `huge` is 128 KiB and not 1 MB: one byte more and no process can be
    started with it, so a driver can never see a longer value."""
    variable = "COPILOT_MODEL"
    value = _huge(variable)
    subprocess.run(["/bin/true"], env={variable: value}, check=True)
    with pytest.raises(OSError, match="Argument list too long"):
        subprocess.run(["/bin/true"], env={variable: value + "x"}, check=True)
