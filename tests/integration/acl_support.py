"""ACL test helpers: a ``rocketmqHome`` with a ``conf/plain_acl.yml``, and signed raw requests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from protocol.acl.signature import SessionCredentials
from protocol.codes import RequestCode
from protocol.command import RemotingCommand

ADMIN = SessionCredentials("rocketmq2", "12345678")
NORMAL = SessionCredentials("RocketMQ", "12345678")
SUB_ONLY = SessionCredentials("subOnlyKey", "12345678")
ACL_EXC = "org.apache.rocketmq.acl.common.AclException: "

ACCOUNTS: list[dict[str, Any]] = [
    {"accessKey": "rocketmq2", "secretKey": "12345678", "admin": True},
    {
        "accessKey": "RocketMQ",
        "secretKey": "12345678",
        "admin": False,
        "defaultTopicPerm": "DENY",
        "defaultGroupPerm": "SUB",
        "topicPerms": ["topicA=PUB|SUB", "topicB=PUB", "topicC=SUB", "topicD=DENY"],
        "groupPerms": ["groupA=SUB", "groupD=DENY"],
    },
    {
        "accessKey": "subOnlyKey",
        "secretKey": "12345678",
        "defaultTopicPerm": "SUB",
        "defaultGroupPerm": "SUB",
    },
]


def write_acl(home: Path, accounts: list[dict[str, Any]] | None = None, white: list[str] | None = None) -> Path:
    path = home / "conf" / "plain_acl.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"accounts": ACCOUNTS if accounts is None else accounts}
    if white:
        doc["globalWhiteRemoteAddresses"] = white
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(doc))
    tmp.replace(path)
    return path


def signed(cmd: RemotingCommand, creds: SessionCredentials | None) -> RemotingCommand:
    if creds is not None:
        creds.sign(cmd)
    return cmd


def create_topic_cmd(topic: str) -> RemotingCommand:
    """UPDATE_AND_CREATE_TOPIC (17) for ``topic``: 1 queue, read-write."""
    ext = {
        "topic": topic,
        "defaultTopic": "TBW102",
        "readQueueNums": "1",
        "writeQueueNums": "1",
        "perm": "6",
        "topicFilterType": "SINGLE_TAG",
        "topicSysFlag": "0",
        "order": "false",
    }
    return RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_TOPIC, ext)


def refused(resp: RemotingCommand) -> bool:
    return resp.code == 1 and (resp.remark or "").startswith(ACL_EXC)
