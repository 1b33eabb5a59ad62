"""A SYNC_FLUSH broker process SIGKILLed while 32 senders wait on its group commit keeps every message it
acknowledged: sends are answered by the group commit (deferred replies, after the fsync that covers them), so after a
restart on the same store each SEND_OK message reads back at the queue offset its reply gave, with its body.

The kill comes ~0.1 s after the first send auto-created the topic, often inside the debounced topics.json write's
window: the restarted broker then finds the topic from its consume-queue files (``TopicConfigTable.load``); before
that, about half of the runs found no route to the acknowledged messages. Both group-commit modes: the flush thread
(the default) and ``groupCommitInline`` (the sync on the event loop)."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from client import Message, MessageQueue, Producer, PullConsumer, SendStatus
from client.errors import MQClientError, RouteNotFoundError
from protocol.errors import RemotingError
from tests.eventually import eventually
from tests.servers import launch

T = "KillSyncFlush"
ACKS_BEFORE_KILL = 600


@pytest.mark.parametrize("inline", [False, True], ids=["flush-thread", "inline"])
async def test_sigkill_under_sync_flush_loses_no_acknowledged_message(tmp_path: Path, inline: bool) -> None:
    extra = "flushDiskType=SYNC_FLUSH\nautoCreateTopicEnable=true\n" + ("groupCommitInline=true\n" if inline else "")
    s = launch(tmp_path, broker_extra=extra)
    try:
        acked: dict[tuple[int, int], bytes] = {}
        enough, stop = asyncio.Event(), asyncio.Event()
        async with Producer("PG_kill", namesrv_addr=s.ns_addr, send_timeout_ms=2000) as p:
            # the first send creates the topic; the route may lag the broker's registration
            await eventually(
                lambda: p.send(Message(T, b"first")), what="a first send", step=0.1, ignoring=(RouteNotFoundError,)
            )

            async def sender(w: int) -> None:
                i = 0
                while not stop.is_set():
                    body = f"w{w}-{i}".encode()
                    i += 1
                    try:
                        r = await p.send(Message(T, body))
                    except (RemotingError, MQClientError):  # the broker is gone: in-flight sends get no reply
                        assert stop.is_set(), "a send failed before the broker was killed"
                        return
                    if r.send_status is SendStatus.SEND_OK:
                        acked[(r.message_queue.queue_id, r.queue_offset)] = body
                        if len(acked) >= ACKS_BEFORE_KILL:
                            enough.set()

            senders = [asyncio.create_task(sender(w)) for w in range(32)]
            await asyncio.wait_for(enough.wait(), 60)
            broker = s.procs.pop()
            broker.p.send_signal(signal.SIGKILL)  # while the other senders' requests are in flight
            stop.set()
            await asyncio.gather(*senders)
            assert broker.stop() == -signal.SIGKILL
        assert len(acked) >= ACKS_BEFORE_KILL

        s.start_broker()
        found: dict[tuple[int, int], bytes] = {}
        async with PullConsumer("CG_kill", namesrv_addr=s.ns_addr) as pc:
            queues = {qid for qid, _ in acked}
            for qid in queues:
                mq = MessageQueue(T, s.broker_name, qid)
                offset = 0
                while True:
                    got = await eventually(
                        lambda: pc.pull(mq, offset, 32),  # noqa: B023 (awaited before the loop goes on)
                        timeout=30,
                        what="a pull from the restarted broker",
                        step=0.1,
                        ignoring=(MQClientError, RemotingError),  # the restarted broker is still registering
                    )
                    if not got.msg_found_list:
                        break
                    for m in got.msg_found_list:
                        found[(qid, m.queue_offset)] = m.body
                    offset = got.next_begin_offset
        lost = {k: v for k, v in acked.items() if found.get(k) != v}
        assert not lost, f"{len(lost)} of {len(acked)} acknowledged messages lost or changed, e.g. {list(lost)[:5]}"
    finally:
        for proc in reversed(s.procs):
            proc.stop()
