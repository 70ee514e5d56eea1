"""A scripted OpenAI-compatible model server on 127.0.0.1.

The one part of a real run that cannot be real here is model inference.
This server stands in for it: the real Copilot runtime (chat completions)
and the real Codex CLI (Responses API, `wire_api = "responses"`) send it
real requests as a bring-your-own-model provider, and its scripted answers
make them perform real tool calls and send real permission requests.

It binds 127.0.0.1 only, answers streaming (SSE) and non-streaming
requests on both APIs, and records every request it receives so tests can
check what the runtime sent (and that no secret reached it). A scripted
reply can also be an HTTP error, a body cut short by a reset connection,
or a response that never ends, and the streams can be made awkward (tiny
TCP writes, tool arguments in many pieces) to test a client's parser and
its failure handling rather than the happy path.

- `server`: `ScriptedModelServer`, `RecordedRequest`, and `main` (run it
  in the foreground: `python -m copilot_driver.testing.model_server`);
- `handler`: the HTTP request handler, which routes to
- `chat` (Chat Completions) and `responses` (Responses API), streamed or not;
- `sse`: the event-stream framing both APIs share; `errors`: scripted HTTP
  error bodies;
- `sockets`: tiny writes, cut bodies, resets.
"""

from copilot_driver.testing.model_server.server import (
    CLOSE_TIMEOUT_S,
    RecordedRequest,
    ScriptedModelServer,
    main,
)
from copilot_driver.testing.model_server.sockets import RESET_DRAIN_S

__all__ = ["CLOSE_TIMEOUT_S", "RESET_DRAIN_S", "RecordedRequest", "ScriptedModelServer", "main"]
