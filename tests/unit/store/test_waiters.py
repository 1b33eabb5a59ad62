"""OffsetWaiters, the structure behind group commit and the SYNC_MASTER wait: an advance releases exactly the
waiters it covers, a deadline answers only the ones still waiting, and the one timer goes when nobody waits."""

from __future__ import annotations

import asyncio

from broker.store.waiters import OffsetWaiters


async def test_release_covers_only_reached_ends() -> None:
    w: OffsetWaiters[str] = OffsetWaiters("ok", "late")
    w.start(asyncio.get_running_loop())
    a, b = w.add(10, 60), w.add(20, 60)
    assert w.release(15) == 1 and a.result() == "ok" and not b.done() and len(w) == 1
    assert w.release(25) == 1 and b.result() == "ok"
    assert w._timer is None  # nobody waits: no timer left behind
    d = w.add(40, 60)
    w.fail_all("stopped")
    assert d.result() == "stopped" and len(w) == 0 and w._timer is None


async def test_a_deadline_answers_only_the_waiters_still_waiting() -> None:
    w: OffsetWaiters[str] = OffsetWaiters("ok", "late")
    w.start(asyncio.get_running_loop())
    x, y = w.add(10, 0.01), w.add(20, 0.01)
    w.release(10)
    assert await y == "late" and x.result() == "ok" and w.timeouts == 1 and w._timer is None


async def test_callback_waiters_are_called_once_with_release_deadline_or_failure_values() -> None:
    w: OffsetWaiters[str] = OffsetWaiters("ok", "late")
    w.start(asyncio.get_running_loop())
    got: list[tuple[str, str]] = []
    w.add_callback(10, 60, lambda v: got.append(("a", v)))
    fut = w.add(20, 60)
    w.add_callback(30, 60, lambda v: got.append(("c", v)))
    assert w.release(25) == 2 and got == [("a", "ok")] and fut.result() == "ok"
    w.fail_all("stopped")
    assert got == [("a", "ok"), ("c", "stopped")] and len(w) == 0 and w._timer is None
    done = asyncio.get_running_loop().create_future()
    w.add_callback(40, 0.01, done.set_result)
    assert await done == "late" and w.timeouts == 1 and w._timer is None
    w.release(100)
    assert got == [("a", "ok"), ("c", "stopped")]  # nothing called twice


async def test_a_callback_that_raises_costs_only_its_own_waiter() -> None:
    w: OffsetWaiters[str] = OffsetWaiters("ok", "late")
    w.start(asyncio.get_running_loop())
    got: list[str] = []

    def bad(_v: str) -> None:
        raise RuntimeError("bug")

    w.add_callback(10, 60, bad)
    w.add_callback(20, 60, got.append)
    assert w.release(20) == 2 and got == ["ok"] and len(w) == 0 and w._timer is None
