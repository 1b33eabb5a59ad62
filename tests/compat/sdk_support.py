"""Our SDK's side of the mixed-client tests: ``consume_ours`` reads what another client sent with our push consumer."""

from __future__ import annotations

import asyncio
from typing import Any

from client import ConsumeResult, PushConsumer
from protocol.message_ext import MessageExt

N = 100


async def consume_ours(
    ns: str, topic: str, n: int = N, group: str = "CID_mixed_py", **options: Any
) -> dict[str, MessageExt]:
    """Our push consumer (with ``options``) from the first offset until ``n`` distinct keys are in; the messages by
    key."""
    got: dict[str, MessageExt] = {}
    done = asyncio.Event()

    async def on_msgs(msgs: list[MessageExt]) -> ConsumeResult:
        for m in msgs:
            got[m.keys[0]] = m
        if len(got) >= n:
            done.set()
        return ConsumeResult.SUCCESS

    consumer = PushConsumer(group, namesrv_addr=ns, consume_from_where="FIRST_OFFSET", **options)
    consumer.subscribe(topic, "*", on_msgs)
    async with consumer:
        await asyncio.wait_for(done.wait(), 60)
    return got
