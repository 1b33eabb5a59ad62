"""What the tests of the official C++ client (PyPI ``rocketmq`` 0.4.4) share: its driver process
(``cpp_driver.py``, JSON lines), a producer run, a push ``Consumer`` that collects what it receives, the messages the
driver sends (``expected``), the ACL servers the credential tests run against, and the one-second delay levels."""

from __future__ import annotations

import contextlib
import json
import queue
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.eventually import eventually_sync
from tests.integration.acl_support import write_acl
from tests.servers import Proc, Servers, start_servers

DRIVER = Path(__file__).with_name("cpp_driver.py")
N = 1000
# every delay level 1 s, so delayed messages and retries come back in about a second
FAST_LEVELS = "messageDelayLevel=" + " ".join(["1s"] * 18) + "\n"


def driver(servers: Servers, *args: str, name: str) -> Proc:
    return Proc([sys.executable, str(DRIVER), *args, "--namesrv", servers.ns_addr], servers.tmp / f"{name}.log")


def produce(servers: Servers, topic: str, mode: str, prefix: str, count: int = N, *extra: str) -> dict[str, Any]:
    p = driver(
        servers,
        "produce",
        "--topic",
        topic,
        "--mode",
        mode,
        "--prefix",
        prefix,
        "--count",
        str(count),
        *extra,
        name=f"produce-{topic}-{prefix}",
    )
    try:
        done = json.loads(p.wait_line(lambda ln: '"event":"done"' in ln, 120))
    finally:
        p.stop()
    return done  # type: ignore[no-any-return]


class Consumer:
    def __init__(self, servers: Servers, topic: str, group: str, name: str, *extra: str) -> None:
        self.proc = driver(
            servers, "consume", "--topic", topic, "--group", group, "--instance", name, *extra, name=name
        )
        self.msgs: list[dict[str, Any]] = []
        self.failed: list[dict[str, Any]] = []
        # messages can be delivered before the driver prints "started": keep them while waiting for it
        self.proc.wait_line(lambda ln: self._take(ln) or '"event":"started"' in ln, 30)

    def _take(self, line: str) -> bool:
        """Record a message line; True for the final "stopped" line."""
        try:
            ev = json.loads(line)
        except ValueError:
            return False
        if ev.get("event") == "msg":
            self.msgs.append(ev)
        elif ev.get("event") == "failed":
            self.failed.append(ev)
        return ev.get("event") == "stopped"

    def drain(self) -> None:
        while True:
            try:
                self._take(self.proc.lines.get_nowait())
            except queue.Empty:
                return

    def collect(self) -> list[dict[str, Any]]:
        """Every message received so far (the driver's pending lines read first)."""
        self.drain()
        return self.msgs

    def stop(self) -> None:
        if self.proc.p.poll() is None:
            self.proc.p.stdin.close()  # type: ignore[union-attr]
            self.proc.wait_line(self._take, 60)
        self.proc.stop()


def received(consumers: list[Consumer]) -> set[str]:
    """The distinct keys ``consumers`` received so far (their pending lines read first)."""
    return {m["keys"] for c in consumers for m in c.collect()}


def expected(prefix: str, i: int) -> dict[str, Any]:
    return {
        "keys": f"{prefix}-key-{i}",
        "body": f"{prefix}-body-{i}",
        "tags": ("TagA", "TagB", "TagC")[i % 3],
        "props": {"seq": str(i), "origin": "cpp"},
    }


def send_every_way_then_consume(servers: Servers, topic: str, group: str) -> None:
    """N sync, N async and N oneway sends from the C++ producer all succeed, and a C++ push consumer gets every
    message exactly as sent."""
    for mode in ("sync", "async", "oneway"):
        done = produce(servers, topic, mode, mode)
        assert done["ok"] == N and done["failed"] == 0, done
    c = Consumer(servers, topic, group, group)
    try:
        eventually_sync(lambda: len(received([c])) >= 3 * N, timeout=90, what=f"{3 * N} distinct messages")
    finally:
        c.stop()
    by_key = {m["keys"]: m for m in c.msgs}
    for mode in ("sync", "async", "oneway"):
        for i in range(N):
            want = expected(mode, i)
            got = by_key[want["keys"]]
            assert (got["body"], got["tags"], got["props"], got["topic"]) == (
                want["body"],
                want["tags"],
                want["props"],
                topic,
            )


@contextlib.contextmanager
def acl_servers(tmp: Path, broker_acl: bool = True) -> Iterator[Servers]:
    """Servers whose name server has the accounts ``write_acl`` writes (and the broker too, with ``broker_acl``)."""
    home = tmp / "home"
    write_acl(home)
    with start_servers(
        tmp,
        broker_extra=f"aclEnable={str(broker_acl).lower()}\nrocketmqHome={home}\n"
        "innerAccessKey=rocketmq2\ninnerSecretKey=12345678\n",
        namesrv_extra=f"aclEnable=true\nrocketmqHome={home}\n",
    ) as s:
        yield s
