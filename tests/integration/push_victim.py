"""A push consumer in a process of its own, for tests that kill it with SIGKILL in the middle of consuming.

    python tests/integration/push_victim.py NAMESRV GROUP TOPIC DELIVERIES_FILE

Each delivered message is appended to DELIVERIES_FILE as ``queue_id offset body`` *before* the listener returns
(the write reaches the page cache, so it survives the kill); the listener is slow on purpose, so a kill lands with
batches in flight. Creates ``DELIVERIES_FILE.started`` once the consumer is running.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from client import ConsumeResult, PushConsumer
from protocol.message_ext import MessageExt


async def main(namesrv: str, group: str, topic: str, path: str) -> None:
    out = open(path, "a", buffering=1)  # noqa: SIM115  # line-buffered: one write() per delivery line

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        out.write("".join(f"{m.queue_id} {m.queue_offset} {m.body.decode()}\n" for m in msgs))
        await asyncio.sleep(0.05)
        return ConsumeResult.SUCCESS

    consumer = PushConsumer(
        group, namesrv_addr=namesrv, consume_message_batch_max_size=4, persist_consumer_offset_interval_ms=200
    )
    consumer.subscribe(topic, "*", listener)
    async with consumer:
        Path(f"{path}.started").touch()
        await asyncio.Event().wait()  # until killed


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
