"""Shared pieces of the client integration tests: the ``Cluster`` the ``cluster`` fixture (conftest) yields, topic
creation, and waiting on conditions with a deadline (``until``, the suite's ``eventually``)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from broker.app import BrokerApp
from client import ClientInstance
from namesrv.app import NamesrvApp
from protocol.bodies import TopicConfig
from tests.eventually import eventually as until  # the suite's one poll-until helper, under its old name here

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
        (broker or self.broker).topics.put(TopicConfig.with_queues(topic, queues))
        inst = ClientInstance(self.ns_addr, instance_name=f"route-probe-{topic}")
        try:
            await until(lambda: _has_route(inst, topic, broker or self.broker), timeout=10, what=f"route of {topic}")
        finally:
            await inst.remoting.close()


async def _has_route(inst: ClientInstance, topic: str, broker: BrokerApp) -> bool:
    route = await inst.fetch_route(topic)
    name = broker.config.identity.broker_name
    return route is not None and any(q.broker_name == name for q in route.queues)


CLIENT_DIR = str(Path(__file__).resolve().parents[2] / "client")


def client_tasks() -> set[asyncio.Task[Any]]:
    """Running tasks whose coroutine is SDK code (the servers' own tasks are not the client's business)."""
    out = set()
    for t in asyncio.all_tasks():
        code = getattr(t.get_coro(), "cr_code", None)
        if t is not asyncio.current_task() and code is not None and code.co_filename.startswith(CLIENT_DIR):
            out.add(t)
    return out
