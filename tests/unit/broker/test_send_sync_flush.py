"""A SYNC_FLUSH send answered by the group commit (a deferred reply, no Task): SUCCESS once its fsync covers it,
FLUSH_DISK_TIMEOUT with the full send result when none does within ``syncFlushTimeout``, and ``send_inflight``
counts it exactly while it waits."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import structlog

from broker.services.broker_stats import BrokerStats
from broker.store.flush import GroupCommit
from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting.handler import DeferredReply, RequestContext, awaited
from tests.integration.broker_wire import send_cmd
from tests.unit.broker.handler_support import FakeChannel, WiredBroker, dispatch, wired_broker


def _send_stats(b: WiredBroker) -> BrokerStats:
    service: Any = b.wiring.sends
    stats = service._stats  # the send service's counters (sendThreadPoolQueueSize)
    assert isinstance(stats, BrokerStats)
    return stats


async def test_a_sync_flush_send_is_answered_by_the_group_commit_or_its_timeout(tmp_path: Path) -> None:
    async with wired_broker(tmp_path, flushDiskType="SYNC_FLUSH", syncFlushTimeout=100) as b:
        gc = b.store.sync_flush_only
        assert isinstance(gc, GroupCommit)
        gate = threading.Event()
        gate.set()
        real = gc._flush_fn

        def gated() -> int:  # the real flush, held on the flush thread while the gate is closed
            gate.wait(30)
            return real()

        gc._flush_fn = gated
        stats = _send_stats(b)
        ok = await dispatch(b, send_cmd("SyncT", b"one"))
        assert ok.code == ResponseCode.SUCCESS and ok.ext_fields["queueOffset"] == "0"
        assert b.store.commitlog.flushed_offset >= b.store.commitlog.max_offset
        gate.clear()
        late = await dispatch(b, send_cmd("SyncT", b"two"))
        assert late.code == ResponseCode.FLUSH_DISK_TIMEOUT  # success-like: carries the send result
        assert late.ext_fields["queueOffset"] == "1" and late.ext_fields["msgId"]
        assert stats.send_inflight == 0
        gate.set()
        again = await dispatch(b, send_cmd("SyncT", b"three"))
        assert again.code == ResponseCode.SUCCESS and again.ext_fields["queueOffset"] == "2"


async def test_the_send_defers_its_reply_while_a_fsync_is_owed(tmp_path: Path) -> None:
    async with wired_broker(tmp_path, flushDiskType="SYNC_FLUSH") as b:
        cmd = send_cmd("SyncT", b"x")
        handler = b.registry.get(cmd.code)
        assert handler is not None
        stats = _send_stats(b)
        reply = await awaited(handler(RequestContext(FakeChannel(), cmd, structlog.get_logger("t")), cmd))
        assert isinstance(reply, DeferredReply) and stats.send_inflight == 1
        assert (await dispatch(b, send_cmd("SyncT", b"y"))).code == ResponseCode.SUCCESS
        assert stats.send_inflight == 0  # the first one was answered by the same or an earlier fsync


async def test_with_group_commit_inline_the_send_is_answered_after_a_sync_on_the_loop(tmp_path: Path) -> None:
    async with wired_broker(tmp_path, flushDiskType="SYNC_FLUSH", groupCommitInline="true") as b:
        gc = b.store.sync_flush_only
        assert isinstance(gc, GroupCommit) and gc._thread is None  # no flush thread: the key reached the store
        real = gc._flush_fn
        synced_on: list[int] = []

        def noted() -> int:
            synced_on.append(threading.get_ident())
            return real()

        gc._flush_fn = noted
        ok = await dispatch(b, send_cmd("SyncT", b"one"))
        assert ok.code == ResponseCode.SUCCESS and ok.ext_fields["queueOffset"] == "0"
        assert synced_on == [threading.get_ident()]
        assert b.store.commitlog.flushed_offset >= b.store.commitlog.max_offset
        assert _send_stats(b).send_inflight == 0


async def test_a_send_that_needs_no_wait_is_answered_by_the_handlers_call_itself(tmp_path: Path) -> None:
    """ASYNC_FLUSH, a topic that exists: the send handler's plain call returns the reply (no coroutine to run); a
    send that must wait (its new topic's registration with the name servers) returns the coroutine that answers."""
    async with wired_broker(tmp_path) as b:
        first = send_cmd("PlainT", b"new topic")
        handler = b.registry.get(first.code)
        assert handler is not None
        got = handler(RequestContext(FakeChannel(), first, structlog.get_logger("t")), first)
        assert not isinstance(got, RemotingCommand | DeferredReply)  # auto-created: answered once registered
        reply = await awaited(got)
        assert isinstance(reply, RemotingCommand) and reply.code == ResponseCode.SUCCESS
        cmd = send_cmd("PlainT", b"x")
        got = handler(RequestContext(FakeChannel(), cmd, structlog.get_logger("t")), cmd)
        assert isinstance(got, RemotingCommand)
        assert got.code == ResponseCode.SUCCESS and got.ext_fields["queueOffset"] == "1"
