"""A daemon's heap after start-up (``runtime.daemon.settle_heap``, called by ``serve``): start-up's garbage
is collected, what survives is frozen out of later collections."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import weakref
from collections.abc import Iterator

import pytest

from runtime.daemon import serve, settle_heap


@pytest.fixture(autouse=True)
def _unfreeze() -> Iterator[None]:
    """The freeze is process-wide: give the rest of the test run its objects back."""
    yield
    gc.unfreeze()


class _Node:
    def __init__(self) -> None:
        self.peer: _Node | None = None


def test_startup_objects_leave_the_collected_generations() -> None:
    table = {f"topic{i}": [i] for i in range(100)}  # a long-lived table loaded at start-up
    before = gc.get_freeze_count()
    settle_heap()
    assert gc.get_freeze_count() > before
    assert not any(o is table for o in gc.get_objects())  # frozen: no generation walks it any more


def test_startup_garbage_cycles_are_freed_not_frozen() -> None:
    a, b = _Node(), _Node()
    a.peer, b.peer = b, a
    gone = weakref.ref(a)
    del a, b
    settle_heap()
    assert gone() is None


class _App:
    """The smallest daemon ``serve`` runs: nothing to start or stop."""

    def __init__(self) -> None:
        self.stopped = False

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        self.stopped = True


async def test_serve_freezes_the_heap_before_the_banner(capsys: pytest.CaptureFixture[str]) -> None:
    gc.unfreeze()
    seen: list[int] = []

    def banner() -> str:
        seen.append(gc.get_freeze_count())
        asyncio.get_running_loop().call_soon(os.kill, os.getpid(), signal.SIGTERM)  # stop as an operator would
        return "up"

    app = _App()
    assert await serve(app, prog="t", listen="127.0.0.1:0", banner=banner) == 0
    assert seen and seen[0] > 0
    assert app.stopped
    assert capsys.readouterr().out == "up\n"
