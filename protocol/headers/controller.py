"""Headers of the 5.x controller-mode codes (RIP-44) that a broker sends to a controller or receives from one, with
J's field names (``remoting/.../header/controller/**``, ``header/namesrv/BrokerHeartbeatRequestHeader``,
``header/NotifyBrokerRoleChangedRequestHeader``).

========================================  ===========================================================================
code / header class                        ext fields (request; reply)
========================================  ===========================================================================
CONTROLLER_GET_METADATA_INFO (1005)        —; ``group controllerLeaderId controllerLeaderAddress isLeader peers``
CONTROLLER_GET_NEXT_BROKER_ID (1012)       ``clusterName brokerName``; ``clusterName brokerName nextBrokerId``
CONTROLLER_APPLY_BROKER_ID (1013)          ``clusterName brokerName appliedBrokerId registerCheckCode``; —
CONTROLLER_REGISTER_BROKER (1003)          ``clusterName brokerName brokerId brokerAddress invokeTime``;
                                           ``clusterName brokerName masterBrokerId masterAddress masterEpoch
                                           syncStateSetEpoch`` + body ``SyncStateSet``
BROKER_HEARTBEAT (904)                     ``clusterName brokerAddr brokerName brokerId epoch maxOffset confirmOffset
                                           heartbeatTimeoutMills electionPriority``; —
CONTROLLER_GET_REPLICA_INFO (1004)         ``brokerName``; ``masterBrokerId masterAddress masterEpoch`` + body
                                           ``SyncStateSet``
CONTROLLER_ELECT_MASTER (1002)             ``clusterName brokerName brokerId designateElect invokeTime``;
                                           ``masterBrokerId masterAddress masterEpoch syncStateSetEpoch`` + body
                                           ``ElectMasterResponseBody``
CONTROLLER_ALTER_SYNC_STATE_SET (1001)     ``brokerName masterBrokerId masterEpoch invokeTime`` + body
                                           ``SyncStateSet``; body ``SyncStateSet``
NOTIFY_BROKER_ROLE_CHANGED (1008)          ``masterAddress masterEpoch syncStateSetEpoch masterBrokerId`` + body
(controller → broker)                      ``SyncStateSet``
========================================  ===========================================================================
"""

from __future__ import annotations

from protocol.headers.codec import WireHeader, header, wire


@header
class GetMetaDataResponseHeader(WireHeader):
    group: str | None = wire("group", default=None)
    controller_leader_id: str | None = wire("controllerLeaderId", default=None)
    controller_leader_address: str | None = wire("controllerLeaderAddress", default=None)
    is_leader: bool = wire("isLeader", default=False)
    peers: str | None = wire("peers", default=None)


@header
class GetNextBrokerIdRequestHeader(WireHeader):
    cluster_name: str = wire("clusterName")
    broker_name: str = wire("brokerName")


@header
class GetNextBrokerIdResponseHeader(WireHeader):
    cluster_name: str | None = wire("clusterName", default=None)
    broker_name: str | None = wire("brokerName", default=None)
    next_broker_id: int | None = wire("nextBrokerId", default=None)


@header
class ApplyBrokerIdRequestHeader(WireHeader):
    cluster_name: str = wire("clusterName")
    broker_name: str = wire("brokerName")
    applied_broker_id: int = wire("appliedBrokerId")
    register_check_code: str = wire("registerCheckCode")


@header
class RegisterBrokerToControllerRequestHeader(WireHeader):
    cluster_name: str = wire("clusterName")
    broker_name: str = wire("brokerName")
    broker_id: int = wire("brokerId")
    broker_address: str = wire("brokerAddress")
    invoke_time: int = wire("invokeTime", default=0)


@header
class RegisterBrokerToControllerResponseHeader(WireHeader):
    cluster_name: str | None = wire("clusterName", default=None)
    broker_name: str | None = wire("brokerName", default=None)
    master_broker_id: int | None = wire("masterBrokerId", default=None)
    master_address: str | None = wire("masterAddress", default=None)
    master_epoch: int | None = wire("masterEpoch", default=None)
    sync_state_set_epoch: int | None = wire("syncStateSetEpoch", default=None)


@header
class BrokerHeartbeatRequestHeader(WireHeader):
    cluster_name: str = wire("clusterName")
    broker_addr: str = wire("brokerAddr")
    broker_name: str = wire("brokerName")
    broker_id: int | None = wire("brokerId", default=None)
    epoch: int | None = wire("epoch", default=None)
    max_offset: int | None = wire("maxOffset", default=None)
    confirm_offset: int | None = wire("confirmOffset", default=None)
    heartbeat_timeout_mills: int | None = wire("heartbeatTimeoutMills", default=None)
    election_priority: int | None = wire("electionPriority", default=None)


@header
class GetReplicaInfoRequestHeader(WireHeader):
    broker_name: str = wire("brokerName")


@header
class GetReplicaInfoResponseHeader(WireHeader):
    master_broker_id: int | None = wire("masterBrokerId", default=None)
    master_address: str | None = wire("masterAddress", default=None)
    master_epoch: int | None = wire("masterEpoch", default=None)


@header
class ElectMasterRequestHeader(WireHeader):
    cluster_name: str = wire("clusterName", default="")
    broker_name: str = wire("brokerName", default="")
    broker_id: int = wire("brokerId", default=-1)
    designate_elect: bool = wire("designateElect", default=False)
    invoke_time: int = wire("invokeTime", default=0)


@header
class ElectMasterResponseHeader(WireHeader):
    master_broker_id: int | None = wire("masterBrokerId", default=None)
    master_address: str | None = wire("masterAddress", default=None)
    master_epoch: int | None = wire("masterEpoch", default=None)
    sync_state_set_epoch: int | None = wire("syncStateSetEpoch", default=None)


@header
class AlterSyncStateSetRequestHeader(WireHeader):
    broker_name: str = wire("brokerName")
    master_broker_id: int = wire("masterBrokerId")
    master_epoch: int = wire("masterEpoch")
    invoke_time: int = wire("invokeTime", default=0)


@header
class NotifyBrokerRoleChangedRequestHeader(WireHeader):
    master_address: str | None = wire("masterAddress", default=None)
    master_epoch: int | None = wire("masterEpoch", default=None)
    sync_state_set_epoch: int | None = wire("syncStateSetEpoch", default=None)
    master_broker_id: int | None = wire("masterBrokerId", default=None)
