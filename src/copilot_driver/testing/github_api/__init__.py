"""A local fake of GitHub's API and the Copilot API, as Copilot CLI 1.0.102
uses them on a GitHub token (a Copilot subscription, not a bring-your-own
model provider).

    from copilot_driver.testing.github_api import FakeGitHubCopilot, start_subscription_sidecar

    with FakeGitHubCopilot(script) as fake:  # plain HTTP, COPILOT_DEBUG_GITHUB_API_URL
        sidecar = start_subscription_sidecar(tmp_path, fake)
    with FakeGitHubCopilot(script, https=True) as fake:  # HTTPS_PROXY, NODE_EXTRA_CA_CERTS
        sidecar = start_subscription_sidecar(tmp_path, fake, https=True)

- `fake`: `FakeGitHubCopilot`, the listeners and the records;
- `switches`: `Switches` and `RateLimit`, how the account misbehaves;
- `catalog`: the model catalog (`CatalogModel`, `DEFAULT_CATALOG`);
- `account`: tokens, the user answer, the error bodies;
- `routes`: what each request gets, decided without I/O; `handler`: the I/O;
- `mcp`: the GitHub MCP server at `{api}/mcp/readonly`; `auto`: auto mode;
- `hosts`: the real host names and their roles; `tls`: the throw-away
  certificates; `proxy`: the CONNECT proxy; `serving`: threads and closing;
- `records`: `ApiRequest`, `ConnectRecord`; `sidecar`: a real CLI signed in
  to the fake.

See docs/testing.md ("A fake GitHub: the subscription path").
"""

from copilot_driver.testing.github_api.account import new_token
from copilot_driver.testing.github_api.catalog import (
    DEFAULT_CATALOG,
    DEFAULT_MODEL,
    HIDDEN_BY_CLI,
    CatalogModel,
    catalog_without,
)
from copilot_driver.testing.github_api.fake import LOGIN_ARGS, TOKEN_VARIABLE, FakeGitHubCopilot
from copilot_driver.testing.github_api.records import ApiRequest, ConnectRecord
from copilot_driver.testing.github_api.sidecar import (
    start_subscription_sidecar,
    subscription_environment,
)
from copilot_driver.testing.github_api.switches import RateLimit, Switches

__all__ = [
    "DEFAULT_CATALOG",
    "DEFAULT_MODEL",
    "HIDDEN_BY_CLI",
    "LOGIN_ARGS",
    "TOKEN_VARIABLE",
    "ApiRequest",
    "CatalogModel",
    "ConnectRecord",
    "FakeGitHubCopilot",
    "RateLimit",
    "Switches",
    "catalog_without",
    "new_token",
    "start_subscription_sidecar",
    "subscription_environment",
]
