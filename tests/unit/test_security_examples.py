"""The README's security examples under conf/acl-example load as documented."""

from __future__ import annotations

from pathlib import Path

from broker.config import load_config as load_broker
from namesrv.config import load_config as load_namesrv
from runtime.acl.files import AclConfig

EXAMPLE = Path(__file__).resolve().parents[2] / "conf" / "acl-example"


def test_examples_load() -> None:
    b = load_broker(EXAMPLE / "broker-secure.conf")
    assert b.features.acl_enable and b.security.tls_server_mode == "enforcing" and b.network.bind_address == "10.0.0.5"
    n = load_namesrv(EXAMPLE / "namesrv-secure.conf")
    assert n.acl_enable and n.tls_server_mode == "permissive"
    rules = AclConfig.load(EXAMPLE).rules
    acct = rules.account("RocketMQ")
    assert acct is not None and not acct.admin and rules.account("rocketmq2") is not None


def test_secrets_are_not_printed() -> None:
    from broker.config import format_config

    text = format_config(load_broker(EXAMPLE / "broker-secure.conf"))
    assert "innerSecretKey=******" in text and "12345678" not in text
