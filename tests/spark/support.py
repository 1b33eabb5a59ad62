"""Helpers of the Spark suite: servers in subprocesses, producing test messages and reading them back.

Spark runs ``read()``/``write()`` in Python worker processes that dial the broker over TCP, so the servers cannot
live in the test's event loop: they run as ``python -m namesrv`` / ``python -m broker`` subprocesses on free ports
(bind port 0, release, pass it on), each waited for on its "boot success" stdout line.
"""

from __future__ import annotations

import asyncio
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOOT_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    name: str
    proc: subprocess.Popen[str]
    addr: str
    lines: list[str]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_server(name: str, args: list[str], port: int, workdir: Path, ready: str) -> Server:
    """Start ``python -m <args>`` and wait (event-driven, on its stdout) for the line containing ``ready``."""
    log_path = workdir / f"{name}.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    lines: list[str] = []
    seen: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:  # keep draining the pipe for the whole session, so the server never blocks on a full pipe
        assert proc.stdout is not None
        with open(log_path, "w") as log:
            for line in proc.stdout:
                lines.append(line)
                log.write(line)
                log.flush()
                seen.put(line)
        seen.put(None)

    threading.Thread(target=pump, name=f"{name}-stdout", daemon=True).start()
    while True:
        try:
            line = seen.get(timeout=BOOT_TIMEOUT_S)
        except queue.Empty:
            proc.kill()
            raise RuntimeError(f"{name} did not start within {BOOT_TIMEOUT_S}s:\n{''.join(lines)}") from None
        if line is None:
            raise RuntimeError(f"{name} exited with {proc.wait()} before it was ready:\n{''.join(lines)}")
        if ready in line:
            return Server(name, proc, f"127.0.0.1:{port}", lines)


@dataclass
class Cluster:
    namesrv: Server
    broker: Server
    broker_name: str

    @property
    def namesrv_addr(self) -> str:
        return self.namesrv.addr


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
            deadline = asyncio.get_running_loop().time() + timeout_s
            while len(got) < expected and asyncio.get_running_loop().time() < deadline:
                for m in await consumer.poll(timeout=1.0):
                    keys = " ".join(m.keys) if isinstance(m.keys, list | tuple) else m.keys
                    got.append(Received(bytes(m.body), m.tags, keys or None, dict(m.properties)))
        return got

    return asyncio.run(read())


def wait_for_clock_tick() -> None:
    """Return once the wall clock (ms) moved past the current millisecond, so later store timestamps are larger."""
    start = time.time_ns() // 1_000_000
    while time.time_ns() // 1_000_000 <= start + 1:
        time.sleep(0.001)
