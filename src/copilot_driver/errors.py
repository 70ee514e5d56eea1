"""The package's exceptions: one root, and the tree of what derives from it.

Each exception lives beside the code that raises it; this module holds the root
and, below, where each one is (a test keeps the tree and the code in step). One
that also has a standard base keeps it, so a caller catching `ValueError` or
`OSError` still catches it, and `except CopilotDriverError` catches them all.

CopilotDriverError
├── input that cannot be used: the message names what is wrong and the fix
│   ├── ConfigError                   copilot_driver.driver.config
│   ├── PromptError                   copilot_driver.driver.prompt
│   ├── CatalogError (ValueError)     copilot_driver.driver.catalog
│   ├── ToolContractError (ValueError)  copilot_driver.permissions.tool_contract
│   ├── JsonInputError (ValueError)   copilot_driver.json_input
│   ├── ServerArgsError (ValueError)  copilot_driver.permissions.config
│   ├── ShellParseError (ValueError)  copilot_driver.permissions.bash_tokens
│   ├── EgressRuleError (ValueError)  copilot_driver.harness.sandbox.egress_rules
│   ├── InputError (ValueError)       copilot_driver.action_inputs.names
│   ├── OptionsError (ValueError)     copilot_driver.adapters.core.options
│   │   └── WorkflowError             copilot_driver.adapters.core.workflow
│   └── PathError (ValueError)        copilot_driver.adapters.tool_loop.sandbox
├── the driver's run: what ends a session early, mapped to an exit code by failures.py
│   ├── StopRequestedError            copilot_driver.driver.stop
│   │   ├── StopSignalError           copilot_driver.driver.stop
│   │   ├── ToolDenialsExceededError  copilot_driver.driver.stop
│   │   ├── ToolCallBudgetExceededError  copilot_driver.driver.stop
│   │   └── SidecarLostError          copilot_driver.driver.stop
│   ├── StepAbandonedError            copilot_driver.driver.tasks
│   ├── AccountError                  copilot_driver.driver.account
│   ├── SidecarNotReadyError (RuntimeError)  copilot_driver.driver.connection
│   ├── SdkError                      copilot_driver.driver.failures
│   │   ├── SidecarAuthError          copilot_driver.driver.failures
│   │   ├── SidecarRefusedError       copilot_driver.driver.failures
│   │   ├── SidecarDisconnectedError  copilot_driver.driver.failures
│   │   ├── CatalogUnreadableError    copilot_driver.driver.failures
│   │   └── SessionFailedError        copilot_driver.driver.failures
│   └── EventsFileError (OSError)     copilot_driver.driver.sink
├── the harness: what stops it before or around the driver
│   ├── SidecarError (RuntimeError)   copilot_driver.harness.sidecar
│   │   └── SidecarStartStoppedError  copilot_driver.harness.sidecar
│   ├── DriverStartError (RuntimeError)  copilot_driver.harness.driver_process
│   ├── SandboxError (RuntimeError)   copilot_driver.harness.sandbox.setup_checks
│   └── UpstreamProxyError (ValueError)  copilot_driver.harness.sandbox.upstream
├── the SDK's lazy loading (build time)
│   ├── SplitDeclinedError            copilot_driver.sdk_loading.splitter
│   └── DescribeError (RuntimeError)  copilot_driver.sdk_loading.build
├── the adapters
│   ├── AgentError                    copilot_driver.adapters.core.errors
│   ├── RpcError                      copilot_driver.adapters.core.jsonrpc
│   ├── ConnectionClosedError         copilot_driver.adapters.core.jsonrpc
│   └── ToolError                     copilot_driver.adapters.tool_loop.tool_calls
├── the test kit: a real component missing, or a property broken
│   ├── CodexNotFoundError (RuntimeError)  copilot_driver.testing.codex
│   ├── OracleUnavailableError (RuntimeError)  copilot_driver.testing.bash_oracle
│   ├── ArgvPrinterUnavailableError (RuntimeError)  copilot_driver.testing.argv_printer
│   ├── SecretLeakError (AssertionError)  copilot_driver.testing.faults
│   ├── HungError (AssertionError)    copilot_driver.testing.faults
│   └── BodyStopError                 copilot_driver.testing.model_server.sockets
└── private to one reader: a refusal raised inside it, caught at its edge
    ├── _RefusedError                 copilot_driver.permissions.scripts
    ├── _RefusedError                 copilot_driver.permissions.awk
    ├── _UnusableRuleError (ValueError)  copilot_driver.permissions.shell
    ├── _TooManyError                 copilot_driver.harness.sandbox.git_controls
    └── _MalformedError (ValueError)  copilot_driver.git_config_syntax

Outside the root, on purpose:
    StoppedBeforeStartError (BaseException)  copilot_driver.cli
        a stop signal before the driver took the signals over; no `except
        Exception` on the way may swallow it

The SDK's own errors are mapped at the driver's SDK boundary (driver/sdk.py):
one it recognises becomes an SdkError, by type where the SDK has one; one it
does not passes as it came. failures.py turns either into an exit code, an
error kind and one sentence.
"""

from __future__ import annotations

__all__ = ["OUTSIDE_THE_ROOT", "CopilotDriverError"]


class CopilotDriverError(Exception):
    """The root of every exception this package defines."""


OUTSIDE_THE_ROOT = frozenset({"copilot_driver.cli.StoppedBeforeStartError"})
"""Exceptions that must not be caught as Exceptions, by `module.Name`."""
