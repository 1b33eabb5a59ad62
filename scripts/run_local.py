"""``make run``: a local name server and broker(s) in the foreground, on 127.0.0.1 unless told otherwise.

    python scripts/run_local.py [--namesrv-port 9876] [--broker-port 10911] [--bind 127.0.0.1]
                                [--enable-proxy [--grpc-port 8081]] [--acl [DIR]] [-c broker.conf ...]
                                [--namesrv-config namesrv.conf] [--brokers 2] [--store-dir DIR] [--log-dir DIR]

(``make run ARGS="..."`` passes these through.) Each ``-c FILE`` is one broker process (``-c a.conf -c b.conf``: two
brokers, e.g. ``conf/local/2m-noslave/`` or the master and slave of ``conf/local/ha/``); ``--brokers 2`` without
files adds broker-b on 11911. A flag given on the command line overrides the file; the launcher's own defaults
(bind address, ports, store and log directories) fill in only what the file leaves out:

===================== ============================== =================================================================
flag                  broker / name server keys      default when neither the flag nor the file sets it
===================== ============================== =================================================================
--bind                bindAddress, brokerIP1 /       127.0.0.1 (so nothing listens beyond this host)
                      listenAddress
--namesrv-port        listenPort (name server)       9876
--broker-port         listenPort (first broker)      10911 (broker-b: 11911)
--enable-proxy        enableProxy                    off
--grpc-port           grpcServerPort (first broker)  8081 (later brokers: +1 each)
--acl [DIR]           aclEnable, rocketmqHome        off; DIR defaults to conf/acl-example (its conf/plain_acl.yml)
--store-dir DIR       storePathRootDir /             ~/store (broker-b: ~/store-b); with DIR: DIR/<brokerName>[-s<id>]
                      kvConfigPath, configStorePath  ~/namesrv/...; with DIR: DIR/namesrv/...
--log-dir DIR         logDir                         ~/logs/rocketmqlogs/{namesrv,<brokerName>[-s<id>]}
===================== ============================== =================================================================

Before starting anything it checks that every port it will listen on (name server, each broker's listenPort, a
master's haListenPort, grpcServerPort, metricsPromExporterPort) is free on the bind address, and fails with one line
naming the port if not. The merged config files go to a temporary directory (removed at exit). Children run in their
own process groups, so a terminal's Ctrl-C reaches only this launcher; SIGINT/SIGTERM are forwarded as SIGTERM to the
brokers first (they unregister), then the name server. If a child exits on its own, the others are stopped too and
the launcher exits with that child's status.
"""

from __future__ import annotations

import argparse
import errno
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import javaproperties

START_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0
DEFAULT_BIND = "127.0.0.1"
DEFAULT_ACL_HOME = str(Path(__file__).resolve().parents[1] / "conf" / "acl-example")
DEFAULT_LOG_ROOT = "~/logs/rocketmqlogs"


