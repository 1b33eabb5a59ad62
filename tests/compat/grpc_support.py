"""What the tests of the RocketMQ 5.x clients (gRPC) share: ``Env`` (the servers and the broker's gRPC endpoint, the
``env`` fixture's value), the broker settings they run with, admin calls, and the 5.x Python client driven in
``grpc_driver.py`` (its JSON-line events, a producer run, a consumer started and online)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from client.admin.admin_client import AdminClient
from protocol.errors import RemotingError
from tests.compat.driver_events import events
from tests.eventually import eventually_sync
from tests.servers import Proc, Servers

DRIVER = Path(__file__).with_name("grpc_driver.py")
# short delay levels (the consumers' retry backoff and delay messages) and a 1 s transaction check
BROKER_EXTRA = "messageDelayLevel=1s 2s 3s 4s 5s\ntransactionTimeOut=1000\ntransactionCheckInterval=1000\n"


@dataclass
class Env:
    servers: Servers
    endpoint: str
    access_key: str | None = None  # what admin calls sign with (the ACL modules' admin account)
    secret_key: str | None = None

    def driver(self, cmd: str, *args: str, name: str) -> Proc:
        return Proc(
            [sys.executable, str(DRIVER), cmd, "--endpoint", self.endpoint, *args],
            self.servers.tmp / f"{name}.log",
        )


def admin(env: Env, fn: Any) -> Any:
    """``fn(admin_client)`` awaited with an ``AdminClient`` on the env's name server (signed when it has a key)."""

    async def run() -> Any:
        async with AdminClient(env.servers.ns_addr, access_key=env.access_key, secret_key=env.secret_key) as a:
            return await fn(a)

    return asyncio.run(run())


def mqadmin(env: Env, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "client.admin", args[0], "-n", env.servers.ns_addr, *args[1:]],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(Path(__file__).resolve().parents[2]),
        check=True,
    )
    return out.stdout


def create_topic(env: Env, topic: str, queues: int = 4) -> None:
    admin(env, lambda a: a.create_topic(env.servers.broker_addr, topic, queues, queues, 6, False))


def create_group(env: Env, group: str, *, retry_max: int = 16, orderly: bool = False) -> None:
    cfg: dict[str, Any] = {"groupName": group, "retryMaxTimes": retry_max, "consumeEnable": True}
    if orderly:
        cfg["consumeMessageOrderly"] = True
    admin(env, lambda a: a.create_group(env.servers.broker_addr, cfg))


def wait_online(env: Env, group: str) -> None:
    """Until ``group`` has a consumer online at the broker (its pop offsets are set by then)."""
    eventually_sync(
        lambda: admin(env, lambda a: a.consumer_connections(env.servers.broker_addr, group)).connection_set,
        timeout=30,
        what=f"consumer group {group} online",
        ignoring=(RemotingError,),
    )


def route(env: Env, topic: str) -> Any:
    """The name server's route for ``topic`` (``RemotingError`` while it has none)."""
    return admin(env, lambda a: a.topic_route(topic))


def produce(env: Env, topic: str, count: int, prefix: str, *extra: str) -> list[dict[str, Any]]:
    p = env.driver(
        "produce", "--topic", topic, "--count", str(count), "--prefix", prefix, *extra, name=f"produce-{prefix}"
    )
    try:
        evs = events(p, lambda ev, _s: ev["event"] == "stopped", 120)
    finally:
        p.stop()
    assert [e["ok"] for e in evs if e["event"] == "done"] == [count]
    return [e for e in evs if e["event"] == "sent"]


def start_consumer(env: Env, kind: str, topic: str, group: str, *extra: str) -> Proc:
    c = env.driver(kind, "--topic", topic, "--group", group, *extra, name=f"{kind}-{group}")
    events(c, lambda ev, _s: ev["event"] == "started", 60)
    wait_online(env, group)
    return c


def msgs(evs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in evs if e["event"] == "msg"]
