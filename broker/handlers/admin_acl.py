"""The ACL admin requests (J ``AdminBrokerProcessor``, docs/reference/acl.md §7), registered only when ``aclEnable=true``.

==== ================================= ===========================================================================
code name                              behaviour
==== ================================= ===========================================================================
50   UPDATE_AND_CREATE_ACL_CONFIG      create or merge one account (absent fields keep their value) in the file that
                                       owns it (new keys: the default file); 209 with the reason on failure
51   DELETE_ACL_CONFIG                 remove one account from its file; 210 on failure
52   GET_BROKER_CLUSTER_ACL_INFO       ext ``version`` (default file), ``allAclFileVersion`` (path → DataVersion),
                                       ``brokerName``, ``brokerAddr``, ``clusterName``
53   UPDATE_GLOBAL_WHITE_ADDRS_CONFIG  replace ``globalWhiteRemoteAddresses`` of ``aclFileFullPath`` ("" = default)
54   GET_BROKER_CLUSTER_ACL_CONFIG     the whitelist and accounts, **secret keys redacted** (J returned them:
                                       CVE-2024-23321 era; J 4.9.8 removed the code)
==== ================================= ===========================================================================

Every write goes through ``runtime.acl.files`` (atomic replace, dataVersion bumped) and the new rules apply at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting.handler import Handler, RequestContext
from runtime.acl.files import AclFile
from runtime.acl.hook import AclWatcher
from runtime.acl.rules import Account, AclError, is_valid_perm_text

REDACTED = "******"
_PERM_MSG = "The expected permissions are 'SUB' or 'PUB' or 'SUB|PUB' or 'PUB|SUB'"


def _version(f: AclFile) -> str:
    return json.dumps({"counter": f.version["counter"], "stateVersion": 0, "timestamp": f.version["timestamp"]})


def _list(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [x.strip() for x in text.split(",") if x.strip()]


class AclAdminHandlers:
    def __init__(
        self, watcher: AclWatcher, *, broker_name: str, cluster_name: str, broker_addr: Callable[[], str]
    ) -> None:
        self._watcher = watcher
        self._broker_name = broker_name
        self._cluster_name = cluster_name
        self._broker_addr = broker_addr

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.UPDATE_AND_CREATE_ACL_CONFIG: self.update,
            RequestCode.DELETE_ACL_CONFIG: self.delete,
            RequestCode.GET_BROKER_CLUSTER_ACL_INFO: self.versions,
            RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG: self.update_white,
            RequestCode.GET_BROKER_CLUSTER_ACL_CONFIG: self.get_config,
        }

    async def update(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        ext = cmd.ext_fields
        ak = ext.get("accessKey", "")
        fail = ResponseCode.UPDATE_AND_CREATE_ACL_CONFIG_FAILED
        try:
            old = self._watcher.config.rules.account(ak)
            for key in ("defaultTopicPerm", "defaultGroupPerm"):
                if key in ext and not is_valid_perm_text(ext[key]):
                    raise AclError(_PERM_MSG)
            tps = _list(ext.get("topicPerms"))
            gps = _list(ext.get("groupPerms"))
            for entry in (tps or []) + (gps or []):
                if "=" in entry and not is_valid_perm_text(entry.split("=", 1)[1]):
                    raise AclError(_PERM_MSG)
            admin = ext.get("admin")
            account = Account.build(
                ak,
                ext.get("secretKey") or (old.secret_key if old else ""),
                white_remote_address=ext.get("whiteRemoteAddress", old.white_remote_address if old else ""),
                admin=(admin.lower() == "true") if admin is not None else (old.admin if old else False),
                default_topic_perm=ext.get("defaultTopicPerm", old.default_topic_perm if old else None),
                default_group_perm=ext.get("defaultGroupPerm", old.default_group_perm if old else None),
                topic_perms=tps if tps is not None else (old.topic_perms if old else ()),
                group_perms=gps if gps is not None else (old.group_perms if old else ()),
            )
            self._watcher.config.upsert(account)
        except (AclError, OSError) as exc:
            return cmd.make_response(fail, str(exc))
        self._watcher.reload()
        return cmd.make_response()

    async def delete(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        ak = cmd.ext_fields.get("accessKey", "")
        try:
            self._watcher.config.delete(ak)
        except (AclError, OSError) as exc:
            return cmd.make_response(ResponseCode.DELETE_ACL_CONFIG_FAILED, str(exc))
        self._watcher.reload()
        return cmd.make_response()

    async def versions(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        cfg = self._watcher.config
        ext = {
            "version": _version(cfg.default_file),
            "allAclFileVersion": json.dumps({str(f.path): json.loads(_version(f)) for f in cfg.files}),
            "brokerName": self._broker_name,
            "brokerAddr": self._broker_addr(),
            "clusterName": self._cluster_name,
        }
        return cmd.make_response(ext_fields=ext)

    async def update_white(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        ext = cmd.ext_fields
        try:
            white = _list(ext.get("globalWhiteAddrs"))
            if white is None:
                raise AclError("the custom field <globalWhiteAddrs> is null")
            self._watcher.config.set_global_white(white, ext.get("aclFileFullPath", ""))
        except (AclError, OSError) as exc:
            return cmd.make_response(ResponseCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED, str(exc))
        self._watcher.reload()
        return cmd.make_response()

    async def get_config(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        rules = self._watcher.config.rules
        body = {
            "globalWhiteAddrs": [p.text for p in rules.global_white],
            "plainAccessConfigs": [
                {
                    "accessKey": a.access_key,
                    "secretKey": REDACTED,
                    "whiteRemoteAddress": a.white_remote_address,
                    "admin": a.admin,
                    "defaultTopicPerm": a.default_topic_perm,
                    "defaultGroupPerm": a.default_group_perm,
                    "topicPerms": list(a.topic_perms),
                    "groupPerms": list(a.group_perms),
                }
                for a in rules.accounts.values()
            ],
        }
        return cmd.make_response(body=json.dumps(body).encode())
