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
    workdir: Path | None = None

    @property
    def namesrv_addr(self) -> str:
        return self.namesrv.addr

    def broker_args(self) -> list[str]:
        assert self.workdir is not None
        return ["broker", "-n", self.namesrv_addr, "-c", str(self.workdir / "broker.conf")]

    def stop_broker(self) -> None:
        """Stop the broker (SIGTERM: it unregisters and flushes its store)."""
        self.broker.stop()

    def start_broker(self) -> None:
        """Start the broker again on the same port and store, and wait until it says it is up."""
        assert self.workdir is not None
        port = int(self.broker.addr.rsplit(":", 1)[1])
        self.broker = start_server("broker", self.broker_args(), port, self.workdir, "boot success")

    def stop(self) -> None:
        self.broker.stop()
        self.namesrv.stop()


def start_cluster(work: Path, broker_name: str = "broker-a", broker_extra: str = "") -> Cluster:
    """A name server and one broker (auto-create topics with 4 queues) on free ports, files under ``work``;
    ``broker_extra`` is appended to the broker's config file."""
    work.mkdir(parents=True, exist_ok=True)
    ns_port, broker_port = free_port(), free_port()
    (work / "namesrv.conf").write_text(
        f"listenPort={ns_port}\nlistenAddress=127.0.0.1\n"
        f"kvConfigPath={work}/namesrv/kvConfig.json\nconfigStorePath={work}/namesrv/namesrv.properties\n"
    )
    (work / "broker.conf").write_text(
        f"brokerClusterName=SparkCluster\nbrokerName={broker_name}\nbrokerId=0\nbrokerIP1=127.0.0.1\n"
        f"bindAddress=127.0.0.1\nlistenPort={broker_port}\nstorePathRootDir={work}/store\n"
        "mappedFileSizeCommitLog=67108864\nautoCreateTopicEnable=true\ndefaultTopicQueueNums=4\n"
        "maxTransferCountOnMessageInMemory=1024\nmaxTransferBytesOnMessageInMemory=4194304\nmaxMessageSize=262144\n"
        "haListenPort=0\n" + broker_extra  # HA would bind listenPort + 1, which free_port() did not reserve
    )
    ns = start_server("namesrv", ["namesrv", "-c", str(work / "namesrv.conf")], ns_port, work, "boot success")
    cluster = Cluster(ns, ns, broker_name, work)
    try:
        cluster.broker = start_server("broker", cluster.broker_args(), broker_port, work, "boot success")
    except BaseException:
        ns.stop()
        raise
    return cluster


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


def group_offsets(cluster: Cluster, group: str, topic: str) -> dict[int, tuple[int | None, int]]:
    """``{queueId: (the group's committed offset or None, the queue's max offset)}`` as the broker reports them."""
    from client import PullConsumer

    async def look() -> dict[int, tuple[int | None, int]]:
        async with PullConsumer(group, namesrv_addr=cluster.namesrv_addr) as consumer:
            out = {}
            for mq in await consumer.fetch_subscribe_queues(topic):
                out[mq.queue_id] = (await consumer.committed(mq), await consumer.max_offset(mq))
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
