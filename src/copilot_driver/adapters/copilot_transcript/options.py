"""The `copilot-transcript` block: every `copilot-cli` field, plus `transcript_turns` (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from copilot_driver.adapters.copilot_cli.options import CopilotCliOptions

BLOCK = "copilot-transcript"
DEFAULT_TRANSCRIPT_TURNS = 10


@dataclass(frozen=True)
class TranscriptOptions(CopilotCliOptions):
    block = BLOCK

    transcript_turns: int = DEFAULT_TRANSCRIPT_TURNS
    """Exchanges (user message + reply) kept in the transcript."""

    def _problems(self) -> list[str]:
        problems = super()._problems()
        if self.transcript_turns < 1:
            problems.append("transcript_turns must be 1 or more")
        return problems
