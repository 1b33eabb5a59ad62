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
