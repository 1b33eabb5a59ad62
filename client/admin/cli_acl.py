"""``mqadmin`` ACL 1.0 commands (RocketMQ 4.9.7 tools' names, flags and output; docs/reference/acl.md §7) and the
credentials mqadmin signs with.

======================== ============================================ ============================================
command                  flags (``-b broker`` or ``-c cluster``)      request
======================== ============================================ ============================================
updateAclConfig          -a ak* -s sk* -w white -i topicPerm          UPDATE_AND_CREATE_ACL_CONFIG (50)
                         -u groupPerm -t "t=PUB,…" -g "g=SUB,…" -m
deleteAclConfig          -a ak*                                       DELETE_ACL_CONFIG (51)
clusterAclConfigVersion  —                                            GET_BROKER_CLUSTER_ACL_INFO (52)
updateGlobalWhiteAddr    -g "10.10.103.*,…"* -p aclFileFullPath       UPDATE_GLOBAL_WHITE_ADDRS_CONFIG (53)
getAclConfig             —                                            GET_BROKER_CLUSTER_ACL_CONFIG (54, secrets
                                                                      redacted by our broker)
======================== ============================================ ============================================

Credentials (J ``AclUtils.getAclRPCHook``): ``--accessKey``/``--secretKey`` on the command line, else
``$ROCKETMQ_HOME/conf/tools.yml`` (``accessKey: …``, ``secretKey: …``); neither → requests go unsigned.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from client.admin.admin_client import AdminClient
from client.admin.registry import command, target_args, target_brokers
from client.errors import MQClientError
from protocol.codes import RequestCode


def tools_credentials(home: str | None = None) -> tuple[str, str] | None:
    """``(accessKey, secretKey)`` from ``<home>/conf/tools.yml`` (home: ``$ROCKETMQ_HOME``), or None."""
    home = home if home is not None else os.environ.get("ROCKETMQ_HOME", "")
    if not home:
        return None
    path = Path(home) / "conf" / "tools.yml"
    import yaml  # type: ignore[import-untyped]

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, ValueError, yaml.YAMLError):
        return None
    if not isinstance(data, dict):
        return None
    ak, sk = data.get("accessKey"), data.get("secretKey")
    return (str(ak), str(sk)) if ak and sk else None


def _need_target(a: argparse.Namespace) -> None:
    if not a.brokerAddr and not a.clusterName:
        raise MQClientError("one of -b brokerAddr or -c clusterName is required")


def _update_args(p: argparse.ArgumentParser) -> None:
    target_args(p)
    p.add_argument("-a", dest="acl_ak", required=True, help="accessKey")
    p.add_argument("-s", dest="acl_sk", required=True, help="secretKey")
    p.add_argument("-w", dest="white", help="whiteRemoteAddress")
    p.add_argument("-i", dest="topic_perm", help="defaultTopicPerm")
    p.add_argument("-u", dest="group_perm", help="defaultGroupPerm")
    p.add_argument("-t", dest="topic_perms", help='topicPerms, e.g. "topicA=DENY,topicD=SUB"')
    p.add_argument("-g", dest="group_perms", help='groupPerms, e.g. "groupD=DENY"')
    p.add_argument("-m", dest="admin", choices=("true", "false"), help="admin")


@command("updateAclConfig", "Update acl config yaml file in broker", _update_args)
async def update_acl_config(admin: AdminClient, a: argparse.Namespace) -> int:
    _need_target(a)
    ext = {"accessKey": a.acl_ak, "secretKey": a.acl_sk}
    for key, value in (
        ("whiteRemoteAddress", a.white),
        ("defaultTopicPerm", a.topic_perm),
        ("defaultGroupPerm", a.group_perm),
        ("topicPerms", a.topic_perms),
        ("groupPerms", a.group_perms),
        ("admin", a.admin),
    ):
        if value is not None:
            ext[key] = value
    for addr in await target_brokers(admin, a):
        await admin.call(addr, RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, ext)
        print(f"create or update plain access config to {addr} success.")
        shown = {k: v for k, v in ext.items() if k != "secretKey"}
        print(f"PlainAccessConfig{shown}")
    return 0


def _delete_args(p: argparse.ArgumentParser) -> None:
    target_args(p)
    p.add_argument("-a", dest="acl_ak", required=True, help="accessKey")


@command("deleteAclConfig", "Delete Acl Config Account in broker", _delete_args)
async def delete_acl_config(admin: AdminClient, a: argparse.Namespace) -> int:
    _need_target(a)
    for addr in await target_brokers(admin, a):
        await admin.call(addr, RequestCode.DELETE_ACL_CONFIG, {"accessKey": a.acl_ak})
        print(f"delete plain access config account from {addr} success.")
        print(f"account's accesskey is:{a.acl_ak}")
    return 0


@command("clusterAclConfigVersion", "List all of acl config version information in cluster", target_args)
async def cluster_acl_config_version(admin: AdminClient, a: argparse.Namespace) -> int:
    _need_target(a)
    print(
        f"{'#Cluster Name':<20}{'#Broker Name':<20}{'#Broker Addr':<22}{'#AclFilePath':<50}"
        f"{'#AclConfigVersionNum':<22}#AclLastUpdateTime"
    )
    for addr in await target_brokers(admin, a):
        r = await admin.call(addr, RequestCode.GET_BROKER_CLUSTER_ACL_INFO)
        ext = r.ext_fields
        files = json.loads(ext.get("allAclFileVersion") or "{}")
        for path, version in files.items():
            print(
                f"{ext.get('clusterName', ''):<20}{ext.get('brokerName', ''):<20}{ext.get('brokerAddr', addr):<22}"
                f"{path:<50}{version.get('counter', 0):<22}{version.get('timestamp', 0)}"
            )
    print("get cluster's plain access config version success.")
    return 0


def _white_args(p: argparse.ArgumentParser) -> None:
    target_args(p)
    p.add_argument("-g", dest="white", required=True, help='globalWhiteRemoteAddresses, e.g. "10.10.103.*,192.168.0.*"')
    p.add_argument("-p", dest="acl_file", default="", help="aclFileFullPath (default: conf/plain_acl.yml)")


@command("updateGlobalWhiteAddr", "Update global white address for acl Config File in broker", _white_args)
async def update_global_white_addr(admin: AdminClient, a: argparse.Namespace) -> int:
    _need_target(a)
    for addr in await target_brokers(admin, a):
        ext = {"globalWhiteAddrs": a.white, "aclFileFullPath": a.acl_file}
        await admin.call(addr, RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, ext)
        print(f"update global white remote addresses to {addr} success.")
    return 0


@command("getAclConfig", "List all of acl config information in cluster", target_args)
async def get_acl_config(admin: AdminClient, a: argparse.Namespace) -> int:
    _need_target(a)
    for addr in await target_brokers(admin, a):
        r = await admin.call(addr, RequestCode.GET_BROKER_CLUSTER_ACL_CONFIG)
        body = json.loads(r.body or b"{}")
        print(f"globalWhiteRemoteAddresses: {body.get('globalWhiteAddrs', [])}")
        print("accounts:")
        for acct in body.get("plainAccessConfigs", []):
            for key in (
                "accessKey",
                "secretKey",
                "whiteRemoteAddress",
                "admin",
                "defaultTopicPerm",
                "defaultGroupPerm",
                "topicPerms",
                "groupPerms",
            ):
                print(f"  {key}: {acct.get(key)}")
            print()
    return 0
