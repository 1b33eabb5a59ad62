"""Servers in subprocesses, for the suites whose clients cannot share the test's event loop (the official clients
in ``tests/compat``, Spark's Python workers in ``tests/spark``): ``python -m namesrv`` and ``python -m broker`` on
free ports, config files under a work directory, each waited for on its "boot success" stdout line.

    with start_servers(tmp, broker_extra="aclEnable=true\\n") as s:   # stopped cleanly (exit 0) on the way out
        ...  # s.ns_addr, s.broker_addr, s.tmp
    s = launch(work, cluster="SparkCluster")  # the same, stopped by s.stop(); s.stop_broker() / s.start_broker()
    b = add_broker(s.ns_addr, work / "b", cluster="SparkCluster", broker_name="broker-b")  # a second broker group
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BOOT_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spare_port(taken: int, text: str = "") -> int:
    """A free port other than ``taken`` and not named in ``text``. For the broker's HA listener: not listenPort + 1
    (nothing reserved it), and not 0 either: the HA listener binds before the gRPC endpoint, and an ephemeral port
    can be the one the test picked for that."""
    while True:
        port = free_port()
        if port != taken and str(port) not in text:
            return port


def free_port_pair() -> int:
    """A port p such that p and p - 2 are both free now: a broker's listenPort whose fast (VIP) port, listenPort - 2,
    is free too (clients such as the RocketMQ Dashboard dial that one)."""
    for _ in range(100):
        p = free_port()
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("127.0.0.1", p))
                b.bind(("127.0.0.1", p - 2))
                return p
        except OSError:
            continue
    raise AssertionError("no free port pair")


class Proc:
    """A child process whose stdout lines are collected by a reader thread; stderr goes to ``log``; ``env`` is added
    to this process's environment."""

    def __init__(self, args: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.log = log
        self._err = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self.p = subprocess.Popen(
            args,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=self._err,
            stdin=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1", **(env or {})},
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_line(self, pred: Callable[[str], bool], deadline: float) -> str:
        end = time.monotonic() + deadline
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching line from {self.p.args} within {deadline}s; see {self.log}")
            try:
                line = self.lines.get(timeout=min(left, 1.0))
            except queue.Empty:
                if self.p.poll() is not None:
                    raise AssertionError(f"{self.p.args} exited {self.p.returncode}; see {self.log}") from None
                continue
            if pred(line):
                return line

    def stop(self, timeout: float = 30) -> int:
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self._err.close()
        self._reader.join(10)  # EOF once the child is gone; then the pipes can be closed (no ResourceWarning)
        for pipe in (self.p.stdin, self.p.stdout):
            if pipe is not None and not pipe.closed and not (pipe is self.p.stdout and self._reader.is_alive()):
                pipe.close()
        return self.p.returncode


def _boot(args: list[str], log: Path) -> Proc:
    proc = Proc([sys.executable, "-m", *args], log)
    try:
        proc.wait_line(lambda ln: "boot success" in ln, BOOT_TIMEOUT_S)
    except BaseException:
        proc.stop()
        raise
    return proc


@dataclass
class Servers:
    """A running name server and broker; ``procs`` is [name server, broker]."""

    ns_addr: str
    broker_addr: str
    tmp: Path
    procs: list[Proc] = field(default_factory=list)
    broker_name: str = "broker-a"
    broker_args: tuple[str, ...] = ()

    @property
    def namesrv_addr(self) -> str:
        return self.ns_addr

    def _broker_cmd(self) -> list[str]:
        return ["broker", "-c", str(self.tmp / "broker.conf"), "-n", self.ns_addr, *self.broker_args]

    def stop_broker(self) -> int:
        """Stop the broker (SIGTERM: it unregisters and flushes its store); its exit status."""
        return self.procs.pop().stop()

    def start_broker(self, log_name: str = "broker-restarted.log") -> None:
        """Start the broker again on the same port, store and config file, and wait until it says it is up."""
        self.procs.append(_boot(self._broker_cmd(), self.tmp / log_name))

    def stop(self) -> list[int]:
        """Stop every server, the broker first; their exit statuses in that order."""
        return [p.stop() for p in reversed(self.procs)]


def _write_broker_conf(tmp: Path, cluster: str, broker_name: str, broker_extra: str, listen_port: int = 0) -> int:
    """Write ``tmp/broker.conf`` for a broker on ``listen_port`` (0: a free port), its store under ``tmp``; return
    that port."""
    br_port = listen_port or free_port()
    (tmp / "broker.conf").write_text(
        f"brokerClusterName={cluster}\nbrokerName={broker_name}\nbrokerIP1=127.0.0.1\nbindAddress=127.0.0.1\n"
        f"listenPort={br_port}\nstorePathRootDir={tmp}/store\nmappedFileSizeCommitLog=67108864\n{broker_extra}"
        + ("" if "haListenPort" in broker_extra else f"haListenPort={spare_port(br_port, broker_extra)}\n")
    )
    return br_port


def add_broker(ns_addr: str, tmp: Path, *, cluster: str, broker_name: str, broker_extra: str = "") -> Servers:
    """One more broker (its own group ``broker_name``, files under ``tmp``) registered with the running name server
    ``ns_addr``; the returned ``Servers`` holds only that broker (``stop()`` stops it, not the name server)."""
    tmp.mkdir(parents=True, exist_ok=True)
    br_port = _write_broker_conf(tmp, cluster, broker_name, broker_extra)
    s = Servers(ns_addr, f"127.0.0.1:{br_port}", tmp, [], broker_name)
    s.start_broker("broker.log")
    return s


def launch(
    tmp: Path,
    *,
    cluster: str = "CompatCluster",
    broker_name: str = "broker-a",
    namesrv_extra: str = "",
    broker_extra: str = "",
    broker_args: tuple[str, ...] = (),
    listen_port: int = 0,
) -> Servers:
    """Write ``namesrv.conf`` and ``broker.conf`` under ``tmp`` (the extras appended) and start both servers on
    free ports (the broker on ``listen_port`` when given); if the broker does not come up the name server is
    stopped again."""
    tmp.mkdir(parents=True, exist_ok=True)
    ns_port = free_port()
    (tmp / "namesrv.conf").write_text(
        f"listenPort={ns_port}\nlistenAddress=127.0.0.1\nkvConfigPath={tmp}/namesrv/kv.json\n"
        f"configStorePath={tmp}/namesrv/namesrv.properties\n{namesrv_extra}"
    )
    br_port = _write_broker_conf(tmp, cluster, broker_name, broker_extra, listen_port)
    s = Servers(f"127.0.0.1:{ns_port}", f"127.0.0.1:{br_port}", tmp, [], broker_name, broker_args)
    s.procs.append(_boot(["namesrv", "-c", str(tmp / "namesrv.conf")], tmp / "namesrv.log"))
    try:
        s.start_broker("broker.log")
    except BaseException:
        s.stop()
        raise
    return s


@contextlib.contextmanager
def start_servers(
    tmp: Path, broker_extra: str = "", broker_args: tuple[str, ...] = (), namesrv_extra: str = ""
) -> Iterator[Servers]:
    """``launch`` as a context manager whose exit asserts that every server stopped cleanly (exit status 0)."""
    s = launch(tmp, namesrv_extra=namesrv_extra, broker_extra=broker_extra, broker_args=broker_args)
    try:
        yield s
    finally:
        for p in reversed(s.procs):
            assert p.stop() == 0, f"server did not stop cleanly; see {p.log}"
