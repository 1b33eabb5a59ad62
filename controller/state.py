"""The controller's replicated state machine, pure (no IO, no clock): per broker group its replicas, master,
MasterEpoch and SyncStateSet with its epoch. J 5.5.0's ``ReplicasInfoManager`` rules, kept to the letter.

Every request is answered in two steps, as in J: a *decision* (``alter_sync_state_set``, ``elect_master`` …) reads
the state and returns a ``Decision`` — the reply code, remark, header, body, and the *events* to replicate; the
state changes only when an event is *applied* (``apply``), on every controller, in Raft log order. A decision is
taken on the leader only, one at a time, after every earlier event has been applied.

Events (JSON objects, the Raft log's entries):

| type                   | fields                                            | effect                                   |
|------------------------|---------------------------------------------------|------------------------------------------|
| APPLY_BROKER_ID        | clusterName brokerName brokerAddress brokerId     | a replica joins (a group is created on   |
|                        | registerCheckCode                                 | its first); nextBrokerId moves on        |
| UPDATE_BROKER_ADDRESS  | brokerName brokerId brokerAddress                 | the replica's address                    |
| ALTER_SYNC_STATE_SET   | brokerName syncStateSet                           | new set, syncStateSetEpoch + 1           |
| ELECT_MASTER           | brokerName newMasterElected newMasterBrokerId     | elected: master = id, set = {id}, both   |
|                        |                                                   | epochs + 1; not: master = none, epoch + 1|
| CLEAN_BROKER_DATA      | brokerName brokerIdSetToClean (null = all)        | replicas (or the group) forgotten        |

Snapshot (``to_json``): ``{"replicas": {brokerName: {clusterName, brokerName, nextAssignBrokerId, brokers:
{id: [address, registerCheckCode]}}}, "syncStates": {brokerName: {clusterName, brokerName, masterBrokerId,
masterEpoch, syncStateSet, syncStateSetEpoch}}}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.elect import Alive, LiveInfoOf, elect
from protocol.bodies.controller import (
    BrokerMemberGroup,
    BrokerReplicasInfo,
    ElectMasterResponseBody,
    ReplicaIdentity,
    ReplicasInfo,
    SyncStateSet,
)
from protocol.codes import ResponseCode as R
from protocol.headers.controller import (
    AlterSyncStateSetRequestHeader,
    AlterSyncStateSetResponseHeader,
    ApplyBrokerIdRequestHeader,
    ApplyBrokerIdResponseHeader,
    CleanControllerBrokerDataRequestHeader,
    ElectMasterRequestHeader,
    ElectMasterResponseHeader,
    GetNextBrokerIdResponseHeader,
    GetReplicaInfoResponseHeader,
    RegisterBrokerToControllerRequestHeader,
    RegisterBrokerToControllerResponseHeader,
)

FIRST_BROKER_CONTROLLER_ID = 1  # J MixAll.FIRST_BROKER_CONTROLLER_ID
Event = dict[str, Any]


@dataclass(slots=True)
class Decision:
    """A request's answer and the events that must be replicated before it is sent."""

    code: int = R.SUCCESS
    remark: str | None = None
    header: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    events: list[Event] = field(default_factory=list)

    def fail(self, code: int, remark: str) -> Decision:
        self.code, self.remark = code, remark
        return self


@dataclass(slots=True)
class ReplicaGroup:
    """J ``BrokerReplicaInfo``: the replicas of one broker group (id → address, register check code)."""

    cluster_name: str
    broker_name: str
    next_assign_broker_id: int = FIRST_BROKER_CONTROLLER_ID
    brokers: dict[int, tuple[str, str]] = field(default_factory=dict)

    def add(self, broker_id: int, address: str, check_code: str) -> None:
        self.brokers[broker_id] = (address, check_code)
        self.next_assign_broker_id += 1

    def address(self, broker_id: int | None) -> str | None:
        entry = self.brokers.get(broker_id) if broker_id is not None else None
        return entry[0] if entry else None


@dataclass(slots=True)
class SyncStateInfo:
    """J ``SyncStateInfo``: the group's master, MasterEpoch, SyncStateSet and its epoch."""

    cluster_name: str
    broker_name: str
    master_broker_id: int | None = None
    master_epoch: int = 0
    sync_state_set: set[int] = field(default_factory=set)
    sync_state_set_epoch: int = 0

    def update_master(self, master: int | None) -> None:
        self.master_broker_id = master
        self.master_epoch += 1

    def update_sync_state_set(self, members: set[int]) -> None:
        self.sync_state_set = set(members)
        self.sync_state_set_epoch += 1


