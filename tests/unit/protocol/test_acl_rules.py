"""ACL 1.0 pure parts: the signature against the official clients' captured frames, address patterns, perms."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.acl.signature import SessionCredentials, signature_content, verify_signature
from protocol.codes import RequestCode
from protocol.command import RemotingCommand
from protocol.frame import FrameDecoder
from runtime.acl.rules import (
    DENY,
    PUB,
    SUB,
    Account,
    AclError,
    AclRules,
    check_permission,
    host_of,
    parse_address_pattern,
    parse_perm,
)


def _acl_frames(golden_dir: Path) -> list[RemotingCommand]:
    out = []
    for p in sorted(golden_dir.glob("*_acl_*_c2s_*.bin")):
        d = FrameDecoder()
        d.feed(p.read_bytes())
        out.extend(d.frames())
    return out


def test_official_clients_signatures_verify(golden_dir: Path) -> None:
    frames = _acl_frames(golden_dir)
    assert len(frames) >= 7
    for cmd in frames:
        assert cmd.ext_fields["AccessKey"] == "AK_test"
        assert verify_signature(cmd.ext_fields, cmd.body, "SK_test"), cmd.code
        assert not verify_signature(cmd.ext_fields, cmd.body, "SK_wrong")
        tampered = dict(cmd.ext_fields)
        tampered["AccessKey"] = "AK_tesu"
        assert not verify_signature(tampered, cmd.body, "SK_test")


def test_our_signing_matches_the_algorithm() -> None:
    cmd = RemotingCommand.request(10, {"topic": "T", "b": "x", "Z": "1"}, b"body")
    SessionCredentials("RocketMQ", "12345678", "tok").sign(cmd)
    assert set(cmd.ext_fields) == {"topic", "b", "Z", "AccessKey", "SecurityToken", "Signature"}
    # uppercase keys sort before lowercase (Java TreeMap)
    assert signature_content(cmd.ext_fields, cmd.body) == b"RocketMQtok1xTbody"
    assert verify_signature(cmd.ext_fields, cmd.body, "12345678")
    cmd.body = b"other"
    assert not verify_signature(cmd.ext_fields, cmd.body, "12345678")


def test_unique_key_query_is_accepted_signed_or_not() -> None:
    for signed_with in (True, False):
        cmd = RemotingCommand.request(
            12, {"topic": "T", "_UNIQUE_KEY_QUERY": "true"} if signed_with else {"topic": "T"}
        )
        SessionCredentials("RocketMQ", "12345678").sign(cmd)
        cmd.ext_fields["_UNIQUE_KEY_QUERY"] = "true"
        assert verify_signature(cmd.ext_fields, b"", "12345678")
        cmd.ext_fields["topic"] = "U"
        assert not verify_signature(cmd.ext_fields, b"", "12345678")


@pytest.mark.parametrize(
    ("pattern", "yes", "no"),
    [
        ("", [], ["127.0.0.1"]),
        ("*", ["1.2.3.4", "::1"], []),
        ("*.*.*.*", ["10.0.0.1"], []),
        ("192.168.1.*", ["192.168.1.0", "192.168.1.255"], ["192.168.2.1"]),
        ("192.168.*.*", ["192.168.0.1", "192.168.200.3"], ["192.169.0.1"]),
        ("10.*.*.*", ["10.1.2.3"], ["11.1.2.3"]),
        ("192.168.1.1-100", ["192.168.1.1", "192.168.1.100"], ["192.168.1.101", "192.168.1.0"]),
        ("192.168.1.{1,2,3}", ["192.168.1.2"], ["192.168.1.4"]),
        ("1.1.1.1,2.2.2.2", ["2.2.2.2"], ["3.3.3.3"]),
        ("127.0.0.1", ["127.0.0.1"], ["127.0.0.2"]),
        ("::1", ["0:0:0:0:0:0:0:1"], ["::2"]),
        ("1050:0:0:0:5:600:300c:*", ["1050::5:600:300c:326b"], ["1050::5:600:300d:1"]),
    ],
)
def test_address_patterns(pattern: str, yes: list[str], no: list[str]) -> None:
    p = parse_address_pattern(pattern)
    for ip in yes:
        assert p.matches(ip), ip
    for ip in no:
        assert not p.matches(ip), ip


@pytest.mark.parametrize("bad", ["10.*", "192.168.1.300-400", "192.168.1.-5", "1.1.1.1,nothost", "256.1.1.1"])
def test_bad_address_patterns_are_refused(bad: str) -> None:
    with pytest.raises(AclError):
        parse_address_pattern(bad)


def test_perm_parsing_and_check() -> None:
    assert parse_perm("PUB|SUB") == PUB | SUB == parse_perm(" sub|pub ")
    assert parse_perm("bogus") == DENY == parse_perm(None)
    assert check_permission(PUB, PUB | SUB) and not check_permission(PUB, SUB)
    assert not check_permission(SUB, DENY | SUB)
    assert host_of("[::1]:1234") == "::1" and host_of("1.2.3.4:5") == "1.2.3.4"


def test_keys_must_be_longer_than_six() -> None:
    with pytest.raises(AclError):
        Account.build("123456", "12345678")
    with pytest.raises(AclError):
        Account.build("1234567", "123456")
    Account.build("1234567", "1234567")


def test_trace_topic_is_always_writable_and_admin_codes_need_admin() -> None:
    acct = Account.build("RocketMQ", "12345678", default_topic_perm="DENY")
    rules = AclRules({acct.access_key: acct})
    cmd = RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, {"a": "g", "b": "RMQ_SYS_TRACE_TOPIC"})
    SessionCredentials("RocketMQ", "12345678").sign(cmd)
    rules.check("10.0.0.1", cmd)
    cmd = RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_TOPIC, {"topic": "t"})
    SessionCredentials("RocketMQ", "12345678").sign(cmd)
    with pytest.raises(AclError, match="Need admin permission for request code=17, but accessKey=RocketMQ is not"):
        rules.check("10.0.0.1", cmd)
