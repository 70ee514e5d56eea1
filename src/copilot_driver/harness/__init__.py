"""The harness: one command that runs a driver the way the spec deploys it.

`copilot-driver-harness` starts the Copilot CLI sidecar with a fresh per-run
connection token, runs the driver (this package's, or any other after `--`)
in an environment without GitHub credentials, forwards stop signals, and
cleans up: no process outlives it. See `run.py`.
"""
