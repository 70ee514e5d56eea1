"""Which values are secrets, for every redactor: the table's `secret=True` variables
(env.py, env_commands.py), then every secret-looking one of the environment. Pure.

The driver, the harness and the adapters each mask the secrets of the variables they
read by name (DRIVER_SECRETS, the harness's, ADAPTER_SECRETS), and all of them the
same secret-looking values (`secret_looking_values`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from copilot_driver.env import DRIVER_SECRETS, DRIVER_VARIABLES, PROVIDER_API_KEY
from copilot_driver.env_commands import ADAPTER_VARIABLES, HARNESS_VARIABLES, PLATFORM_TOKENS

ADAPTER_SECRETS = (
    *PLATFORM_TOKENS,
    PROVIDER_API_KEY.name,
    *(variable.name for variable in ADAPTER_VARIABLES if variable.secret),
)
"""What the agent adapters mask by name in everything they print."""

SECRET_LOOKING_NAME = re.compile(r"_(?:TOKEN|KEY|SECRET|PASSWORD)$|^ACTIONS_", re.IGNORECASE)
"""Variables whose values are masked in everything written, whoever set them: the names
GitHub's runner and most CI secrets use (`NPM_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
`ACTIONS_RUNTIME_TOKEN`, ...)."""
MIN_SECRET_LOOKING_CHARS = 8
"""Shorter values of such variables (`ACTIONS_STEP_DEBUG=true`) are settings, not secrets:
masking them would punch holes in ordinary text."""


_NAMED_SECRETS = frozenset(
    variable.name
    for variable in (*DRIVER_VARIABLES, *HARNESS_VARIABLES, *ADAPTER_VARIABLES)
    if variable.secret
)


def secrets_in(env: Mapping[str, str], names: Iterable[str] = DRIVER_SECRETS) -> tuple[str, ...]:
    """The secret values `env` holds, as given (a Redactor masks the stripped form too):
    those of `names`, then every secret-looking one (`secret_looking_values`)."""
    named = [env.get(name, "") for name in names]
    return tuple(dict.fromkeys([*named, *secret_looking_values(env)]))


def secret_looking_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """The values of the variables SECRET_LOOKING_NAME names, at least
    MIN_SECRET_LOOKING_CHARS long, but for the named secrets: the platform tokens are
    never read here (the driver never reads them; the harness names them itself), the
    driver's own (DRIVER_SECRETS) are read by name."""
    found = []
    for name in env:
        if name in _NAMED_SECRETS or not SECRET_LOOKING_NAME.search(name):
            continue
        value = env[name]
        if len(value.strip()) >= MIN_SECRET_LOOKING_CHARS:
            found.append(value)
    return tuple(dict.fromkeys(found))
