"""Where Debian's `chromium` is, for the tests that drive a real browser: skipped without
one, failed under CI (.ci/run installs it)."""

from __future__ import annotations

import os
import shutil

import pytest


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run installs Debian's chromium)")
        pytest.skip("headless Chromium is not installed (apt-get install chromium)")
    return found