class Child:
    """One server process, started in its own process group."""

    def __init__(self, name: str, argv: Sequence[str]) -> None:
        self.name = name
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, process_group=0)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def exit_status(self) -> int:
        """The child's status as a shell would report it (128 + N when killed by signal N), never 0."""
        rc = self.proc.returncode
        return 128 - rc if rc < 0 else rc or 1

    def stop(self) -> int:
        """SIGTERM, wait for the clean shutdown, SIGKILL as a last resort; returns the exit status."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                print(f"run_local: {self.name} did not stop in {STOP_TIMEOUT:.0f}s, killing it", file=sys.stderr)
                self.proc.kill()
        return self.proc.wait()


@dataclass
class Server:
    """One process to start: its name, merged config, and the ports it will listen on (name → port)."""

    name: str
    props: dict[str, str]
    ports: dict[str, int] = field(default_factory=dict)
    conf: Path | None = None

    @property
    def host(self) -> str:
        return self.props.get("bindAddress") or self.props.get("listenAddress") or "0.0.0.0"

    @property
    def port(self) -> int:
        return int(self.props["listenPort"])

    @property
    def addr(self) -> str:
        """Where clients connect: brokerIP1 for a broker, else the bind address (loopback for a wildcard)."""
        host = self.props.get("brokerIP1") or self.host
        return f"{DEFAULT_BIND if host in ('0.0.0.0', '::') else host}:{self.port}"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="make run ARGS=...",
        description=__doc__.splitlines()[0] if __doc__ else None,
        epilog="Each flag overrides the config file; see the table at the top of scripts/run_local.py.",
    )
    p.add_argument("--bind", metavar="HOST", help=f"address to listen on (default {DEFAULT_BIND})")
    p.add_argument("--namesrv-port", type=int, metavar="PORT", help="name server port (default 9876)")
    p.add_argument("--broker-port", type=int, metavar="PORT", help="first broker's port (default 10911)")
    p.add_argument("--enable-proxy", action="store_true", help="serve RocketMQ 5 gRPC clients too (needs [grpc])")
    p.add_argument("--grpc-port", type=int, metavar="PORT", help="first broker's gRPC port (default 8081)")
    p.add_argument(
        "--acl", nargs="?", const=DEFAULT_ACL_HOME, metavar="DIR",
        help="aclEnable=true with rocketmqHome=DIR (default conf/acl-example: accounts in DIR/conf/plain_acl.yml)",
    )  # fmt: skip
    p.add_argument(
        "-c", "--broker-config", action="append", default=[], metavar="FILE",
        help="a broker.conf; once per broker process (repeat for several)",
    )  # fmt: skip
    p.add_argument("--namesrv-config", metavar="FILE", help="the name server's config file")
    p.add_argument("--brokers", type=int, choices=(1, 2), default=1, help="broker processes without -c (default 1)")
    p.add_argument("--store-dir", metavar="DIR", help="stores go to DIR/<brokerName> (default ~/store, ~/store-b)")
    p.add_argument("--log-dir", metavar="DIR", help=f"log files go under DIR (default {DEFAULT_LOG_ROOT})")
    return p


def _load(path: str | None) -> dict[str, str]:
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            return dict(javaproperties.load(f))
    except OSError as exc:
        raise SystemExit(f"run_local: cannot read config file {path}: {exc.strerror}") from None


def _set(props: dict[str, str], key: str, flag: object, default: object) -> None:
    """``key`` = the flag when given, else what the file says, else ``default`` (None: leave it unset)."""
    if flag is not None:
        props[key] = str(flag)
    elif key not in props and default is not None:
        props[key] = str(default)


def plan(args: argparse.Namespace) -> tuple[Server, list[Server]]:
    """The name server and brokers to start, with their merged configs and the ports each will bind."""
    log_root = Path(args.log_dir or DEFAULT_LOG_ROOT).expanduser()
    ns = _load(args.namesrv_config)
    _set(ns, "listenAddress", args.bind, DEFAULT_BIND)
    _set(ns, "listenPort", args.namesrv_port, 9876)
    _set(ns, "logDir", log_root / "namesrv" if args.log_dir else None, log_root / "namesrv")
    ns_dir = Path(args.store_dir) / "namesrv" if args.store_dir else None
    _set(ns, "kvConfigPath", ns_dir and ns_dir / "kvConfig.json", None)
    _set(ns, "configStorePath", ns_dir and ns_dir / "namesrv.properties", None)
    if args.acl:
        ns["aclEnable"], ns["rocketmqHome"] = "true", str(Path(args.acl).resolve())
    namesrv = Server("namesrv", ns, {"name server listenPort": int(ns["listenPort"])})
    _metrics_port(namesrv)

    files: list[str | None] = list(args.broker_config) or [None] * args.brokers
    brokers: list[Server] = []
    for i, path in enumerate(files):
        props = _load(path)
        if path is None:
            props.update(brokerClusterName="DefaultCluster", brokerName=f"broker-{'ab'[i]}", brokerId="0")
            props["autoCreateTopicEnable"] = "true"
        name = props.get("brokerName", "broker-a")
        slave = props.get("brokerRole", "").upper() == "SLAVE" or int(props.get("brokerId", "0")) > 0
        label = f"{name}-s{props.get('brokerId', '1')}" if slave else name
        _set(props, "bindAddress", args.bind, DEFAULT_BIND)
        specific = None if props["bindAddress"] in ("0.0.0.0", "::") else props["bindAddress"]
        _set(props, "brokerIP1", specific if args.bind else None, specific)  # the address clients are told
        _set(props, "listenPort", args.broker_port if i == 0 else None, 10911 + 1000 * i)
        store_default = f"~/store{'-' + 'abcdefgh'[i] if i else ''}" if path is None else None
        _set(props, "storePathRootDir", Path(args.store_dir) / label if args.store_dir else None, store_default)
        _set(props, "logDir", log_root / label if args.log_dir else None, log_root / label)
        if args.enable_proxy:
            props["enableProxy"] = "true"
        if props.get("enableProxy", "false").lower() == "true":
            _set(props, "grpcServerPort", args.grpc_port + i if args.grpc_port is not None else None, 8081 + i)
        if args.acl:
            props["aclEnable"], props["rocketmqHome"] = "true", str(Path(args.acl).resolve())
        broker = Server(label, props, {f"{label} listenPort": int(props["listenPort"])})
        if not slave:
            broker.ports[f"{label} haListenPort"] = int(props.get("haListenPort") or int(props["listenPort"]) + 1)
        if "grpcServerPort" in props:
            broker.ports[f"{label} grpcServerPort"] = int(props["grpcServerPort"])
        _metrics_port(broker)
        brokers.append(broker)
    return namesrv, brokers


def _metrics_port(server: Server) -> None:
    if server.props.get("metricsExporterType", "").upper() in ("PROM", "2"):
        default = 5558 if server.name == "namesrv" else 5557
        server.ports[f"{server.name} metricsPromExporterPort"] = int(
            server.props.get("metricsPromExporterPort", default)
        )


def port_in_use(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be bound now (None when it can); port 0 always can."""
    if port == 0:
        return None
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers do: TIME_WAIT is no conflict
        try:
            s.bind((host, port))
        except OSError as exc:
            return "in use" if exc.errno == errno.EADDRINUSE else exc.strerror or str(exc)
    return None


