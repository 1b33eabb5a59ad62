"""Suite-wide pytest wiring: markers by directory, skips for missing optional runtimes, and the golden-frame folder.

Tests under ``tests/spark/``, ``tests/compat/``, ``tests/dashboard/`` and ``tests/reference/`` are marked ``spark``,
``compat``, ``dashboard`` and ``reference`` automatically, so ``pytest -m spark`` (etc.) selects them whether or not
each test carries the marker itself. A ``spark`` test is skipped when pyspark or Java 17+ is missing, a ``compat``
test when the official client (PyPI ``rocketmq``) is, a ``dashboard`` test when Chromium, Playwright or the built
Dashboard is, a ``reference`` test when ``make peers`` has not built its peer; ``make test`` installs all of them, so
in CI they run.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests assert behaviour, never timing: Hypothesis's default 200 ms per-example deadline turned a loaded
# machine into failures ("Unreliable test timings", a CI run with several servers busy on 2 cores). Tests that set
# their own ``deadline=`` keep it; the rest run without one.
settings.register_profile("rocketq", deadline=None)
settings.load_profile("rocketq")

# This process forks for every server and client process the tests start and for the Spark JVM, and only ever to
# exec. With gRPC threads alive (the 5.x-client and proxy tests run in this process) gRPC's fork handlers can break
# the child before it execs and close the parent's epoll fd: one CI run lost the Spark JVM that way ("Java gateway
# process exited before sending its port number", with gRPC's "epoll_wait error: Bad file descriptor" at the same
# moment). gRPC's documented setting for fork-then-exec turns them off (grpc/grpc#13873); set before grpc loads.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

REPO = Path(__file__).resolve().parent.parent
GOLDEN_DIR = REPO.parent / "shared" / "reference" / "golden"

_DIR_MARKERS = {
    "spark": REPO / "tests" / "spark",
    "compat": REPO / "tests" / "compat",
    "dashboard": REPO / "tests" / "dashboard",
    "reference": REPO / "tests" / "reference",
}


@functools.cache
def _java_major() -> int:
    java = shutil.which("java")
    if java is None:
        return 0
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.SubprocessError):
        return 0
    m = re.search(r'version "(?:1\.)?(\d+)', out)
    return int(m.group(1)) if m else 0


@functools.cache
def _missing(marker: str) -> str | None:
    """Why tests with ``marker`` cannot run here, or None."""
    if marker == "spark":
        if importlib.util.find_spec("pyspark") is None:
            return "pyspark is not installed (extra [spark])"
        if _java_major() < 17:
            return "Java 17+ is not on PATH"
    elif marker == "compat" and importlib.util.find_spec("rocketmq") is None:
        return "the official client (PyPI rocketmq==0.4.4) is not installed"
    elif marker == "dashboard":
        from tests.dashboard.support import missing

        return missing()
    return None


@pytest.hookimpl(tryfirst=True)  # before -m deselects, so directory markers count
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path))
        for marker, directory in _DIR_MARKERS.items():
            if path.is_relative_to(directory) and item.get_closest_marker(marker) is None:
                item.add_marker(marker)
        for marker in _DIR_MARKERS:
            if item.get_closest_marker(marker) is not None and (reason := _missing(marker)):
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def golden_dir() -> Path:
    """``../shared/reference/golden`` beside the repository: frames captured from the official clients."""
    if not GOLDEN_DIR.is_dir():
        pytest.fail(f"golden frames not found at {GOLDEN_DIR} (shared/ must sit beside the repository)")
    return GOLDEN_DIR
