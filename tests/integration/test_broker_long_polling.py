"""Long polling: a pull that finds nothing is held and answered within milliseconds of a matching send; other
requests on the same connection are never delayed by it; non-matching sends do not answer it; short polling holds
for ``shortPollingTimeMills``; shutdown answers every held pull with PULL_NOT_FOUND; a matching put answers the held
pull before it returns.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from protocol.codes import RequestCode, ResponseCode
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import PULL_SUBSCRIPTION, PULL_SUSPEND, messages, pull, send, simple_cmd

HOLD = PULL_SUSPEND | PULL_SUBSCRIPTION


async def test_held_pull_answered_right_after_send(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        assert (await send(client, broker.addr, "LP", b"first")).code == ResponseCode.SUCCESS
        started = time.monotonic()
        held = asyncio.create_task(
            pull(client, broker.addr, "G", "LP", 0, 1, sys_flag=HOLD, suspend_ms=15000, timeout=30)
        )
        await eventually(lambda: broker.polling.held_count >= 1, timeout=5, what="the pull held")
        # the same connection keeps serving other requests while the pull is held
        mx = await client.invoke(broker.addr, simple_cmd(RequestCode.GET_MAX_OFFSET, topic="LP", queueId=0))
        assert mx.ext_fields["offset"] == "1" and not held.done()
        sent_at = time.monotonic()
        assert (await send(client, broker.addr, "LP", b"second")).code == ResponseCode.SUCCESS
        resp = await held
        answered = time.monotonic()
        assert resp.code == ResponseCode.SUCCESS
        assert [m.body for m in messages(resp)] == [b"second"]
        assert answered >= sent_at
        assert answered - sent_at < 1.0, "held pull must be woken by the arrival, not a timer"
        assert answered - started < 5.0


async def test_held_pull_is_answered_by_the_arrival_not_an_interval(tmp_path: Path, client: RemotingClient) -> None:
    """The pull is held for an hour, far beyond this test's own deadline: only the message's dispatch can end it."""
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        assert (await send(client, broker.addr, "LPA", b"first")).code == ResponseCode.SUCCESS
        held = asyncio.create_task(
            pull(client, broker.addr, "G", "LPA", 0, 1, sys_flag=HOLD, suspend_ms=3_600_000, timeout=3_700)
        )
        await eventually(lambda: broker.polling.held_count >= 1, timeout=5, what="the pull held")
        assert not held.done()
        assert (await send(client, broker.addr, "LPA", b"second")).code == ResponseCode.SUCCESS
        async with asyncio.timeout(20):
            resp = await held
        assert resp.code == ResponseCode.SUCCESS
        assert [m.body for m in messages(resp)] == [b"second"]
        assert broker.polling.held_count == 0


async def test_non_matching_tag_does_not_wake(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        await send(client, broker.addr, "LPT", b"c", tags="TagC")
        held = asyncio.create_task(
            pull(client, broker.addr, "G", "LPT", 0, 1, sub="TagA", sys_flag=HOLD, suspend_ms=15000, timeout=30)
        )
        await eventually(lambda: broker.polling.held_count >= 1, timeout=5, what="the pull held")
        await send(client, broker.addr, "LPT", b"b", tags="TagB")
        await asyncio.sleep(0.2)  # give a wrong wake-up the chance to happen (not synchronisation)
        assert not held.done()
        await send(client, broker.addr, "LPT", b"a", tags="TagA")
        resp = await asyncio.wait_for(held, 5)
        assert resp.code == ResponseCode.SUCCESS
        assert [m.body for m in messages(resp)] == [b"a"]


async def test_hold_times_out_with_not_found(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        await send(client, broker.addr, "LPE", b"x", queue_id=0)
        t0 = time.monotonic()
        resp = await pull(client, broker.addr, "G", "LPE", 1, 0, sys_flag=HOLD, suspend_ms=300, timeout=10)
        waited = time.monotonic() - t0
        assert resp.code == ResponseCode.PULL_NOT_FOUND
        assert resp.ext_fields["nextBeginOffset"] == "0"
        assert 0.25 <= waited < 3


async def test_short_polling(tmp_path: Path, client: RemotingClient) -> None:
    async with (
        run_namesrv(tmp_path) as ns,
        run_broker(ns, tmp_path, longPollingEnable=False, shortPollingTimeMills=200) as broker,
    ):
        await send(client, broker.addr, "SP", b"x", queue_id=0)
        t0 = time.monotonic()
        resp = await pull(client, broker.addr, "G", "SP", 1, 0, sys_flag=HOLD, suspend_ms=15000, timeout=10)
        assert resp.code == ResponseCode.PULL_NOT_FOUND
        assert 0.15 <= time.monotonic() - t0 < 3


async def test_shutdown_releases_held_pulls(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns:
        async with run_broker(ns, tmp_path) as broker:
            await send(client, broker.addr, "SD", b"x", queue_id=0)
            held = [
                asyncio.create_task(
                    pull(client, broker.addr, "G", "SD", q, 0, sys_flag=HOLD, suspend_ms=15000, timeout=30)
                )
                for q in (1, 2, 3)
            ]
            await eventually(lambda: broker.polling.held_count >= 3, timeout=5, what="3 pulls held")
            t0 = time.monotonic()
        results = await asyncio.wait_for(asyncio.gather(*held), 5)
        assert all(r.code == ResponseCode.PULL_NOT_FOUND for r in results)
        assert time.monotonic() - t0 < 5


async def test_held_pull_is_answered_inside_the_put_that_wakes_it(tmp_path: Path, client: RemotingClient) -> None:
    """The wake re-reads and answers in the put itself (no Task woken a loop pass later): once a put returns, without
    the loop having run, the held pull is no longer in flight on its connection and its reply is written."""
    from broker.store.request import PutRequest

    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        assert (await send(client, broker.addr, "LPI", b"first")).code == ResponseCode.SUCCESS
        held = asyncio.create_task(
            pull(client, broker.addr, "G", "LPI", 0, 1, sys_flag=HOLD, suspend_ms=15000, timeout=30)
        )
        await eventually(lambda: broker.polling.held_count >= 1, timeout=5, what="the pull held")
        busy = [c for c in broker._server._connections if c.in_flight]
        assert len(busy) == 1
        res = broker.store.append(PutRequest("LPI", 0, 0, 0, 1_700_000_000_000, ("127.0.0.1", 1), b"second", {}))
        assert res.status.name == "PUT_OK"
        assert broker.polling.held_count == 0 and busy[0].in_flight == 0  # answered before the loop ran again
        resp = await held
        assert resp.code == ResponseCode.SUCCESS
        assert [m.body for m in messages(resp)] == [b"second"]
