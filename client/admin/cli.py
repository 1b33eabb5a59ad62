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
import sys
import time

from client.admin import cli_acl, cli_ops  # noqa: F401  (imported for their @command registrations)
from client.admin.admin_client import AdminClient
from client.admin.formatting import (
    direct_result,
    fmt_time,
    offset_header,
    offset_row,
    print_config,
    print_connections,
    print_message,
)
from client.admin.registry import COMMANDS, command, target_args, target_brokers
from client.errors import MQClientError
from protocol.bodies import decode_properties_text
from protocol.errors import RemotingError

__all__ = ["COMMANDS", "main"]


@command("clusterList", "List cluster infos", lambda p: None)
async def cluster_list(admin: AdminClient, a: argparse.Namespace) -> int:
    info = await admin.cluster_info()
    print(f"{'#Cluster Name':<22}{'#Broker Name':<22}{'#BID':<6}{'#Addr':<24}{'#Version':<12}")
    for cluster, names in sorted(info.get("clusterAddrTable", {}).items()):
        for name in sorted(names):
            for bid, addr in sorted(info["brokerAddrTable"][name]["brokerAddrs"].items()):
                print(f"{cluster:<22}{name:<22}{bid:<6}{addr:<24}{'rocketq':<12}")
    return 0


@command("topicList", "Fetch all topic list from name server", lambda p: None)
async def topic_list(admin: AdminClient, a: argparse.Namespace) -> int:
    for t in sorted(await admin.topic_list()):
        print(t)
    return 0


@command("topicRoute", "Examine topic route info", lambda p: p.add_argument("-t", "--topic", required=True))
async def topic_route(admin: AdminClient, a: argparse.Namespace) -> int:
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


@command("updateTopic", "Update or create topic", _update_topic_args)
async def update_topic(admin: AdminClient, a: argparse.Namespace) -> int:
    for addr in await target_brokers(admin, a):
        await admin.create_topic(addr, a.topic, a.readQueueNums, a.writeQueueNums, a.perm, a.order.lower() == "true")
        print(f"create topic to {addr} success.")
    print(
        f"TopicConfig [topicName={a.topic}, readQueueNums={a.readQueueNums}, writeQueueNums={a.writeQueueNums}, "
        f"perm={a.perm}, topicFilterType=SINGLE_TAG, topicSysFlag=0, order={a.order.lower()}]"
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


@command("updateSubGroup", "Update or create subscription group", _sub_group_args)
async def update_sub_group(admin: AdminClient, a: argparse.Namespace) -> int:
    cfg = {
        "groupName": a.groupName,
        "consumeEnable": a.consumeEnable.lower() == "true",
        "consumeBroadcastEnable": a.consumeBroadcastEnable.lower() == "true",
        "retryQueueNums": a.retryQueueNums,
        "retryMaxTimes": a.retryMaxTimes,
        "consumeFromMinEnable": True,
        "brokerId": 0,
        "whichBrokerWhenConsumeSlowly": 1,
        "notifyConsumerIdsChangedEnable": True,
    }
    for addr in await target_brokers(admin, a):
        await admin.create_group(addr, cfg)
        print(f"create subscription group to {addr} success.")
    print(cfg)
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


def _progress_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-g", "--groupName", required=True)
    p.add_argument("-t", "--topic")


@command("consumerProgress", "Query consumers's progress, speed", _progress_args)
async def consumer_progress(admin: AdminClient, a: argparse.Namespace) -> int:
    total = 0
    tps = 0.0
    print(offset_header())
    for addr in await admin.broker_addrs():
        try:
            stats = await admin.consume_stats(addr, a.groupName, a.topic)
        except RemotingError:
            continue
        tps += stats.consume_tps
        total += stats.total_diff()
        for mq, w in sorted(stats.offset_table.items()):
            print(offset_row(mq, w.broker_offset, w.consumer_offset, w.last_timestamp))
    print(f"\nConsume TPS: {tps:.2f}")
    print(f"Diff Total: {total}")
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


def _parse_time(s: str) -> int:
    if s == "now":
        return int(time.time() * 1000)
    if s.lstrip("-").isdigit():
        return int(s)
    t = time.strptime(s[:19], "%Y-%m-%d#%H:%M:%S")
    ms = int(s[20:23]) if len(s) > 20 else 0
    return int(time.mktime(t) * 1000) + ms


@command("resetOffsetByTime", "Reset consumer offset by timestamp (without client restart)", _reset_args)
async def reset_offset_by_time(admin: AdminClient, a: argparse.Namespace) -> int:
    ts = _parse_time(a.timestamp)
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


def _query_id_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-i", "--msgId", required=True, help="offset msgId(s), comma-separated")
    p.add_argument("-g", "--consumerGroup", help="with -d: consume the message directly on that client")
    p.add_argument("-d", "--clientId", help="the consumer's client id (with -g)")


@command("queryMsgById", "Query Message by Id", _query_id_args)
async def query_msg_by_id(admin: AdminClient, a: argparse.Namespace) -> int:
    """Each message; with -g and -d also J's ``pushMsg``: the broker holding the message hands it to that client's
    listener once (CONSUME_MESSAGE_DIRECTLY), and the client's ConsumeMessageDirectlyResult is printed."""
    for mid in filter(None, (m.strip() for m in a.msgId.split(","))):
        print_message(await admin.view_message(mid))
        if a.consumerGroup and a.clientId:
            result = await admin.consume_message_directly(mid, a.consumerGroup, a.clientId)
            print(direct_result(result))
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


@command(
    "wipeWritePerm",
    "Wipe write perm of broker in all name server",
    lambda p: p.add_argument("-b", "--brokerName", required=True),
)
async def wipe_write_perm(admin: AdminClient, a: argparse.Namespace) -> int:
    n = await admin.wipe_write_perm(a.brokerName)
    print(f"wipe write perm of broker[{a.brokerName}] in name server[{admin.namesrv}] OK, {n}")
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
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] in ("-h", "--help", "help") and len(argv) == 1):
        print("usage: mqadmin <command> [-n namesrvAddr] [args]\n")
        print("\n".join(f"   {k:<22} {v[0]}" for k, v in sorted(COMMANDS.items())))
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
    except (RemotingError, MQClientError, ValueError, OSError) as exc:
        print(f"mqadmin {argv[0]}: " + " ".join(str(exc).split()), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
