"""What a run starts with: its start-up log entries and its session's options.

The start-up entries say, before anything is connected, where the driver
connects, with which model, which tools the workflow allows (and which of its
rules cannot match or grant running code) and what the tool contract shows the
model; under GitHub Actions the rules' problems are also annotations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from copilot_driver.driver.config import DriverConfig
from copilot_driver.driver.guards import ToolGuards
from copilot_driver.logs import DriverLog
from copilot_driver.permissions.handler import (
    DenialLogger,
    github_actions_annotation,
    github_actions_notice,
    github_actions_warning,
    make_permission_handler,
)
from copilot_driver.permissions.policy import Policy
from copilot_driver.redaction import MIN_SUBSTRING_SECRET_CHARS, Redactor
from copilot_driver.sdk_loading import decision as sdk_loading_decision
from copilot_driver.vocabulary import LogEvent


def log_start(config: DriverConfig, policy: Policy, log: DriverLog, redactor: Redactor) -> None:
    """The start-up entries: connection, configuration notices, permissions, tools."""
    sdk_loading = sdk_loading_decision()
    log.info(
        LogEvent.CONNECTION_START,
        f"connecting to the Copilot sidecar at {config.sdk_uri}",
        sdkUri=config.sdk_uri,
        model=config.model,
        sendTimeoutMs=config.send_timeout_ms,
        logLevel=config.log_level,
        workingDirectory=str(config.working_directory),
        provider=config.provider.shown_url if config.provider else None,
        sdkLoading=sdk_loading.mode,
        sdkLoadingReason=sdk_loading.reason,
    )
    for notice in config.notices:
        log.warning(LogEvent.CONFIG_FALLBACK, notice)
    for sentence in config.misspelt_variables:
        log.warning(LogEvent.CONFIG_UNKNOWN_VARIABLE, sentence)
    for name in config.short_secrets:
        log.info(
            LogEvent.SECRETS_SHORT,
            f"{name} is under {MIN_SUBSTRING_SECRET_CHARS} characters, so it is masked only "
            "where a whole value is exactly it, never inside other text (it would mangle "
            "addresses, times and words); give a real secret a longer value",
            variable=name,
        )
    permissions = config.permissions
    log.info(
        LogEvent.PERMISSIONS_CONFIG,
        f"tool permissions: {permissions.describe()}",
        permissionMode=permissions.mode,
        allowedTools=list(permissions.allowed_tools),
        permissionSource=permissions.source,
        maxToolDenials=config.max_tool_denials,
    )
    if config.tool_contract is not None:
        tools = config.tool_contract.available_tools()
        log.info(
            LogEvent.TOOLS_CONFIG,
            f"the model may see {len(tools)} tools (from the tool contract)",
            availableTools=tools,
            maxToolCalls=config.tool_contract.max_tool_calls,
        )
    for problem in policy.rule_problems:
        log.warning(
            LogEvent.PERMISSIONS_UNUSABLE_RULE,
            problem.describe(),
            rule=problem.rule,
            suggestion=problem.suggestion,
        )
        if config.github_actions:
            github_actions_warning(
                "Copilot tool permission rule matches only its own text"
                if problem.literal
                else "Copilot tool permission rule matches no request",
                redactor.text(problem.describe()),
            )
    for grant in policy.code_execution_grants:
        log.info(
            LogEvent.PERMISSIONS_GRANTS_CODE_EXECUTION,
            grant.describe(),
            rule=grant.rule,
            program=grant.program,
        )
        if config.github_actions:
            github_actions_notice(
                "Copilot tool permission rule grants running code",
                redactor.text(grant.describe()),
            )


def session_options(
    config: DriverConfig,
    policy: Policy,
    log: DriverLog,
    redactor: Redactor,
    guards: ToolGuards,
    on_event: Callable[[Any], None],
) -> dict[str, Any]:
    """The keyword arguments of the SDK's `create_session`."""
    secondary: list[DenialLogger] = [guards.record_denial]
    if config.github_actions:
        secondary.append(github_actions_annotation(redactor))
    options: dict[str, Any] = {
        "model": config.model,
        "working_directory": str(config.working_directory),
        # Always registered: without a handler the runtime denies every request.
        "on_permission_request": make_permission_handler(
            policy,
            log,
            secondary=secondary,
            guard=guards.denials,
            in_flight=guards.decisions,
        ),
        # Registered at creation so `session.start` is captured too.
        "on_event": on_event,
    }
    if config.provider is not None:
        options["provider"] = config.provider.to_sdk()
    if config.catalog is not None:
        options.update(config.catalog.to_sdk())
    if config.tool_contract is not None:
        options["available_tools"] = config.tool_contract.available_tools()
    if guards.budget is not None:
        options["hooks"] = {"on_pre_tool_use": guards.budget.pre_tool_use}
    if config.reasoning_effort is not None:
        options["reasoning_effort"] = config.reasoning_effort
    return options
