"""The standalone driver, module by module in the order data flows through it.

    config -> connection, sdk -> lifecycle (startup, guards, sink) -> failures -> result

`config` is pure and import-light (the CLI validates before anything heavy is
loaded); `connection` and `sdk`, the SDK boundary, load the SDK once a client
is built; `failures` is pure. Nothing here imports the
harness, the adapters or `copilot_driver.testing`.
"""
