package rocketq.ref;

import com.google.gson.Gson;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.utils.MessageUtil;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.admin.TopicOffset;
import org.apache.rocketmq.common.admin.TopicStatsTable;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.protocol.body.ClusterInfo;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;
import org.apache.rocketmq.common.protocol.route.BrokerData;
import org.apache.rocketmq.common.protocol.route.TopicRouteData;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/**
 * Drives the Java remoting client (rocketmq-client 4.9.8) for tests/reference: one JSON command a line on stdin, JSON
 * lines on stdout describing what the client observed, then {"event":"done"} per command. Every client gets its own
 * instanceName, so one JVM can talk to several clusters. Commands and their fields: see tests/reference/java_driver.py.
 */
public final class Driver4 {
  private static final Gson GSON = new Gson();
  private static final AtomicInteger INSTANCES = new AtomicInteger();

  private Driver4() {}

  static synchronized void emit(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i + 1 < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    System.out.println(GSON.toJson(m));
    System.out.flush();
  }

  static String instance() {
    return "ref4-" + INSTANCES.incrementAndGet();
  }

  static Map<String, Object> describe(MessageExt m) {
    Map<String, Object> e = new LinkedHashMap<>();
    e.put("event", "msg");
    e.put("topic", m.getTopic());
    e.put("tags", m.getTags());
    e.put("keys", m.getKeys());
    e.put("body", new String(m.getBody(), StandardCharsets.UTF_8));
    e.put("queueId", m.getQueueId());
    e.put("queueOffset", m.getQueueOffset());
    e.put("reconsumeTimes", m.getReconsumeTimes());
    e.put("storeMinusBornMs", m.getStoreTimestamp() - m.getBornTimestamp());
    e.put("arrivedMinusBornMs", System.currentTimeMillis() - m.getBornTimestamp());
    e.put("props", new TreeMap<>(m.getProperties()));
    return e;
  }

  static synchronized void emitMsg(MessageExt m) {
    System.out.println(GSON.toJson(describe(m)));
    System.out.flush();
  }

  static String str(JsonObject c, String k, String dflt) {
    return c.has(k) ? c.get(k).getAsString() : dflt;
  }

  static int num(JsonObject c, String k, int dflt) {
    return c.has(k) ? c.get(k).getAsInt() : dflt;
  }

  static boolean flag(JsonObject c, String k) {
    return c.has(k) && c.get(k).getAsBoolean();
  }

  static Message message(JsonObject c, int i) {
    String prefix = str(c, "prefix", "m");
    String tags = str(c, "tags", "TagA,TagB,TagC");
    String[] tagList = tags.split(",");
    Message msg = new Message(str(c, "topic", ""), tagList[i % tagList.length], prefix + "-key-" + i,
        (prefix + "-body-" + i).getBytes(StandardCharsets.UTF_8));
    msg.putUserProperty("seq", Integer.toString(i));
    if (c.has("delay")) {
      msg.setDelayTimeLevel(c.get("delay").getAsInt());
    }
    if (c.has("props")) {  // user properties, "{i}" in a value replaced by the message's index
      for (Map.Entry<String, com.google.gson.JsonElement> p : c.getAsJsonObject("props").entrySet()) {
        msg.putUserProperty(p.getKey(), p.getValue().getAsString().replace("{i}", Integer.toString(i)));
      }
    }
    if (c.has("timer")) {  // RocketMQ 5's timer properties (4.9.8 has no setter): [[name, value], ...] cycled over i;
      // a TIMER_DELIVER_MS value is relative to now
      com.google.gson.JsonArray spec = c.getAsJsonArray("timer").get(i % c.getAsJsonArray("timer").size())
          .getAsJsonArray();
      String name = spec.get(0).getAsString();
      long value = spec.get(1).getAsLong();
      msg.putUserProperty(name, Long.toString(name.equals("TIMER_DELIVER_MS") ? System.currentTimeMillis() + value
          : value));
    }
    if (c.has("bodySize")) {
      byte[] body = new byte[c.get("bodySize").getAsInt()];
      new java.util.Random(i).nextBytes(body);  // incompressible: the client compresses bodies over 4 KiB
      msg.setBody(body);
    }
    return msg;
  }

