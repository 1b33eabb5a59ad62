"""``mqadmin`` controller-mode commands, with J 5.5.0's names, flags and output lines: ``getSyncStateSet``,
``getBrokerEpoch``, ``electMaster``, ``getControllerMetaData``, ``getControllerConfig``, ``updateControllerConfig``,
``cleanBrokerMetadata``. ``-a`` is the controller address (``;``-separated where J takes a list); ``-i`` repeats
a read every that many seconds, as J."""

from __future__ import annotations

import argparse
import asyncio

from client.admin import controller_admin as ca
from client.admin.admin_client import AdminClient
from client.admin.registry import command
from client.errors import MQClientError


def _j(value: object) -> str:
    """What Java's ``printf("%s"/"%d")`` prints for a nullable value."""
    return "null" if value is None else str(value)


def _addr_list(text: str) -> list[str]:
    return [a for a in (p.strip() for p in text.split(";")) if a]


async def _names_of_cluster(admin: AdminClient, cluster: str) -> list[str]:
    info = await admin.cluster_info()
    return sorted((info.get("clusterAddrTable") or {}).get(cluster) or [])


def _sync_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-a", "--controllerAddress", required=True, help="the address of controller")
    p.add_argument("-c", "--clusterName", help="which cluster")
    p.add_argument("-b", "--brokerName", help="which broker to fetch")
    p.add_argument("-i", "--interval", help="the interval(second) of get info")


@command("getSyncStateSet", "Fetch syncStateSet for target brokers.", _sync_args)
async def get_sync_state_set(admin: AdminClient, a: argparse.Namespace) -> int:
    addr = a.controllerAddress.strip().split(";")[0]
    while True:
        if a.brokerName:
            names = [a.brokerName.strip()]
        elif a.clusterName:
            names = await _names_of_cluster(admin, a.clusterName.strip())
        else:
            raise MQClientError("give -b brokerName or -c clusterName")
        if names:
            info = await ca.sync_state_data(admin, addr, names)
            for name, r in info.replicas_info_table.items():
                print(
                    f"\n#brokerName\t{name}\n#MasterBrokerId\t{_j(r.master_broker_id)}\n"
                    f"#MasterAddr\t{_j(r.master_address)}\n"
                    f"#MasterEpoch\t{r.master_epoch}\n#SyncStateSetEpoch\t{r.sync_state_set_epoch}\n"
                    f"#SyncStateSetNums\t{len(r.in_sync_replicas)}"
                )
                for m in r.in_sync_replicas:
                    print(f"\nInSyncReplica:\t{m.java_string()}")
                for m in r.not_in_sync_replicas:
                    print(f"\nNotInSyncReplica:\t{m.java_string()}")
        if a.interval is None:
            return 0
        await asyncio.sleep(int(a.interval or 3))


def _epoch_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-c", "--clusterName", help="which cluster")
    p.add_argument("-b", "--brokerName", help="which broker to fetch")
    p.add_argument("-i", "--interval", help="the interval(second) of get info")


async def _replica_addrs(admin: AdminClient, cluster: str | None, broker_name: str | None) -> list[str]:
    """Every replica (master and slaves) of a broker name or of a cluster, from the name server."""
    info = await admin.cluster_info()
    table = info.get("brokerAddrTable") or {}
    names = [broker_name] if broker_name else sorted((info.get("clusterAddrTable") or {}).get(cluster) or [])
    return [
        addr
        for name in names
        for _bid, addr in sorted(((table.get(name) or {}).get("brokerAddrs") or {}).items(), key=lambda kv: int(kv[0]))
    ]


@command("getBrokerEpoch", "Fetch broker epoch entries.", _epoch_args)
async def get_broker_epoch(admin: AdminClient, a: argparse.Namespace) -> int:
    if not a.brokerName and not a.clusterName:
        raise MQClientError("give -b brokerName or -c clusterName")
    while True:
        for addr in await _replica_addrs(admin, a.clusterName, a.brokerName):
            cache = await ca.broker_epoch_cache(admin, addr)
            print(
                f"\n#clusterName\t{_j(cache.cluster_name)}\n#brokerName\t{_j(cache.broker_name)}\n#brokerAddr\t{addr}\n"
                f"#brokerId\t{cache.broker_id}",
                end="",
            )
            for i, entry in enumerate(cache.epoch_list):
                if i == len(cache.epoch_list) - 1:
                    entry = entry.model_copy(update={"end_offset": cache.max_offset})
                print(f"\n#Epoch: {entry.java_string()}", end="")
            print()
        if a.interval is None:
            return 0
        await asyncio.sleep(int(a.interval or 3))


