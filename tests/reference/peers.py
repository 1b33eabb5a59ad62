"""The reference peers in processes: Apache RocketMQ 5.5.0 (name server, broker, proxy in cluster mode) as JVMs on
free ports in a work directory, rocketq's own servers beside it with the same settings, and the client drivers
(Java 4.x, Java 5.x, Go) as long-lived processes that take one JSON command a line and answer with JSON lines.

``make peers`` puts the jars and driver builds under ``~/.cache/rocketq/<thing>-<version>/`` (``ROCKETQ_PEERS``
overrides the folder); ``missing()`` says why a peer cannot run here, and the suite skips with that reason.

    cluster = start_apache(tmp)               # .ns_addr, .broker_addr, .grpc_endpoint; cluster.stop()
    with Driver.java4(tmp / "j4.log") as d:   # one JVM for every scenario
        events = d.run(cmd="send", ns=cluster.ns_addr, topic="T", count=3)
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import shutil
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from client.admin.admin_client import AdminClient
from tests.eventually import eventually
from tests.servers import Proc, Servers, free_port, launch, spare_port

PEERS = Path(os.environ.get("ROCKETQ_PEERS", Path.home() / ".cache" / "rocketq"))
RMQ_LIB = PEERS / "rocketmq-5.5.0" / "lib"
JAVA4 = PEERS / "java4-driver-4.9.8"
JAVA5 = PEERS / "java5-driver-5.0.8"
SPRING = PEERS / "spring-driver-2.3.1"
GODRIVER_MOD = Path(__file__).with_name("godriver") / "go.mod"
JVM_BOOT_TIMEOUT_S = 120.0

# Both clusters run with the same short delay levels (the consumers' retry backoff is level 3 + reconsumeTimes) and a
# 1 s transaction check, so the retry, DLQ and check-back scenarios finish in seconds on either.
COMMON_BROKER = (
    "messageDelayLevel=1s 2s 3s 4s 5s 6s 7s 8s 9s 10s\ntransactionTimeOut=1000\ntransactionCheckInterval=1000\n"
    "autoCreateTopicEnable=true\nautoCreateSubscriptionGroup=true\n"
)
# Apache RocketMQ's own scripts start with 4-8 GiB heaps; these are enough for a few thousand small messages. C1 only
# (TieredStopAtLevel=1) starts faster on 2 shared cores.
JVM_OPTS = [
    "-Xms128m",
    "-Xmx384m",
    "-XX:MaxDirectMemorySize=256m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:-OmitStackTraceInFastThrow",
    "-Djava.net.preferIPv4Stack=true",
]


def go_version() -> str:
    for line in GODRIVER_MOD.read_text().splitlines():
        if "apache/rocketmq-client-go/v2 " in line:
            return line.split()[-1]
    raise AssertionError(f"no rocketmq-client-go/v2 requirement in {GODRIVER_MOD}")


def go_driver() -> Path:
    return PEERS / f"go-driver-{go_version()}" / "driver"


def missing(peer: str) -> str | None:
    """Why ``peer`` ("apache", "java4", "java5", "spring", "go") cannot run here, or None."""
    if peer == "go":
        return None if go_driver().exists() else f"{go_driver()} not built (make peers; needs go)"
    if shutil.which("java") is None:
        return "java is not on PATH"
    where = {"apache": RMQ_LIB.parent, "java4": JAVA4, "java5": JAVA5, "spring": SPRING}[peer]
    return None if (where / ".stamp").exists() else f"{where} not built (make peers; needs mvn)"


def port_block(offsets: tuple[int, ...]) -> int:
    """A free port P such that P + each offset is free too (Apache RocketMQ's broker also listens on P - 2, its
    fast channel, and we give it P + 1 for HA): picked by binding, retried until one fits."""
    for _ in range(200):
        base = free_port()
        if base + min(offsets) <= 1024 or base + max(offsets) >= 65535:
            continue
        socks = []
        try:
            for off in offsets:
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", base + off))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise AssertionError("no free port block found")


@dataclass
class Apache:
    """A running Apache RocketMQ 5.5.0: name server, broker (remoting) and proxy (gRPC); stop() kills all three."""

    ns_addr: str
    broker_addr: str
    grpc_endpoint: str
    work: Path
    procs: list[Proc] = field(default_factory=list)

    def stop(self) -> None:
        for p in reversed(self.procs):
            p.stop(timeout=5)  # SIGKILL after that: nothing of theirs needs keeping


def _boot_java(
    main: str, args: list[str], work: Path, name: str, ready: str, jvm_opts: list[str] | None = None
) -> Proc:
    cp = f"{RMQ_LIB}/*"
    proc = Proc(
        [
            "java",
            *(JVM_OPTS if jvm_opts is None else jvm_opts),
            f"-Duser.home={work}",
            f"-Drocketmq.home.dir={work}",
            "-cp",
            cp,
            main,
            *args,
        ],
        work / f"{name}.log",
        env={"ROCKETMQ_HOME": str(work), "RMQ_PROXY_HOME": str(work)},
    )
    try:
        proc.wait_line(lambda ln: ready in ln, JVM_BOOT_TIMEOUT_S)
    except BaseException:
        proc.stop()
        raise
    return proc


async def _registered(ns_addr: str, cluster: str) -> None:
    """Wait until the name server lists a broker of ``cluster``: Apache RocketMQ's broker prints "boot success" before
    its first registration lands, and the proxy refuses to start without the cluster's route."""
    async with AdminClient(ns_addr) as admin:
        await eventually(
            lambda: admin.broker_addrs(cluster), timeout=JVM_BOOT_TIMEOUT_S, what=f"{cluster} at {ns_addr}", step=0.2
        )


