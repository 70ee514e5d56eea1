"""Error kinds live in `copilot_driver.vocabulary`."""

from copilot_driver.vocabulary import AdapterErrorKind, DriverErrorKind, HarnessErrorKind

__all__ = ["AdapterErrorKind", "DriverErrorKind", "HarnessErrorKind"]
