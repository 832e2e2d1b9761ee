"""The ``browser`` fixture: one headless Chromium for the session (see browser.py), or a skip saying why."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .browser import Browser, chromium_or_skip


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """A started browser; skipped when none is installed, failed instead when GAINSCOPE_REQUIRE_BROWSER=1."""
    with Browser(chromium_or_skip()) as started:
        yield started
