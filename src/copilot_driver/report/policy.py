"""The tool policy a run enforced, in the words both renderings and the step summary use.

It comes from the events file's `policy.in_force` record, else from result.json's
`policy` (`Timeline.policy`). A policy that approved every request says so first,
in capitals in the text, so it is not read as a list of rules; files from drivers
that wrote neither say the policy is not recorded rather than guess.
"""

from __future__ import annotations

from copilot_driver.report.limits import clip
from copilot_driver.vocabulary import PolicyInForce

NOT_RECORDED = (
    "not recorded (neither a policy.in_force record nor result.json's policy: a driver "
    "that predates them, or one that stopped before it read its policy)"
)
RULES_LISTED = 30
"""Allow rules, and deny rules, listed at most (each): a rule list is short in practice."""
RULE_CHARS = 500
"""A rule is shown whole up to this length, so that it can be copied."""
_SOURCE_CHARS = 80
_MODE_CHARS = 40
EVERYTHING_APPROVED = "every tool request was approved"


def headline(policy: PolicyInForce | None) -> str:
    """`2 allow rules, 1 deny rule (from GH_AW_COPILOT_SDK_PERMISSIONS): only what a rule
    allows is approved`, `NONE: every tool request was approved (no permission
    configuration)`, or that it is not recorded. The rules are listed apart (`rules`)."""
    if policy is None:
        return NOT_RECORDED
    source = _source(policy)
    origin = f" (from {source})" if source else ""
    denied = _count(len(policy.denied_tools), "deny rule")
    if policy.mode == "scoped":
        rules = _count(len(policy.allowed_tools), "allow rule")
        rules += f", {denied}" if policy.denied_tools else ""
        return f"{rules}{origin}: only what an allow rule allows was approved"
    but = f" but what the {denied} denied" if policy.denied_tools else ""
    if policy.mode == "unrestricted":
        why = f" ({source} holds no allow rule)" if source else " (no permission configuration)"
        return f"NONE: {EVERYTHING_APPROVED}{but}{why}"
    if policy.mode == "allow-all":
        return f"ALLOW-ALL: {EVERYTHING_APPROVED}{but}{origin}"
    said = f": {clip(policy.summary, 300)}" if policy.summary else ""
    return f"{clip(policy.mode, _MODE_CHARS)}{said}{origin}"


def rules(policy: PolicyInForce | None) -> list[tuple[str, str]]:
    """(`allow` or `deny`, rule) for the rules to list: the first `RULES_LISTED` of each
    kind, then (`...`, how many more) when there are more."""
    if policy is None:
        return []
    listed: list[tuple[str, str]] = []
    for kind, names in (("allow", policy.allowed_tools), ("deny", policy.denied_tools)):
        listed += [(kind, clip(name, RULE_CHARS)) for name in names[:RULES_LISTED]]
        if len(names) > RULES_LISTED:
            more = len(names) - RULES_LISTED
            listed.append(("...", f"and {more:,} more {kind} rule{'s' if more != 1 else ''}"))
    return listed


def _source(policy: PolicyInForce) -> str | None:
    """The variable the rules came from; None for none (JSON null, or the word `none`)."""
    source = policy.source
    if not source or source == "none":
        return None
    return clip(source, _SOURCE_CHARS)


def _count(count: int, what: str) -> str:
    return f"{count:,} {what}{'' if count == 1 else 's'}"
