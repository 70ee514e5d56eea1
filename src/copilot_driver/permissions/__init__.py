"""The scoped tool allowlist (spec section 5): configuration, policy, SDK handler.

`config` and `policy` (with `shell`) are pure and import no SDK, so the
security boundary is tested without a sidecar; `handler` is the SDK glue.
"""
