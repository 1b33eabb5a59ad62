"""Controller mode against Apache RocketMQ 5.5.0's controller: what a master lets consumers read and where a slave
replicates from after a failover. A master serves only records its SyncStateSet confirmed (J's confirm offset
bounds ``getMaxOffsetInQueue``), so a consumer never moves past a record a deposed master would cut; and a slave
follows the controller's new master at once, never the paused old one the name server may still name (with
``haHousekeepingInterval`` far above the test's patience, only that lets the new SyncStateSet grow)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from client.admin.admin_client import AdminClient
from protocol.codes import ResponseCode
from tests.eventually import eventually
from tests.integration.ha_support import read_bodies
from tests.reference.peers import ApacheController, missing, start_apache_controller
from tests.reference.test_controller_failover import QUEUES, _create_topic, _group, _master, _send_direct

pytestmark = [pytest.mark.reference, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def controller(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApacheController]:
    if reason := missing("apache"):
        pytest.skip(reason)
    ctl = start_apache_controller(tmp_path_factory.mktemp("apache-controller"))
    try:
        yield ctl
    finally:
        ctl.stop()


async def _bodies(admin: AdminClient, addr: str, topic: str) -> list[bytes]:
    return sorted(await read_bodies(admin, addr, topic, QUEUES))


async def _holds(admin: AdminClient, addr: str, topic: str, want: list[bytes]) -> bool:
    return await _bodies(admin, addr, topic) == want


async def test_master_serves_only_what_its_sync_state_set_confirmed(
    tmp_path: Path, controller: ApacheController
) -> None:
    topic = "CtrlBoundTopic"
    async with (
        _group(tmp_path, controller, "ctrl-bound", haMaxTimeSlaveNotCatchup=120_000) as procs,
        AdminClient(controller.ns_addr) as admin,
    ):
        master = await eventually(lambda: _master(admin, procs), timeout=60, what="one master, SyncStateSet of 3")
        slaves = [p for p in procs if p is not master]
        await _create_topic(admin, procs, topic)
        r = await _send_direct(admin, master.addr, topic, b"confirmed")
        assert r.code == ResponseCode.SUCCESS, r.remark
        for p in procs:
            await eventually(
                lambda p=p: _holds(admin, p.addr, topic, [b"confirmed"]), timeout=30, what=f"{p.addr} has it"
            )
        for s in slaves:
            s.proc.send_signal(signal.SIGSTOP)
        try:
            # inSyncReplicas=1: stored and acknowledged, but the stopped members of the set never confirm it
            r = await _send_direct(admin, master.addr, topic, b"unconfirmed")
            assert r.code == ResponseCode.SUCCESS, r.remark
            assert await _bodies(admin, master.addr, topic) == [b"confirmed"]
        finally:
            for s in slaves:
                s.proc.send_signal(signal.SIGCONT)
        await eventually(
            lambda: _holds(admin, master.addr, topic, [b"confirmed", b"unconfirmed"]),
            timeout=30,
            what="readable once the set confirmed it",
        )


async def test_slave_follows_the_new_master_not_the_paused_old_one(
    tmp_path: Path, controller: ApacheController
) -> None:
    async with (
        _group(tmp_path, controller, "ctrl-follow", haHousekeepingInterval=300_000) as procs,
        AdminClient(controller.ns_addr) as admin,
    ):
        master = await eventually(lambda: _master(admin, procs), timeout=60, what="one master, SyncStateSet of 3")
        slaves = [p for p in procs if p is not master]
        master.proc.send_signal(signal.SIGSTOP)
        try:
            # the other slave must leave the paused master's connection and join the new one: the set grows to 2
            await eventually(lambda: _master(admin, slaves, sss=2), timeout=60, what="new master, SyncStateSet of 2")
        finally:
            master.proc.send_signal(signal.SIGCONT)
