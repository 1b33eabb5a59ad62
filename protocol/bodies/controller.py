"""JSON bodies of the 5.x controller-mode codes, with J's field names.

| body (class)            | command(s)                                                   | shape                            |
|-------------------------|--------------------------------------------------------------|----------------------------------|
| SyncStateSet            | CONTROLLER_REGISTER_BROKER / GET_REPLICA_INFO replies,        | {syncStateSet:[id…],             |
|                         | ALTER_SYNC_STATE_SET request and reply,                      |  syncStateSetEpoch}              |
|                         | NOTIFY_BROKER_ROLE_CHANGED request                           |                                  |
| ElectMasterResponseBody | CONTROLLER_ELECT_MASTER reply                                | {brokerMemberGroup:{…},          |
|                         |                                                              |  syncStateSet:[id…]}             |
| EpochEntryCache         | GET_BROKER_EPOCH_CACHE (1007) reply (``mqadmin               | {clusterName, brokerName,        |
|                         | getBrokerEpoch``)                                            |  brokerId, epochList:[{epoch,    |
|                         |                                                              |  startOffset, endOffset}],       |
|                         |                                                              |  maxOffset}                      |
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from protocol.bodies.base import JsonBody, _none_is_empty_list


def _f(alias: str, default: Any) -> Any:
    return Field(default=default, validation_alias=alias, serialization_alias=alias)


_Ids = Annotated[list[int], BeforeValidator(_none_is_empty_list)]


class SyncStateSet(JsonBody):
    sync_state_set: _Ids = _f("syncStateSet", [])
    sync_state_set_epoch: int = _f("syncStateSetEpoch", 0)


class ElectMasterResponseBody(JsonBody):
    broker_member_group: dict[str, Any] | None = _f("brokerMemberGroup", None)
    sync_state_set: _Ids = _f("syncStateSet", [])


class EpochEntry(JsonBody):
    epoch: int = 0
    start_offset: int = _f("startOffset", 0)
    end_offset: int = _f("endOffset", 2**63 - 1)


class EpochEntryCache(JsonBody):
    cluster_name: str = _f("clusterName", "")
    broker_name: str = _f("brokerName", "")
    broker_id: int = _f("brokerId", 0)
    epoch_list: list[EpochEntry] = _f("epochList", [])
    max_offset: int = _f("maxOffset", 0)
