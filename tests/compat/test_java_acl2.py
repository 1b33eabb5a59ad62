"""The official Java client (``rocketmq-client`` 5.5.0 from Maven Central, remoting, ``AclClientRPCHook``) against
our name server and broker in separate processes, signed with an ACL 2.0 user: allowed sends are SEND_OK, a send
the user's policy denies and a wrong password get RocketMQ 5.3's answer (NO_PERMISSION, "User:… has no permission
to access Topic:… from …", "check signature failed."). Skipped without Maven and a JDK or when Maven Central cannot
be reached."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from client.admin.admin_client import AdminClient
from protocol.codes import RequestCode
from tests.integration.acl_support import ADMIN
from tests.servers import Servers

pytestmark = pytest.mark.compat
ACL = True  # the servers fixture's broker checks the accounts write_acl writes

SRC = Path(__file__).with_name("java_acl")


@pytest.fixture(scope="module")
def java_cp(tmp_path_factory: pytest.TempPathFactory) -> str:
    if not (shutil.which("mvn") and shutil.which("javac") and shutil.which("java")):
        pytest.skip("Maven and a JDK are needed (mvn, javac, java)")
    out = tmp_path_factory.mktemp("javaacl")
    cp_file = out / "cp.txt"
    res = subprocess.run(
        ["mvn", "-q", "-f", str(SRC / "pom.xml"), "dependency:build-classpath", f"-Dmdep.outputFile={cp_file}"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if res.returncode != 0 or not cp_file.exists():
        pytest.skip(f"rocketmq-client 5.5.0 could not be resolved from Maven: {res.stdout[-500:]}")
    cp = cp_file.read_text().strip()
    classes = out / "classes"
    subprocess.run(["javac", "-cp", cp, "-d", str(classes), str(SRC / "AclDriver.java")], check=True, timeout=300)
    return f"{classes}:{cp}"


def _admin(s: Servers, code: int, ext: dict[str, str], body: object) -> None:
    async def run() -> None:
        async with AdminClient(s.ns_addr, access_key=ADMIN.access_key, secret_key=ADMIN.secret_key) as a:
            await a.call(s.broker_addr, code, ext, json.dumps(body).encode() if body is not None else b"")

    asyncio.run(run())


def _send(cp: str, s: Servers, ak: str, sk: str, topic: str) -> str:
    res = subprocess.run(
        ["java", "-cp", cp, "AclDriver", s.ns_addr, ak, sk, topic],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith(("OK ", "ERR "))]
    assert lines, (res.stdout[-2000:], res.stderr[-2000:])
    return lines[-1]


def test_java_client_with_acl2_user(java_cp: str, servers: Servers) -> None:
    async def topics() -> None:
        async with AdminClient(servers.ns_addr, access_key=ADMIN.access_key, secret_key=ADMIN.secret_key) as a:
            for t in ("topicA", "topicB"):
                await a.create_topic(servers.broker_addr, t, 4, 4, 6, False)

    asyncio.run(topics())
    _admin(servers, RequestCode.AUTH_CREATE_USER, {"username": "erin"}, {"password": "erin-pass", "userType": "Normal"})
    acl = {"policies": [{"entries": [{"resource": "Topic:topicA", "actions": ["Pub"], "decision": "Allow"}]}]}
    _admin(servers, RequestCode.AUTH_CREATE_ACL, {"subject": "User:erin"}, acl)
    assert _send(java_cp, servers, "erin", "erin-pass", "topicA") == "OK SEND_OK"
    denied = _send(java_cp, servers, "erin", "erin-pass", "topicB")
    assert "MQBrokerException CODE: 16" in denied, denied
    assert "User:erin has no permission to access Topic:topicB from" in denied, denied
    wrong = _send(java_cp, servers, "erin", "not-erins", "topicA")
    assert "CODE: 16" in wrong and "check signature failed." in wrong, wrong