class ControllerState:
    """All broker groups. Decisions take the liveness predicate from the caller (the heartbeat table)."""

    def __init__(self, *, elect_unclean: bool = False) -> None:
        self.elect_unclean = elect_unclean
        self.replicas: dict[str, ReplicaGroup] = {}
        self.sync_states: dict[str, SyncStateInfo] = {}

    def contains(self, broker_name: str) -> bool:
        return broker_name in self.replicas and broker_name in self.sync_states

    def group_names(self) -> list[str]:
        return sorted(n for n in self.replicas if n in self.sync_states)

    # -- decisions -----------------------------------------------------------------------------------------------

    def alter_sync_state_set(
        self, req: AlterSyncStateSetRequestHeader, proposed: SyncStateSet, alive: Alive
    ) -> Decision:
        d = Decision()
        name = req.broker_name
        if not self.contains(name):
            return d.fail(R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "Broker metadata is not existed")
        info, group = self.sync_states[name], self.replicas[name]
        new_set = set(proposed.sync_state_set)
        if new_set == info.sync_state_set:
            return d.fail(
                R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED,
                "The newSyncStateSet is equal with oldSyncStateSet, no needed to update syncStateSet",
            )
        if info.master_broker_id is None or info.master_broker_id != req.master_broker_id:
            return d.fail(
                R.CONTROLLER_INVALID_MASTER,
                f"Rejecting alter syncStateSet request because the current leader is:{{{_j(info.master_broker_id)}}}, "
                f"not {{{_j(req.master_broker_id)}}}",
            )
        if req.master_epoch != info.master_epoch:
            return d.fail(
                R.CONTROLLER_FENCED_MASTER_EPOCH,
                f"Rejecting alter syncStateSet request because the current master epoch is:{{{info.master_epoch}}}, "
                f"not {{{_j(req.master_epoch)}}}",
            )
        if proposed.sync_state_set_epoch != info.sync_state_set_epoch:
            return d.fail(
                R.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH,
                "Rejecting alter syncStateSet request because the current syncStateSet epoch is:"
                f"{{{info.sync_state_set_epoch}}}, not {{{proposed.sync_state_set_epoch}}}",
            )
        for replica in sorted(new_set):
            if replica not in group.brokers:
                return d.fail(
                    R.CONTROLLER_INVALID_REPLICAS,
                    f"Rejecting alter syncStateSet request because the replicas {{{replica}}} don't exist",
                )
            if not alive(group.cluster_name, name, replica):
                return d.fail(
                    R.CONTROLLER_BROKER_NOT_ALIVE,
                    f"Rejecting alter syncStateSet request because the replicas {{{replica}}} don't alive",
                )
        if info.master_broker_id not in new_set:
            return d.fail(
                R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED,
                "Rejecting alter syncStateSet request because the newSyncStateSet don't contains origin leader "
                f"{{{info.master_broker_id}}}",
            )
        epoch = info.sync_state_set_epoch + 1
        d.header = AlterSyncStateSetResponseHeader(new_sync_state_set_epoch=epoch).to_ext_fields()
        d.body = SyncStateSet(sync_state_set=sorted(new_set), sync_state_set_epoch=epoch).encode()
        d.events.append({"type": "ALTER_SYNC_STATE_SET", "brokerName": name, "syncStateSet": sorted(new_set)})
        return d

    def elect_master(self, req: ElectMasterRequestHeader, alive: Alive, info_of: LiveInfoOf) -> Decision:
        d = Decision()
        name, broker_id = req.broker_name, req.broker_id
        if not self.contains(name):
            return d.fail(R.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED, "Broker hasn't been registered")
        info, group = self.sync_states[name], self.replicas[name]
        old = info.master_broker_id
        every = set(group.brokers) if self.elect_unclean else None
        new: int | None = broker_id if info.master_epoch == 0 else None  # the group's first master: who asks
        if new is None or new == -1:
            prefer = broker_id if req.designate_elect else None
            new = elect(group.cluster_name, name, info.sync_state_set, every, old, prefer, alive, info_of)
        if new is not None and new == old:
            d.header = ElectMasterResponseHeader(
                master_broker_id=old,
                master_address=group.address(old),
                master_epoch=info.master_epoch,
                sync_state_set_epoch=info.sync_state_set_epoch,
            ).to_ext_fields()
            d.body = ElectMasterResponseBody(sync_state_set=sorted(info.sync_state_set)).encode()
            return d.fail(
                R.CONTROLLER_MASTER_STILL_EXIST,
                f"The old master {old} is still alive, not need to elect new master for broker {name}",
            )
        if new is not None:
            d.header = ElectMasterResponseHeader(
                master_broker_id=new,
                master_address=group.address(new),
                master_epoch=info.master_epoch + 1,
                sync_state_set_epoch=info.sync_state_set_epoch + 1,
            ).to_ext_fields()
            members = BrokerMemberGroup(cluster=group.cluster_name, broker_name=name, broker_addrs=self._addrs(group))
            d.body = ElectMasterResponseBody(broker_member_group=members, sync_state_set=[new]).encode()
            d.events.append(
                {"type": "ELECT_MASTER", "brokerName": name, "newMasterElected": True, "newMasterBrokerId": new}
            )
            return d
        if broker_id == -1:  # the controller's own trigger: record that the master is gone
            d.events.append({"type": "ELECT_MASTER", "brokerName": name, "newMasterElected": False})
            return d.fail(
                R.CONTROLLER_MASTER_NOT_AVAILABLE, "Old master has down and failed to elect a new broker master"
            )
        return d.fail(R.CONTROLLER_ELECT_MASTER_FAILED, "Failed to elect a new master")

    @staticmethod
    def _addrs(group: ReplicaGroup) -> dict[int, str]:
        return {i: addr for i, (addr, _code) in sorted(group.brokers.items())}

    def next_broker_id(self, cluster: str, name: str) -> Decision:
        group = self.replicas.get(name)
        nxt = FIRST_BROKER_CONTROLLER_ID if group is None else group.next_assign_broker_id
        hdr = GetNextBrokerIdResponseHeader(cluster_name=cluster, broker_name=name, next_broker_id=nxt)
        return Decision(header=hdr.to_ext_fields())

    def apply_broker_id(self, req: ApplyBrokerIdRequestHeader) -> Decision:
        name, broker_id, code = req.broker_name, req.applied_broker_id, req.register_check_code
        d = Decision(
            header=ApplyBrokerIdResponseHeader(cluster_name=req.cluster_name, broker_name=name).to_ext_fields()
        )
        if broker_id is None:
            return d.fail(R.CONTROLLER_INVALID_REQUEST, "appliedBrokerId is null")
        event: Event = {
            "type": "APPLY_BROKER_ID",
            "clusterName": req.cluster_name,
            "brokerName": name,
            "brokerAddress": code.split(";")[0],
            "brokerId": broker_id,
            "registerCheckCode": code,
        }
        group = self.replicas.get(name)
        if group is None:
            if broker_id == FIRST_BROKER_CONTROLLER_ID:
                d.events.append(event)
                return d
            return d.fail(
                R.CONTROLLER_BROKER_ID_INVALID,
                f"Broker-set: {name} hasn't been registered in controller, but broker try to apply brokerId: {broker_id}",
            )
        if broker_id not in group.brokers or group.brokers[broker_id][1] == code:
            d.events.append(event)
            return d
        return d.fail(R.CONTROLLER_BROKER_ID_INVALID, f"Fail to apply brokerId: {broker_id} in broker-set: {name}")

    def register_broker(self, req: RegisterBrokerToControllerRequestHeader, alive: Alive) -> Decision:
        name, cluster, broker_id = req.broker_name, req.cluster_name, req.broker_id
        hdr = RegisterBrokerToControllerResponseHeader(cluster_name=cluster, broker_name=name)
        d = Decision(header=hdr.to_ext_fields())
        if not self.contains(name):
            return d.fail(
                R.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED, f"Broker-set: {name} hasn't been registered in controller"
            )
        group, info = self.replicas[name], self.sync_states[name]
        if broker_id is None or broker_id not in group.brokers:
            return d.fail(
                R.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED,
                f"BrokerId: {_j(broker_id)} hasn't been registered in broker-set: {name}",
            )
        master = info.master_broker_id
        if master is not None and alive(cluster, name, master):
            hdr = RegisterBrokerToControllerResponseHeader(
                cluster_name=cluster,
                broker_name=name,
                master_broker_id=master,
                master_address=group.address(master),
                master_epoch=info.master_epoch,
                sync_state_set_epoch=info.sync_state_set_epoch,
            )
            d.header = hdr.to_ext_fields()
        d.body = self._sync_state_body(info)
        if req.broker_address != group.address(broker_id):
            d.events.append(
                {
                    "type": "UPDATE_BROKER_ADDRESS",
                    "clusterName": cluster,
                    "brokerName": name,
                    "brokerId": broker_id,
                    "brokerAddress": req.broker_address,
                }
            )
        return d

    @staticmethod
    def _sync_state_body(info: SyncStateInfo) -> bytes:
        return SyncStateSet(
            sync_state_set=sorted(info.sync_state_set), sync_state_set_epoch=info.sync_state_set_epoch
        ).encode()

    def replica_info(self, name: str) -> Decision:
        if not self.contains(name):
            return Decision().fail(R.CONTROLLER_BROKER_METADATA_NOT_EXIST, "Broker metadata is not existed")
        info, group = self.sync_states[name], self.replicas[name]
        hdr = GetReplicaInfoResponseHeader(
            master_broker_id=info.master_broker_id,
            master_address=group.address(info.master_broker_id),
            master_epoch=info.master_epoch,
        )
        return Decision(header=hdr.to_ext_fields(), body=self._sync_state_body(info))

    def sync_state_data(self, names: list[str], alive: Alive) -> Decision:
        table: dict[str, ReplicasInfo] = {}
        for name in names:
            if not self.contains(name):
                continue
            info, group = self.sync_states[name], self.replicas[name]
            in_sync: list[ReplicaIdentity] = []
            not_in_sync: list[ReplicaIdentity] = []
            for broker_id, (addr, _code) in sorted(group.brokers.items()):
                ident = ReplicaIdentity(
                    broker_name=name,
                    broker_id=broker_id,
                    broker_address=addr,
                    alive=alive(group.cluster_name, name, broker_id),
                )
                (in_sync if broker_id in info.sync_state_set else not_in_sync).append(ident)
            table[name] = ReplicasInfo(
                master_broker_id=info.master_broker_id,
                master_address=group.address(info.master_broker_id),
                master_epoch=info.master_epoch,
                sync_state_set_epoch=info.sync_state_set_epoch,
                in_sync_replicas=in_sync,
                not_in_sync_replicas=not_in_sync,
            )
        return Decision(body=BrokerReplicasInfo(replicas_info_table=table).encode())

    def clean_broker_data(self, req: CleanControllerBrokerDataRequestHeader, alive: Alive) -> Decision:
        d = Decision()
        name, ids_text = req.broker_name, (req.broker_controller_ids_to_clean or "").strip()
        ids: list[int] | None = None
        if not req.is_clean_living_broker:
            info = self.sync_states.get(name)
            if not ids_text and info is not None and info.master_broker_id is not None:
                return d.fail(
                    R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA, f"Broker {name} is still alive, clean up failure"
                )
            if ids_text:
                try:
                    ids = sorted({int(part) for part in ids_text.split(";")})
                except ValueError as exc:
                    return d.fail(
                        R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA,
                        f"Please set the option <brokerControllerIdsToClean> according to the format, exception: {exc}",
                    )
                for broker_id in ids:
                    if alive(req.cluster_name or "", name, broker_id):
                        return d.fail(
                            R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA,
                            f"Broker [{name},  {broker_id}] is still alive, clean up failure",
                        )
        if self.contains(name):
            d.events.append({"type": "CLEAN_BROKER_DATA", "brokerName": name, "brokerIdSetToClean": ids})
            return d
        return d.fail(
            R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA, f"Broker {name} is not existed,clean broker data failure."
        )

    def need_reelect(self, alive: Alive) -> list[str]:
        """Groups whose master is not live while another replica is (J ``scanNeedReelectBrokerSets``)."""
        out = []
        for name, info in sorted(self.sync_states.items()):
            group = self.replicas.get(name)
            master = info.master_broker_id
            if group is None or master is None or alive(info.cluster_name, name, master):
                continue
            if any(alive(info.cluster_name, name, b) for b in group.brokers):
                out.append(name)
        return out

    # -- applying events -----------------------------------------------------------------------------------------

    def apply(self, event: Event) -> None:
        """Apply one replicated event. Unknown types are ignored (a newer controller's log read by an older one)."""
        kind, name = event.get("type"), str(event.get("brokerName", ""))
        if kind == "APPLY_BROKER_ID":
            group = self.replicas.get(name)
            broker_id = int(event["brokerId"])
            if self.contains(name) and group is not None:
                if broker_id not in group.brokers:
                    group.add(broker_id, str(event["brokerAddress"]), str(event["registerCheckCode"]))
            else:
                cluster = str(event.get("clusterName", ""))
                group = ReplicaGroup(cluster, name)
                group.add(broker_id, str(event["brokerAddress"]), str(event["registerCheckCode"]))
                self.replicas[name] = group
                self.sync_states[name] = SyncStateInfo(cluster, name)
        elif kind == "UPDATE_BROKER_ADDRESS":
            group = self.replicas.get(name)
            broker_id = int(event["brokerId"])
            if group is not None and broker_id in group.brokers:
                group.brokers[broker_id] = (str(event["brokerAddress"]), group.brokers[broker_id][1])
        elif kind == "ALTER_SYNC_STATE_SET":
            if self.contains(name):
                self.sync_states[name].update_sync_state_set({int(i) for i in event["syncStateSet"]})
        elif kind == "ELECT_MASTER":
            if self.contains(name):
                info = self.sync_states[name]
                if event.get("newMasterElected"):
                    new = int(event["newMasterBrokerId"])
                    info.update_master(new)
                    info.update_sync_state_set({new})
                else:
                    info.update_master(None)
        elif kind == "CLEAN_BROKER_DATA":
            self._clean(name, event.get("brokerIdSetToClean"))

    def _clean(self, name: str, ids: list[int] | None) -> None:
        if not ids:
            self.replicas.pop(name, None)
            self.sync_states.pop(name, None)
            return
        if not self.contains(name):
            return
        group, info = self.replicas[name], self.sync_states[name]
        for broker_id in ids:
            group.brokers.pop(int(broker_id), None)
            info.sync_state_set.discard(int(broker_id))
        if not group.brokers:
            del self.replicas[name]
        if not info.sync_state_set:
            del self.sync_states[name]

    # -- snapshot ------------------------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "replicas": {
                n: {
                    "clusterName": g.cluster_name,
                    "brokerName": g.broker_name,
                    "nextAssignBrokerId": g.next_assign_broker_id,
                    "brokers": {str(i): [a, c] for i, (a, c) in sorted(g.brokers.items())},
                }
                for n, g in sorted(self.replicas.items())
            },
            "syncStates": {
                n: {
                    "clusterName": s.cluster_name,
                    "brokerName": s.broker_name,
                    "masterBrokerId": s.master_broker_id,
                    "masterEpoch": s.master_epoch,
                    "syncStateSet": sorted(s.sync_state_set),
                    "syncStateSetEpoch": s.sync_state_set_epoch,
                }
                for n, s in sorted(self.sync_states.items())
            },
        }

    def load_json(self, data: dict[str, Any]) -> None:
        """Replace the state with a snapshot (``to_json``'s form)."""
        self.replicas = {
            n: ReplicaGroup(
                str(g["clusterName"]),
                str(g["brokerName"]),
                int(g["nextAssignBrokerId"]),
                {int(i): (str(v[0]), str(v[1])) for i, v in g["brokers"].items()},
            )
            for n, g in data.get("replicas", {}).items()
        }
        self.sync_states = {
            n: SyncStateInfo(
                str(s["clusterName"]),
                str(s["brokerName"]),
                None if s["masterBrokerId"] is None else int(s["masterBrokerId"]),
                int(s["masterEpoch"]),
                {int(i) for i in s["syncStateSet"]},
                int(s["syncStateSetEpoch"]),
            )
            for n, s in data.get("syncStates", {}).items()
        }


def _j(value: object) -> str:
    """A Java ``Long``/``Integer`` in a message: ``null`` for None."""
    return "null" if value is None else str(value)