def check_ports(servers: Sequence[Server]) -> list[str]:
    """One line per port that is taken (or named twice)."""
    problems: list[str] = []
    seen: dict[int, str] = {}
    for server in servers:
        for what, port in server.ports.items():
            if port in seen:
                problems.append(f"port {port} is set for both {seen[port]} and {what}")
                continue
            seen[port] = what
            why = port_in_use(server.host, port)
            if why is not None:
                problems.append(f"port {port} ({what}) on {server.host} is {why}")
    return problems


def _wait_listening(child: Child, server: Server, stopping: list[int]) -> bool:
    """True once every port of ``server`` accepts a connection (the gRPC endpoint and metrics start after the
    remoting port); False if the child died, a signal arrived or time ran out."""
    host = server.host
    target = "127.0.0.1" if host in ("0.0.0.0", "") else "::1" if host == "::" else host
    waiting = [port for port in server.ports.values() if port]
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and child.alive() and not stopping:
        try:
            with socket.create_connection((target, waiting[0]), timeout=0.5):
                waiting.pop(0)
            if not waiting:
                return child.alive()
        except OSError:
            time.sleep(0.1)
    return False


def _write_conf(server: Server, run_dir: Path) -> Path:
    path = run_dir / f"{server.name}.conf"
    with path.open("w", encoding="utf-8") as f:
        javaproperties.dump(server.props, f, timestamp=False)
    server.conf = path
    return path


def _summary(namesrv: Server, brokers: Sequence[Server], run_dir: Path) -> str:
    ns_addr = namesrv.addr
    lines = [
        "",
        "rocketq is running:",
        f"  namesrv  {ns_addr}   logs {Path(namesrv.props['logDir']).expanduser().absolute()}",
    ]
    for b in brokers:
        extra = f"   gRPC :{b.props['grpcServerPort']}" if "grpcServerPort" in b.props else ""
        acl = "   ACL on" if b.props.get("aclEnable") == "true" else ""
        store = b.props.get("storePathRootDir", "~/store")
        lines.append(f"  {b.name:<8} {b.addr}{extra}{acl}")
        lines.append(
            f"           store {Path(store).expanduser().absolute()}   logs {Path(b.props['logDir']).expanduser().absolute()}"
        )
    lines += [
        f"  configs  {run_dir} (merged; removed at exit)",
        f"export NAMESRV_ADDR={ns_addr}   (mqadmin and the clients read it; `source .venv/bin/activate` puts mqadmin"
        " on PATH)",
        "Ctrl-C stops them all.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    namesrv, brokers = plan(args)
    problems = check_ports([namesrv, *brokers])
    if problems:
        for line in problems:
            print(f"run_local: {line}", file=sys.stderr)
        print(
            "run_local: nothing started; stop what holds the port or pick others (make run ARGS=--help)",
            file=sys.stderr,
        )
        return 1
    stopping: list[int] = []

    def _on_signal(signum: int, _frame: FrameType | None) -> None:
        stopping.append(signum)

    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)

    run_dir = Path(tempfile.mkdtemp(prefix="rocketq-run-"))
    children: list[Child] = []
    status = 0
    try:
        child = Child("namesrv", [sys.executable, "-m", "namesrv", "-c", str(_write_conf(namesrv, run_dir))])
        children.append(child)
        if not _wait_listening(child, namesrv, stopping):
            return _startup_failed(child, stopping, f"name server did not listen on {namesrv.addr}")
        for b in brokers:
            argv = [sys.executable, "-m", "broker", "-n", namesrv.addr, "-c", str(_write_conf(b, run_dir))]
            child = Child(b.name, argv)
            children.append(child)
            if not _wait_listening(child, b, stopping):
                return _startup_failed(child, stopping, f"{b.name} did not listen on {b.addr}")
        print(_summary(namesrv, brokers, run_dir), flush=True)
        while not stopping:
            dead = next((c for c in children if not c.alive()), None)
            if dead is not None:
                status = dead.exit_status()
                print(f"run_local: {dead.name} exited with status {dead.proc.returncode}", file=sys.stderr)
                break
            time.sleep(0.2)
    finally:
        # Reverse start order: the brokers unregister from a name server that is still up.
        for child in reversed(children):
            child.stop()
        shutil.rmtree(run_dir, ignore_errors=True)
    return status


def _startup_failed(child: Child, stopping: list[int], reason: str) -> int:
    if stopping:
        return 0
    if child.alive():
        print(f"run_local: {reason} within {START_TIMEOUT:.0f}s", file=sys.stderr)
        return 1
    print(f"run_local: {child.name} exited with status {child.proc.returncode}", file=sys.stderr)
    return child.exit_status()


if __name__ == "__main__":
    sys.exit(main())
