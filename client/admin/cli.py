"""``mqadmin``: RocketMQ's admin command line (sub-command names and flags as in 4.9, matched case-insensitively).

The commands here cover topics, groups, brokers, messages and KV config; ``cli_ops`` adds the consumer/producer
diagnostics, consume-queue inspection and name-server config commands. Both register into ``registry.COMMANDS``.

Unlike Java's mqadmin, a failure prints one line on stderr and exits non-zero, so scripts can rely on it. Output
keeps RocketMQ's column headers (``#Topic`` …) for scripts that ``awk`` them; ``--json`` prints JSON instead where
it makes sense. The name server comes from ``-n`` or ``NAMESRV_ADDR``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

from client.admin import (  # noqa: F401  (imported for their @command registrations)
    cli_acl,
    cli_auth,
    cli_cluster,
    cli_controller,
    cli_groups,
    cli_ha,
    cli_json,
    cli_messages,
    cli_more,
    cli_ops,
    cli_probes,
    cli_read,
    cli_topics,
    cli_trace,
)
from client.admin.admin_client import AdminClient
from client.admin.argtypes import parse_time
from client.admin.formatting import (
    fmt_time,
    print_config,
    print_connections,
)
from client.admin.output import java
from client.admin.registry import COMMANDS, NAMES, command, target_args, target_brokers
from client.errors import MQClientError
from protocol.bodies import decode_properties_text
from protocol.errors import RemotingError

__all__ = ["COMMANDS", "main"]


_CLUSTER_ROW = "{:<16}  {:<22}  {:<4}  {:<22} {:<16} {:>19} {:>19} {:>10} {:>5} {:>6}  {:<14}{:<18}{:<14}"


def _cluster_columns(kv: dict[str, str], now_ms: int) -> tuple[str, str, str, str, str, str]:
    """J ``ClusterListSubCommand``'s columns from a broker's runtime info: version, in/out TPS (10 s window) with
    the send/pull queue length and head wait, page-cache lock time, hours of messages kept, disk ratio."""

    def first(key: str) -> float:
        parts = kv.get(key, "").split()
        return float(parts[0]) if parts else 0.0

    earliest = int(kv.get("earliestMessageTimeStamp", "0") or 0)
    hours = (now_ms - earliest) / 3_600_000 if earliest > 0 else 0.0
    space = float(kv.get("commitLogDiskRatio", "0") or 0)
    in_load = f"{first('putTps'):9.2f}({kv.get('sendThreadPoolQueueSize', '0')},{kv.get('sendThreadPoolQueueHeadWaitTimeMills', '0')}ms)"
    out_load = f"{first('getTransferedTps'):9.2f}({kv.get('pullThreadPoolQueueSize', '0')},{kv.get('pullThreadPoolQueueHeadWaitTimeMills', '0')}ms)"
    return (
        kv.get("brokerVersionDesc", ""),
        in_load,
        out_load,
        kv.get("pageCacheLockTimeMills", "0"),
        f"{hours:2.2f}",
        f"{space:.4f}",
    )


@command("clusterList", "List cluster infos", cli_more.cluster_list_args)
async def cluster_list(admin: AdminClient, a: argparse.Namespace) -> int:
    if a.moreStats or a.json:
        return await cli_more.cluster_list_more(admin, a)
    info = await admin.cluster_info()
    print(
        _CLUSTER_ROW.format(
            "#Cluster Name",
            "#Broker Name",
            "#BID",
            "#Addr",
            "#Version",
            "#InTPS(LOAD)",
            "#OutTPS(LOAD)",
            "#PCWait(ms)",
            "#Hour",
            "#SPACE",
            "#Role",
            "#HAState",
            "#Behind(bytes)",
        )
    )
    for cluster, names in sorted(info.get("clusterAddrTable", {}).items()):
        for name in sorted(names):
            for bid, addr in sorted(info["brokerAddrTable"][name]["brokerAddrs"].items()):
                try:
                    kv = await admin.runtime_info(addr)
                except (RemotingError, OSError):
                    kv = {}
                cols = _cluster_columns(kv, int(time.time() * 1000))
                role, state, behind = await cli_ha.role_columns(admin, addr)
                print(_CLUSTER_ROW.format(cluster, name, bid, addr, *cols, role, state, behind))
    return 0


@command("topicList", "Fetch all topic list from name server", cli_more.topic_list_args)
async def topic_list(admin: AdminClient, a: argparse.Namespace) -> int:
    if a.clusterModel or a.json:
        return await cli_more.topic_list_more(admin, a)
    for t in sorted(await admin.topic_list()):
        print(t)
    return 0


@command("topicRoute", "Examine topic route info", cli_more.topic_route_args)
async def topic_route(admin: AdminClient, a: argparse.Namespace) -> int:
    if a.list or a.json:
        return await cli_more.topic_route_more(admin, a)
    _route, raw = await admin.topic_route(a.topic)
    print(json.dumps(raw, indent=2, sort_keys=True))
    return 0


@command("topicStatus", "Examine topic Status info", lambda p: p.add_argument("-t", "--topic", required=True))
async def topic_status(admin: AdminClient, a: argparse.Namespace) -> int:
    route, _raw = await admin.topic_route(a.topic)
    print(f"{'#Broker Name':<32}{'#QID':<6}{'#Min Offset':<22}{'#Max Offset':<22}{'#Last Updated'}")
    for bd in sorted(route.brokers.values(), key=lambda b: b.broker_name):
        if not bd.master_addr:
            continue
        stats = await admin.topic_stats(bd.master_addr, a.topic)
        for mq, s in sorted(stats.items()):
            when = fmt_time(int(s.get("lastUpdateTimestamp", 0)), "")
            print(f"{mq.broker_name:<32}{mq.queue_id:<6}{s.get('minOffset', 0):<22}{s.get('maxOffset', 0):<22}{when}")
    return 0


def _update_topic_args(p: argparse.ArgumentParser) -> None:
    target_args(p)
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-r", "--readQueueNums", type=int, default=8)
    p.add_argument("-w", "--writeQueueNums", type=int, default=8)
    p.add_argument("-p", "--perm", type=int, default=6)
    p.add_argument("-o", "--order", default="false")
    p.add_argument("-a", "--attributes", default=None, help="5.x topic attributes, e.g. +message.type=FIFO")


@command("updateTopic", "Update or create topic", _update_topic_args)
async def update_topic(admin: AdminClient, a: argparse.Namespace) -> int:
    for addr in await target_brokers(admin, a):
        order = a.order.lower() == "true"
        await admin.create_topic(addr, a.topic, a.readQueueNums, a.writeQueueNums, a.perm, order, a.attributes)
        print(f"create topic to {addr} success.")
    attrs = f", attributes={{{a.attributes}}}" if a.attributes else ""
    print(
        f"TopicConfig [topicName={a.topic}, readQueueNums={a.readQueueNums}, writeQueueNums={a.writeQueueNums}, "
        f"perm={a.perm}, topicFilterType=SINGLE_TAG, topicSysFlag=0, order={a.order.lower()}{attrs}]"
    )
    return 0


def _delete_topic_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-c", "--clusterName", required=True)


@command("deleteTopic", "Delete topic from broker and NameServer", _delete_topic_args)
async def delete_topic(admin: AdminClient, a: argparse.Namespace) -> int:
    for addr in await admin.broker_addrs(a.clusterName):
        await admin.delete_topic_in_broker(addr, a.topic)
    print(f"delete topic [{a.topic}] from cluster [{a.clusterName}] success.")
    await admin.delete_topic_in_namesrv(a.topic, a.clusterName)
    print(f"delete topic [{a.topic}] from NameServer success.")
    return 0


def _sub_group_args(p: argparse.ArgumentParser) -> None:
    target_args(p)
    p.add_argument("-g", "--groupName", required=True)
    p.add_argument("-r", "--retryMaxTimes", type=int, default=16)
    p.add_argument("-q", "--retryQueueNums", type=int, default=1)
    p.add_argument("-d", "--consumeBroadcastEnable", default="false")
    p.add_argument("-s", "--consumeEnable", default="true")
    p.add_argument("-m", "--consumeFromMinEnable", default="true")
    p.add_argument("-i", "--brokerId", type=int, default=0, help="consume from which broker id")
    p.add_argument("-w", "--whichBrokerWhenConsumeSlowly", type=int, default=1)
    p.add_argument("-a", "--notifyConsumerIdsChanged", default="true")
    p.add_argument("-o", "--consumeMessageOrderly", default="false", help="a FIFO group for RocketMQ 5 clients")


@command("updateSubGroup", "Update or create subscription group", _sub_group_args)
async def update_sub_group(admin: AdminClient, a: argparse.Namespace) -> int:
    cfg = {
        "groupName": a.groupName,
        "consumeEnable": a.consumeEnable.lower() == "true",
        "consumeBroadcastEnable": a.consumeBroadcastEnable.lower() == "true",
        "retryQueueNums": a.retryQueueNums,
        "retryMaxTimes": a.retryMaxTimes,
        "consumeFromMinEnable": a.consumeFromMinEnable.lower() == "true",
        "brokerId": a.brokerId,
        "whichBrokerWhenConsumeSlowly": a.whichBrokerWhenConsumeSlowly,
        "notifyConsumerIdsChangedEnable": a.notifyConsumerIdsChanged.lower() == "true",
    }
    if a.consumeMessageOrderly.lower() == "true":
        cfg["consumeMessageOrderly"] = True
    for addr in await target_brokers(admin, a):
        await admin.create_group(addr, cfg)
        print(f"create subscription group to {addr} success.")
    print("SubscriptionGroupConfig [" + ", ".join(f"{k}={java(v)}" for k, v in cfg.items()) + "]")
    return 0


def _del_group_args(p: argparse.ArgumentParser) -> None:
    target_args(p)
    p.add_argument("-g", "--groupName", required=True)
    p.add_argument("-r", "--removeOffset", default="false")


@command("deleteSubGroup", "Delete subscription group from broker", _del_group_args)
async def delete_sub_group(admin: AdminClient, a: argparse.Namespace) -> int:
    for addr in await target_brokers(admin, a):
        await admin.delete_group(addr, a.groupName, a.removeOffset.lower() == "true")
        print(f"delete subscription group [{a.groupName}] from broker [{addr}] success.")
    return 0


@command(
    "consumerConnection",
    "Query consumer's socket connection, client version and subscription",
    lambda p: p.add_argument("-g", "--consumerGroup", required=True),
)
async def consumer_connection(admin: AdminClient, a: argparse.Namespace) -> int:
    _addr, conn = await admin.find_consumer_connection(a.consumerGroup)
    print_connections(conn.connection_set)
    print("\nBelow is subscription:")
    for topic, sub in conn.subscription_table.items():
        print(f"{topic:<48}{sub.sub_string}")
    print(
        f"\nConsumeType: {conn.consume_type}\nMessageModel: {conn.message_model}\n"
        f"ConsumeFromWhere: {conn.consume_from_where}"
    )
    return 0


@command("brokerStatus", "Fetch broker runtime status data", target_args)
async def broker_status(admin: AdminClient, a: argparse.Namespace) -> int:
    addrs = await target_brokers(admin, a)
    for addr in addrs:
        for k, v in sorted((await admin.runtime_info(addr)).items()):
            prefix = f"{addr:<24}" if len(addrs) > 1 else ""
            print(f"{prefix}{k:<32}: {v}")
    return 0


@command(
    "checkStore", "Show what the broker's store found damaged and repaired (quarantine, rebuilt files)", target_args
)
async def check_store(admin: AdminClient, a: argparse.Namespace) -> int:
    for addr in await target_brokers(admin, a):
        report = await admin.check_store(addr)
        print(f"#Broker {addr}")
        for k, v in report.items():
            if isinstance(v, list):
                print(f"{k:<24}: {len(v)}")
                for line in v:
                    print(f"  {line}")
            else:
                print(f"{k:<24}: {v}")
    return 0


@command("getBrokerConfig", "Get broker config by cluster or special broker", target_args)
async def get_broker_config(admin: AdminClient, a: argparse.Namespace) -> int:
    for addr in await target_brokers(admin, a):
        print_config(addr, decode_properties_text(await admin.broker_config(addr)))
    return 0


def _update_cfg_args(p: argparse.ArgumentParser) -> None:
    target_args(p)
    p.add_argument("-k", "--key", required=True)
    p.add_argument("-v", "--value", required=True)


@command("updateBrokerConfig", "Update broker's config", _update_cfg_args)
async def update_broker_config(admin: AdminClient, a: argparse.Namespace) -> int:
    for addr in await target_brokers(admin, a):
        await admin.update_broker_config(addr, a.key, a.value)
        print(f"update broker config success, {addr}")
    return 0


def _reset_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-g", "--group", required=True)
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-s", "--timestamp", required=True, help="now | epoch millis | yyyy-MM-dd#HH:mm:ss:SSS")
    p.add_argument("-f", "--force", default="true")


@command("resetOffsetByTime", "Reset consumer offset by timestamp (without client restart)", _reset_args)
async def reset_offset_by_time(admin: AdminClient, a: argparse.Namespace) -> int:
    ts = parse_time(a.timestamp)
    route, _raw = await admin.topic_route(a.topic)
    print(
        f"rollback consumer offset by specified group[{a.group}], topic[{a.topic}], force[{a.force}], "
        f"timestamp(string)[{a.timestamp}], timestamp(long)[{ts}]"
    )
    print(f"{'#brokerName':<40}{'#queueId':<20}{'#offset'}")
    for bd in route.brokers.values():
        if not bd.master_addr:
            continue
        table = await admin.reset_offset_by_time(bd.master_addr, a.topic, a.group, ts, a.force.lower() == "true")
        for mq, off in sorted(table.items()):
            print(f"{mq.broker_name:<40}{mq.queue_id:<20}{off}")
    return 0


def _query_key_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-k", "--msgKey", required=True)


@command("queryMsgByKey", "Query Message by Key", _query_key_args)
async def query_msg_by_key(admin: AdminClient, a: argparse.Namespace) -> int:
    print(f"{'#Message ID':<50}{'#QID':<6}{'#Offset'}")
    for m in await admin.query_by_key(a.topic, a.msgKey):
        print(f"{m.msg_id:<50}{m.queue_id:<6}{m.queue_offset}")
    return 0


def _kv_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-s", "--namespace", required=True)
    p.add_argument("-k", "--key", required=True)
    p.add_argument("-v", "--value", required=True)


@command("updateKvConfig", "Create or update KV config", _kv_args)
async def update_kv(admin: AdminClient, a: argparse.Namespace) -> int:
    await admin.put_kv(a.namespace, a.key, a.value)
    print("create or update kv config to namespace success.")
    return 0


def _del_kv_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-s", "--namespace", required=True)
    p.add_argument("-k", "--key", required=True)


@command("deleteKvConfig", "Delete KV config", _del_kv_args)
async def delete_kv(admin: AdminClient, a: argparse.Namespace) -> int:
    await admin.delete_kv(a.namespace, a.key)
    print("delete kv config from namespace success.")
    return 0


def _send_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-p", "--body", required=True)
    p.add_argument("-k", "--keys")
    p.add_argument("-c", "--tags")


@command("sendMessage", "Send a message", _send_args)
async def send_message(admin: AdminClient, a: argparse.Namespace) -> int:
    from client import Message, Producer

    async with Producer("TOOLS_PRODUCER", instance=admin.instance) as p:
        r = await p.send(Message(a.topic, a.body.encode(), tags=a.tags, keys=a.keys))
    print(f"{'#Broker Name':<32}{'#QID':<6}{'#Send Result':<16}{'#MsgId'}")
    print(f"{r.message_queue.broker_name:<32}{r.message_queue.queue_id:<6}{r.send_status.name:<16}{r.msg_id}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``mqadmin``: run one sub-command. A reader that goes away (``mqadmin topicList | head``) ends it quietly
    with 141 (128 + SIGPIPE, what a shell reports for a program killed by the signal), not a traceback."""
    try:
        status = _main(argv)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail again
        return 141


