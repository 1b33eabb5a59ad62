"""The Dashboard's ACL page (ACL 2.0 users and policies, request codes 3001-3010) against a broker with ACL on.

An ACL page needs a cluster that keeps ACL metadata, so this module's broker runs with ACL (rocketq: ``aclEnable=true``
and an admin account in ``plain_acl.yml``; Apache RocketMQ 5.5.0: ACL 2.0 authentication and authorization with that
account as its first, super user) and the Dashboard is given that admin account (``rocketmq.config.accessKey``/
``secretKey``, its documented settings for a cluster with ACL); everything else is its default configuration.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.dashboard.support import Env, ok, open_page
from tests.integration.acl_support import ADMIN, write_acl

pytestmark = [pytest.mark.dashboard, pytest.mark.timeout(600)]  # the first test waits for the JVM

TRAFFIC = False  # the SDK clients of the other module carry no credentials
DASHBOARD_ARGS = (f"--rocketmq.config.accessKey={ADMIN.access_key}", f"--rocketmq.config.secretKey={ADMIN.secret_key}")


def broker_extra(tmp: Path) -> str:
    home = tmp / "home"
    write_acl(home)
    return f"aclEnable=true\nrocketmqHome={home}\n"


_AUTH = "org.apache.rocketmq.auth"


def apache_broker_extra(tmp: Path) -> str:
    user = json.dumps({"username": ADMIN.access_key, "password": ADMIN.secret_key})
    inner = json.dumps({"accessKey": ADMIN.access_key, "secretKey": ADMIN.secret_key})
    return (
        "authenticationEnabled=true\nauthorizationEnabled=true\n"
        f"authenticationProvider={_AUTH}.authentication.provider.DefaultAuthenticationProvider\n"
        f"authenticationMetadataProvider={_AUTH}.authentication.provider.LocalAuthenticationMetadataProvider\n"
        f"authorizationProvider={_AUTH}.authorization.provider.DefaultAuthorizationProvider\n"
        f"authorizationMetadataProvider={_AUTH}.authorization.provider.LocalAuthorizationMetadataProvider\n"
        f"initAuthenticationUser={user}\ninnerClientAuthenticationCredentials={inner}\n"
    )


def test_acl_page_creates_and_lists_users_and_policies(page: Any, dashboard: Env) -> None:
    user = {"username": "dashuser", "password": "dash-password", "userType": "Normal", "userStatus": "enable"}
    ok(page, "/acl/createUser.do", {"clusterName": "DashCluster", "brokerName": None, "userInfo": user})
    users = ok(page, "/acl/users.query?clusterName=DashCluster")
    assert "dashuser" in {u["username"] for u in users}, users
    policy = {
        "policyType": "Custom",
        "entries": [
            {
                "resource": ["Topic:DashTopic"],
                "actions": ["Pub", "Sub"],
                "sourceIps": ["127.0.0.1"],
                "decision": "Allow",
            }
        ],
    }
    req = {"clusterName": "DashCluster", "brokerName": None, "subject": "User:dashuser", "policies": [policy]}
    ok(page, "/acl/createAcl.do", req)
    acls = ok(page, "/acl/acls.query?clusterName=DashCluster")
    assert "User:dashuser" in {a["subject"] for a in acls}, acls
    brokers = ok(page, "/acl/users.query?clusterName=DashCluster&brokerName=broker-a")
    assert "dashuser" in {u["username"] for u in brokers}
    open_page(page, dashboard, "acl", "acl", "dashuser", press=("broker-a", "Confirm"))
