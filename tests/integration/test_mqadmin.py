"""``mqadmin`` as a user runs it (a subprocess) against in-process servers: output shapes and exit codes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from client import Message, Producer
from tests.harness import run_broker, run_namesrv

REPO = Path(__file__).resolve().parents[2]


async def mqadmin(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client.admin", *args, cwd=str(REPO), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = await proc.communicate()
    return proc.returncode or 0, out.decode(), err.decode()


async def test_cluster_and_topic_listing(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        async with Producer("pg", namesrv_addr=ns.addr) as p:
            await p.send(Message("AdminTopic", b"x"))
        rc, out, _ = await mqadmin("clusterList", "-n", ns.addr)
        assert rc == 0
        assert "#Cluster Name" in out and "DefaultCluster" in out and broker.addr in out
        rc, out, _ = await mqadmin("topicList", "-n", ns.addr)
        assert rc == 0 and "AdminTopic" in out.split()
        rc, out, _ = await mqadmin("topicRoute", "-n", ns.addr, "-t", "AdminTopic")
        assert rc == 0 and '"brokerAddrs"' in out


async def test_errors_exit_non_zero_with_one_line(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns:
        rc, _out, err = await mqadmin("noSuchCommand", "-n", ns.addr)
        assert rc != 0 and "not exist" in err
        rc, _out, err = await mqadmin("topicRoute", "-n", ns.addr, "-t", "Missing")
        assert rc != 0 and "Missing" in err and len(err.strip().splitlines()) == 1


async def test_kv_config_round_trip(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns:
        rc, _out, _err = await mqadmin(
            "updateKvConfig", "-n", ns.addr, "-s", "ORDER_TOPIC_CONFIG", "-k", "T", "-v", "b:4"
        )
        assert rc == 0
        assert ns.kv_config.get("ORDER_TOPIC_CONFIG", "T") == "b:4"
        rc, _out, _err = await mqadmin("deleteKvConfig", "-n", ns.addr, "-s", "ORDER_TOPIC_CONFIG", "-k", "T")
        assert rc == 0 and ns.kv_config.get("ORDER_TOPIC_CONFIG", "T") is None
