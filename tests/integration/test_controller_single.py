"""One controller (no Raft peers), in-process on port 0 with its state under tmp_path, driven by brokers that speak
J 5.5.0's controller protocol (``controller_peers.ReplicaPeer``): registration, the first master, SyncStateSet
growth, failover when the master's connection closes (with the role push to the survivor), our mqadmin's
controller commands, a restart that keeps the state, and the controller embedded in a name server."""

from __future__ import annotations

from pathlib import Path

from controller.app import ControllerApp
from controller.config import ControllerConfig, load_config
from namesrv.app import NamesrvApp
from namesrv.config import load_config as load_namesrv_config
from protocol.bodies.controller import SyncStateSet
from protocol.codes import ResponseCode
from protocol.headers.controller import ElectMasterResponseHeader, GetReplicaInfoResponseHeader
from tests.eventually import eventually
from tests.integration.controller_peers import ReplicaPeer, mqadmin
from tests.integration.test_metrics import METRICS, scrape, value

FAST = {"scanNotActiveBrokerInterval": "200", "scanInactiveMasterInterval": "200", "logFileMaxSize": "0"}


def controller_config(tmp_path: Path, **extra: str) -> ControllerConfig:
    return load_config(None, {"listenPort": "0", "controllerStorePath": str(tmp_path / "ctl"), **FAST, **extra})


async def test_failover_from_a_closed_master_to_the_in_sync_replica_and_restart_keeps_it(tmp_path: Path) -> None:
    cfg = controller_config(tmp_path)
    # the controller stops first (innermost), so the state it keeps is the one the test saw
    async with ReplicaPeer("broker-a", "") as b1, ReplicaPeer("broker-a", "") as b2, ControllerApp(cfg) as ctl:
        b1.controller = b2.controller = ctl.addr
        first = await b1.register()
        assert "masterBrokerId" not in first.ext_fields  # no master yet
        await b2.register()
        assert (b1.broker_id, b2.broker_id) == (1, 2)
        await b1.heartbeat()
        await b2.heartbeat()
        elected = await b1.elect()
        head = ElectMasterResponseHeader.from_ext_fields(elected.ext_fields)
        assert (elected.code, head.master_broker_id, head.master_epoch) == (ResponseCode.SUCCESS, 1, 1)
        grown = await b1.alter([1, 2], master_epoch=1, sss_epoch=1)
        assert grown.code == ResponseCode.SUCCESS and SyncStateSet.decode(grown.body).sync_state_set_epoch == 2
        stale = await b1.alter([1], master_epoch=1, sss_epoch=1)
        assert stale.code == ResponseCode.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH
        rc, out, err = await mqadmin("getSyncStateSet", "-a", ctl.addr, "-b", "broker-a")
        assert rc == 0, err
        assert "#MasterBrokerId\t1" in out and "#SyncStateSetNums\t2" in out
        assert (
            f"InSyncReplica:\tReplicaIdentity{{brokerName='broker-a', brokerId=2, brokerAddress='{b2.addr}', alive=true}}"
            in out
        )

        await b1.client.close()  # the master's connection closes: J's onBrokerChannelClose
        info = await eventually(
            lambda: _master(b2, 2), timeout=10, what="broker 2 elected after the master's connection closed"
        )
        assert info.master_epoch == 2
        # every live replica hears of each election (the first one too); the dead master not of the second
        pushed = await eventually(
            lambda: [n for n in b2.notified if n.master_epoch == 2], timeout=5, what="the role push to the survivor"
        )
        assert (pushed[0].master_broker_id, pushed[0].master_address) == (2, b2.addr)
        assert [n.master_epoch for n in b1.notified] == [1]

        rc, out, _ = await mqadmin("getControllerMetaData", "-a", ctl.addr)
        assert rc == 0 and f"#ControllerLeaderAddress\t{ctl.addr}" in out and f"#Peer:\tn0:{ctl.addr}" in out
        rc, out, _ = await mqadmin("getControllerConfig", "-a", ctl.addr)
        assert rc == 0 and f"============{ctl.addr}============" in out and "enableElectUncleanMaster" in out
        rc, _out, err = await mqadmin("updateControllerConfig", "-a", ctl.addr, "-k", "configStorePath", "-v", "/x")
        assert rc != 0 and "black list" in err
        rc, out, err = await mqadmin(
            "updateControllerConfig", "-a", ctl.addr, "-k", "enableElectUncleanMaster", "-v", "true"
        )
        assert rc == 0, err
        assert ctl.config.current.enable_elect_unclean_master
        rc, out, err = await mqadmin(
            "cleanBrokerMetadata", "-a", ctl.addr, "-bn", "broker-a", "-c", "DefaultCluster", "-b", "1"
        )
        assert rc == 0 and "clear broker broker-a metadata from controller success!" in out, err

        before = ctl.state.to_json()
    # a restart on the same store keeps the group, its epochs and SyncStateSet (broker 1 was cleaned)
    async with ControllerApp(cfg) as again, ReplicaPeer("broker-a", "") as reader:
        reader.controller = again.addr
        resp = await reader.replica_info()
        head = GetReplicaInfoResponseHeader.from_ext_fields(resp.ext_fields)
        assert (resp.code, head.master_broker_id, head.master_epoch) == (ResponseCode.SUCCESS, 2, 2)
        assert SyncStateSet.decode(resp.body) == SyncStateSet(sync_state_set=[2], sync_state_set_epoch=3)
        assert again.state.to_json() == before and sorted(again.state.replicas["broker-a"].brokers) == [2]


