"""Shared pieces of the client integration tests: a name server + broker fixture, topic creation, and waiting
on conditions with a deadline (never a fixed sleep)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from broker.app import BrokerApp
from broker.services.topic_config import TopicConfig
from client import ClientInstance
from namesrv.app import NamesrvApp
from tests.harness import run_broker, run_namesrv

# every delay level 1 s, so retries (level 3 + n) come back in about a second
FAST_DELAYS = " ".join(["1s"] * 18)


@dataclass
class Cluster:
    ns: NamesrvApp
    broker: BrokerApp
    tmp_path: Path

    @property
    def ns_addr(self) -> str:
        return self.ns.addr

    async def create_topic(self, topic: str, queues: int = 4, *, broker: BrokerApp | None = None) -> None:
        """Create ``topic`` on the broker and wait until the name server routes it."""
        (broker or self.broker).topics.put(TopicConfig(topic, queues, queues))
        inst = ClientInstance(self.ns_addr, instance_name=f"route-probe-{topic}")
        try:
            await until(lambda: _has_route(inst, topic, broker or self.broker), timeout=10, what=f"route of {topic}")
        finally:
            await inst.remoting.close()


async def _has_route(inst: ClientInstance, topic: str, broker: BrokerApp) -> bool:
    route = await inst.fetch_route(topic)
    name = broker.config.identity.broker_name
    return route is not None and any(q.broker_name == name for q in route.queues)


async def until(cond: Callable[[], Any], timeout: float = 10.0, what: str = "condition", step: float = 0.02) -> None:
    """Wait until ``cond()`` (sync or async) is true; fail the test with ``what`` after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = cond()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return
        if loop.time() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(step)


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with (
        run_namesrv(tmp_path) as ns,
        run_broker(
            ns, tmp_path, messageDelayLevel=FAST_DELAYS, transactionCheckInterval=500, transactionTimeOut=300
        ) as broker,
    ):
        yield Cluster(ns, broker, tmp_path)


CLIENT_DIR = str(Path(__file__).resolve().parents[2] / "client")


def client_tasks() -> set[asyncio.Task[Any]]:
    """Running tasks whose coroutine is SDK code (the servers' own tasks are not the client's business)."""
    out = set()
    for t in asyncio.all_tasks():
        code = getattr(t.get_coro(), "cr_code", None)
        if t is not asyncio.current_task() and code is not None and code.co_filename.startswith(CLIENT_DIR):
            out.add(t)
    return out
