"""Custom headers of RocketMQ 5.x controller mode (RIP-44): what brokers and mqadmin send to a controller, what the
controller answers, and the controller's role push to a broker. Field names are J 5.5.0's
(``remoting/.../protocol/header/controller/**``, ``header/namesrv/BrokerHeartbeatRequestHeader``,
``header/NotifyBrokerRoleChangedRequestHeader``); ``!`` = ``@CFNotNull`` in J, everything else nullable.

| class                                   | code(s)          | fields                                                  |
|-----------------------------------------|------------------|---------------------------------------------------------|
| BrokerHeartbeatRequestHeader            | 904              | !clusterName !brokerAddr !brokerName brokerId epoch     |
|                                         |                  | maxOffset confirmOffset heartbeatTimeoutMills           |
|                                         |                  | electionPriority                                        |
| AlterSyncStateSetRequestHeader          | 1001             | brokerName masterBrokerId masterEpoch invokeTime        |
| AlterSyncStateSetResponseHeader         | 1001 reply       | newSyncStateSetEpoch                                    |
| ElectMasterRequestHeader                | 1002             | !clusterName !brokerName !brokerId !designateElect      |
|                                         |                  | invokeTime                                              |
| ElectMasterResponseHeader               | 1002 reply       | masterBrokerId masterAddress masterEpoch                |
|                                         |                  | syncStateSetEpoch                                       |
| RegisterBrokerToControllerRequestHeader | 1003             | clusterName brokerName brokerId brokerAddress invokeTime|
| RegisterBrokerToControllerResponseHeader| 1003 reply       | clusterName brokerName masterBrokerId masterAddress     |
|                                         |                  | masterEpoch syncStateSetEpoch                           |
| GetReplicaInfoRequestHeader             | 1004             | brokerName                                              |
| GetReplicaInfoResponseHeader            | 1004 reply       | masterBrokerId masterAddress masterEpoch                |
| GetMetaDataResponseHeader               | 1005 reply       | group controllerLeaderId controllerLeaderAddress        |
|                                         |                  | isLeader peers                                          |
| NotifyBrokerRoleChangedRequestHeader    | 1008 (oneway)    | masterAddress masterEpoch syncStateSetEpoch             |
|                                         |                  | masterBrokerId                                          |
| CleanControllerBrokerDataRequestHeader  | 1011             | clusterName !brokerName brokerControllerIdsToClean      |
|                                         |                  | isCleanLivingBroker invokeTime                          |
| GetNextBrokerIdRequestHeader            | 1012             | clusterName brokerName                                  |
| GetNextBrokerIdResponseHeader           | 1012 reply       | clusterName brokerName nextBrokerId                     |
| ApplyBrokerIdRequestHeader              | 1013             | clusterName brokerName appliedBrokerId registerCheckCode|
| ApplyBrokerIdResponseHeader             | 1013 reply       | clusterName brokerName                                  |

GET_CONTROLLER_CONFIG (1010), UPDATE_CONTROLLER_CONFIG (1009), CONTROLLER_GET_SYNC_STATE_DATA (1006) and
GET_BROKER_EPOCH_CACHE (1007) carry no header (bodies only: ``protocol.bodies.controller``).
"""

from __future__ import annotations

from protocol.headers.codec import WireHeader, header, wire


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
class AlterSyncStateSetRequestHeader(WireHeader):
    broker_name: str = wire("brokerName", default="", required=False)
    master_broker_id: int | None = wire("masterBrokerId", default=None)
    master_epoch: int | None = wire("masterEpoch", default=None)
    invoke_time: int = wire("invokeTime", default=0)


@header
class AlterSyncStateSetResponseHeader(WireHeader):
    new_sync_state_set_epoch: int = wire("newSyncStateSetEpoch", default=0)


@header
class ElectMasterRequestHeader(WireHeader):
    """``brokerId`` -1 (J ``ofControllerTrigger``): the controller elects by its policy; ``designateElect`` true
    (mqadmin ``electMaster``, J ``ofAdminTrigger``): that broker or nothing."""

    cluster_name: str = wire("clusterName", default="", required=True)
    broker_name: str = wire("brokerName", default="", required=True)
    broker_id: int = wire("brokerId", default=-1, required=True)
    designate_elect: bool = wire("designateElect", default=False, required=True)
    invoke_time: int = wire("invokeTime", default=0)


@header
class ElectMasterResponseHeader(WireHeader):
    master_broker_id: int | None = wire("masterBrokerId", default=None)
    master_address: str | None = wire("masterAddress", default=None)
    master_epoch: int | None = wire("masterEpoch", default=None)
    sync_state_set_epoch: int | None = wire("syncStateSetEpoch", default=None)


@header
class RegisterBrokerToControllerRequestHeader(WireHeader):
    cluster_name: str = wire("clusterName", default="", required=False)
    broker_name: str = wire("brokerName", default="", required=False)
    broker_id: int | None = wire("brokerId", default=None)
    broker_address: str = wire("brokerAddress", default="", required=False)
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
class GetReplicaInfoRequestHeader(WireHeader):
    broker_name: str = wire("brokerName", default="", required=False)


@header
class GetReplicaInfoResponseHeader(WireHeader):
    master_broker_id: int | None = wire("masterBrokerId", default=None)
    master_address: str | None = wire("masterAddress", default=None)
    master_epoch: int | None = wire("masterEpoch", default=None)


@header
class GetMetaDataResponseHeader(WireHeader):
    """``controllerLeaderAddress`` is where brokers and mqadmin send everything but heartbeats; ``peers`` is
    ``id:host:port;`` per controller (J's DLedger form)."""

    group: str | None = wire("group", default=None)
    controller_leader_id: str | None = wire("controllerLeaderId", default=None)
    controller_leader_address: str | None = wire("controllerLeaderAddress", default=None)
    is_leader: bool = wire("isLeader", default=False)
    peers: str | None = wire("peers", default=None)


@header
class NotifyBrokerRoleChangedRequestHeader(WireHeader):
    master_address: str | None = wire("masterAddress", default=None)
    master_epoch: int | None = wire("masterEpoch", default=None)
    sync_state_set_epoch: int | None = wire("syncStateSetEpoch", default=None)
    master_broker_id: int | None = wire("masterBrokerId", default=None)


@header
class CleanControllerBrokerDataRequestHeader(WireHeader):
    cluster_name: str | None = wire("clusterName", default=None)
    broker_name: str = wire("brokerName", default="", required=True)
    broker_controller_ids_to_clean: str | None = wire("brokerControllerIdsToClean", default=None)
    is_clean_living_broker: bool = wire("isCleanLivingBroker", default=False)
    invoke_time: int = wire("invokeTime", default=0)


@header
class GetNextBrokerIdRequestHeader(WireHeader):
    cluster_name: str = wire("clusterName", default="", required=False)
    broker_name: str = wire("brokerName", default="", required=False)


@header
class GetNextBrokerIdResponseHeader(WireHeader):
    cluster_name: str | None = wire("clusterName", default=None)
    broker_name: str | None = wire("brokerName", default=None)
    next_broker_id: int | None = wire("nextBrokerId", default=None)


@header
class ApplyBrokerIdRequestHeader(WireHeader):
    cluster_name: str = wire("clusterName", default="", required=False)
    broker_name: str = wire("brokerName", default="", required=False)
    applied_broker_id: int | None = wire("appliedBrokerId", default=None)
    register_check_code: str = wire("registerCheckCode", default="", required=False)


@header
class ApplyBrokerIdResponseHeader(WireHeader):
    cluster_name: str | None = wire("clusterName", default=None)
    broker_name: str | None = wire("brokerName", default=None)
