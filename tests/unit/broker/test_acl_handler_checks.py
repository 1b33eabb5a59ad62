"""The check → code → remark table of the ACL admin requests (broker/handlers/admin_acl.py), one row per case,
dispatched through the wired registry on a fake channel, over an ACL home holding one account (``RocketMQ``) in
the default file. A refused write answers its own code (209 / 210 / 211) with the reason as the remark and leaves
the file as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from tests.integration.broker_wire import simple_cmd
from tests.unit.broker.handler_support import CheckRow, check_row, dispatch, run_row, wired_broker

R = ResponseCode
Row = CheckRow
Q = RequestCode

PERM_MSG = "The expected permissions are 'SUB' or 'PUB' or 'SUB|PUB' or 'PUB|SUB'"
ACL_YAML = """\
globalWhiteRemoteAddresses:
- 10.10.103.*
accounts:
- accessKey: RocketMQ
  secretKey: "12345678"
  admin: false
  defaultTopicPerm: DENY
  defaultGroupPerm: SUB
  topicPerms:
  - TopicA=PUB|SUB
"""


def _acl_home(tmp_path: Path) -> Path:
    home = tmp_path / "acl-home"
    (home / "conf").mkdir(parents=True)
    (home / "conf" / "plain_acl.yml").write_text(ACL_YAML)
    return home


def _update(**fields: object) -> RemotingCommand:
    return simple_cmd(Q.UPDATE_AND_CREATE_ACL_CONFIG, **fields)


def _white(**fields: object) -> RemotingCommand:
    return simple_cmd(Q.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, **fields)


UPDATE_FAILED = R.UPDATE_AND_CREATE_ACL_CONFIG_FAILED
DELETE_FAILED = R.DELETE_ACL_CONFIG_FAILED
WHITE_FAILED = R.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED

ACL_ROWS = [
    Row(
        "update-missing-access-key",
        lambda: _update(secretKey="12345678"),
        UPDATE_FAILED,
        "The accessKey= cannot be null and length should longer than 6",
    ),
    Row(
        "update-short-access-key",
        lambda: _update(accessKey="abc", secretKey="12345678"),
        UPDATE_FAILED,
        "The accessKey=abc cannot be null and length should longer than 6",
    ),
    Row(
        "update-new-account-short-secret",
        lambda: _update(accessKey="NewUser1", secretKey="123"),
        UPDATE_FAILED,
        "The secretKey=123 value length should longer than 6",
    ),
    Row(
        "update-new-account-no-secret",
        lambda: _update(accessKey="NewUser1"),
        UPDATE_FAILED,
        "The secretKey= value length should longer than 6",
    ),
    Row(
        "update-bad-default-topic-perm",
        lambda: _update(accessKey="RocketMQ", defaultTopicPerm="ALL"),
        UPDATE_FAILED,
        PERM_MSG,
    ),
    Row(
        "update-bad-default-group-perm",
        lambda: _update(accessKey="RocketMQ", defaultGroupPerm="WRITE"),
        UPDATE_FAILED,
        PERM_MSG,
    ),
    Row(
        "update-bad-topic-perm",
        lambda: _update(accessKey="RocketMQ", topicPerms="TopicA=PUB,TopicB=WRITE"),
        UPDATE_FAILED,
        PERM_MSG,
    ),
    Row(
        "update-bad-group-perm",
        lambda: _update(accessKey="RocketMQ", groupPerms="G=EVERYTHING"),
        UPDATE_FAILED,
        PERM_MSG,
    ),
    Row(
        "update-topic-perm-without-equals",
        lambda: _update(accessKey="RocketMQ", topicPerms="TopicA"),
        UPDATE_FAILED,
        "Parse resource permission failed for topic:TopicA",
    ),
    Row(
        "update-group-perm-without-equals",
        lambda: _update(accessKey="RocketMQ", groupPerms="G"),
        UPDATE_FAILED,
        "Parse resource permission failed for group:G",
    ),
    Row(
        "update-bad-white-address",
        lambda: _update(accessKey="RocketMQ", whiteRemoteAddress="not-an-address"),
        UPDATE_FAILED,
        "netaddress is not-an-address",
    ),
    Row(
        "update-new-account",
        lambda: _update(accessKey="NewUser1", secretKey="87654321", defaultTopicPerm="SUB"),
        R.SUCCESS,
        None,
    ),
    Row(
        "update-existing-keeps-its-secret",
        lambda: _update(accessKey="RocketMQ", admin="true"),
        R.SUCCESS,
        None,
    ),
    Row(
        "delete-unknown-account",
        lambda: simple_cmd(Q.DELETE_ACL_CONFIG, accessKey="Nobody12"),
        DELETE_FAILED,
        "The accesskey[Nobody12] corresponding to accessConfig has been deleted failed.",
    ),
    Row(
        "delete-missing-access-key",
        lambda: simple_cmd(Q.DELETE_ACL_CONFIG),
        DELETE_FAILED,
        "The accesskey[] corresponding to accessConfig has been deleted failed.",
    ),
    Row("delete", lambda: simple_cmd(Q.DELETE_ACL_CONFIG, accessKey="RocketMQ"), R.SUCCESS, None),
    Row(
        "white-missing-addresses",
        lambda: _white(),
        WHITE_FAILED,
        "the custom field <globalWhiteAddrs> is null",
    ),
    Row(
        "white-not-an-acl-file",
        lambda: _white(globalWhiteAddrs="10.0.0.1", aclFileFullPath="/etc/passwd"),
        WHITE_FAILED,
        "The aclFileFullPath /etc/passwd is not an ACL file under ",
    ),
    Row(
        "white-bad-address",
        lambda: _white(globalWhiteAddrs="10.0.0.1,bad-address"),
        WHITE_FAILED,
        "netaddress is bad-address",
    ),
    Row("white", lambda: _white(globalWhiteAddrs="10.0.0.1,192.168.0.*"), R.SUCCESS, None),
    Row("versions", lambda: simple_cmd(Q.GET_BROKER_CLUSTER_ACL_INFO), R.SUCCESS, None),
    Row("get-config", lambda: simple_cmd(Q.GET_BROKER_CLUSTER_ACL_CONFIG), R.SUCCESS, None),
]


@pytest.mark.parametrize("row", ACL_ROWS, ids=lambda r: r.id)
async def test_acl_admin_checks(tmp_path: Path, row: Row) -> None:
    home = _acl_home(tmp_path)
    resp = await run_row(tmp_path, row, acl_home=home)
    check_row(resp, row)
    written = (home / "conf" / "plain_acl.yml").read_text()
    if row.code != R.SUCCESS:
        assert written == ACL_YAML, "a refused write changed the ACL file"


async def test_acl_writes_take_effect_and_secrets_stay_hidden(tmp_path: Path) -> None:
    """The success side: an update keeps the secret it was not given, a new account lands in the default file,
    the white list is replaced, and GET_BROKER_CLUSTER_ACL_CONFIG never shows a secret key."""
    async with wired_broker(tmp_path, acl_home=_acl_home(tmp_path)) as broker:
        for req in (
            _update(accessKey="RocketMQ", admin="true"),
            _update(accessKey="NewUser1", secretKey="87654321"),
            _white(globalWhiteAddrs="10.0.0.1"),
        ):
            resp = await dispatch(broker, req)
            assert (resp.code, resp.remark) == (R.SUCCESS, None)
        got = await dispatch(broker, simple_cmd(Q.GET_BROKER_CLUSTER_ACL_CONFIG))
        body = json.loads(got.body)
        accounts = {a["accessKey"]: a for a in body["plainAccessConfigs"]}
        assert accounts["RocketMQ"]["admin"] is True and set(accounts) == {"RocketMQ", "NewUser1"}
        assert {a["secretKey"] for a in accounts.values()} == {"******"}
        assert body["globalWhiteAddrs"] == ["10.0.0.1"]
        assert b"12345678" not in got.body and b"87654321" not in got.body
        info = await dispatch(broker, simple_cmd(Q.GET_BROKER_CLUSTER_ACL_INFO))
        assert json.loads(info.ext_fields["version"])["counter"] == 3
        assert info.ext_fields["clusterName"] == "DefaultCluster"
