"""The environment table's other half: the variables the harness and the adapters read
themselves, one `Variable` each, beside the driver's (env.py).

HARNESS_VARIABLES drive `copilot-driver-harness --help` and the harness's table in
docs/configuration.md; ADAPTER_VARIABLES name the adapters' own secrets. Pure.
"""

from __future__ import annotations

from copilot_driver.variable import Variable

COPILOT_GITHUB_TOKEN = Variable(
    "COPILOT_GITHUB_TOKEN",
    "the Copilot CLI's GitHub token, its first choice (secret)",
    "a GitHub token for the Copilot CLI, preferred to the two below; only the sidecar sees it",
    secret=True,
)
GH_TOKEN = Variable(
    "GH_TOKEN",
    "the Copilot CLI's GitHub token, its second choice (secret)",
    "a GitHub token for the Copilot CLI when `COPILOT_GITHUB_TOKEN` is unset",
    secret=True,
)
GITHUB_TOKEN = Variable(
    "GITHUB_TOKEN",
    "the Copilot CLI's GitHub token, its last choice (secret)",
    "a GitHub token for the Copilot CLI when the two above are unset",
    secret=True,
)
COPILOT_CLI_PATH = Variable(
    "COPILOT_CLI_PATH",
    "the Copilot CLI binary, when no --copilot (else `copilot` on PATH)",
    "the Copilot CLI binary the harness starts as the sidecar, unless `--copilot` names one",
)
HARNESS_TIMEOUT_MINUTES = Variable(
    "GH_AW_TIMEOUT_MINUTES",
    "the job's timeout: no retry past it",
    "the job's timeout in minutes: no retry past it; the send timeout ends 30 s before it",
)
GITHUB_OUTPUT = Variable(
    "GITHUB_OUTPUT",
    "set by the runner: the file of the step's outputs",
    "set by the GitHub Actions runner: the harness writes the run's step outputs to this file",
)
GITHUB_STEP_SUMMARY = Variable(
    "GITHUB_STEP_SUMMARY",
    "set by the runner: the file of the step's summary",
    "set by the GitHub Actions runner: the harness appends the run's report to this file",
)
CI = Variable(
    "CI",
    "true: no live status line, even on a terminal",
    "`true` (as CI services set it): the harness draws no live status line on stderr",
)
HOME = Variable(
    "HOME",
    "the home folder: where a stored login is looked for",
    "with no token set, where a stored login is looked for: `~/.copilot`, `~/.config/gh`",
)
COPILOT_HOME = Variable(
    "COPILOT_HOME",
    "the Copilot CLI's folder (default ~/.copilot)",
    "the Copilot CLI's folder, where `copilot login` keeps a login (`$HOME/.copilot`)",
)
GH_CONFIG_DIR = Variable(
    "GH_CONFIG_DIR",
    "the GitHub CLI's folder (default ~/.config/gh)",
    "the GitHub CLI's folder, where `gh auth login` keeps a login (`$HOME/.config/gh`)",
)

GH_HOST = Variable(
    "GH_HOST",
    "a GitHub Enterprise Cloud host (`acme.ghe.com`) the CLI signs in to",
    "the GitHub host the Copilot CLI signs in to (`acme.ghe.com`; default github.com); "
    "the sandbox allows it and its subdomains",
)
COPILOT_GH_HOST = Variable(
    "COPILOT_GH_HOST",
    "as GH_HOST, for the Copilot CLI only (it wins over GH_HOST)",
    "as `GH_HOST`, read by the Copilot CLI only and preferred to it",
)
COPILOT_API_URL = Variable(
    "COPILOT_API_URL",
    "the Copilot API's base URL, instead of the one GitHub names",
    "the Copilot API's base URL, instead of the `endpoints.api` GitHub gives the CLI; "
    "the sandbox allows its host:port",
)
COPILOT_DEBUG_GITHUB_API_URL = Variable(
    "COPILOT_DEBUG_GITHUB_API_URL",
    "GitHub's API base URL (tests, a local stand-in)",
    "GitHub's API base URL for the Copilot CLI (a local stand-in such as "
    "`copilot_driver.testing.github_api`); the sandbox allows its host:port",
)
HTTPS_PROXY = Variable(
    "HTTPS_PROXY",
    "the proxy for HTTPS (also https_proxy)",
    "an `http://[user:password@]host:port` proxy the CLI's HTTPS goes through (also "
    "`https_proxy`, `HTTP_PROXY` for plain HTTP, `NO_PROXY` for exceptions); in the sandbox "
    "its egress proxy goes through it; a password in it is masked like a secret",
)
NODE_EXTRA_CA_CERTS = Variable(
    "NODE_EXTRA_CA_CERTS",
    "a PEM file of extra trusted CAs (an intercepting proxy)",
    "a PEM file of certificate authorities the CLI trusts besides the system's (a proxy "
    "that intercepts TLS); visible read-only in the sandbox",
)

HARNESS_VARIABLES: tuple[Variable, ...] = (
    COPILOT_GITHUB_TOKEN,
    GH_TOKEN,
    GITHUB_TOKEN,
    COPILOT_CLI_PATH,
    HARNESS_TIMEOUT_MINUTES,
    GITHUB_OUTPUT,
    GITHUB_STEP_SUMMARY,
    CI,
    HOME,
    COPILOT_HOME,
    GH_CONFIG_DIR,
    GH_HOST,
    COPILOT_GH_HOST,
    COPILOT_API_URL,
    COPILOT_DEBUG_GITHUB_API_URL,
    HTTPS_PROXY,
    NODE_EXTRA_CA_CERTS,
)
"""What the harness (copilot-driver-run) reads itself, beside the driver's variables it
checks or passes on."""

PLATFORM_TOKENS = (COPILOT_GITHUB_TOKEN.name, GH_TOKEN.name, GITHUB_TOKEN.name)
"""The Copilot CLI's GitHub credentials, in the order it prefers them. The sidecar
keeps them; the driver never reads them (spec 4.2)."""
GITHUB_HOST_VARIABLES = (
    GH_HOST.name,
    COPILOT_GH_HOST.name,
    COPILOT_API_URL.name,
    COPILOT_DEBUG_GITHUB_API_URL.name,
)
"""Where the Copilot CLI finds GitHub and the Copilot API: the sidecar gets them, and
the sandbox allows the hosts they name."""
PROXY_VARIABLES = tuple(
    case(name)
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY")
    for case in (str.upper, str.lower)
)
"""A proxy the harness's network goes through (curl's and Node's names, both cases)."""
GITHUB_CREDENTIALS = (*PLATFORM_TOKENS, "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN")
"""Everything the CLI (and gh, whose credentials it honours) accepts as a GitHub token:
the harness takes all of them out of the driver's environment."""


CODEX_API_KEY = Variable(
    "CODEX_API_KEY",
    "the Codex adapter's OpenAI key when Codex has no login (secret)",
    "an OpenAI API key the codex adapter logs Codex in with; masked like every secret",
    secret=True,
)
OPENAI_API_KEY = Variable(
    "OPENAI_API_KEY",
    "the tool-loop adapter's default key variable (secret)",
    "the key the tool-loop adapter sends to its model server (its `api_key_env` default)",
    secret=True,
)
ADAPTER_VARIABLES: tuple[Variable, ...] = (CODEX_API_KEY, OPENAI_API_KEY)
"""The adapters' own secrets, beside the platform tokens and the provider key."""
