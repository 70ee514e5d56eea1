"""A hermetic, offline Codex app-server for tests: the real binary, the scripted model.

Codex 0.169 only speaks the Responses API to a custom provider, reads its
settings from `$CODEX_HOME/config.toml`, and, unless told otherwise, tries
the internet for plugins, apps and analytics. `codex_environment` writes a
config that points it at the scripted model on 127.0.0.1 with no retries
and everything networked switched off, under a fresh HOME and CODEX_HOME,
and builds the environment from scratch (no OpenAI key of the machine can
reach it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from copilot_driver.errors import CopilotDriverError

CODEX_VERSION = "0.169.0"
PROVIDER_KEY_VARIABLE = "FAKE_PROVIDER_API_KEY"
PROVIDER_KEY = "scripted-codex-provider-key-4b1d"
TEST_MODEL = "gpt-5.5"

_PROVISIONED = Path(
    ".cache/codex/node_modules/@openai/codex/vendor/x86_64-unknown-linux-musl/bin/codex"
)
_PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "TMPDIR", "TZ")


class CodexNotFoundError(CopilotDriverError, RuntimeError):
    pass


def locate_codex(
    explicit: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """`explicit`, else CODEX_PATH, else the `make setup` binary, else `codex` on PATH."""
    env = os.environ if env is None else env
    named = explicit or env.get("CODEX_PATH")
    if named:
        if not (Path(named).is_file() and os.access(named, os.X_OK)):
            raise CodexNotFoundError(f"{named} is not an executable file")
        return Path(named)
    for root in Path(__file__).resolve().parents:
        candidate = root / _PROVISIONED
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    on_path = shutil.which("codex", path=env.get("PATH"))
    if on_path:
        return Path(on_path)
    raise CodexNotFoundError(
        f"no Codex CLI found (CODEX_PATH unset, no {_PROVISIONED} in the source tree, "
        "no `codex` on PATH); run `make setup`"
    )


def codex_config(model_base_url: str, *, stream_idle_timeout_ms: int = 20_000) -> str:
    return f"""\
model = "{TEST_MODEL}"
model_provider = "scripted"
check_for_update_on_startup = false

[model_providers.scripted]
name = "Scripted Responses model"
base_url = "{model_base_url}"
env_key = "{PROVIDER_KEY_VARIABLE}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = {stream_idle_timeout_ms}

[features]
plugins = false
remote_plugin = false
apps = false

[analytics]
enabled = false
"""


def codex_environment(
    home: Path,
    *,
    model_base_url: str,
    binary: str | os.PathLike[str] | None = None,
) -> dict[str, str]:
    """The environment of an offline `codex app-server` on the scripted model.

    PATH starts with a directory whose `codex` is the real binary, so the
    adapter's default command (`codex app-server`) finds it.
    """
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(codex_config(model_base_url))
    bin_dir = home / "bin"
    bin_dir.mkdir(exist_ok=True)
    link = bin_dir / "codex"
    if not link.exists():
        link.symlink_to(locate_codex(binary))
    # Where bubblewrap is installed, Codex runs its tools under it through a helper it
    # links into CODEX_HOME, and refuses to when CODEX_HOME lies in the temporary
    # folder (its tools then fail with `execvp codex-linux-sandbox`): a test's HOME is
    # under /tmp, so its temporary folder is made elsewhere.
    scratch = home / "tmp"
    scratch.mkdir(exist_ok=True)
    env = {key: os.environ[key] for key in _PASSED_THROUGH if key in os.environ}
    env.update(
        HOME=str(home),
        TMPDIR=str(scratch),
        CODEX_HOME=str(codex_home),
        PATH=os.pathsep.join(filter(None, (str(bin_dir), env.get("PATH")))),
    )
    env[PROVIDER_KEY_VARIABLE] = PROVIDER_KEY
    return env
