"""The ACL hot path's shortcuts keep the answers of the full check: remembered permissions are per account, topic
and group (a refusal is never remembered; a reload starts afresh), signatures from a cached keyed HMAC and field order
equal J's, and a malformed signature is a refusal, not an error."""

from __future__ import annotations

import pytest

from protocol.acl.signature import SIGNATURE, SessionCredentials, calc_signature, signature_content, verify_signature
from protocol.codes import RequestCode
from protocol.command import RemotingCommand
from runtime.acl.rules import Account, AclError, AclRules

CREDS = SessionCredentials("fastUser1", "fastSecret1")


def send(topic: str, group: str = "pg", body: bytes = b"payload") -> RemotingCommand:
    cmd = RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, {"a": group, "b": topic, "c": "TBW102"}, body)
    CREDS.sign(cmd)
    return cmd


def rules(*topic_perms: str) -> AclRules:
    acct = Account.build("fastUser1", "fastSecret1", topic_perms=topic_perms)
    return AclRules({acct.access_key: acct})


def test_a_remembered_permission_covers_only_its_topic_and_group() -> None:
    r = rules("T1=PUB", "T2=SUB")
    for _ in range(3):
        r.check("127.0.0.1", send("T1"))
    for _ in range(3):  # a refusal is refused every time, never remembered
        with pytest.raises(AclError, match="topic:T2"):
            r.check("127.0.0.1", send("T2"))
    with pytest.raises(AclError, match="topic:T3"):
        r.check("127.0.0.1", send("T3"))
    # a retry topic needs SUB on the group's retry topic: another key than a plain send by the same group
    with pytest.raises(AclError, match="group:pg"):
        r.check("127.0.0.1", send("%RETRY%pg"))
    assert r.accounts["fastUser1"].allowed == {(RequestCode.SEND_MESSAGE_V2, "T1", "pg")}
    # reloaded rules are new accounts: what the old ones allowed is gone
    with pytest.raises(AclError, match="topic:T1"):
        rules("T2=PUB").check("127.0.0.1", send("T1"))


def test_a_remembered_permission_still_needs_a_good_signature() -> None:
    r = rules("T1=PUB")
    r.check("127.0.0.1", send("T1"))
    bad = send("T1", body=b"tampered")
    bad.body = b"payload"
    with pytest.raises(AclError, match="Check signature failed"):
        r.check("127.0.0.1", bad)


@pytest.mark.parametrize("body", [b"", b"x" * 5000, memoryview(b"view body")])
def test_signatures_match_the_reference_computation(body: bytes) -> None:
    ext = {"b": "T1", "a": "pg", "AccessKey": "fastUser1", "Zed": "\u00e9", "k": ""}
    expected = calc_signature(signature_content(ext, bytes(body)), "fastSecret1")
    ext[SIGNATURE] = expected
    assert verify_signature(ext, body, "fastSecret1")
    for _ in range(2):  # the cached field order and keyed HMAC give the same answer again
        assert verify_signature(dict(ext), body, "fastSecret1")
    assert not verify_signature({**ext, "b": "T2"}, body, "fastSecret1")


@pytest.mark.parametrize("sent", ["", "not base64 \u00e9\u4e2d", "\udcff"])
def test_a_malformed_signature_is_a_refusal(sent: str) -> None:
    cmd = send("T1")
    cmd.ext_fields[SIGNATURE] = sent
    with pytest.raises(AclError, match="Check signature failed"):
        rules("T1=PUB").check("127.0.0.1", cmd)
