"""``mqadmin`` replication views: ``haStatus`` (J 5.x's command: a master's slaves with their acked offsets and lag,
or a slave's master and how far behind it is), and the role / HA-state / lag columns ``clusterList`` adds. Both read
GET_BROKER_HA_STATUS (907) or the ``brokerRole`` / ``ha*`` keys of GET_BROKER_RUNTIME_INFO."""

from __future__ import annotations

import argparse
import json

from client.admin.admin_client import AdminClient
from client.admin.registry import command, target_args, target_brokers
from protocol.errors import RemotingError


async def role_columns(admin: AdminClient, addr: str) -> tuple[str, str, str]:
    """(role, HA state, bytes behind) for ``clusterList``: a slave's lag behind its master, a master's worst
    slave; "-" where the broker does not answer or does not say."""
    try:
        rt = await admin.runtime_info(addr)
    except RemotingError:
        return "-", "unreachable", "-"
    role = rt.get("brokerRole", "-")
    behind = rt.get("haBehindMasterBytes") if role == "SLAVE" else rt.get("haSlaveBehindBytes")
    state = rt.get("haState", "-")
    if "masterEpoch" in rt:  # controller mode: the epoch it follows and (on the master) the SyncStateSet
        state += f" epoch={rt['masterEpoch']}"
        if rt.get("controllerRole") == "MASTER":
            state += f" sss=[{rt.get('syncStateSet', '')}]"
    return role, state, behind if behind not in (None, "-1") else "-"


def _ha_args(p: argparse.ArgumentParser) -> None:
    target_args(p)
    p.add_argument("--json", action="store_true", help="print the raw JSON status")


@command("haStatus", "Fetch the replication (HA) status of brokers", _ha_args)
async def ha_status(admin: AdminClient, a: argparse.Namespace) -> int:
    for addr in await target_brokers(admin, a):
        st = await admin.ha_status(addr)
        if a.json:
            print(json.dumps({"brokerAddr": addr, **st.to_json()}, sort_keys=True))
            continue
        print(f"#Broker: {addr}  #Role: {st.broker_role or '-'}")
        if st.controller is not None:  # controller mode
            ctl = st.controller
            print(f"#ControllerRole: {ctl.get('role')}  #BrokerControllerId: {ctl.get('brokerControllerId')}")
            print(f"#MasterEpoch: {ctl.get('masterEpoch')}  #MasterBrokerId: {ctl.get('masterBrokerId')}")
            print(f"#SyncStateSet: {ctl.get('syncStateSet')}  #SyncStateSetEpoch: {ctl.get('syncStateSetEpoch')}")
            print(f"#Epochs: {ctl.get('epochs')}")
            print(f"#Writable: {str(ctl.get('writable')).lower()}  {ctl.get('fence') or ''}".rstrip())
        if st.master:
            print(f"#MasterCommitLogMaxOffset: {st.master_commit_log_max_offset}")
            print(f"#Push2SlaveMaxOffset: {st.push2slave_max_offset}")
            print(f"#InSyncSlaveNums: {st.in_sync_slave_nums}")
            print(f"#Fenced: {st.fenced or 'no'}")
            for addr2, off in st.diverged_slaves.items():
                print(f"#DivergedSlave: {addr2} ahead at {off}")
            print(f"{'#SlaveAddr':<24}{'#SlaveAckOffset':<18}{'#Diff':<14}{'#InSync':<9}{'#TransferredBytes':<18}")
            for c in st.ha_connection_info:
                print(
                    f"{c.addr:<24}{c.slave_ack_offset:<18}{c.diff:<14}{str(c.in_sync).lower():<9}"
                    f"{c.transferred_bytes:<18}"
                )
        elif st.ha_client_runtime_info is not None:
            c2 = st.ha_client_runtime_info
            print(f"#MasterHaAddr: {c2.master_addr or '-'}")
            print(f"#MasterAddr: {c2.master_remoting_addr or '-'}")
            print(f"#State: {c2.state}")
            print(f"#SlaveMaxOffset: {c2.max_offset}")
            print(f"#MasterOffset: {c2.master_offset}")
            print(f"#BehindBytes: {c2.behind_bytes}")
            print(f"#AheadOfMasterBytes: {c2.ahead_of_master_bytes}")
    return 0
