"""The ``browser`` fixture: one headless Chromium for the session (see browser.py), or a skip saying why."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from .browser import BROWSER_NAMES, Browser, find_chromium


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """A started browser; skipped when none is installed, failed instead when GAINSCOPE_REQUIRE_BROWSER=1."""
    executable = find_chromium()
    if executable is None:
        reason = (f"no browser for the HTML tests: none of {', '.join(BROWSER_NAMES)} is on PATH and "
                  "GAINSCOPE_CHROMIUM is not set (python3 dev.py test installs Debian's chromium as root)")
        if os.environ.get("GAINSCOPE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"GAINSCOPE_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    with Browser(executable) as started:
        yield started
