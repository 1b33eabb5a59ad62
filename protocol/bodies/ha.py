"""Replication status bodies (GET_BROKER_HA_STATUS).

| body (class)                           | command(s)                                   | shape                                             |
|----------------------------------------|----------------------------------------------|---------------------------------------------------|
| HARuntimeInfo                          | GET_BROKER_HA_STATUS (907) reply             | {master, brokerRole, masterCommitLogMaxOffset,    |
|                                        |                                              |  inSyncSlaveNums, haConnectionInfo:[{addr,        |
|                                        |                                              |  slaveAckOffset, diff, inSync, ...}],             |
|                                        |                                              |  haClientRuntimeInfo:{masterAddr, maxOffset, ...}}|
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    Field,
)

from protocol.bodies.base import JsonBody

# -- replication -----------------------------------------------------------------------------------------------------


def _f(alias: str, default: Any) -> Any:
    return Field(default=default, validation_alias=alias, serialization_alias=alias)


class HAConnectionInfo(JsonBody):
    """One slave as its master sees it (J 5.x ``HARuntimeInfo.HAConnectionRuntimeInfo``, the fields we keep)."""

    addr: str = ""
    slave_ack_offset: int = _f("slaveAckOffset", -1)
    diff: int = 0
    in_sync: bool = _f("inSync", False)
    transferred_bytes: int = _f("transferredBytes", 0)
    slave_broker_id: int = _f("slaveBrokerId", -1)  # controller mode: the replica id from its epoch handshake


class HAClientRuntimeInfo(JsonBody):
    """A slave's view of its master (J 5.x ``HAClientRuntimeInfo``, plus this project's state)."""

    master_addr: str = _f("masterAddr", "")
    master_remoting_addr: str = _f("masterRemotingAddr", "")
    max_offset: int = _f("maxOffset", 0)
    master_offset: int = _f("masterOffset", 0)
    behind_bytes: int = _f("behindBytes", 0)
    state: str = ""
    ahead_of_master_bytes: int = _f("aheadOfMasterBytes", 0)
    connects: int = 0


class HARuntimeInfo(JsonBody):
    """GET_BROKER_HA_STATUS reply: J 5.x's ``HARuntimeInfo`` shape (master side or ``haClientRuntimeInfo``) plus
    this project's start-up fence, catch-up and divergence fields."""

    master: bool = False
    broker_role: str = _f("brokerRole", "")
    master_commit_log_max_offset: int = _f("masterCommitLogMaxOffset", 0)
    push2slave_max_offset: int = _f("push2SlaveMaxOffset", 0)
    in_sync_slave_nums: int = _f("inSyncSlaveNums", 0)
    ha_connection_info: list[HAConnectionInfo] = _f("haConnectionInfo", [])
    fenced: str = ""
    caught_up_from_slave_bytes: int = _f("caughtUpFromSlaveBytes", 0)
    diverged_slaves: dict[str, int] = _f("divergedSlaves", {})
    auth_refused: int = _f("haAuthRefused", 0)  # HA connections that did not authenticate (broker.ha.auth)
    ha_server_addr: str = _f("haServerAddr", "")
    ha_client_runtime_info: HAClientRuntimeInfo | None = _f("haClientRuntimeInfo", None)
    metadata_syncs: int = _f("metadataSyncs", 0)
    # controller mode (``enableControllerMode``): role, masterEpoch, SyncStateSet and its epoch, epoch entries,
    # whether this broker takes writes and why not
    controller: dict[str, Any] | None = None
