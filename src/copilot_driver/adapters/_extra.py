"""The adapters' own requirements: the `adapters` extra.

`pip install copilot-driver` installs the driver alone. The adapters' command
line checks for the extra before anything needs it, so a missing one is one
message naming the install command instead of a bare "No module named 'yaml'".
"""

from __future__ import annotations

from importlib.util import find_spec

_EXTRA_PACKAGES = {"yaml": "PyYAML", "httpx_sse": "httpx-sse"}


def missing_extra() -> str | None:
    """What is missing, and how to install it; None when the extra is installed."""
    missing = [name for module, name in _EXTRA_PACKAGES.items() if find_spec(module) is None]
    if not missing:
        return None
    return (
        f"the adapters need {', '.join(missing)}, which the driver alone does not install; "
        "pip install 'copilot-driver[adapters]'"
    )
