"""The official C++ client (PyPI ``rocketmq`` 0.4.4) against a master/slave pair of real broker processes on port 0:
10,000 messages sent by the C++ producer are on the slave byte for byte (commit-log files and consume-queue files),
pulls and QUERY_MESSAGE by key on the slave answer as the master does; and a C++ push consumer keeps consuming from
the slave while the master is down and resumes on the master after it returns.

The C++ client runs in ``cpp_driver.py`` (its own process). The name server runs in-process, so every blocking
wait on the driver's output goes through a thread."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from client import Message, Producer, SendStatus
from client.admin.admin_client import AdminClient
from protocol.codes import RequestCode
from protocol.headers import QueryMessageRequestHeader
from protocol.record_decode import decode_records
from tests.compat.cpp_support import DRIVER
from tests.harness import run_namesrv
from tests.integration.client_support import until
from tests.integration.ha_support import BrokerProc, check_replica, ha_status, start_broker_proc
from tests.servers import Proc

pytestmark = pytest.mark.compat

TOPIC = "TopicCppHA"
QUEUES = 4


class DriverProc(Proc):
    """``Proc`` that also closes its pipes once its reader thread has seen the end of the output."""

    def __init__(self, args: list[str], log: Path) -> None:
        self.done = threading.Event()
        super().__init__(args, log)

    def _read(self) -> None:
        try:
            super()._read()
        finally:
            self.done.set()

    def close(self) -> None:
        self.stop()
        self.done.wait(30)
        for pipe in (self.p.stdin, self.p.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


def _driver(ns_addr: str, tmp: Path, name: str, *args: str) -> DriverProc:
    return DriverProc([sys.executable, str(DRIVER), *args, "--namesrv", ns_addr], tmp / f"{name}.log")


async def _pair(tmp: Path, ns_addr: str, name: str) -> tuple[BrokerProc, BrokerProc]:
    slave = await start_broker_proc(
        tmp, f"{name}-slave", ns_addr, brokerName=name, brokerRole="SLAVE", brokerId=1, storePathRootDir=tmp / "slave"
    )
    master = await start_broker_proc(tmp, f"{name}-master", ns_addr, brokerName=name, storePathRootDir=tmp / "master")
    return master, slave


async def _serving(admin: AdminClient, addr: str) -> bool:
    st = await ha_status(admin, addr)
    return not st["fenced"] and st["inSyncSlaveNums"] >= 1


async def _synced(admin: AdminClient, master: BrokerProc, slave: BrokerProc) -> bool:
    end = (await ha_status(admin, master.addr))["masterCommitLogMaxOffset"]
    return bool((await ha_status(admin, slave.addr))["haClientRuntimeInfo"]["maxOffset"] >= end)


async def test_cpp_10000_messages_replicated_byte_for_byte(tmp_path: Path) -> None:
    procs: list[BrokerProc] = []
    async with run_namesrv(tmp_path) as ns, AdminClient(ns.addr) as admin:
        try:
            master, slave = await _pair(tmp_path, ns.addr, "broker-cpp")
            procs += [master, slave]
            await until(lambda: _serving(admin, master.addr), timeout=30, what="the pair is up")
            for addr in (master.addr, slave.addr):
                await admin.create_topic(addr, TOPIC, QUEUES, QUEUES, 6, False)
            p = _driver(ns.addr, tmp_path, "produce", "produce", "--topic", TOPIC, "--count", "10000", "--prefix", "c")
            try:
                line = await asyncio.to_thread(p.wait_line, lambda ln: '"event":"done"' in ln, 240)
            finally:
                await asyncio.to_thread(p.close)
            assert json.loads(line) == {"event": "done", "ok": 10000, "failed": 0}
            await check_replica(admin, master, slave, tmp_path / "master", tmp_path / "slave", TOPIC, 10_000)
            # queryMsgByKey against the slave
            q = QueryMessageRequestHeader(TOPIC, "c-key-4242", 32, 0, 2**62, False).to_ext_fields()
            [msg] = decode_records((await admin.call(slave.addr, RequestCode.QUERY_MESSAGE, q)).body)
            assert msg.body == b"c-body-4242"
        finally:
            for bp in procs:
                await bp.kill()


def _bodies(c: Proc, seen: list[str]) -> None:
    while not c.lines.empty():
        line = c.lines.get_nowait()
        try:
            ev: dict[str, Any] = json.loads(line)
        except ValueError:
            continue
        if ev.get("event") == "msg":
            seen.append(str(ev["body"]))


async def test_cpp_push_consumer_reads_the_slave_while_the_master_is_down(tmp_path: Path) -> None:
    procs: list[BrokerProc] = []
    seen: list[str] = []
    async with run_namesrv(tmp_path) as ns, AdminClient(ns.addr) as admin:
        consumer: DriverProc | None = None
        try:
            master, slave = await _pair(tmp_path, ns.addr, "broker-cppfo")
            procs += [master, slave]
            await until(lambda: _serving(admin, master.addr), timeout=30, what="the pair is up")
            for addr in (master.addr, slave.addr):
                await admin.create_topic(addr, TOPIC, QUEUES, QUEUES, 6, False)

            async def send(prefix: str, n: int) -> list[str]:
                bodies = [f"{prefix}{i}" for i in range(n)]
                async with Producer(f"PG_{prefix}", namesrv_addr=ns.addr, poll_namesrv_interval=0.5) as p:
                    for b in bodies:
                        assert (await p.send(Message(TOPIC, b.encode()))).send_status is SendStatus.SEND_OK
                return bodies

            first = await send("a", 200)
            consumer = _driver(ns.addr, tmp_path, "consume", "consume", "--topic", TOPIC, "--group", "CG_cppfo")
            await until(lambda: (_bodies(consumer, seen), set(first) <= set(seen))[1], timeout=90, what="batch a")
            # messages the consumer has not read yet, then the master is lost while the consumer is paused
            os.kill(consumer.p.pid, signal.SIGSTOP)
            try:
                second = await send("b", 200)
                await until(lambda: _synced(admin, master, slave), timeout=30, what="slave holds batch b")
                await master.kill()
            finally:
                os.kill(consumer.p.pid, signal.SIGCONT)
            await until(
                lambda: (_bodies(consumer, seen), set(second) <= set(seen))[1],
                timeout=120,
                what="batch b from the slave",
            )
            # the master returns; what is sent now is consumed too
            master = await start_broker_proc(
                tmp_path,
                "broker-cppfo-master2",
                ns.addr,
                brokerName="broker-cppfo",
                storePathRootDir=tmp_path / "master",
            )
            procs.append(master)
            await until(lambda: _serving(admin, master.addr), timeout=30, what="the master is back")
            third = await send("c", 100)
            await until(
                lambda: (_bodies(consumer, seen), set(third) <= set(seen))[1], timeout=120, what="batch c after return"
            )
            assert len(seen) - len(set(seen)) <= 200  # at-least-once window only
        finally:
            if consumer is not None:
                await asyncio.to_thread(consumer.close)
            for bp in procs:
                await bp.kill()
