"""The controller's state machine (``controller.state``) and election policy (``controller.elect``), sans IO: J
5.5.0's ``ReplicasInfoManager`` rules — registration, the first master, SyncStateSet alteration with its fencing
checks, elections only from the SyncStateSet unless ``enableElectUncleanMaster``, every election bumping the
MasterEpoch — and the snapshot round trip a restart relies on."""

from __future__ import annotations

from controller.elect import LiveInfo
from controller.state import ControllerState, Decision
from protocol.bodies.controller import BrokerReplicasInfo, ElectMasterResponseBody, SyncStateSet
from protocol.codes import ResponseCode as R
from protocol.headers.controller import (
    AlterSyncStateSetRequestHeader,
    ApplyBrokerIdRequestHeader,
    CleanControllerBrokerDataRequestHeader,
    ElectMasterRequestHeader,
    ElectMasterResponseHeader,
    GetReplicaInfoResponseHeader,
    RegisterBrokerToControllerRequestHeader,
    RegisterBrokerToControllerResponseHeader,
)

C, B = "DefaultCluster", "broker-a"


class World:
    """A state machine plus who is live and what their heartbeats said."""

    def __init__(self, *, unclean: bool = False) -> None:
        self.state = ControllerState(elect_unclean=unclean)
        self.live: set[int] = set()
        self.info: dict[int, LiveInfo] = {}

    def alive(self, cluster: str, name: str, broker_id: int) -> bool:
        return broker_id in self.live

    def info_of(self, cluster: str, name: str, broker_id: int) -> LiveInfo | None:
        return self.info.get(broker_id)

    def commit(self, d: Decision) -> Decision:
        for event in d.events:
            self.state.apply(event)
        return d

    def join(self, broker_id: int) -> None:
        """J's registration: GET_NEXT_BROKER_ID, APPLY_BROKER_ID, REGISTER; then live."""
        nxt = self.state.next_broker_id(C, B).header["nextBrokerId"]
        assert int(nxt) == broker_id
        code = f"127.0.0.1:{10910 + broker_id};1700000000000"
        req = ApplyBrokerIdRequestHeader(
            cluster_name=C, broker_name=B, applied_broker_id=broker_id, register_check_code=code
        )
        assert self.commit(self.state.apply_broker_id(req)).code == R.SUCCESS
        reg = RegisterBrokerToControllerRequestHeader(
            cluster_name=C, broker_name=B, broker_id=broker_id, broker_address=f"127.0.0.1:{10910 + broker_id}"
        )
        assert self.commit(self.state.register_broker(reg, self.alive)).code == R.SUCCESS
        self.live.add(broker_id)

    def elect(self, broker_id: int = -1, designate: bool = False) -> Decision:
        req = ElectMasterRequestHeader(cluster_name=C, broker_name=B, broker_id=broker_id, designate_elect=designate)
        return self.commit(self.state.elect_master(req, self.alive, self.info_of))

    def alter(self, members: list[int], *, master: int, epoch: int, sss_epoch: int) -> Decision:
        req = AlterSyncStateSetRequestHeader(broker_name=B, master_broker_id=master, master_epoch=epoch)
        return self.commit(
            self.state.alter_sync_state_set(
                req, SyncStateSet(sync_state_set=members, sync_state_set_epoch=sss_epoch), self.alive
            )
        )

    @property
    def info_row(self) -> tuple[int | None, int, list[int], int]:
        s = self.state.sync_states[B]
        return s.master_broker_id, s.master_epoch, sorted(s.sync_state_set), s.sync_state_set_epoch


def three_replicas(**kw: bool) -> World:
    w = World(**kw)
    for i in (1, 2, 3):
        w.join(i)
    d = w.elect(1)  # the first broker to ask becomes the group's first master
    assert d.code == R.SUCCESS
    assert w.alter([1, 2, 3], master=1, epoch=1, sss_epoch=1).code == R.SUCCESS
    return w


