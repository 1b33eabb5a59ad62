"""Controller mode against Apache RocketMQ 5.5.0's controller (embedded in its name server): three rocketq brokers
of one group as real processes on port 0. One is elected master, the SyncStateSet grows to all three, SYNC sends
(``allAckInSyncStateSet``) replicate; kill -9 of the master makes a slave master within seconds (the name server's
route follows) holding every acknowledged message; the old master restarted rejoins as a slave. A master paused
(SIGSTOP) after writing a tail its slaves never got is deposed, refuses writes when it resumes, rejoins as a slave
and cuts exactly that tail; a master that cannot reach the controller stops taking writes before its lease ends."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from client import Message, Producer, SendStatus
from client.admin.admin_client import AdminClient
from protocol.bodies.controller import EpochEntryCache
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.errors import RemotingError
from protocol.headers import SendMessageRequestHeader
from tests.eventually import eventually
from tests.integration.ha_support import BrokerProc, ha_status, read_bodies, start_broker_proc
from tests.integration.test_mqadmin import mqadmin
from tests.reference.peers import ApacheController, missing, start_apache_controller

pytestmark = [pytest.mark.reference, pytest.mark.timeout(600)]

QUEUES = 2


@pytest.fixture(scope="module")
def controller(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApacheController]:
    if reason := missing("apache"):
        pytest.skip(reason)
    ctl = start_apache_controller(tmp_path_factory.mktemp("apache-controller"))
    try:
        yield ctl
    finally:
        ctl.stop()


def _conf(ctl: ApacheController, group: str, root: Path, **extra: Any) -> dict[str, Any]:
    return {
        "brokerClusterName": "CtrlCluster",
        "brokerName": group,
        "enableControllerMode": "true",
        "controllerAddr": ctl.controller_addr,
        "controllerHeartBeatTimeoutMills": 6000,
        "syncBrokerMetadataPeriod": 1000,
        "checkSyncStateSetPeriod": 1000,
        "haSendHeartbeatInterval": 1000,
        "storePathRootDir": root,
        **extra,
    }


@contextlib.asynccontextmanager
async def _group(tmp: Path, ctl: ApacheController, group: str, **extra: Any) -> AsyncIterator[list[BrokerProc]]:
    procs: list[BrokerProc] = []
    try:
        for i in range(3):
            procs.append(
                await start_broker_proc(
                    tmp, f"{group}-{i}", ctl.ns_addr, **_conf(ctl, group, tmp / f"store{i}", **extra)
                )
            )
        yield procs
    finally:
        for p in procs:
            await p.kill()


async def _controller_view(admin: AdminClient, addr: str) -> dict[str, Any]:
    try:
        return dict((await ha_status(admin, addr))["controller"])
    except (RemotingError, OSError, KeyError, TypeError):
        return {}


async def _master(admin: AdminClient, procs: list[BrokerProc], sss: int = 3) -> BrokerProc | None:
    """The one broker that is a writable master with a SyncStateSet of ``sss`` (None until there is exactly one)."""
    found = []
    for p in procs:
        if p.proc.returncode is not None:
            continue
        v = await _controller_view(admin, p.addr)
        if v.get("role") == "MASTER" and v.get("writable") and len(v.get("syncStateSet", [])) >= sss:
            found.append(p)
    return found[0] if len(found) == 1 else None


async def _route_master(admin: AdminClient, topic: str) -> str:
    try:
        _, doc = await admin.topic_route(topic)
    except (RemotingError, OSError):
        return ""
    for bd in doc.get("brokerDatas") or []:
        return str((bd.get("brokerAddrs") or {}).get("0") or (bd.get("brokerAddrs") or {}).get(0) or "")
    return ""


async def _send_direct(admin: AdminClient, addr: str, topic: str, body: bytes) -> RemotingCommand:
    h = SendMessageRequestHeader("PG_direct", topic, "TBW102", 4, 0, 0, int(time.time() * 1000), 0, "WAIT\x01true\x02")
    return await admin.call(addr, RequestCode.SEND_MESSAGE, h.to_ext_fields(), body, ok=tuple(ResponseCode))


async def _create_topic(admin: AdminClient, procs: list[BrokerProc], topic: str) -> None:
    for p in procs:
        await admin.create_topic(p.addr, topic, QUEUES, QUEUES, 6, False)


async def test_kill_master_a_slave_takes_over_with_every_acked_message(
    tmp_path: Path, controller: ApacheController
) -> None:
    topic = "CtrlKillTopic"
    async with (
        _group(tmp_path, controller, "ctrl-kill", allAckInSyncStateSet="true") as procs,
        AdminClient(controller.ns_addr) as admin,
    ):
        master = await eventually(lambda: _master(admin, procs), timeout=60, what="one master, SyncStateSet of 3")
        await _create_topic(admin, procs, topic)
        await eventually(lambda: _route_master(admin, topic), timeout=30, what="a route with a master")
        assert await _route_master(admin, topic) == master.addr
        await _check_views(admin, controller, master, procs)
        acked: list[bytes] = []
        producer = Producer("PG_ctrl_kill", controller.ns_addr, poll_namesrv_interval=1.0)  # J polls every 30 s
        await producer.start()
        try:
            for i in range(60):
                r = await producer.send(Message(topic, f"before-{i}".encode()), timeout=5)
                assert r.send_status is SendStatus.SEND_OK  # every replica in the set has it
                acked.append(f"before-{i}".encode())
            view = await _controller_view(admin, master.addr)
            old_epoch = view["masterEpoch"]

            # sends go on while the master dies: every SEND_OK among them must survive too
            stop = asyncio.Event()
            sender = asyncio.ensure_future(_send_until(producer, topic, acked, stop))
            await eventually(lambda: len(acked) >= 100, timeout=30, what="sends under way")
            killed_at = time.monotonic()
            await master.kill()
            rest = [p for p in procs if p is not master]
            new = await eventually(lambda: _master(admin, rest, sss=1), timeout=30, what="a new writable master")
            took = time.monotonic() - killed_at
            n = len(acked)
            await eventually(lambda: len(acked) >= n + 20, timeout=30, what="sends acknowledged by the new master")
            stop.set()
            await sender
            new_view = await _controller_view(admin, new.addr)
            assert new_view["masterEpoch"] > old_epoch
            await eventually(
                lambda: _route_master_is(admin, topic, new.addr), timeout=30, what="the route names the new master"
            )
            assert took < 20, f"failover took {took:.1f} s"
            held = set(await read_bodies(admin, new.addr, topic, QUEUES))
            assert set(acked) <= held, f"acked messages lost: {sorted(set(acked) - held)[:5]}"

            async def send_after() -> bool:
                try:
                    r = await producer.send(Message(topic, b"after-0"), timeout=5)
                except Exception:
                    return False
                return r.send_status is SendStatus.SEND_OK

            await eventually(send_after, timeout=30, what="a send through the new route")
        finally:
            await producer.close()

        # the old master comes back and rejoins as a slave of the new one
        procs[procs.index(master)] = back = await start_broker_proc(
            tmp_path,
            "ctrl-kill-back",
            controller.ns_addr,
            **_conf(controller, "ctrl-kill", tmp_path / f"store{procs.index(master)}", allAckInSyncStateSet="true"),
        )
        await eventually(
            lambda: _role_is(admin, back.addr, "SLAVE"), timeout=60, what="the old master rejoins as a slave"
        )
        await eventually(
            lambda: _same_bodies(admin, new.addr, back.addr, topic, set(acked)),
            timeout=60,
            what="the old master caught up",
        )


async def _check_views(admin: AdminClient, ctl: ApacheController, master: BrokerProc, procs: list[BrokerProc]) -> None:
    """mqadmin haStatus / clusterList, GET_BROKER_EPOCH_CACHE and the metrics-facing runtime table show the epoch
    and the SyncStateSet."""
    view = await _controller_view(admin, master.addr)
    rc, out, err = await mqadmin("haStatus", "-n", ctl.ns_addr, "-b", master.addr)
    assert rc == 0, err
    assert "#ControllerRole: MASTER" in out and f"#MasterEpoch: {view['masterEpoch']}" in out
    assert f"#SyncStateSet: {view['syncStateSet']}" in out and "#Writable: true" in out
    rc, out, err = await mqadmin("clusterList", "-n", ctl.ns_addr)
    assert rc == 0, err
    rows = {line.split()[3]: line for line in out.splitlines()[1:] if line.strip()}
    assert (
        f"epoch={view['masterEpoch']}" in rows[master.addr]
        and f"sss=[{','.join(map(str, view['syncStateSet']))}]" in rows[master.addr]
    )
    assert len(rows) == 3
    resp = await admin.call(master.addr, RequestCode.GET_BROKER_EPOCH_CACHE)
    cache = EpochEntryCache.decode(resp.body)
    assert cache.epoch_list and cache.epoch_list[-1].epoch == view["masterEpoch"]
    assert cache.broker_id == view["brokerControllerId"]


async def _send_until(producer: Producer, topic: str, acked: list[bytes], stop: asyncio.Event) -> None:
    i = 0
    while not stop.is_set():
        body = f"during-{i}".encode()
        i += 1
        try:
            r = await producer.send(Message(topic, body), timeout=3)
        except Exception:  # the master is gone: the next send goes to whatever the route names
            await asyncio.sleep(0.05)
            continue
        if r.send_status is SendStatus.SEND_OK:
            acked.append(body)


async def _route_master_is(admin: AdminClient, topic: str, addr: str) -> bool:
    return await _route_master(admin, topic) == addr


async def _role_is(admin: AdminClient, addr: str, role: str) -> bool:
    return (await _controller_view(admin, addr)).get("role") == role


async def _bodies_are(admin: AdminClient, addr: str, topic: str, want: list[bytes]) -> bool:
    return sorted(await read_bodies(admin, addr, topic, QUEUES)) == want


async def _no_slave_connected(admin: AdminClient, addr: str) -> bool:
    return not (await ha_status(admin, addr))["haConnectionInfo"]


async def _reads_all_but_tail(admin: AdminClient, addr: str, topic: str, want: list[bytes]) -> bool:
    """``addr`` reads exactly ``want`` (sorted); a read showing a record of the cut tail fails the test at once."""
    held = await read_bodies(admin, addr, topic, QUEUES)
    assert not [b for b in held if b.startswith(b"tail-")], f"{addr} served the unconfirmed tail: {sorted(held)}"
    return sorted(held) == want


async def _same_bodies(admin: AdminClient, a: str, b: str, topic: str, at_least: set[bytes]) -> bool:
    """``a`` and ``b`` read the same records, ``at_least`` among them (each reads only what is confirmed: both could
    read the same older prefix for a moment)."""
    held = sorted(await read_bodies(admin, b, topic, QUEUES))
    return at_least <= set(held) and sorted(await read_bodies(admin, a, topic, QUEUES)) == held


async def test_paused_master_is_deposed_refuses_writes_and_cuts_its_unconfirmed_tail(
    tmp_path: Path, controller: ApacheController
) -> None:
    topic = "CtrlPauseTopic"
    # inSyncReplicas=1: the master confirms alone, so it can hold a tail its slaves never got. The SyncStateSet never
    # shrinks (the slaves stay electable while cut off); a silent slave's connection drops after 3 s
    async with (
        _group(
            tmp_path,
            controller,
            "ctrl-pause",
            haMaxTimeSlaveNotCatchup=120_000,
            checkSyncStateSetPeriod=600_000,
            haHousekeepingInterval=3000,
        ) as procs,
        AdminClient(controller.ns_addr) as admin,
    ):
        master = await eventually(lambda: _master(admin, procs), timeout=60, what="one master, SyncStateSet of 3")
        slaves = [p for p in procs if p is not master]
        await _create_topic(admin, procs, topic)
        for i in range(20):
            r = await _send_direct(admin, master.addr, topic, f"shared-{i}".encode())
            assert r.code == ResponseCode.SUCCESS, r.remark
        shared = sorted(f"shared-{i}".encode() for i in range(20))
        for p in procs:  # the master serves only what the set confirmed: all of it once every slave has it all
            await eventually(
                lambda p=p: _bodies_are(admin, p.addr, topic, shared), timeout=30, what=f"{p.addr} has it all"
            )
        # the slaves stop, and the master drops their connections: what it writes now reaches no slave (while they
        # are connected it is pushed into their sockets at once, and a stopped slave appends it when it resumes)
        for s in slaves:
            s.proc.send_signal(signal.SIGSTOP)
        await eventually(lambda: _no_slave_connected(admin, master.addr), timeout=30, what="the slaves dropped")
        for i in range(10):
            r = await _send_direct(admin, master.addr, topic, f"tail-{i}".encode())
            assert r.code == ResponseCode.SUCCESS, r.remark
        # then the master stops and the slaves resume: the controller elects one of them
        master.proc.send_signal(signal.SIGSTOP)
        for s in slaves:
            s.proc.send_signal(signal.SIGCONT)
        try:
            new = await eventually(lambda: _master(admin, slaves, sss=1), timeout=60, what="a slave elected")
            for i in range(15):
                r = await _send_direct(admin, new.addr, topic, f"new-{i}".encode())
                assert r.code == ResponseCode.SUCCESS, r.remark
        finally:
            master.proc.send_signal(signal.SIGCONT)
        # the resumed old master refuses writes at once: its lease ran out while it was stopped
        r = await _send_direct(admin, master.addr, topic, b"stale-write")
        assert r.code == ResponseCode.SERVICE_NOT_AVAILABLE, (r.code, r.remark)
        assert "controller mode" in (r.remark or "")
        await eventually(lambda: _role_is(admin, master.addr, "SLAVE"), timeout=60, what="old master demoted")
        # not "both read the same": each reads only what is confirmed (the new master what its set acked, the old one
        # its last confirm offset until its log agrees with the new master's), so for a moment both read only the
        # shared records. Each must come to read every shared and new record, the old one never its tail meanwhile
        want = sorted(shared + [f"new-{i}".encode() for i in range(15)])
        await eventually(
            lambda: _reads_all_but_tail(admin, new.addr, topic, want), timeout=60, what="the new master reads them all"
        )
        await eventually(
            lambda: _reads_all_but_tail(admin, master.addr, topic, want), timeout=60, what="old master follows the new"
        )
        held = await read_bodies(admin, master.addr, topic, QUEUES)
        assert not [b for b in held if b.startswith(b"tail-")], "the unconfirmed tail survived"
        assert sorted(held) == want
        assert b"stale-write" not in held


async def test_master_cut_off_from_the_controller_stops_taking_writes(
    tmp_path: Path, controller: ApacheController
) -> None:
    topic = "CtrlLeaseTopic"
    async with _group(tmp_path, controller, "ctrl-lease") as procs, AdminClient(controller.ns_addr) as admin:
        master = await eventually(lambda: _master(admin, procs), timeout=60, what="one master, SyncStateSet of 3")
        await _create_topic(admin, procs, topic)
        r = await _send_direct(admin, master.addr, topic, b"ok")
        assert r.code == ResponseCode.SUCCESS
        controller.proc.p.send_signal(signal.SIGSTOP)  # the controller goes silent (and so does the name server)
        try:

            async def refused() -> bool:
                resp = await _send_direct(admin, master.addr, topic, b"late")
                return resp.code == ResponseCode.SERVICE_NOT_AVAILABLE and "heartbeat" in (resp.remark or "")

            # controllerHeartBeatTimeoutMills is 6 s: the master must refuse before then
            started = time.monotonic()
            await eventually(refused, timeout=6, what="the master refuses writes without the controller")
            assert time.monotonic() - started < 6
        finally:
            controller.proc.p.send_signal(signal.SIGCONT)
        # the controller back: exactly one writable master again (the same or another)
        await eventually(lambda: _master(admin, procs, sss=1), timeout=60, what="one writable master again")
