"""A push consumer killed (SIGKILL) in the middle of consuming: its group takes over its queues from the offsets it
last committed, so nothing is lost and the only messages delivered twice are at or after the offsets committed when
it died — 10,000 messages through a group of three."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections import Counter
from pathlib import Path

from client import ConsumeResult, Message, Producer, PushConsumer
from protocol.message_ext import MessageExt
from tests.integration.client_support import Cluster, until

VICTIM = Path(__file__).with_name("push_victim.py")
TOPIC, GROUP, QUEUES, N = "TopicCrash", "CG_crash", 8, 10_000

Delivery = tuple[int, int, bytes]  # queue id, queue offset, body


def _read_deliveries(path: Path) -> list[Delivery]:
    out = []
    for line in path.read_text().splitlines():
        parts = line.split(" ")
        if len(parts) == 3:  # the last line may be torn by the kill
            out.append((int(parts[0]), int(parts[1]), parts[2].encode()))
    return out


def _share(consumer: PushConsumer) -> int:
    return sum(1 for mq in consumer.assignment if mq.topic == TOPIC)


def _owned(consumers: list[PushConsumer]) -> set[int]:
    return {mq.queue_id for c in consumers for mq in c.assignment if mq.topic == TOPIC}


async def test_a_consumer_killed_mid_batch_loses_nothing(cluster: Cluster, tmp_path: Path) -> None:
    await cluster.create_topic(TOPIC, QUEUES)
    got: list[Delivery] = []

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        got.extend((m.queue_id, m.queue_offset, m.body) for m in msgs)
        return ConsumeResult.SUCCESS

    survivors = [PushConsumer(GROUP, namesrv_addr=cluster.ns_addr, consume_message_batch_max_size=8) for _ in range(2)]
    for c in survivors:
        c.subscribe(TOPIC, "*", listener)
    victim_file = tmp_path / "victim.txt"
    victim_file.touch()
    async with contextlib.AsyncExitStack() as stack:
        for c in survivors:
            await stack.enter_async_context(c)
        victim = await asyncio.create_subprocess_exec(
            sys.executable, str(VICTIM), cluster.ns_addr, GROUP, TOPIC, str(victim_file),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        stack.push_async_callback(victim.wait)
        stack.callback(lambda: victim.returncode is None and victim.kill())
        started = Path(f"{victim_file}.started")
        await until(lambda: started.exists() or victim.returncode is not None, timeout=30, what="the victim to start")
        assert victim.returncode is None, "the victim exited before it started"
        # the group settles on a three-way split: the survivors hold some queues, the victim the rest. Each survivor
        # must hold a three-way share (2 or 3 of 8): while one still holds its two-way share (4) the queue the other
        # just gave up is held by nobody yet, and would be taken for the victim's (then a survivor, taking it next,
        # reads it from 0 and the checks below mistake that for a re-read below the victim's commit)
        await until(lambda: len(cluster.broker.clients.client_ids(GROUP)) == 3, what="three consumers in the group")
        await until(lambda: all(_share(c) in (2, 3) for c in survivors), what="a three-way split with the victim")
        victim_queues = set(range(QUEUES)) - _owned(survivors)

        async with Producer("PG_crash", namesrv_addr=cluster.ns_addr) as p:
            for i in range(0, N, 50):
                await p.send_batch([Message(TOPIC, str(j).encode()) for j in range(i, min(i + 50, N))])

        await until(lambda: len(_read_deliveries(victim_file)) >= 400, timeout=30, what="the victim consuming")
        os.kill(victim.pid, signal.SIGKILL)
        # Nothing of ours runs between the kill and this snapshot (no await), so no survivor has touched the
        # victim's queues yet: these are the victim's last commits as far as the broker knows.
        committed = {q: cluster.broker.offsets.query(GROUP, TOPIC, q) for q in range(QUEUES)}
        assert await victim.wait() == -signal.SIGKILL

        want = {str(i).encode() for i in range(N)}

        def missing() -> set[bytes]:
            return want - {b for _, _, b in got} - {b for _, _, b in _read_deliveries(victim_file)}

        await until(lambda: not missing(), timeout=60, what=f"all {N} messages after the kill")
        victims = _read_deliveries(victim_file)

    assert _owned(survivors) == set(), "closed consumers hold no queues"
    seen = Counter(b for _, _, b in got) + Counter(b for _, _, b in victims)
    assert set(seen) == want, "nothing lost, nothing invented"
    assert all(committed[q] > 0 for q in victim_queues if any(v[0] == q for v in victims[:100])), (
        "the victim committed progress before it died",
        committed,
    )
    by_body = {b: (q, off) for q, off, b in got + victims}
    dups = {b for b, n in seen.items() if n > 1}
    # The kill moves queues: the victim's to the survivors, and (averagely) some between the survivors too, so a
    # message may come twice from any queue — as with RocketMQ, where a queue changing hands redelivers what was
    # in flight — but never one below what the group had committed when the victim died.
    assert len(dups) < N // 10, f"{len(dups)} duplicates"
    for b in dups:
        q, off = by_body[b]
        assert off >= committed[q], f"{b!r} at offset {off} came again though offset {committed[q]} was committed"
    for q, off, _ in got:
        if q in victim_queues:
            assert off >= committed[q], f"a survivor re-read queue {q} from {off}, below the committed {committed[q]}"
    # the victim's work below its commits was really done: each such offset was delivered to it
    done_by_victim = {(q, off) for q, off, _ in victims}
    for q in victim_queues:
        assert all((q, off) in done_by_victim for off in range(committed[q])), f"queue {q} committed unconsumed work"
