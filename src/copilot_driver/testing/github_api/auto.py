"""Auto mode: the CLI asks the Copilot API which model to use.

Measured on CLI 1.0.102 (model "auto", or a model the catalog does not
offer when nothing visible is left):

1. `POST {api}/auto` ("Auto v2") with `{"prompt", "has_image",
   "multi_turn": {"routing_intent", "turns_since_anchor"},
   "hydra_rl_multi_turn"}`. It accepts `{"selected_model": {"id": M},
   "session_token": T}` (without `session_token` its log says "Auto v2
   response rejected: missing field `session_token`").
2. Only when that fails, the legacy flow: `POST {api}/models/session` with
   `{"auto_mode": {"model_hints": ["auto"]}}`, accepted as `{"available_models",
   "selected_model", "session_token", "expires_at", "discounted_costs"}`,
   then `POST {api}/models/session/intent` (404 tolerated: no intent
   prediction).

Either way the session emits `session.auto_mode_resolved` with
`chosen_model=M` and sends `Copilot-Session-Token: T` on its model calls.
With auto mode off (`Switches.auto_model=None`) both answer 404, and the
turn fails "Auto-mode unavailable and no fallback model could be resolved".
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from copilot_driver.testing.github_api.switches import Switches

SESSION_TOKEN_TTL_S = 3600


def chosen_model(switches: Switches) -> str | None:
    """The model auto mode picks, or None when auto mode is off (or the
    switch names a model the catalog does not list)."""
    ids = {model.id for model in switches.catalog}
    return switches.auto_model if switches.auto_model in ids else None


def session_token() -> str:
    """A fresh auto-mode session token (the CLI echoes it as `Copilot-Session-Token`)."""
    return secrets.token_hex(16)


def auto_answer(model: str) -> dict[str, Any]:
    """The answer of `POST /auto` (Auto v2) choosing `model`."""
    return {"selected_model": {"id": model}, "session_token": session_token()}


def session_answer(model: str, switches: Switches) -> dict[str, Any]:
    """The answer of `POST /models/session` (the legacy flow) choosing `model`."""
    return {
        "available_models": [entry.id for entry in switches.catalog],
        "selected_model": model,
        "session_token": session_token(),
        "expires_at": int(time.time()) + SESSION_TOKEN_TTL_S,
        "discounted_costs": {},
    }