  /** The ACL 1.0 signer when the command carries an account ("ak", "sk"), else none. */
  static RPCHook hook(JsonObject c) {
    return c.has("ak") ? new AclClientRPCHook(new SessionCredentials(str(c, "ak", ""), str(c, "sk", ""))) : null;
  }

  /** A push consumer of {@code group} with the command's ACL hook ({@code ak}/{@code sk}) and trace flag. */
  static DefaultMQPushConsumer newPushConsumer(JsonObject c, String group) {
    return new DefaultMQPushConsumer(group, hook(c), new AllocateMessageQueueAveragely(), flag(c, "trace"), null);
  }

  static void sent(SendResult r) {
    emit("event", "sent", "status", r.getSendStatus().name(), "queueId", r.getMessageQueue().getQueueId(),
        "queueOffset", r.getQueueOffset(), "hasMsgId", r.getMsgId() != null && !r.getMsgId().isEmpty(),
        "hasOffsetMsgId", r.getOffsetMsgId() != null && !r.getOffsetMsgId().isEmpty());
  }

  static DefaultMQProducer producer(JsonObject c, String group) {
    DefaultMQProducer p = new DefaultMQProducer(group, hook(c), flag(c, "trace"), null);
    p.setNamesrvAddr(str(c, "ns", ""));
    if (c.has("namespace")) {
      p.setNamespace(str(c, "namespace", ""));
    }
    return p;
  }

