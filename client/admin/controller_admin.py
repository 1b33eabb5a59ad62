"""Controller admin RPCs (RocketMQ 5.x controller mode), as J 5.5.0's ``MQClientAPIImpl`` sends them: the
metadata is asked of the given controller, everything that changes or reads broker groups goes to the leader it
names; GET/UPDATE_CONTROLLER_CONFIG go to every listed controller; GET_BROKER_EPOCH_CACHE to a broker."""

from __future__ import annotations

from client.admin.admin_client import AdminClient
from client.errors import MQClientError
from protocol.bodies import decode_properties_text, encode_properties_text
from protocol.bodies.controller import (
    BrokerMemberGroup,
    BrokerReplicasInfo,
    ElectMasterResponseBody,
    EpochEntryCache,
    encode_broker_names,
)
from protocol.codes import RequestCode
from protocol.headers.controller import (
    CleanControllerBrokerDataRequestHeader,
    ElectMasterRequestHeader,
    ElectMasterResponseHeader,
    GetMetaDataResponseHeader,
)


async def controller_metadata(admin: AdminClient, addr: str) -> GetMetaDataResponseHeader:
    resp = await admin.call(addr, RequestCode.CONTROLLER_GET_METADATA_INFO)
    return GetMetaDataResponseHeader.from_ext_fields(resp.ext_fields)


async def leader_addr(admin: AdminClient, addr: str) -> str:
    meta = await controller_metadata(admin, addr)
    if not meta.controller_leader_address:
        raise MQClientError(f"controller {addr} knows no leader (group {meta.group or '-'})")
    return meta.controller_leader_address


async def sync_state_data(admin: AdminClient, addr: str, broker_names: list[str]) -> BrokerReplicasInfo:
    leader = await leader_addr(admin, addr)
    resp = await admin.call(leader, RequestCode.CONTROLLER_GET_SYNC_STATE_DATA, body=encode_broker_names(broker_names))
    return BrokerReplicasInfo.decode(resp.body) if resp.body else BrokerReplicasInfo()


async def elect_master(
    admin: AdminClient, addr: str, cluster: str, broker_name: str, broker_id: int
) -> tuple[ElectMasterResponseHeader, BrokerMemberGroup | None]:
    """mqadmin electMaster: J ``ElectMasterRequestHeader.ofAdminTrigger`` (designateElect=true) to the leader."""
    leader = await leader_addr(admin, addr)
    req = ElectMasterRequestHeader(
        cluster_name=cluster, broker_name=broker_name, broker_id=broker_id, designate_elect=True
    )
    resp = await admin.call(leader, RequestCode.CONTROLLER_ELECT_MASTER, req.to_ext_fields())
    body = ElectMasterResponseBody.decode(resp.body) if resp.body else None
    return ElectMasterResponseHeader.from_ext_fields(resp.ext_fields), body.broker_member_group if body else None


async def clean_broker_metadata(
    admin: AdminClient, addr: str, cluster: str | None, broker_name: str, ids: str | None, living: bool
) -> None:
    leader = await leader_addr(admin, addr)
    req = CleanControllerBrokerDataRequestHeader(
        cluster_name=cluster, broker_name=broker_name, broker_controller_ids_to_clean=ids, is_clean_living_broker=living
    )
    await admin.call(leader, RequestCode.CLEAN_BROKER_DATA, req.to_ext_fields())


async def controller_config(admin: AdminClient, addrs: list[str]) -> dict[str, dict[str, str]]:
    out = {}
    for addr in addrs:
        resp = await admin.call(addr, RequestCode.GET_CONTROLLER_CONFIG)
        out[addr] = decode_properties_text(resp.body) if resp.body else {}
    return out


async def update_controller_config(admin: AdminClient, addrs: list[str], props: dict[str, str]) -> None:
    for addr in addrs:
        await admin.call(addr, RequestCode.UPDATE_CONTROLLER_CONFIG, body=encode_properties_text(props))


async def broker_epoch_cache(admin: AdminClient, broker_addr: str) -> EpochEntryCache:
    resp = await admin.call(broker_addr, RequestCode.GET_BROKER_EPOCH_CACHE)
    return EpochEntryCache.decode(resp.body)
