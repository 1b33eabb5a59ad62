"""JSON bodies of RocketMQ 5.x controller mode (J 5.5.0 ``remoting/.../protocol/body``).

| body (class)          | command(s)                                       | shape                                          |
|-----------------------|--------------------------------------------------|------------------------------------------------|
| SyncStateSet          | 1001 request + reply, 1003/1004 reply, 1008      | {syncStateSet:[id…], syncStateSetEpoch}        |
| BrokerMemberGroup     | inside ElectMasterResponseBody                   | {cluster, brokerName, brokerAddrs:{id: addr}}  |
| ElectMasterResponseBody| 1002 reply                                      | {brokerMemberGroup, syncStateSet:[id…]}        |
| BrokerReplicasInfo    | 1006 reply (the request body is a JSON list of   | {replicasInfoTable:{brokerName: {masterBrokerId|
|                       | broker names)                                    |  masterAddress masterEpoch syncStateSetEpoch   |
|                       |                                                  |  inSyncReplicas:[{brokerName brokerId          |
|                       |                                                  |  brokerAddress alive}] notInSyncReplicas}}}    |
| EpochEntryCache       | 1007 reply (a broker's epoch file)               | {clusterName, brokerName, brokerId,            |
|                       |                                                  |  epochList:[{epoch,startOffset,endOffset}],    |
|                       |                                                  |  maxOffset}                                    |

Maps keyed by a broker id are written with quoted keys (``{"1":"addr"}``), which fastjson reads into its
``Map<Long, String>``; fastjson's own unquoted form (``{1:"addr"}``) reads here through ``loads_lenient``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from protocol.bodies.base import JsonBody
from protocol.bodies.lenient import BodyBytes, BodyDecodeError, dumps, loads_lenient

LONG_MAX = (1 << 63) - 1


def _f(alias: str, default: Any) -> Any:
    return Field(default=default, validation_alias=alias, serialization_alias=alias)


def _none_empty(v: Any) -> Any:
    return [] if v is None else v


class SyncStateSet(JsonBody):
    sync_state_set: list[int] = _f("syncStateSet", [])
    sync_state_set_epoch: int = _f("syncStateSetEpoch", 0)

    _ids = field_validator("sync_state_set", mode="before")(_none_empty)


class BrokerMemberGroup(JsonBody):
    cluster: str | None = None
    broker_name: str | None = _f("brokerName", None)
    broker_addrs: dict[int, str] = _f("brokerAddrs", {})

    @field_validator("broker_addrs", mode="before")
    @classmethod
    def _addrs(cls, v: Any) -> Any:
        return {} if v is None else v


class ElectMasterResponseBody(JsonBody):
    broker_member_group: BrokerMemberGroup | None = _f("brokerMemberGroup", None)
    sync_state_set: list[int] = _f("syncStateSet", [])

    _ids = field_validator("sync_state_set", mode="before")(_none_empty)


class ReplicaIdentity(JsonBody):
    broker_name: str | None = _f("brokerName", None)
    broker_id: int | None = _f("brokerId", None)
    broker_address: str | None = _f("brokerAddress", None)
    alive: bool | None = None

    def java_string(self) -> str:
        """J ``ReplicaIdentity.toString()``, what mqadmin getSyncStateSet prints."""
        addr = "null" if self.broker_address is None else f"'{self.broker_address}'"
        name = "null" if self.broker_name is None else f"'{self.broker_name}'"
        alive = "null" if self.alive is None else str(self.alive).lower()
        return f"ReplicaIdentity{{brokerName={name}, brokerId={self.broker_id}, brokerAddress={addr}, alive={alive}}}"


class ReplicasInfo(JsonBody):
    master_broker_id: int | None = _f("masterBrokerId", None)
    master_address: str | None = _f("masterAddress", None)
    master_epoch: int = _f("masterEpoch", 0)
    sync_state_set_epoch: int = _f("syncStateSetEpoch", 0)
    in_sync_replicas: list[ReplicaIdentity] = _f("inSyncReplicas", [])
    not_in_sync_replicas: list[ReplicaIdentity] = _f("notInSyncReplicas", [])

    _lists = field_validator("in_sync_replicas", "not_in_sync_replicas", mode="before")(_none_empty)


class BrokerReplicasInfo(JsonBody):
    replicas_info_table: dict[str, ReplicasInfo] = _f("replicasInfoTable", {})


class EpochEntry(JsonBody):
    epoch: int = 0
    start_offset: int = _f("startOffset", 0)
    end_offset: int = _f("endOffset", LONG_MAX)

    def java_string(self) -> str:
        """J ``EpochEntry.toString()`` (mqadmin getBrokerEpoch)."""
        return f"EpochEntry{{epoch={self.epoch}, startOffset={self.start_offset}, endOffset={self.end_offset}}}"


class EpochEntryCache(JsonBody):
    cluster_name: str | None = _f("clusterName", None)
    broker_name: str | None = _f("brokerName", None)
    broker_id: int = _f("brokerId", 0)
    epoch_list: list[EpochEntry] = _f("epochList", [])
    max_offset: int = _f("maxOffset", 0)

    _lists = field_validator("epoch_list", mode="before")(_none_empty)


def encode_broker_names(names: list[str]) -> bytes:
    """CONTROLLER_GET_SYNC_STATE_DATA request body: J ``RemotingSerializable.encode(List<String>)``."""
    return dumps(list(names))


def decode_broker_names(body: BodyBytes) -> list[str]:
    raw = loads_lenient(body)
    if not isinstance(raw, list) or not all(isinstance(n, str) for n in raw):
        raise BodyDecodeError("broker name list: not a JSON list of strings")
    return list(raw)
