"""Shared by every test: the project's public fixtures, and a clean logging state."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from copilot_driver.logs import LOGGER_NAME, SDK_LOGGER_NAME

pytest_plugins = ["copilot_driver.testing.fixtures"]


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """configure_logging mutates two named loggers: put them back after each test."""
    saved = []
    for name in (LOGGER_NAME, SDK_LOGGER_NAME):
        logger = logging.getLogger(name)
        saved.append((logger, list(logger.handlers), logger.level, logger.propagate))
    yield
    for logger, handlers, level, propagate in saved:
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate
