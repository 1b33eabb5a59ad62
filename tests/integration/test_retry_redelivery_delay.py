"""A message consumed with RECONSUME_LATER once comes back after delay level 3 + reconsumeTimes (10 s with the
default ``messageDelayLevel``), as on Apache RocketMQ: the broker's re-put to the retry topic is stamped 9–15 s after
the first delivery, and the consumer gets it within the same class — not after a 30 s route poll: the topic (auto-
created by the first send) and the new group's retry topic (created by its first heartbeat) are registered with the
name server before that send and that heartbeat are answered."""

from __future__ import annotations

import time
from pathlib import Path

from client import ConsumeResult, Message, Producer, PushConsumer
from protocol.message_ext import MessageExt
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv


async def test_reconsume_later_comes_back_after_about_ten_seconds(tmp_path: Path) -> None:
    first_seen: dict[str, float] = {}
    again: dict[str, tuple[float, MessageExt]] = {}

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        now = time.time()
        for m in msgs:
            key = m.keys[0]
            if key not in first_seen:
                first_seen[key] = now
                return ConsumeResult.RECONSUME_LATER
            again.setdefault(key, (now, m))
        return ConsumeResult.SUCCESS

    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as _broker:  # default delay levels
        async with Producer("PG_retry_timing", namesrv_addr=ns.addr) as producer:
            for i in range(10):  # the first send auto-creates the topic (registered before it is answered)
                await producer.send(Message("TopicRetryTiming", f"b{i}".encode(), keys=[f"k{i}"]))
        consumer = PushConsumer(
            "CG_retry_timing", namesrv_addr=ns.addr, consume_message_batch_max_size=1, consume_from_where="FIRST_OFFSET"
        )
        consumer.subscribe("TopicRetryTiming", "*", listener)
        async with consumer:
            await eventually(lambda: len(again) == 10, timeout=40, what="every message a second time")
    for key, (seen_at, m) in again.items():
        assert m.reconsume_times == 1
        scheduled = m.store_timestamp / 1000 - first_seen[key]  # the broker's re-put, after level 3's 10 s
        assert 9 <= scheduled <= 15, (key, scheduled)
        assert 9 <= seen_at - first_seen[key] <= 15, (key, seen_at - first_seen[key])
