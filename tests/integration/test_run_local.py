"""``make run``'s launcher (scripts/run_local.py): options reach the servers (ports, -c file, --enable-proxy, store
and log directories), it binds 127.0.0.1 by default and says where everything is; a port that is taken fails the
start with one line naming it, before anything is started; --acl and --bind reach the merged configs."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from rocketq import Message, SendStatus
from rocketq.sync import Producer
from tests.servers import REPO, Proc, free_port, spare_port

SCRIPT = REPO / "scripts" / "run_local.py"


@pytest.fixture(scope="module")
def run_local() -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("run_local", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_local"] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules["run_local"]


def test_options_reach_the_servers(tmp_path: Path) -> None:
    ns_port = free_port()
    port = spare_port(ns_port)
    ha, grpc_port = spare_port(port), spare_port(port)
    conf = tmp_path / "broker-t.conf"
    conf.write_text(f"brokerClusterName=TestCluster\nbrokerName=broker-t\nbrokerId=0\nhaListenPort={ha}\n")
    store, logs = tmp_path / "store", tmp_path / "logs"
    args = [sys.executable, str(SCRIPT), "--namesrv-port", str(ns_port), "--broker-port", str(port), "-c", str(conf),
            "--enable-proxy", "--grpc-port", str(grpc_port), "--store-dir", str(store), "--log-dir", str(logs)]  # fmt: skip
    proc = Proc(args, tmp_path / "run_local.err")
    try:
        proc.wait_line(lambda ln: ln == "rocketq is running:", 60)
        summary = [proc.wait_line(lambda ln: True, 10) for _ in range(4)]
        assert summary[0].split()[:2] == ["namesrv", f"127.0.0.1:{ns_port}"]
        assert summary[1].split() == ["broker-t", f"127.0.0.1:{port}", "gRPC", f":{grpc_port}"]
        assert summary[2].split() == ["store", str(store / "broker-t"), "logs", str(logs / "broker-t")]
        for p in (ns_port, port, ha, grpc_port):  # all on loopback (nothing else was asked for)
            socket.create_connection(("127.0.0.1", p), timeout=5).close()
        with Producer("PG_run_local", f"127.0.0.1:{ns_port}") as producer:
            result = producer.send(Message("RunLocalT", b"hello"))
        assert result.send_status is SendStatus.SEND_OK
        assert any((store / "broker-t" / "commitlog").iterdir())
        assert (logs / "broker-t" / "broker.log").is_file() and (logs / "namesrv" / "namesrv.log").is_file()
    finally:
        assert proc.stop() == 0


def test_a_taken_port_fails_before_anything_starts(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        out = subprocess.run(
            [sys.executable, str(SCRIPT), "--namesrv-port", str(taken), "--broker-port", str(spare_port(taken))],
            cwd=REPO, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert out.returncode == 1
    assert f"run_local: port {taken} (name server listenPort) on 127.0.0.1 is in use" in out.stderr
    assert "rocketq is running" not in out.stdout and "boot success" not in out.stdout


def test_bind_acl_and_defaults_in_the_merged_configs(run_local: ModuleType, tmp_path: Path) -> None:
    args = run_local._parser().parse_args(["--brokers", "2"])
    namesrv, brokers = run_local.plan(args)
    assert namesrv.props["listenAddress"] == "127.0.0.1" and namesrv.props["listenPort"] == "9876"
    assert [(b.name, b.props["bindAddress"], b.props["brokerIP1"], b.props["listenPort"]) for b in brokers] == [
        ("broker-a", "127.0.0.1", "127.0.0.1", "10911"),
        ("broker-b", "127.0.0.1", "127.0.0.1", "11911"),
    ]
    assert [b.props["storePathRootDir"] for b in brokers] == ["~/store", "~/store-b"]
    assert brokers[1].ports == {"broker-b listenPort": 11911, "broker-b haListenPort": 11912}
    assert "kvConfigPath" not in namesrv.props  # the name server's default (~/namesrv) unless --store-dir
    namesrv, _ = run_local.plan(run_local._parser().parse_args(["--store-dir", str(tmp_path)]))
    assert namesrv.props["kvConfigPath"] == str(tmp_path / "namesrv" / "kvConfig.json")
    args = run_local._parser().parse_args(["--acl", "--bind", "0.0.0.0", "-c", str(REPO / "conf/local/broker.conf")])
    namesrv, (broker,) = run_local.plan(args)
    home = str(REPO / "conf" / "acl-example")
    assert (namesrv.props["aclEnable"], namesrv.props["rocketmqHome"]) == ("true", home)
    assert (broker.props["aclEnable"], broker.props["rocketmqHome"]) == ("true", home)
    assert broker.props["bindAddress"] == "0.0.0.0" and namesrv.props["listenAddress"] == "0.0.0.0"
    assert broker.addr == "127.0.0.1:10911"  # brokerIP1 from the file (loopback)


def test_the_slave_of_conf_local_ha_has_no_ha_port(run_local: ModuleType) -> None:
    files = ["conf/local/ha/broker-a-master.conf", "conf/local/ha/broker-a-slave.conf"]
    args = run_local._parser().parse_args([x for f in files for x in ("-c", str(REPO / f))])
    _namesrv, (master, slave) = run_local.plan(args)
    assert (master.name, slave.name) == ("broker-a", "broker-a-s1")
    assert master.ports == {"broker-a listenPort": 10911, "broker-a haListenPort": 10912}
    assert slave.ports == {"broker-a-s1 listenPort": 11911}