def test_first_election_makes_the_asking_broker_master_with_epoch_1() -> None:
    w = World()
    w.join(1)
    w.join(2)
    d = w.elect(2)
    head = ElectMasterResponseHeader.from_ext_fields(d.header)
    assert (d.code, head.master_broker_id, head.master_address, head.master_epoch, head.sync_state_set_epoch) == (
        R.SUCCESS,
        2,
        "127.0.0.1:10912",
        1,
        1,
    )
    body = ElectMasterResponseBody.decode(d.body or b"")
    assert body.sync_state_set == [2] and body.broker_member_group is not None
    assert body.broker_member_group.broker_addrs == {1: "127.0.0.1:10911", 2: "127.0.0.1:10912"}
    assert w.info_row == (2, 1, [2], 1)
    # a later registration learns the master from the controller
    reg = RegisterBrokerToControllerRequestHeader(
        cluster_name=C, broker_name=B, broker_id=1, broker_address="127.0.0.1:10911"
    )
    got = RegisterBrokerToControllerResponseHeader.from_ext_fields(w.state.register_broker(reg, w.alive).header)
    assert (got.master_broker_id, got.master_epoch, got.sync_state_set_epoch) == (2, 1, 1)


def test_alter_sync_state_set_checks_master_epochs_members_and_liveness_in_j_order() -> None:
    w = World()
    for i in (1, 2, 3):
        w.join(i)
    w.elect(1)
    ok = w.alter([1, 2], master=1, epoch=1, sss_epoch=1)
    assert ok.code == R.SUCCESS and ok.header == {"newSyncStateSetEpoch": "2"}
    assert SyncStateSet.decode(ok.body or b"") == SyncStateSet(sync_state_set=[1, 2], sync_state_set_epoch=2)
    assert w.info_row == (1, 1, [1, 2], 2)
    # a stale SyncStateSet epoch (the master's view is one change behind) is refused and changes nothing
    stale = w.alter([1, 2, 3], master=1, epoch=1, sss_epoch=1)
    assert stale.code == R.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH and not stale.events
    assert "current syncStateSet epoch is:{2}, not {1}" in (stale.remark or "")
    assert w.alter([1, 2, 3], master=1, epoch=0, sss_epoch=2).code == R.CONTROLLER_FENCED_MASTER_EPOCH
    assert w.alter([1, 2, 3], master=2, epoch=1, sss_epoch=2).code == R.CONTROLLER_INVALID_MASTER
    assert w.alter([1, 2], master=1, epoch=1, sss_epoch=2).code == R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED  # same
    assert w.alter([1, 4], master=1, epoch=1, sss_epoch=2).code == R.CONTROLLER_INVALID_REPLICAS
    assert w.alter([2, 3], master=1, epoch=1, sss_epoch=2).code == R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED
    w.live.discard(3)
    assert w.alter([1, 2, 3], master=1, epoch=1, sss_epoch=2).code == R.CONTROLLER_BROKER_NOT_ALIVE
    assert w.info_row == (1, 1, [1, 2], 2)


def test_a_dead_master_is_replaced_from_the_sync_state_set_only_and_the_epoch_moves_on() -> None:
    w = three_replicas()
    assert w.alter([1, 2], master=1, epoch=1, sss_epoch=2).code == R.SUCCESS  # 3 fell behind
    w.live.discard(1)
    d = w.elect()  # the controller's own trigger
    assert d.code == R.SUCCESS and w.info_row == (2, 2, [2], 4)
    # now 2 dies too: 3 is live but was never caught up, so nobody is elected; the master is recorded as gone
    w.live.discard(2)
    gone = w.elect()
    assert gone.code == R.CONTROLLER_MASTER_NOT_AVAILABLE
    assert w.info_row == (None, 3, [2], 4)
    # a broker's own request (not the controller's trigger) that finds nobody changes nothing
    assert w.elect(3).code == R.CONTROLLER_ELECT_MASTER_FAILED and w.info_row == (None, 3, [2], 4)


def test_unclean_election_takes_a_replica_outside_the_sync_state_set() -> None:
    w = three_replicas(unclean=True)
    assert w.alter([1], master=1, epoch=1, sss_epoch=2).code == R.SUCCESS
    w.live.discard(1)
    d = w.elect()
    assert d.code == R.SUCCESS and w.info_row[0] in (2, 3) and w.info_row[1] == 2


