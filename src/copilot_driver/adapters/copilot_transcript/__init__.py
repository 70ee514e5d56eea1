"""The `copilot-transcript` agent kind (see `adapter.py`)."""

from copilot_driver.adapters.copilot_transcript.adapter import (
    CopilotTranscriptAdapter,
    TranscriptSession,
)
from copilot_driver.adapters.copilot_transcript.options import (
    DEFAULT_TRANSCRIPT_TURNS,
    TranscriptOptions,
)
from copilot_driver.adapters.copilot_transcript.prompt import Exchange, build_prompt, strip_ansi
from copilot_driver.adapters.core.spec import AdapterSpec

SPEC = AdapterSpec.of(CopilotTranscriptAdapter)

__all__ = [
    "DEFAULT_TRANSCRIPT_TURNS",
    "SPEC",
    "CopilotTranscriptAdapter",
    "Exchange",
    "TranscriptOptions",
    "TranscriptSession",
    "build_prompt",
    "strip_ansi",
]
