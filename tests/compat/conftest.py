"""Fixtures the compat modules share, each a real name server and broker as processes on free ports:

- ``servers`` (one pair per module): the C++, Node (ali-ons) and Java remoting clients' servers;
- ``env`` (one pair per module, the broker with ``--enable-proxy`` on a gRPC port): ``grpc_support.Env`` for the
  5.x clients;
- ``stub``: a raw v2 ``MessagingServiceStub`` on the env's gRPC endpoint.

A module tunes its pair with module attributes: ``BROKER_CONF`` (text added to ``broker.conf``; by default nothing
for ``servers`` and ``grpc_support.BROKER_EXTRA`` for ``env``) and ``ACL = True`` (the broker checks the accounts
``write_acl`` writes under the pair's ``home``; ``env`` then signs its admin calls as the admin account)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.compat.grpc_support import BROKER_EXTRA, Env
from tests.integration.acl_support import ADMIN, write_acl
from tests.servers import Servers, free_port, start_servers


def _broker_conf(request: pytest.FixtureRequest, tmp: Path, default: str) -> str:
    conf = str(getattr(request.module, "BROKER_CONF", default))
    if getattr(request.module, "ACL", False):
        home = tmp / "home"
        write_acl(home)
        conf += f"aclEnable=true\nrocketmqHome={home}\n"
    return conf


@pytest.fixture(scope="module")
def servers(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    tmp = tmp_path_factory.mktemp(request.module.__name__.rpartition(".")[2])
    with start_servers(tmp, _broker_conf(request, tmp, "")) as s:
        yield s


@pytest.fixture(scope="module")
def env(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    tmp = tmp_path_factory.mktemp(request.module.__name__.rpartition(".")[2])
    port = free_port()
    conf = f"grpcServerPort={port}\n{_broker_conf(request, tmp, BROKER_EXTRA)}"
    keys = (ADMIN.access_key, ADMIN.secret_key) if getattr(request.module, "ACL", False) else (None, None)
    with start_servers(tmp, conf, ("--enable-proxy",)) as s:
        yield Env(s, f"127.0.0.1:{port}", *keys)


@pytest.fixture()
def stub(env: Env) -> Iterator[Any]:
    import grpc

    from broker.proxy.pb import service_pb2_grpc

    with grpc.insecure_channel(env.endpoint) as ch:
        yield service_pb2_grpc.MessagingServiceStub(ch)