async def _routed(ns_addr: str, topic: str) -> None:
    async def has_route() -> bool:
        try:
            route, _ = await admin.topic_route(topic)
        except Exception:
            return False
        return bool(route.queues)

    async with AdminClient(ns_addr) as admin:
        await eventually(has_route, timeout=30, what=f"a route of {topic} at {ns_addr}", step=0.1)


def wait_route(ns_addr: str, topic: str) -> None:
    """Wait until the name server ``ns_addr`` has a route of ``topic``."""
    asyncio.run(_routed(ns_addr, topic))


def start_apache(
    work: Path,
    broker_extra: str = "",
    *,
    cluster_name: str = "RefCluster",
    jvm_opts: list[str] | None = None,
    proxy: bool = True,
) -> Apache:
    """Apache RocketMQ 5.5.0 in ``work``: each process waited for on its "boot success"/"startup successfully" line
    (``cluster_name``: the broker's cluster; ``jvm_opts``: instead of ``JVM_OPTS``; ``proxy``: False leaves the gRPC proxy out, ``grpc_endpoint`` empty).
    A port taken between choosing it and the JVM binding it (another server starting beside it on a busy machine)
    means new ports and another try."""
    for attempt in range(3):
        try:
            return _start_apache(work, broker_extra, cluster_name, JVM_OPTS if jvm_opts is None else jvm_opts, proxy)
        except AssertionError:
            logs = [f.read_text(errors="replace") for f in work.glob("*.log")]
            if attempt == 2 or not any("Address already in use" in text for text in logs):
                raise
    raise AssertionError("not reached")


