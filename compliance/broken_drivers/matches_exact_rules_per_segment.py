"""Broken: an exact rule grants one segment of a chain, as 1.0.2 readers did (breaks T-CSD-113).

Spec 1.0.3 5.4: a rule with spaces that does not end in `:*` matches the whole
command text only. Here a shell line denied by the real policy is approved
when every `&&`-separated part of it is spelt out by some rule.
"""

import re
from collections.abc import Mapping
from typing import Any

from _wrap import run_real_driver_in_process

from copilot_driver.permissions import policy

_decide = policy.Policy.decide


def decide(self: policy.Policy, request: Mapping[str, Any]) -> policy.Decision:
    decision = _decide(self, request)
    text = request.get("fullCommandText") if isinstance(request, dict) else None
    if decision.allowed or request.get("kind") != "shell" or not isinstance(text, str):
        return decision
    rules = (re.fullmatch(r"shell\((.*)\)", tool) for tool in self.config.allowed_tools)
    exact = {match.group(1).strip() for match in rules if match}
    parts = [part.strip() for part in text.split("&&")]
    if all(part in exact or part.split()[0] in exact for part in parts if part):
        return policy.Decision(True, decision.kind, decision.summary, "per segment")
    return decision


policy.Policy.decide = decide  # type: ignore[method-assign]
run_real_driver_in_process()