async def _master(peer: ReplicaPeer, want: int) -> GetReplicaInfoResponseHeader | None:
    resp = await peer.replica_info()
    head = GetReplicaInfoResponseHeader.from_ext_fields(resp.ext_fields)
    return head if resp.code == 0 and head.master_broker_id == want else None


async def test_heartbeat_timeout_elects_and_mqadmin_elect_master_designates(tmp_path: Path) -> None:
    async with (
        ControllerApp(controller_config(tmp_path)) as ctl,
        ReplicaPeer("broker-b", "") as b1,
        ReplicaPeer("broker-b", "") as b2,
        ReplicaPeer("broker-b", "") as b3,
    ):
        for b in (b1, b2, b3):
            b.controller = ctl.addr
            await b.register()
            await b.heartbeat(timeout_ms=60_000, epoch=1, max_offset=100 * b.broker_id)
        assert (await b1.elect()).code == ResponseCode.SUCCESS
        assert (await b1.alter([1, 2, 3], master_epoch=1, sss_epoch=1)).code == ResponseCode.SUCCESS
        # designate 3 with J's mqadmin flags
        rc, out, err = await mqadmin(
            "electMaster", "-a", ctl.addr, "-c", "DefaultCluster", "-bn", "broker-b", "-b", "3"
        )
        assert rc == 0, err
        assert f"#BrokerMasterAddr\t{b3.addr}" in out and "#MasterEpoch\t2" in out and f"\t#Broker\t1\t{b1.addr}" in out
        # the new master takes its replicas back into the SyncStateSet as they catch up
        assert (await b3.alter([2, 3], master_epoch=2, sss_epoch=3)).code == ResponseCode.SUCCESS
        # 3 stops heartbeating (short timeout, connection left open): the scan expires it and elects from the set,
        # so 2 (in sync) and never 1 (live, more... but outside the set)
        await b3.heartbeat(timeout_ms=300)
        info = await eventually(lambda: _master(b1, 2), timeout=10, what="broker 2 elected after 3 expired")
        assert info.master_epoch == 3
        assert await eventually(
            lambda: [n for n in b2.notified if n.master_broker_id == 2], timeout=5, what="the role push to broker 2"
        )
        # 2 goes too: 1 is live but was never in the set, so nobody is elected and the master is recorded as gone
        await b2.heartbeat(timeout_ms=300)
        await eventually(
            lambda: ctl.state.sync_states["broker-b"].master_broker_id is None, timeout=10, what="master gone"
        )
        assert ctl.state.sync_states["broker-b"].master_epoch == 4
        assert (await b1.elect()).code == ResponseCode.CONTROLLER_ELECT_MASTER_FAILED  # J's broker asks itself
        # with enableElectUncleanMaster (changed at runtime) 1 is elected from outside the set
        rc, _out, err = await mqadmin(
            "updateControllerConfig", "-a", ctl.addr, "-k", "enableElectUncleanMaster", "-v", "true"
        )
        assert rc == 0, err
        unclean = await b1.elect()
        assert unclean.code == ResponseCode.SUCCESS
        assert ElectMasterResponseHeader.from_ext_fields(unclean.ext_fields).master_epoch == 5


async def test_controller_in_the_name_server_answers_on_its_port(tmp_path: Path) -> None:
    cfg = load_namesrv_config(
        None,
        {
            "listenPort": "0",
            "kvConfigPath": str(tmp_path / "kv.json"),
            "enableControllerInNamesrv": "true",
            "controllerStorePath": str(tmp_path / "ctl"),
            "logFileMaxSize": "0",
            **METRICS,
        },
    )
    async with NamesrvApp(cfg) as ns, ReplicaPeer("broker-c", ns.addr) as b1:
        assert ns.controller is not None and ns.metrics is not None
        await b1.register()
        await b1.heartbeat()
        assert (await b1.elect()).code == ResponseCode.SUCCESS
        # the name server's /metrics carries the controller's series
        samples = await scrape(ns.metrics.port)
        group = {"cluster": "DefaultCluster", "broker_set": "broker-c"}
        assert value(samples, "rocketq_controller_role") == 1
        assert value(samples, "rocketq_controller_master_epoch", **group) == 1
        assert value(samples, "rocketq_controller_sync_state_set_size", **group) == 1
        assert value(samples, "rocketq_controller_active_broker_num", **group) == 1
        assert value(samples, "rocketq_controller_election_total", election_result="new_master_elected", **group) == 1
        rc, out, err = await mqadmin("getSyncStateSet", "-a", ns.addr, "-b", "broker-c")
        assert rc == 0 and "#MasterBrokerId\t1" in out and "#MasterEpoch\t1" in out, err
        rc, out, _ = await mqadmin("getControllerMetaData", "-a", ns.addr)
        assert f"#ControllerLeaderAddress\t{ns.addr}" in out