def _start_apache(work: Path, broker_extra: str, cluster_name: str, opts: list[str], proxy: bool) -> Apache:
    work.mkdir(parents=True, exist_ok=True)
    ns_port = free_port()
    (work / "namesrv.conf").write_text(f"listenPort={ns_port}\n")
    ns_addr = f"127.0.0.1:{ns_port}"
    cluster = Apache(ns_addr, "", "", work)
    try:
        cluster.procs.append(
            _boot_java(
                "org.apache.rocketmq.namesrv.NamesrvStartup",
                ["-c", str(work / "namesrv.conf")],
                work,
                "namesrv",
                "boot success",
                opts,
            )
        )
        port = port_block((-2, 0, 1))
        (work / "broker.conf").write_text(
            f"brokerClusterName={cluster_name}\nbrokerName=broker-a\nbrokerId=0\nbrokerIP1=127.0.0.1\n"
            f"listenPort={port}\nhaListenPort={port + 1}\nnamesrvAddr={ns_addr}\n"
            f"storePathRootDir={work}/store\nstorePathCommitLog={work}/store/commitlog\n"
            f"mappedFileSizeCommitLog=67108864\ntimerWheelEnable=true\n{COMMON_BROKER}{broker_extra}"
        )
        cluster.broker_addr = f"127.0.0.1:{port}"
        cluster.procs.append(
            _boot_java(
                "org.apache.rocketmq.broker.BrokerStartup",
                ["-c", str(work / "broker.conf")],
                work,
                "broker",
                "boot success",
                opts,
            )
        )
        asyncio.run(_registered(ns_addr, cluster_name))
        if not proxy:
            return cluster
        grpc_port, remoting_port = free_port(), free_port()
        (work / "rmq-proxy.json").write_text(
            json.dumps(
                {
                    "rocketMQClusterName": cluster_name,
                    "namesrvAddr": ns_addr,
                    "grpcServerPort": grpc_port,
                    "remotingListenPort": remoting_port,
                    # the proxy names the transactional producer groups it serves to the broker by a heartbeat,
                    # every 20 s by default; until then the broker's check-back finds no producer and drops the
                    # check, counting it. COMMON_BROKER checks every 1 s, so a half message's 15 checks ran out
                    # before a 20 s tick in about 1 run in 8 (test_java5_client's check-back scenario). 1 s keeps
                    # the production ratio (20 s ticks against 60 s checks).
                    "transactionHeartbeatPeriodSecond": 1,
                }
            )
        )
        cluster.grpc_endpoint = f"127.0.0.1:{grpc_port}"
        cluster.procs.append(
            _boot_java(
                "org.apache.rocketmq.proxy.ProxyStartup",
                ["-pc", str(work / "rmq-proxy.json"), "-pm", "cluster"],
                work,
                "proxy",
                "startup successfully",
                opts,
            )
        )
    except BaseException:
        cluster.stop()
        raise
    return cluster


def start_rocketq(work: Path, broker_extra: str = "") -> tuple[Servers, str]:
    """rocketq's name server and broker (with its gRPC endpoint) in subprocesses, configured like ``start_apache``;
    the servers and the gRPC endpoint."""
    grpc_port = free_port()
    servers = launch(
        work,
        cluster="RefCluster",
        broker_extra=f"grpcServerPort={grpc_port}\n{COMMON_BROKER}{broker_extra}",
        broker_args=("--enable-proxy",),
    )
    return servers, f"127.0.0.1:{grpc_port}"


