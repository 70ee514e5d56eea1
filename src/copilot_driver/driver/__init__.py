"""The standalone driver, module by module in the order data flows through it.

    config -> connection -> lifecycle (permissions, sink) -> result

`config` is pure and import-light (the CLI validates before anything heavy is
loaded); `lifecycle` and `connection` load the SDK. Nothing here imports the
harness, the adapters or `copilot_driver.testing`.
"""
