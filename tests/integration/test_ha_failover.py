"""Replication with real broker processes (SIGKILL, a deleted store, SIGSTOP): a SYNC_MASTER's disk is lost while
producers send and every acknowledged message survives on the slave; restarting the master on an empty disk (the
README's recovery procedure) brings back a healthy pair holding all of them, five times over. Also: a push consumer
keeps consuming from the slave while the master is down and returns to the master after; an ASYNC slave paused
for a while catches up."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from pathlib import Path

from client import Message, Producer, PushConsumer, SendStatus
from client.admin.admin_client import AdminClient
from client.consumer.push import ConsumeResult
from protocol.codes import RequestCode, ResponseCode
from protocol.headers import QueryConsumerOffsetRequestHeader
from protocol.message_ext import MessageExt
from tests.harness import run_namesrv
from tests.integration.client_support import until
from tests.integration.ha_support import BrokerProc, check_replica, ha_status, read_bodies, start_broker_proc

TOPIC = "TopicDiskLoss"
QUEUES = 4
CYCLES = 5
PER_CYCLE = 150  # acknowledged messages per cycle before the master's disk is lost


async def _create_topic(admin: AdminClient, *addrs: str) -> None:
    for addr in addrs:
        await admin.create_topic(addr, TOPIC, QUEUES, QUEUES, 6, False)


async def _send_until_killed(p: Producer, acked: set[bytes], tag: str, stop: asyncio.Event) -> None:
    i = 0
    while not stop.is_set():
        body = f"{tag}-{i}".encode()
        i += 1
        try:
            r = await p.send(Message(TOPIC, body), timeout=3)
        except Exception:
            await asyncio.sleep(0.05)
            continue
        if r.send_status is SendStatus.SEND_OK:  # SYNC_MASTER: the slave has it
            acked.add(body)


async def test_sync_master_disk_loss_five_cycles(tmp_path: Path) -> None:
    common = {"brokerName": "broker-dl", "slaveTimeout": 2000}
    master_dir = tmp_path / "master-store"
    procs: list[BrokerProc] = []
    async with run_namesrv(tmp_path) as ns, AdminClient(ns.addr) as admin:
        try:
            slave = await start_broker_proc(
                tmp_path,
                "slave",
                ns.addr,
                brokerRole="SLAVE",
                brokerId=1,
                storePathRootDir=tmp_path / "slave-store",
                **common,
            )
            procs.append(slave)
            acked: set[bytes] = set()
            for cycle in range(CYCLES):
                master = await start_broker_proc(
                    tmp_path, f"master{cycle}", ns.addr, brokerRole="SYNC_MASTER", storePathRootDir=master_dir, **common
                )
                procs.append(master)
                # the recovery: an empty master copies the slave's log back before it takes writes
                await until(
                    lambda m=master: _serving(admin, m.addr), timeout=60, what=f"cycle {cycle}: master takes writes"
                )
                if cycle == 0:
                    await _create_topic(admin, master.addr, slave.addr)
                else:
                    status = await ha_status(admin, master.addr)
                    assert status["caughtUpFromSlaveBytes"] > 0, status
                    held = set(await read_bodies(admin, master.addr, TOPIC, QUEUES))
                    assert acked <= held, f"cycle {cycle}: recovered master lacks {len(acked - held)} acked messages"
                stop = asyncio.Event()
                async with Producer(f"PG_dl{cycle}", namesrv_addr=ns.addr, poll_namesrv_interval=0.5) as p:
                    before = len(acked)
                    sender = asyncio.get_running_loop().create_task(_send_until_killed(p, acked, f"c{cycle}", stop))
                    await until(lambda b=before: len(acked) >= b + PER_CYCLE, timeout=60, what="acked sends")
                    # the disk is lost while producers keep sending
                    await master.kill()
                    shutil.rmtree(master_dir)
                    await asyncio.sleep(0)  # let in-flight sends see the dead connection
                    stop.set()
                    await sender
                # every acknowledged message is on the slave: 0 lost
                held = set(await read_bodies(admin, slave.addr, TOPIC, QUEUES))
                assert acked <= held, f"cycle {cycle}: {len(acked - held)} acknowledged messages lost"
            # the last recovery: a healthy pair holding every acknowledged message
            master = await start_broker_proc(
                tmp_path, "master-final", ns.addr, brokerRole="SYNC_MASTER", storePathRootDir=master_dir, **common
            )
            procs.append(master)
            await until(lambda: _serving(admin, master.addr), timeout=60, what="final master takes writes")
            assert acked <= set(await read_bodies(admin, master.addr, TOPIC, QUEUES))
            async with Producer("PG_dl_final", namesrv_addr=ns.addr) as p:
                r = await p.send(Message(TOPIC, b"after-recovery"))
                assert r.send_status is SendStatus.SEND_OK
            assert len(acked) >= CYCLES * PER_CYCLE
        finally:
            for bp in procs:
                await bp.kill()


async def _serving(admin: AdminClient, addr: str) -> bool:
    with contextlib.suppress(Exception):
        st = await ha_status(admin, addr)
        return not st["fenced"] and st["inSyncSlaveNums"] >= 1
    return False


async def test_push_consumer_fails_over_to_the_slave_and_back(tmp_path: Path) -> None:
    common = {"brokerName": "broker-fo"}
    procs: list[BrokerProc] = []
    got: list[bytes] = []
    async with run_namesrv(tmp_path) as ns, AdminClient(ns.addr) as admin:
        try:
            slave = await start_broker_proc(
                tmp_path,
                "slave",
                ns.addr,
                brokerRole="SLAVE",
                brokerId=1,
                storePathRootDir=tmp_path / "slave-store",
                **common,
            )
            procs.append(slave)
            master = await start_broker_proc(
                tmp_path, "master", ns.addr, storePathRootDir=tmp_path / "master-store", **common
            )
            procs.append(master)
            await until(lambda: _serving(admin, master.addr), timeout=30, what="pair up")
            await _create_topic(admin, master.addr, slave.addr)
            first = [f"a{i}".encode() for i in range(400)]
            async with Producer("PG_fo", namesrv_addr=ns.addr) as p:
                for body in first:
                    assert (await p.send(Message(TOPIC, body))).send_status is SendStatus.SEND_OK
            end = (await ha_status(admin, master.addr))["masterCommitLogMaxOffset"]
            await until(lambda: _slave_at(admin, slave.addr, end), timeout=30, what="slave holds everything")
            gate = asyncio.Event()

            async def listener(msgs: list[MessageExt]) -> ConsumeResult:
                got.extend(m.body for m in msgs)
                if len(got) >= 100:
                    await gate.wait()  # hold consumption until the master is dead
                return ConsumeResult.SUCCESS

            c = PushConsumer(
                "CG_fo",
                namesrv_addr=ns.addr,
                consume_from_where="FIRST_OFFSET",
                poll_namesrv_interval=0.5,
                pull_batch_size=8,
                consume_message_batch_max_size=1,
                persist_consumer_offset_interval_ms=300,
            )
            c.subscribe(TOPIC, "*", listener)
            await c.start()
            try:
                await until(lambda: len(got) >= 100, timeout=30, what="first messages from the master")
                await master.kill()
                gate.set()
                # the rest comes from the slave, none skipped
                await until(lambda: set(first) <= set(got), timeout=60, what="every message from the slave")

                # with the master down, offsets are committed to the slave (J findBrokerAddressInSubscribe fallback)
                async def committed_on_slave() -> bool:
                    total = 0
                    for qid in range(QUEUES):
                        h = QueryConsumerOffsetRequestHeader("CG_fo", TOPIC, qid)
                        resp = await admin.call(
                            slave.addr,
                            RequestCode.QUERY_CONSUMER_OFFSET,
                            h.to_ext_fields(),
                            ok=(ResponseCode.SUCCESS, ResponseCode.QUERY_NOT_FOUND),
                        )
                        total += int(resp.ext_fields.get("offset", 0)) if resp.code == ResponseCode.SUCCESS else 0
                    return total == len(first)

                await until(committed_on_slave, timeout=30, what="offsets committed on the slave")
                # the master returns (same disk); consumption resumes there
                master = await start_broker_proc(
                    tmp_path, "master2", ns.addr, storePathRootDir=tmp_path / "master-store", **common
                )
                procs.append(master)
                await until(lambda: _serving(admin, master.addr), timeout=30, what="master back")
                second = [f"b{i}".encode() for i in range(100)]
                async with Producer("PG_fo2", namesrv_addr=ns.addr, poll_namesrv_interval=0.5) as p:
                    for body in second:
                        assert (await p.send(Message(TOPIC, body))).send_status is SendStatus.SEND_OK
                await until(lambda: set(second) <= set(got), timeout=60, what="messages sent after the master returned")
                # the next pulls go to the master again (the slave suggests broker id 0)
                mqs = [mq for mq in c.instance.pull_from_which if mq.topic == TOPIC]
                assert mqs

                async def on_master() -> bool:
                    return all([await c.instance.find_pull_addr(mq) == (master.addr, False) for mq in mqs])

                await until(on_master, timeout=30, what="pulls back on the master")
                # at-least-once: duplicates only within the window of uncommitted offsets
                dups = len(got) - len(set(got))
                assert dups <= 100, dups
            finally:
                await c.close()
        finally:
            for bp in procs:
                await bp.kill()


async def _slave_at(admin: AdminClient, addr: str, end: int) -> bool:
    st = await ha_status(admin, addr)
    return bool(st["haClientRuntimeInfo"]["maxOffset"] >= end)


async def test_async_slave_catches_up_after_a_stall(tmp_path: Path) -> None:
    common = {"brokerName": "broker-stall", "haHousekeepingInterval": 60_000}
    procs: list[BrokerProc] = []
    async with run_namesrv(tmp_path) as ns, AdminClient(ns.addr) as admin:
        try:
            slave = await start_broker_proc(
                tmp_path,
                "slave",
                ns.addr,
                brokerRole="SLAVE",
                brokerId=1,
                storePathRootDir=tmp_path / "slave-store",
                **common,
            )
            procs.append(slave)
            master = await start_broker_proc(
                tmp_path, "master", ns.addr, storePathRootDir=tmp_path / "master-store", **common
            )
            procs.append(master)
            await until(lambda: _serving(admin, master.addr), timeout=30, what="pair up")
            await _create_topic(admin, master.addr)
            # the slave follows 40 MiB written as fast as the master takes it (how far behind it falls depends on
            # how much CPU it gets, so only the end state is asserted: it holds everything before the stall)
            async with Producer("PG_load", namesrv_addr=ns.addr) as p:
                batch = [Message(TOPIC, b"L" * 4096) for _ in range(32)]
                for _ in range(40 * 1024 * 1024 // (4096 * 32) // 4):
                    await asyncio.gather(*(p.send_batch(batch) for _ in range(4)))
            loaded = (await ha_status(admin, master.addr))["masterCommitLogMaxOffset"]
            assert loaded >= 40 * 1024 * 1024
            await until(lambda: _slave_at(admin, slave.addr, loaded), timeout=60, what="slave follows the load")
            os.kill(slave.proc.pid, signal.SIGSTOP)
            try:
                async with Producer("PG_stall", namesrv_addr=ns.addr) as p:
                    loop = asyncio.get_running_loop()
                    deadline = loop.time() + STALL_S
                    n = 0
                    while loop.time() < deadline:
                        await asyncio.gather(*(p.send(Message(TOPIC, b"x" * 512)) for _ in range(50)))
                        n += 50
                # the master kept taking writes; the stalled slave's lag is visible
                st = await ha_status(admin, master.addr)
                assert st["haConnectionInfo"] and st["haConnectionInfo"][0]["diff"] > 0
            finally:
                os.kill(slave.proc.pid, signal.SIGCONT)
            end = st["masterCommitLogMaxOffset"]
            await until(lambda: _slave_at(admin, slave.addr, end), timeout=60, what="slave catches up after the stall")
            assert n > 0
        finally:
            for bp in procs:
                await bp.kill()


STALL_S = float(os.environ.get("HA_STALL_SECONDS", "30"))


async def test_sdk_10000_messages_to_broker_processes_replicated_byte_for_byte(tmp_path: Path) -> None:
    common = {"brokerName": "broker-sdk"}
    procs: list[BrokerProc] = []
    async with run_namesrv(tmp_path) as ns, AdminClient(ns.addr) as admin:
        try:
            slave = await start_broker_proc(
                tmp_path, "slave", ns.addr, brokerRole="SLAVE", brokerId=1, storePathRootDir=tmp_path / "s", **common
            )
            procs.append(slave)
            master = await start_broker_proc(tmp_path, "master", ns.addr, storePathRootDir=tmp_path / "m", **common)
            procs.append(master)
            await until(lambda: _serving(admin, master.addr), timeout=30, what="pair up")
            await _create_topic(admin, master.addr, slave.addr)
            async with Producer("PG_sdk10k", namesrv_addr=ns.addr) as p:
                sem = asyncio.Semaphore(64)

                async def one(i: int) -> None:
                    async with sem:
                        r = await p.send(Message(TOPIC, b"k%05d" % i, keys=[f"sdk-key-{i}"]))
                        assert r.send_status is SendStatus.SEND_OK

                await asyncio.gather(*(one(i) for i in range(10_000)))
            await check_replica(admin, master, slave, tmp_path / "m", tmp_path / "s", TOPIC, 10_000)
            [m] = await admin.query_by_key(TOPIC, "sdk-key-777")  # the master's answer
            await master.kill()  # and with the master gone, the slave's
            [s] = await admin.query_by_key(TOPIC, "sdk-key-777")
            assert m.body == s.body == b"k00777"
        finally:
            for bp in procs:
                await bp.kill()