def mqadmin(ns_addr: str, work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Apache RocketMQ 5.5.0's own mqadmin (``MQAdminStartup``) against the name server ``ns_addr``."""
    work.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [
            "java",
            "-Xms32m",
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            f"-Duser.home={work}",
            f"-Drocketmq.home.dir={work}",
            "-cp",
            f"{RMQ_LIB}/*",
            "org.apache.rocketmq.tools.command.MQAdminStartup",
            *args,
            "-n",
            ns_addr,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ROCKETMQ_HOME": str(work)},
    )


class Driver:
    """A client driver process: ``run(**command)`` writes one JSON line and returns the events it answered with,
    up to (not including) its ``{"event":"done"}``. Lines that are not JSON objects with an "event" (a client's own
    logging) are ignored."""

    def __init__(self, args: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.log = log
        self._err = open(log, "wb")  # noqa: SIM115 - closed in close()
        self.p = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            text=True,
            env={**os.environ, **(env or {})},
        )
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.lock = threading.Lock()
        first = self._next(JVM_BOOT_TIMEOUT_S)
        assert first.get("event") == "ready", first

    @classmethod
    def java(cls, home: Path, main: str, log: Path, jvm_opts: list[str] | None = None) -> Driver:
        """``jvm_opts``: instead of the small, C1-only heap the tests use (which starts fastest)."""
        work = log.parent / (log.stem + "-home")
        work.mkdir(parents=True, exist_ok=True)
        cp = f"{home}/classes:{home}/lib/*"
        small = ["-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
        opts = [*(small if jvm_opts is None else jvm_opts), f"-Duser.home={work}"]
        props = [f"-Drocketmq.client.logRoot={work}/logs", "-Drocketmq.client.logLevel=WARN"]
        return cls(["java", *opts, *props, "-cp", cp, main], log)

    @classmethod
    def java4(cls, log: Path) -> Driver:
        return cls.java(JAVA4, "rocketq.ref.Driver4", log)

    @classmethod
    def java5(cls, log: Path, jvm_opts: list[str] | None = None) -> Driver:
        return cls.java(JAVA5, "rocketq.ref.Driver5", log, jvm_opts)

    @classmethod
    def go(cls, log: Path) -> Driver:
        return cls([str(go_driver())], log, {"HOME": str(log.parent)})

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and "event" in event:
                self.events.put(event)

    def _next(self, timeout: float) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while True:
            try:
                return self.events.get(timeout=min(1.0, max(0.01, end - time.monotonic())))
            except queue.Empty:
                if self.p.poll() is not None:
                    raise AssertionError(
                        f"driver {self.p.args[-1]} exited {self.p.returncode}; see {self.log}"
                    ) from None
                if time.monotonic() > end:
                    raise AssertionError(f"driver {self.p.args[-1]} silent for {timeout}s; see {self.log}") from None

    def run(self, timeout: float = 120.0, **command: Any) -> list[dict[str, Any]]:
        with self.lock:
            assert self.p.stdin is not None
            self.p.stdin.write(json.dumps(command) + "\n")
            self.p.stdin.flush()
            out: list[dict[str, Any]] = []
            while (event := self._next(timeout))["event"] != "done":
                out.append(event)
            return out

    def close(self) -> None:
        if self.p.stdin is not None and not self.p.stdin.closed:
            self.p.stdin.close()
        try:
            self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self._reader.join(10)
        if self.p.stdout is not None:
            self.p.stdout.close()
        self._err.close()

    def __enter__(self) -> Driver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class ApacheController:
    """Apache RocketMQ 5.5.0's name server with its controller embedded (``enableControllerInNamesrv=true``, one
    DLedger peer): brokers register routes at ``ns_addr`` and talk to the controller at ``controller_addr`` (the
    DLedger port, where J's controller serves its request codes)."""

    ns_addr: str
    controller_addr: str
    proc: Proc

    def stop(self) -> None:
        self.proc.stop(timeout=5)


def start_apache_controller(work: Path, extra: str = "") -> ApacheController:
    work.mkdir(parents=True, exist_ok=True)
    ns_port = free_port()
    ctl_port = spare_port(ns_port)
    (work / "namesrv.conf").write_text(
        f"listenPort={ns_port}\nenableControllerInNamesrv=true\ncontrollerDLegerGroup=group1\n"
        f"controllerDLegerPeers=n0-127.0.0.1:{ctl_port}\ncontrollerDLegerSelfId=n0\n"
        f"controllerStorePath={work}/controller\nscanNotActiveBrokerInterval=1000\n{extra}"
    )
    proc = _boot_java(
        "org.apache.rocketmq.namesrv.NamesrvStartup",
        ["-c", str(work / "namesrv.conf")],
        work,
        "namesrv-controller",
        "ControllerManager boot success",
    )
    return ApacheController(f"127.0.0.1:{ns_port}", f"127.0.0.1:{ctl_port}", proc)