def _elect_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-a", "--controllerAddress", required=True, help="The address of controller")
    p.add_argument("-b", "--brokerId", required=True, type=int, help="The id of the broker to become master")
    p.add_argument("-bn", "--brokerName", required=True, help="The broker name of the replicas")
    p.add_argument("-c", "--clusterName", required=True, help="the clusterName of broker")


@command("electMaster", "Re-elect the specified broker as master.", _elect_args)
async def elect_master(admin: AdminClient, a: argparse.Namespace) -> int:
    head, members = await ca.elect_master(
        admin, a.controllerAddress.strip(), a.clusterName.strip(), a.brokerName.strip(), a.brokerId
    )
    print(
        f"\n#ClusterName\t{a.clusterName.strip()}\n#BrokerName\t{a.brokerName.strip()}\n"
        f"#BrokerMasterAddr\t{_j(head.master_address)}\n#MasterEpoch\t{_j(head.master_epoch)}\n"
        f"#SyncStateSetEpoch\t{_j(head.sync_state_set_epoch)}"
    )
    if members is not None:
        for broker_id, addr in sorted(members.broker_addrs.items()):
            print(f"\t#Broker\t{broker_id}\t{addr}")
    return 0


def _controller_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("-a", "--controllerAddress", required=True, help="the address of controller")


@command("getControllerMetaData", "Get controller cluster's metadata.", _controller_arg)
async def get_controller_metadata(admin: AdminClient, a: argparse.Namespace) -> int:
    meta = await ca.controller_metadata(admin, a.controllerAddress.strip())
    print(f"\n#ControllerGroup\t{meta.group or ''}", end="")
    print(f"\n#ControllerLeaderId\t{_j(meta.controller_leader_id)}", end="")
    print(f"\n#ControllerLeaderAddress\t{_j(meta.controller_leader_address)}", end="")
    for peer in (meta.peers or "").split(";"):
        if peer:
            print(f"\n#Peer:\t{peer}", end="")
    print()
    return 0


@command("getControllerConfig", "Get controller config.", _controller_arg)
async def get_controller_config(admin: AdminClient, a: argparse.Namespace) -> int:
    for addr, props in (await ca.controller_config(admin, _addr_list(a.controllerAddress))).items():
        print(f"============{addr}============")
        for key, value in props.items():
            print(f"{key:<50}=  {value}")
    return 0


def _update_args(p: argparse.ArgumentParser) -> None:
    _controller_arg(p)
    p.add_argument("-k", "--key", required=True, help="config key")
    p.add_argument("-v", "--value", required=True, help="config value")


@command("updateControllerConfig", "Update controller config.", _update_args)
async def update_controller_config(admin: AdminClient, a: argparse.Namespace) -> int:
    addrs = _addr_list(a.controllerAddress)
    await ca.update_controller_config(admin, addrs, {a.key.strip(): a.value.strip()})
    print(f"update controller config success!{addrs}\n{a.key.strip()} : {a.value.strip()}")
    return 0


def _clean_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-a", "--controllerAddress", required=True, help="The address of controller")
    p.add_argument("-b", "--brokerControllerIdsToClean", help="broker controller ids to clean, e.g. 1;2;3")
    p.add_argument("-bn", "--brokerName", required=True, help="The broker name of the replicas")
    p.add_argument("-c", "--clusterName", help="The clusterName of broker")
    p.add_argument("-l", "--cleanLivingBroker", action="store_true", help="clean up living brokers too")


@command("cleanBrokerMetadata", "Clean metadata of broker on controller.", _clean_args)
async def clean_broker_metadata(admin: AdminClient, a: argparse.Namespace) -> int:
    ids = a.brokerControllerIdsToClean.strip() if a.brokerControllerIdsToClean else None
    if ids is not None and not all(p.strip().lstrip("-").isdigit() for p in ids.split(";")):
        raise MQClientError("please set the option <brokerControllerIdsToClean> according to the format")
    if not a.cleanLivingBroker and not a.clusterName:
        raise MQClientError("cleanLivingBroker option is false, clusterName option can not be empty.")
    name = a.brokerName.strip()
    await ca.clean_broker_metadata(admin, a.controllerAddress.strip(), a.clusterName, name, ids, a.cleanLivingBroker)
    print(f"clear broker {name} metadata from controller success! ")
    return 0
