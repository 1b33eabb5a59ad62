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
    return role, rt.get("haState", "-"), behind if behind not in (None, "-1") else "-"


def _ha_args(p: argparse.ArgumentParser) -> None:
    target_args(p)
    p.add_argument("--json", action="store_true", help="print the raw JSON status")


@command("haStatus", "Fetch the replication (HA) status of brokers", _ha_args)
async def ha_status(admin: AdminClient, a: argparse.Namespace) -> int:
    for addr in await target_brokers(admin, a):
        st = await admin.ha_status(addr)
        if a.json:
            print(json.dumps({"brokerAddr": addr, **st}, sort_keys=True))
            continue
        print(f"#Broker: {addr}  #Role: {st.get('brokerRole', '-')}")
        if st.get("master"):
            print(f"#MasterCommitLogMaxOffset: {st.get('masterCommitLogMaxOffset')}")
            print(f"#Push2SlaveMaxOffset: {st.get('push2SlaveMaxOffset')}")
            print(f"#InSyncSlaveNums: {st.get('inSyncSlaveNums')}")
            print(f"#Fenced: {st.get('fenced') or 'no'}")
            for addr2, off in (st.get("divergedSlaves") or {}).items():
                print(f"#DivergedSlave: {addr2} ahead at {off}")
            print(f"{'#SlaveAddr':<24}{'#SlaveAckOffset':<18}{'#Diff':<14}{'#InSync':<9}{'#TransferredBytes':<18}")
            for c in st.get("haConnectionInfo") or []:
                print(
                    f"{c['addr']:<24}{c['slaveAckOffset']:<18}{c['diff']:<14}{str(c['inSync']).lower():<9}"
                    f"{c['transferredBytes']:<18}"
                )
        else:
            c = st.get("haClientRuntimeInfo") or {}
            print(f"#MasterHaAddr: {c.get('masterAddr') or '-'}")
            print(f"#MasterAddr: {c.get('masterRemotingAddr') or '-'}")
            print(f"#State: {c.get('state')}")
            print(f"#SlaveMaxOffset: {c.get('maxOffset')}")
            print(f"#MasterOffset: {c.get('masterOffset')}")
            print(f"#BehindBytes: {c.get('behindBytes')}")
            print(f"#AheadOfMasterBytes: {c.get('aheadOfMasterBytes')}")
    return 0