def _main(argv: list[str] | None) -> int:
    cli_json.install()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] in ("-h", "--help", "help") and len(argv) == 1):
        print("usage: mqadmin <command> [-n namesrvAddr] [args]\n")
        print("\n".join(f"   {NAMES.get(k, k):<24} {v[0]}" for k, v in sorted(COMMANDS.items())))
        return 0 if argv else 1
    if argv[0] == "help" and len(argv) > 1:
        argv = [argv[1], "-h"]
    name = argv[0].lower()
    if name not in COMMANDS:
        print(f"mqadmin: The sub command {argv[0]} not exist.", file=sys.stderr)
        return 2
    help_text, add_args, fn = COMMANDS[name]
    parser = argparse.ArgumentParser(prog=f"mqadmin {argv[0]}", description=help_text)
    parser.add_argument("-n", "--namesrvAddr", help="name server address list, e.g. '127.0.0.1:9876'")
    parser.add_argument("--accessKey", help="ACL accessKey to sign with (default: $ROCKETMQ_HOME/conf/tools.yml)")
    parser.add_argument("--secretKey", help="ACL secretKey to sign with")
    parser.add_argument("--useTLS", action="store_true", help="connect over TLS (J: -Dtls.enable=true)")
    parser.add_argument("--tlsTrustCertPath", help="PEM CA to verify the servers with (default: no verification)")
    add_args(parser)
    args = parser.parse_args(argv[1:])
    creds = (args.accessKey, args.secretKey) if args.accessKey and args.secretKey else cli_acl.tools_credentials()

    async def run() -> int:
        ak, sk = creds or (None, None)
        async with AdminClient(
            args.namesrvAddr,
            access_key=ak,
            secret_key=sk,
            use_tls=args.useTLS,
            tls_trust_cert_path=args.tlsTrustCertPath,
        ) as admin:
            return await fn(admin, args)

    try:
        return asyncio.run(run())
    except BrokenPipeError:
        raise
    except (RemotingError, MQClientError, ValueError, OSError) as exc:
        print(f"mqadmin {argv[0]}: " + " ".join(str(exc).split()), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