def test_policy_prefers_highest_epoch_then_offset_then_lowest_priority() -> None:
    w = three_replicas()
    w.info = {2: LiveInfo(1, 500, 5), 3: LiveInfo(1, 900, 9)}
    w.live.discard(1)
    assert w.elect().code == R.SUCCESS and w.info_row[0] == 3  # most data
    w2 = three_replicas()
    w2.info = {2: LiveInfo(1, 900, 1), 3: LiveInfo(1, 900, 2)}
    w2.live.discard(1)
    assert w2.elect().code == R.SUCCESS and w2.info_row[0] == 2  # same data: priority 1 wins


def test_designated_election_and_a_master_that_is_still_alive() -> None:
    w = three_replicas()
    still = w.elect()
    assert still.code == R.CONTROLLER_MASTER_STILL_EXIST and not still.events
    assert ElectMasterResponseHeader.from_ext_fields(still.header).master_epoch == 1
    d = w.elect(3, designate=True)  # mqadmin electMaster -b 3
    assert d.code == R.SUCCESS and w.info_row == (3, 2, [3], 3)
    assert w.elect(9, designate=True).code == R.CONTROLLER_ELECT_MASTER_FAILED  # not a live in-sync replica


def test_broker_id_application_is_first_come_and_idempotent_for_the_same_check_code() -> None:
    w = World()
    wrong_first = ApplyBrokerIdRequestHeader(
        cluster_name=C, broker_name=B, applied_broker_id=2, register_check_code="a;1"
    )
    assert w.state.apply_broker_id(wrong_first).code == R.CONTROLLER_BROKER_ID_INVALID
    w.join(1)
    same = ApplyBrokerIdRequestHeader(
        cluster_name=C, broker_name=B, applied_broker_id=1, register_check_code="127.0.0.1:10911;1700000000000"
    )
    assert w.state.apply_broker_id(same).code == R.SUCCESS  # a broker retrying after a crash
    thief = ApplyBrokerIdRequestHeader(cluster_name=C, broker_name=B, applied_broker_id=1, register_check_code="x;2")
    assert w.state.apply_broker_id(thief).code == R.CONTROLLER_BROKER_ID_INVALID
    assert w.state.next_broker_id(C, B).header["nextBrokerId"] == "2"


def test_clean_broker_data_refuses_live_brokers_and_forgets_dead_ones() -> None:
    w = three_replicas()
    req = CleanControllerBrokerDataRequestHeader(cluster_name=C, broker_name=B, broker_controller_ids_to_clean="3")
    refused = w.commit(w.state.clean_broker_data(req, w.alive))
    assert refused.code == R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA and "still alive" in (refused.remark or "")
    w.live.discard(3)
    assert w.commit(w.state.clean_broker_data(req, w.alive)).code == R.SUCCESS
    assert sorted(w.state.replicas[B].brokers) == [1, 2] and w.info_row[2] == [1, 2]
    whole = CleanControllerBrokerDataRequestHeader(cluster_name=C, broker_name=B, is_clean_living_broker=True)
    assert w.commit(w.state.clean_broker_data(whole, w.alive)).code == R.SUCCESS
    assert not w.state.contains(B)
    assert w.state.replica_info(B).code == R.CONTROLLER_BROKER_METADATA_NOT_EXIST


def test_sync_state_data_and_replica_info_report_what_mqadmin_prints() -> None:
    w = three_replicas()
    w.live.discard(3)
    info = BrokerReplicasInfo.decode(w.state.sync_state_data([B, "nope"], w.alive).body or b"")
    r = info.replicas_info_table[B]
    assert (r.master_broker_id, r.master_address, r.master_epoch, r.sync_state_set_epoch) == (
        1,
        "127.0.0.1:10911",
        1,
        2,
    )
    assert [(m.broker_id, m.alive) for m in r.in_sync_replicas] == [(1, True), (2, True), (3, False)]
    assert list(info.replicas_info_table) == [B]
    head = GetReplicaInfoResponseHeader.from_ext_fields(w.state.replica_info(B).header)
    assert (head.master_broker_id, head.master_epoch) == (1, 1)
    assert w.state.need_reelect(w.alive) == []
    w.live.discard(1)
    assert w.state.need_reelect(w.alive) == [B]


def test_snapshot_round_trip_keeps_every_group() -> None:
    w = three_replicas()
    copy = ControllerState()
    copy.load_json(w.state.to_json())
    assert copy.to_json() == w.state.to_json()
    assert copy.replicas[B].next_assign_broker_id == 4 and copy.sync_states[B].sync_state_set == {1, 2, 3}