  static void send(JsonObject c) throws Exception {
    DefaultMQProducer p = producer(c, str(c, "group", "ref-producer"));
    p.setInstanceName(instance());
    p.setRetryTimesWhenSendFailed(0);
    p.setSendMsgTimeout(10_000);
    p.setMaxMessageSize(num(c, "clientMaxSize", 4 * 1024 * 1024));
    p.start();
    try {
      int count = num(c, "count", 1);
      String mode = str(c, "mode", "sync");
      if (mode.equals("batch")) {
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < count; i++) {
          batch.add(message(c, i));
        }
        sent(p.send(batch));
        return;
      }
      CountDownLatch pending = new CountDownLatch(mode.equals("async") ? count : 0);
      for (int i = 0; i < count; i++) {
        Message msg = message(c, i);
        switch (mode) {
          case "sync":
            sent(p.send(msg));
            break;
          case "oneway":
            p.sendOneway(msg);
            break;
          case "orderly":
            sent(p.send(msg, (mqs, m, arg) -> mqs.get((Integer) arg % mqs.size()), i % 4));
            break;
          case "async":
            p.send(msg, new SendCallback() {
              @Override
              public void onSuccess(SendResult r) {
                sent(r);
                pending.countDown();
              }

              @Override
              public void onException(Throwable e) {
                error(e);
                pending.countDown();
              }
            });
            break;
          default:
            throw new IllegalArgumentException("mode " + mode);
        }
      }
      if (!pending.await(60, TimeUnit.SECONDS)) {
        emit("event", "error", "type", "Timeout", "message", "async sends unanswered");
      }
      if (c.has("lingerMs")) {
        Thread.sleep(num(c, "lingerMs", 0));  // time for what the client sends in the background (trace records)
      }
    } finally {
      p.shutdown();
    }
  }

  static DefaultMQPushConsumer pushConsumer(JsonObject c, String group) throws MQClientException {
    DefaultMQPushConsumer consumer = newPushConsumer(c, group);
    consumer.setNamesrvAddr(str(c, "ns", ""));
    consumer.setInstanceName(instance());
    if (c.has("namespace")) {
      consumer.setNamespace(str(c, "namespace", ""));
    }
    consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
    // shutdown waits for listeners in flight, so their results (a send-back, an offset) reach the broker
    consumer.setAwaitTerminationMillisWhenShutdown(10_000);
    if (c.has("sql")) {
      consumer.subscribe(str(c, "topic", ""), MessageSelector.bySql(str(c, "sql", "")));
    } else {
      consumer.subscribe(str(c, "topic", ""), str(c, "expr", "*"));
    }
    return consumer;
  }

  static void consume(JsonObject c) throws Exception {
    DefaultMQPushConsumer consumer = pushConsumer(c, str(c, "group", ""));
    if (flag(c, "broadcast")) {
      consumer.setMessageModel(MessageModel.BROADCASTING);
    }
    if (c.has("maxReconsumeTimes")) {
      consumer.setMaxReconsumeTimes(c.get("maxReconsumeTimes").getAsInt());
    }
    String failMode = str(c, "fail", "none");  // none | once | always
    CountDownLatch latch = new CountDownLatch(num(c, "expect", 1));
    Map<String, Boolean> failed = new ConcurrentHashMap<>();
    if (flag(c, "orderly")) {
      consumer.registerMessageListener((MessageListenerOrderly) (msgs, ctx) -> {
        for (MessageExt m : msgs) {
          emitMsg(m);
          latch.countDown();
        }
        return ConsumeOrderlyStatus.SUCCESS;
      });
    } else {
      consumer.setConsumeMessageBatchMaxSize(1);
      consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
        boolean later = false;
        for (MessageExt m : msgs) {
          emitMsg(m);
          latch.countDown();
          later = failMode.equals("always")
              || (failMode.equals("once") && failed.putIfAbsent(m.getKeys(), true) == null);
        }
        return later ? ConsumeConcurrentlyStatus.RECONSUME_LATER : ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
      });
    }
    consumer.start();
    try {
      if (!latch.await(num(c, "timeoutMs", 30_000), TimeUnit.MILLISECONDS)) {
        emit("event", "timeout", "missing", latch.getCount());
        dumpThreads();
      } else if (c.has("settleMs")) {
        Thread.sleep(num(c, "settleMs", 0));  // a window in which a message that should not come would show up
      }
    } finally {
      consumer.shutdown();
    }
  }

  /**
   * Request-reply (RIP-16): a responder (push consumer + producer) answers each request with
   * MessageUtil.createReplyMessage; a producer sends ``count`` requests with request() and reports each reply.
   */
  static void request(JsonObject c) throws Exception {
    DefaultMQProducer replier = producer(c, str(c, "group", "") + "Replier");
    replier.setInstanceName(instance());
    replier.start();
    DefaultMQPushConsumer responder = pushConsumer(c, str(c, "group", ""));
    responder.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
      for (MessageExt m : msgs) {
        try {
          Message reply = MessageUtil.createReplyMessage(m,
              ("reply-" + new String(m.getBody(), StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8));
          replier.send(reply);
          emit("event", "served", "keys", m.getKeys(), "replyTopic", reply.getTopic());
        } catch (Exception e) {
          error(e);
        }
      }
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    responder.start();
    DefaultMQProducer requester = producer(c, "RefRequester");
    requester.setInstanceName(instance());
    requester.start();
    try {
      for (int i = 0; i < num(c, "count", 1); i++) {
        Message r = requester.request(message(c, i), num(c, "timeoutMs", 15_000));
        emit("event", "reply", "topic", r.getTopic(), "body", new String(r.getBody(), StandardCharsets.UTF_8),
            "props", new TreeMap<>(r.getProperties()));
      }
    } finally {
      requester.shutdown();
      responder.shutdown();
      replier.shutdown();
    }
  }

  static void litePull(JsonObject c) throws Exception {
    DefaultLitePullConsumer consumer = new DefaultLitePullConsumer(str(c, "group", ""));
    consumer.setNamesrvAddr(str(c, "ns", ""));
    consumer.setInstanceName(instance());
    consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
    consumer.subscribe(str(c, "topic", ""), str(c, "expr", "*"));
    consumer.start();
    try {
      int want = num(c, "expect", 1);
      int got = 0;
      long deadline = System.currentTimeMillis() + num(c, "timeoutMs", 30_000);
      while (got < want && System.currentTimeMillis() < deadline) {
        for (MessageExt m : consumer.poll(1000)) {
          emitMsg(m);
          got++;
        }
      }
      if (got < want) {
        emit("event", "timeout", "missing", want - got);
      }
    } finally {
      consumer.shutdown();
    }
  }

  @SuppressWarnings("deprecation")
  static void pull(JsonObject c) throws Exception {
    DefaultMQPullConsumer consumer = new DefaultMQPullConsumer(str(c, "group", ""));
    consumer.setNamesrvAddr(str(c, "ns", ""));
    consumer.setInstanceName(instance());
    consumer.start();
    try {
      List<MessageQueue> mqs = new ArrayList<>(consumer.fetchSubscribeMessageQueues(str(c, "topic", "")));
      Collections.sort(mqs);
      for (MessageQueue mq : mqs) {
        long offset = 0;
        while (true) {
          PullResult r = consumer.pull(mq, str(c, "expr", "*"), offset, 32);
          emit("event", "pull", "queueId", mq.getQueueId(), "offset", offset, "status", r.getPullStatus().name(),
              "next", r.getNextBeginOffset(), "min", r.getMinOffset(), "max", r.getMaxOffset());
          if (r.getMsgFoundList() == null || r.getMsgFoundList().isEmpty()) {
            break;
          }
          for (MessageExt m : r.getMsgFoundList()) {
            emitMsg(m);
          }
          offset = r.getNextBeginOffset();
        }
      }
    } finally {
      consumer.shutdown();
    }
  }

  static void transaction(JsonObject c) throws Exception {
    TransactionMQProducer p = new TransactionMQProducer(str(c, "group", ""));
    p.setNamesrvAddr(str(c, "ns", ""));
    p.setInstanceName(instance());
    int count = num(c, "count", 1);
    CountDownLatch checked = new CountDownLatch(count);
    Map<String, Boolean> seen = new ConcurrentHashMap<>();
    String local = str(c, "local", "UNKNOW");
    p.setTransactionListener(new TransactionListener() {
      @Override
      public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
        return LocalTransactionState.valueOf(local);
      }

      @Override
      public LocalTransactionState checkLocalTransaction(MessageExt msg) {
        if (seen.putIfAbsent(msg.getKeys(), true) == null) {
          emit("event", "check", "keys", msg.getKeys(), "topic", msg.getTopic());
          checked.countDown();
        }
        return msg.getKeys().endsWith("-0") ? LocalTransactionState.ROLLBACK_MESSAGE
            : LocalTransactionState.COMMIT_MESSAGE;
      }
    });
    p.start();
    try {
      for (int i = 0; i < count; i++) {
        SendResult r = p.sendMessageInTransaction(message(c, i), null);
        emit("event", "sent", "status", r.getSendStatus().name(), "local",
            ((org.apache.rocketmq.client.producer.TransactionSendResult) r).getLocalTransactionState().name());
      }
      if (local.equals("UNKNOW") && !checked.await(num(c, "timeoutMs", 60_000), TimeUnit.MILLISECONDS)) {
        emit("event", "timeout", "missing", checked.getCount());
      }
    } finally {
      p.shutdown();
    }
  }

  /** How many queues of {@code topic} each consumer holds now (its rebalance's process queues), in their order. */
  static List<Integer> allocation(List<DefaultMQPushConsumer> cs, String topic) {
    List<Integer> out = new ArrayList<>();
    for (DefaultMQPushConsumer consumer : cs) {
      int n = 0;
      for (MessageQueue mq : consumer.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable()
          .keySet()) {
        n += mq.getTopic().equals(topic) ? 1 : 0;
      }
      out.add(n);
    }
    return out;
  }

  /** Waits until every queue is held by exactly one consumer and each holds its even share; emits the shares. */
  static void settle(List<DefaultMQPushConsumer> cs, String topic, int queues, String phase) throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    while (true) {
      List<Integer> a = allocation(cs, topic);
      int sum = a.stream().mapToInt(Integer::intValue).sum();
      int max = Collections.max(a);
      int min = Collections.min(a);
      if (sum == queues && max - min <= 1) {
        a.sort(Collections.reverseOrder());
        emit("event", "alloc", "phase", phase, "queues", a);
        return;
      }
      if (System.currentTimeMillis() > deadline) {
        emit("event", "timeout", "phase", phase, "queues", a);
        return;
      }
      Thread.sleep(100);  // polling the consumers' rebalance, bounded by the deadline
    }
  }

  static void awaitKeys(Map<String, Integer> seen, int want, String phase) throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    while (seen.size() < want) {
      if (System.currentTimeMillis() > deadline) {
        emit("event", "timeout", "phase", phase, "missing", want - seen.size());
        return;
      }
      Thread.sleep(50);  // polling the listeners' tally, bounded by the deadline
    }
  }

  /**
   * Rebalance: {@code consumers} push consumers of one group start, each must hold its even share of the topic's
   * queues; {@code count} messages are consumed; the last consumer leaves, the others take its queues over; {@code
   * count} more are consumed. Emits the shares after each change and how many keys arrived once, twice or more.
   */
  static void rebalance(JsonObject c) throws Exception {
    String topic = str(c, "topic", "");
    int count = num(c, "count", 8);
    Map<String, Integer> seen = new ConcurrentHashMap<>();
    List<DefaultMQPushConsumer> cs = new ArrayList<>();
    try {
      for (int i = 0; i < num(c, "consumers", 3); i++) {
        DefaultMQPushConsumer consumer = newPushConsumer(c, str(c, "group", ""));
        consumer.setNamesrvAddr(str(c, "ns", ""));
        consumer.setInstanceName(instance());
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(topic, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
          for (MessageExt m : msgs) {
            seen.merge(m.getKeys(), 1, Integer::sum);
          }
          return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        cs.add(consumer);
      }
      int queues = num(c, "queues", 4);
      settle(cs, topic, queues, "joined");
      JsonObject first = c.deepCopy();
      first.addProperty("prefix", "r1");
      first.addProperty("group", str(c, "group", "") + "P");
      send(first);
      awaitKeys(seen, count, "joined");
      cs.remove(cs.size() - 1).shutdown();
      settle(cs, topic, queues, "left");
      JsonObject second = c.deepCopy();
      second.addProperty("prefix", "r2");
      second.addProperty("group", str(c, "group", "") + "P");
      send(second);
      awaitKeys(seen, 2 * count, "left");
      int twice = 0;
      for (int v : seen.values()) {
        twice += v > 1 ? 1 : 0;
      }
      emit("event", "received", "distinct", seen.size(), "duplicated", twice);
    } finally {
      for (DefaultMQPushConsumer consumer : cs) {
        consumer.shutdown();
      }
    }
  }

  static DefaultMQAdminExt admin(JsonObject c) throws MQClientException {
    DefaultMQAdminExt admin = new DefaultMQAdminExt(hook(c), 20_000);  // a JVM just started on a busy machine
    admin.setNamesrvAddr(str(c, "ns", ""));
    admin.setInstanceName(instance());
    admin.start();
    return admin;
  }

  static void createTopic(JsonObject c) throws Exception {
    DefaultMQAdminExt admin = admin(c);
    try {
      String topic = str(c, "topic", "");
      ClusterInfo info = admin.examineBrokerClusterInfo();
      for (BrokerData bd : info.getBrokerAddrTable().values()) {
        TopicConfig tc = new TopicConfig(topic, num(c, "queues", 4), num(c, "queues", 4), num(c, "perm", 6));
        tc.setOrder(flag(c, "order"));
        admin.createAndUpdateTopicConfig(bd.selectBrokerAddr(), tc);
      }
      long deadline = System.currentTimeMillis() + 20_000;
      while (true) {
        try {
          TopicRouteData route = admin.examineTopicRouteInfo(topic);
          if (!route.getQueueDatas().isEmpty() && route.getQueueDatas().get(0).getPerm() == num(c, "perm", 6)) {
            emit("event", "route", "queues", route.getQueueDatas().get(0).getWriteQueueNums());
            return;
          }
        } catch (MQClientException e) {
          if (System.currentTimeMillis() > deadline) {
            throw e;
          }
        }
        Thread.sleep(50);  // polling the name server until it has the route, bounded by the deadline
      }
    } finally {
      admin.shutdown();
    }
  }

  /** The name server's route of {@code topic}: per broker its queue counts and permission (or the error). */
  static void route(JsonObject c) throws Exception {
    DefaultMQAdminExt admin = admin(c);
    try {
      TopicRouteData route = admin.examineTopicRouteInfo(str(c, "topic", ""));
      for (org.apache.rocketmq.common.protocol.route.QueueData q : route.getQueueDatas()) {
        emit("event", "route", "read", q.getReadQueueNums(), "write", q.getWriteQueueNums(), "perm", q.getPerm());
      }
    } finally {
      admin.shutdown();
    }
  }

  /** Sets broker config {@code key} = {@code value} on every broker (J UPDATE_BROKER_CONFIG). */
  static void brokerConfig(JsonObject c) throws Exception {
    DefaultMQAdminExt admin = admin(c);
    try {
      java.util.Properties props = new java.util.Properties();
      props.setProperty(str(c, "key", ""), str(c, "value", ""));
      for (BrokerData bd : admin.examineBrokerClusterInfo().getBrokerAddrTable().values()) {
        admin.updateBrokerConfig(bd.selectBrokerAddr(), props);
      }
      emit("event", "updated");
    } finally {
      admin.shutdown();
    }
  }

  static void topicStats(JsonObject c) throws Exception {
    DefaultMQAdminExt admin = admin(c);
    try {
      long deadline = System.currentTimeMillis() + num(c, "timeoutMs", 0);
      int atLeast = num(c, "atLeast", 0);
      while (true) {
        long total = 0;
        TopicStatsTable stats = null;
        try {
          stats = admin.examineTopicStats(str(c, "topic", ""));
          for (TopicOffset o : stats.getOffsetTable().values()) {
            total += o.getMaxOffset() - o.getMinOffset();
          }
        } catch (MQClientException | MQBrokerException e) {
          if (System.currentTimeMillis() > deadline) {
            throw e;
          }
        }
        if (stats != null && (total >= atLeast || System.currentTimeMillis() > deadline)) {
          emit("event", "stats", "messages", total, "queues", stats.getOffsetTable().size());
          return;
        }
        Thread.sleep(100);  // polling the broker until the count is reached, bounded by the deadline
      }
    } finally {
      admin.shutdown();
    }
  }

  static void resetOffset(JsonObject c) throws Exception {
    DefaultMQAdminExt admin = admin(c);
    try {
      Map<MessageQueue, Long> r = admin.resetOffsetByTimestamp(str(c, "topic", ""), str(c, "group", ""),
          c.get("timestamp").getAsLong(), true);
      emit("event", "reset", "queues", r.size());
    } finally {
      admin.shutdown();
    }
  }

  /** Every thread's stack to stderr (the driver's log), for a scenario that timed out. */
  static void dumpThreads() {
    for (Map.Entry<Thread, StackTraceElement[]> t : Thread.getAllStackTraces().entrySet()) {
      System.err.println("thread " + t.getKey().getName() + " " + t.getKey().getState());
      for (StackTraceElement f : t.getValue()) {
        System.err.println("    at " + f);
      }
    }
  }

  static void error(Throwable e) {
    Throwable t = e;
    while (!(t instanceof MQClientException || t instanceof MQBrokerException) && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof MQClientException) {
      MQClientException m = (MQClientException) t;
      emit("event", "error", "type", "MQClientException", "code", m.getResponseCode(), "remark", m.getErrorMessage());
    } else if (t instanceof MQBrokerException) {
      MQBrokerException m = (MQBrokerException) t;
      emit("event", "error", "type", "MQBrokerException", "code", m.getResponseCode(), "remark", m.getErrorMessage());
    } else {
      emit("event", "error", "type", e.getClass().getSimpleName(), "remark", String.valueOf(e.getMessage()));
    }
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    emit("event", "ready");
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) {
        continue;
      }
      JsonObject c = JsonParser.parseString(line).getAsJsonObject();
      try {
        switch (c.get("cmd").getAsString()) {
          case "send": send(c); break;
          case "consume": consume(c); break;
          case "request": request(c); break;
          case "lite_pull": litePull(c); break;
          case "pull": pull(c); break;
          case "transaction": transaction(c); break;
          case "create_topic": createTopic(c); break;
          case "topic_stats": topicStats(c); break;
          case "reset_offset": resetOffset(c); break;
          case "rebalance": rebalance(c); break;
          case "route": route(c); break;
          case "broker_config": brokerConfig(c); break;
          default: throw new IllegalArgumentException("unknown cmd " + c.get("cmd"));
        }
      } catch (Throwable e) {
        error(e);
      }
      emit("event", "done");
    }
    System.exit(0);
  }
}
