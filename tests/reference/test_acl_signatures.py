"""ACL signatures: the Java 4.x client signing with ``AclClientRPCHook`` (RocketMQ's ACL 1.0 signature) against both
brokers with access control on, the same accounts given to both in one ``plain_acl.yml`` (a module-scoped pair of
clusters, without proxies). Apache RocketMQ 5.5.0 has no ACL 1.0 engine any more: its broker runs ACL 2.0
(authentication + authorization) with ``migrateAuthFromV1Enabled``, which turns the file's accounts into users and
policies at start; rocketq runs its ACL 1.0 engine (``aclEnable``) on the file itself. Allowed operations must
succeed on both and refused ones be refused on both; the refusal's code differs as documented
(docs/reference-differences.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.reference.compare import assert_same, errors, messages, sent_view
from tests.reference.conftest import Target, cluster_pair
from tests.reference.peers import Driver
from tests.reference.test_java4_client import on_both

pytestmark = [pytest.mark.reference, pytest.mark.timeout(600)]

ADMIN = {"ak": "RefAdmin", "sk": "refadmin123"}
USER = {"ak": "RefUser", "sk": "refuser123"}
PLAIN_ACL = """globalWhiteRemoteAddresses: []
accounts:
  - accessKey: RefAdmin
    secretKey: refadmin123
    admin: true
  - accessKey: RefUser
    secretKey: refuser123
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - RefAclOpen=PUB|SUB
      - RefAclReadOnly=SUB
    groupPerms:
      - RefAclDeniedG=DENY
"""
APACHE_AUTH = (
    "authenticationEnabled=true\nauthorizationEnabled=true\nmigrateAuthFromV1Enabled=true\n"
    "authenticationProvider=org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider\n"
    "authenticationMetadataProvider="
    "org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider\n"
    "authorizationProvider=org.apache.rocketmq.auth.authorization.provider.DefaultAuthorizationProvider\n"
    "authorizationMetadataProvider=org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider\n"
    'initAuthenticationUser={"username":"RefAdmin","password":"refadmin123"}\n'
    'innerClientAuthenticationCredentials={"accessKey":"RefAdmin","secretKey":"refadmin123"}\n'
)
# docs/reference-differences.md: the code of a refusal (the Java client treats both alike: not retried here, raised)
REFUSED_CODE = {"apache": 16, "rocketq": 1}


def _home(work: Path) -> Path:
    (work / "conf").mkdir(parents=True, exist_ok=True)
    (work / "conf" / "plain_acl.yml").write_text(PLAIN_ACL)
    return work


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Target]]:
    work = tmp_path_factory.mktemp("acl")
    _home(work / "apache")
    ours_home = _home(work / "rocketq")
    with cluster_pair(work, APACHE_AUTH, f"aclEnable=true\nrocketmqHome={ours_home}\n") as pair:
        yield pair


def refusals(events: list[dict[str, Any]], target: str) -> list[str]:
    """Each error as "refused" when it carries the target's documented refusal code, else its type and code."""
    return [
        "refused" if e.get("code") == REFUSED_CODE[target] else f"{e['type']} {e.get('code')}" for e in errors(events)
    ]


def test_allowed_with_a_signed_account(java4: Driver, secured: dict[str, Target]) -> None:
    """The admin account makes the topics; the user sends to and consumes from the topic it has PUB|SUB on."""

    def run(t: Target) -> Any:
        for topic in ("RefAclOpen", "RefAclReadOnly", "RefAclClosed"):
            made = java4.run(cmd="create_topic", ns=t.ns_addr, topic=topic, **ADMIN)
            assert made == [{"event": "route", "queues": 4}], made
        sent = java4.run(cmd="send", ns=t.ns_addr, topic="RefAclOpen", group="RefAclP", count=2, **USER)
        got = java4.run(cmd="consume", ns=t.ns_addr, topic="RefAclOpen", group="RefAclC", expect=2, **USER)
        return {"sent": sent_view(sent), "got": messages(got, t.name), "errors": errors(sent) + errors(got)}

    seen = on_both(secured, run)
    assert len(seen["apache"]["got"]) == 2 and not seen["apache"]["errors"]
    assert_same(seen)


def test_refused_operations(java4: Driver, secured: dict[str, Target]) -> None:
    """Unsigned, a wrong secret, a send to a SUB-only topic and to a topic the account has no grant on (default
    DENY), a topic made by a non-admin account, a consumer of a DENY group: refused on both."""

    def run(t: Target) -> Any:
        ns = t.ns_addr
        for topic in ("RefAclOpen", "RefAclReadOnly", "RefAclClosed"):
            java4.run(cmd="create_topic", ns=ns, topic=topic, **ADMIN)
        out = {
            "unsigned": java4.run(cmd="send", ns=ns, topic="RefAclOpen", group="RefAclP"),
            "wrong secret": java4.run(cmd="send", ns=ns, topic="RefAclOpen", group="RefAclP", ak="RefUser", sk="x"),
            "sub only": java4.run(cmd="send", ns=ns, topic="RefAclReadOnly", group="RefAclP", **USER),
            "no grant": java4.run(cmd="send", ns=ns, topic="RefAclClosed", group="RefAclP", **USER),
            "not admin": java4.run(cmd="create_topic", ns=ns, topic="RefAclByUser", **USER),
        }
        view: dict[str, Any] = {k: refusals(v, t.name) for k, v in out.items()}
        denied = java4.run(
            cmd="consume", ns=ns, topic="RefAclOpen", group="RefAclDeniedG", expect=1, timeoutMs=8000, **USER
        )
        view["denied group"] = [e["event"] for e in denied]
        return view

    seen = on_both(secured, run)
    assert all(v == ["refused"] for k, v in seen["apache"].items() if k != "denied group"), seen["apache"]
    assert seen["apache"]["denied group"] == ["timeout"]
    assert_same(seen)
