"""GET_BROKER_HA_STATUS body (``protocol.bodies.HARuntimeInfo``): J 5.x's field names, both sides, round trip."""

from __future__ import annotations

import json

from protocol.bodies import HAClientRuntimeInfo, HAConnectionInfo, HARuntimeInfo


def test_master_and_slave_shapes_round_trip() -> None:
    master = HARuntimeInfo(
        master=True,
        broker_role="SYNC_MASTER",
        master_commit_log_max_offset=1000,
        in_sync_slave_nums=1,
        ha_connection_info=[HAConnectionInfo(addr="10.0.0.2:50000", slave_ack_offset=900, diff=100, in_sync=True)],
    )
    doc = json.loads(master.encode())
    assert doc["masterCommitLogMaxOffset"] == 1000 and doc["inSyncSlaveNums"] == 1
    assert doc["haConnectionInfo"][0] == {
        "addr": "10.0.0.2:50000",
        "slaveAckOffset": 900,
        "diff": 100,
        "inSync": True,
        "transferredBytes": 0,
        "slaveBrokerId": -1,  # controller mode's replica id (-1: not in controller mode)
    }
    assert HARuntimeInfo.decode(master.encode()) == master
    slave = HARuntimeInfo(
        broker_role="SLAVE",
        ha_client_runtime_info=HAClientRuntimeInfo(master_addr="10.0.0.1:10912", max_offset=5, state="REPLICATING"),
    )
    back = HARuntimeInfo.decode(slave.encode())
    assert back == slave and back.ha_client_runtime_info is not None
    assert json.loads(slave.encode())["haClientRuntimeInfo"]["masterAddr"] == "10.0.0.1:10912"
