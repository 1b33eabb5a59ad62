"""Helpers of the Spark suite: servers in subprocesses, producing test messages and reading them back.

Spark runs ``read()``/``write()`` in Python worker processes that dial the broker over TCP, so the servers cannot
live in the test's event loop: they run as ``python -m namesrv`` / ``python -m broker`` subprocesses
(``tests.servers``, shared with the compat suite).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.eventually import eventually, eventually_sync
from tests.servers import REPO as ROOT
from tests.servers import Servers as Cluster
from tests.servers import launch

SPARK_BROKER_CONF = (
    "brokerId=0\nautoCreateTopicEnable=true\ndefaultTopicQueueNums=4\nmaxTransferCountOnMessageInMemory=1024\n"
    "maxTransferBytesOnMessageInMemory=4194304\nmaxMessageSize=262144\n"
)


def start_cluster(work: Path, broker_name: str = "broker-a", broker_extra: str = "") -> Cluster:
    """A name server and one broker (auto-create topics with 4 queues) on free ports, files under ``work``;
    ``broker_extra`` is appended to the broker's config file. ``Cluster.stop`` stops both."""
    return launch(work, cluster="SparkCluster", broker_name=broker_name, broker_extra=SPARK_BROKER_CONF + broker_extra)


def mqadmin(cluster: Cluster, *args: str) -> str:
    """Run ``python -m client.admin <args> -n <namesrv>`` and return its output (fails the test on a non-zero exit)."""
    done = subprocess.run(
        [sys.executable, "-m", "client.admin", *args, "-n", cluster.namesrv_addr],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def group_offsets(cluster: Cluster, group: str, topic: str) -> dict[tuple[str, int], tuple[int | None, int]]:
    """``{(brokerName, queueId): (the group's committed offset or None, the queue's max offset)}`` as the brokers
    report them."""
    from client import PullConsumer

    async def look() -> dict[tuple[str, int], tuple[int | None, int]]:
        async with PullConsumer(group, namesrv_addr=cluster.namesrv_addr) as consumer:
            out = {}
            for mq in await consumer.fetch_subscribe_queues(topic):
                out[mq.broker_name, mq.queue_id] = (await consumer.committed(mq), await consumer.max_offset(mq))
            return out

    return asyncio.run(look())


@dataclass(frozen=True)
class Received:
    """A message read back by a consumer."""

    body: bytes
    tags: str | None
    keys: str | None
    properties: dict[str, str]


def produce(cluster: Cluster, topic: str, bodies: list[bytes], *, tags: str = "tagA") -> list[bytes]:
    """Send ``bodies`` to ``topic`` (keys ``key-<i>``, property p=v) and wait for every acknowledgement."""
    from client import Message, Producer

    async def send_all() -> None:
        async with Producer("spark_test_producer", namesrv_addr=cluster.namesrv_addr) as producer:
            for i, body in enumerate(bodies):
                await producer.send(Message(topic, body, tags=tags, keys=[f"key-{i}"], properties={"p": "v"}))

    asyncio.run(send_all())
    return list(bodies)


def consume_all(cluster: Cluster, topic: str, *, expected: int, timeout_s: float = 60.0) -> list[Received]:
    """Read ``topic`` from the start of every queue with a pull consumer until ``expected`` messages arrived."""
    from client import PullConsumer

    async def read() -> list[Received]:
        got: list[Received] = []
        async with PullConsumer("spark_test_reader", namesrv_addr=cluster.namesrv_addr) as consumer:
            queues = await consumer.fetch_subscribe_queues(topic)
            consumer.assign(queues)
            for q in queues:
                await consumer.seek(q, 0)

            async def enough() -> bool:
                for m in await consumer.poll(timeout=1.0):
                    keys = " ".join(m.keys) if isinstance(m.keys, list | tuple) else m.keys
                    got.append(Received(bytes(m.body), m.tags, keys or None, dict(m.properties)))
                return len(got) >= expected

            await eventually(enough, timeout=timeout_s, what=lambda: f"{expected} messages, got {len(got)}", step=0)
        return got

    return asyncio.run(read())


def wait_for_clock_tick() -> None:
    """Return once the wall clock (ms) moved past the current millisecond, so later store timestamps are larger."""
    start = time.time_ns() // 1_000_000
    eventually_sync(lambda: time.time_ns() // 1_000_000 > start + 1, timeout=1, what="the clock to tick", step=0.001)
