package rocketq.ref;

import com.google.gson.Gson;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageBuilder;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.ProducerBuilder;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.apache.rocketmq.client.apis.producer.Transaction;
import org.apache.rocketmq.client.apis.producer.TransactionResolution;

/**
 * Drives the Java 5.x gRPC client (rocketmq-client-java 5.0.8) for tests/reference: one JSON command a line on
 * stdin, JSON lines on stdout describing what the client observed, then {"event":"done"} per command. Commands and
 * their fields: see tests/reference/test_java5_client.py.
 */
public final class Driver5 {
  private static final Gson GSON = new Gson();
  private static final ClientServiceProvider PROVIDER = ClientServiceProvider.loadService();

  private Driver5() {}

  static synchronized void emit(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i + 1 < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    System.out.println(GSON.toJson(m));
    System.out.flush();
  }

  static String str(JsonObject c, String k, String dflt) {
    return c.has(k) ? c.get(k).getAsString() : dflt;
  }

  static int num(JsonObject c, String k, int dflt) {
    return c.has(k) ? c.get(k).getAsInt() : dflt;
  }

  static ClientConfiguration config(JsonObject c) {
    org.apache.rocketmq.client.apis.ClientConfigurationBuilder b = ClientConfiguration.newBuilder()
        .setEndpoints(str(c, "endpoint", "")).enableSsl(false).setRequestTimeout(Duration.ofSeconds(10));
    if (c.has("namespace")) {
      b.setNamespace(str(c, "namespace", ""));
    }
    return b.build();
  }

  static void emitMsg(MessageView m) {
    byte[] body = new byte[m.getBody().remaining()];
    m.getBody().duplicate().get(body);
    List<String> keys = new ArrayList<>(m.getKeys());
    Collections.sort(keys);
    emit("event", "msg", "topic", m.getTopic(), "tags", m.getTag().orElse(null), "keys", String.join(" ", keys),
        "body", new String(body, StandardCharsets.UTF_8), "props", new TreeMap<>(m.getProperties()),
        "deliveryAttempt", m.getDeliveryAttempt(), "messageGroup", m.getMessageGroup().orElse(null),
        "hasDeliveryTimestamp", m.getDeliveryTimestamp().isPresent(),
        "lateMs", m.getDeliveryTimestamp().map(t -> System.currentTimeMillis() - t).orElse(null));
  }

  static Message message(JsonObject c, int i) {
    String prefix = str(c, "prefix", "m");
    String[] tags = str(c, "tags", "TagA,TagB,TagC").split(",");
    MessageBuilder b = PROVIDER.newMessageBuilder().setTopic(str(c, "topic", "")).setTag(tags[i % tags.length])
        .setKeys(prefix + "-key-" + i).setBody((prefix + "-body-" + i).getBytes(StandardCharsets.UTF_8))
        .addProperty("seq", Integer.toString(i));
    if (c.has("groups")) {
      b.setMessageGroup("g" + (i % c.get("groups").getAsInt()));
    }
    if (c.has("bodySize")) {
      b.setBody(new byte[c.get("bodySize").getAsInt()]);
    }
    if (c.has("delayMs")) {
      b.setDeliveryTimestamp(System.currentTimeMillis() + c.get("delayMs").getAsLong());
    }
    if (c.has("delaysMs")) {  // a delivery time per message, cycled over i
      com.google.gson.JsonArray d = c.getAsJsonArray("delaysMs");
      b.setDeliveryTimestamp(System.currentTimeMillis() + d.get(i % d.size()).getAsLong());
    }
    if (c.has("props")) {  // user properties, "{i}" in a value replaced by the message's index
      for (Map.Entry<String, com.google.gson.JsonElement> p : c.getAsJsonObject("props").entrySet()) {
        b.addProperty(p.getKey(), p.getValue().getAsString().replace("{i}", Integer.toString(i)));
      }
    }
    return b.build();
  }

  static Producer producer(JsonObject c, boolean transactional) throws Exception {
    ProducerBuilder b = PROVIDER.newProducerBuilder().setClientConfiguration(config(c));
    if (!c.has("prefetch") || c.get("prefetch").getAsBoolean()) {  // false: the first send looks the route up
      b.setTopics(str(c, "topic", ""));
    }
    if (transactional) {
      b.setTransactionChecker(v -> {
        emit("event", "check", "keys", String.join(" ", v.getKeys()));
        return TransactionResolution.COMMIT;
      });
    }
    return b.build();
  }

  static void sent(SendReceipt r) {
    emit("event", "sent", "hasMsgId", r.getMessageId() != null && !r.getMessageId().toString().isEmpty());
  }

  /** mode "sync" (the default): one send after another; "async": every sendAsync in flight, then each receipt (or
   * error) in send order. */
  static void send(JsonObject c) throws Exception {
    try (Producer p = producer(c, false)) {
      if (str(c, "mode", "sync").equals("async")) {
        List<java.util.concurrent.CompletableFuture<SendReceipt>> inFlight = new ArrayList<>();
        for (int i = 0; i < num(c, "count", 1); i++) {
          inFlight.add(p.sendAsync(message(c, i)));
        }
        for (java.util.concurrent.CompletableFuture<SendReceipt> f : inFlight) {
          try {
            sent(f.get(30, TimeUnit.SECONDS));
          } catch (java.util.concurrent.ExecutionException e) {
            emitError(e.getCause());
          }
        }
        return;
      }
      for (int i = 0; i < num(c, "count", 1); i++) {
        sent(p.send(message(c, i)));
      }
    }
  }

  static void transaction(JsonObject c) throws Exception {
    String end = str(c, "end", "commit");  // commit | rollback | none (left to the check-back)
    try (Producer p = producer(c, true)) {
      for (int i = 0; i < num(c, "count", 1); i++) {
        Transaction tx = p.beginTransaction();
        p.send(message(c, i), tx);
        if (end.equals("commit")) {
          tx.commit();
        } else if (end.equals("rollback")) {
          tx.rollback();
        }
        emit("event", "sent", "end", end);
      }
      if (end.equals("none")) {
        simple(c);  // the checker commits while the consumer waits
      }
    }
  }

  static Map<String, FilterExpression> subscription(JsonObject c) {
    return Collections.singletonMap(str(c, "topic", ""),
        new FilterExpression(str(c, "expr", "*"), FilterExpressionType.valueOf(str(c, "exprType", "TAG"))));
  }

  static void simple(JsonObject c) throws Exception {
    int want = num(c, "expect", 1);
    long deadline = System.currentTimeMillis() + num(c, "timeoutMs", 30_000);
    try (SimpleConsumer consumer = PROVIDER.newSimpleConsumerBuilder().setClientConfiguration(config(c))
        .setConsumerGroup(str(c, "group", "")).setSubscriptionExpressions(subscription(c))
        .setAwaitDuration(Duration.ofSeconds(2)).build()) {
      int got = 0;
      while (got < want && System.currentTimeMillis() < deadline) {
        for (MessageView m : consumer.receive(16, Duration.ofSeconds(num(c, "invisibleS", 15)))) {
          emitMsg(m);
          got++;
          if (!(str(c, "fail", "none").equals("once") && m.getDeliveryAttempt() == 1)) {
            consumer.ack(m);
          }
        }
      }
      if (got < want) {
        emit("event", "timeout", "missing", want - got);
      }
      long settle = System.currentTimeMillis() + num(c, "settleMs", 0);
      while (System.currentTimeMillis() < settle) {  // a window in which a message that should not come would show up
        for (MessageView m : consumer.receive(16, Duration.ofSeconds(15))) {
          emitMsg(m);
          consumer.ack(m);
        }
      }
    }
  }

  static void push(JsonObject c) throws Exception {
    int want = num(c, "expect", num(c, "count", 1));
    CountDownLatch latch = new CountDownLatch(want);
    boolean failOnce = str(c, "fail", "none").equals("once");
    try (PushConsumer consumer = PROVIDER.newPushConsumerBuilder().setClientConfiguration(config(c))
        .setConsumerGroup(str(c, "group", "")).setSubscriptionExpressions(subscription(c))
        .setMessageListener(m -> {
          emitMsg(m);
          latch.countDown();
          return failOnce && m.getDeliveryAttempt() == 1 ? ConsumeResult.FAILURE : ConsumeResult.SUCCESS;
        }).build()) {
      if (num(c, "count", 0) > 0) {
        send(c);
      }
      if (!latch.await(num(c, "timeoutMs", 30_000), TimeUnit.MILLISECONDS)) {
        emit("event", "timeout", "missing", latch.getCount());
      }
    }
  }

  /**
   * Sends {@code count} messages of {@code size} bytes from {@code threads} threads, each awaiting its send (after
   * {@code warm} unmeasured ones, and more for {@code warmMs}): msgs/s and the send latency p50/p99 (ms). For
   * bench/latency_bench.py's gRPC rows.
   */
  static void bench(JsonObject c) throws Exception {
    int count = num(c, "count", 2000);
    int threads = num(c, "threads", 1);
    byte[] body = new byte[num(c, "size", 1024)];
    java.util.Arrays.fill(body, (byte) 'x');
    Message msg = PROVIDER.newMessageBuilder().setTopic(str(c, "topic", "")).setBody(body).build();
    try (Producer p = producer(c, false)) {
      long warmEnd = System.currentTimeMillis() + num(c, "warmMs", 0);
      for (int i = 0; i < num(c, "warm", 200) || System.currentTimeMillis() < warmEnd; i++) {
        p.send(msg);
      }
      long[] lat = new long[count];
      java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
      List<Thread> workers = new ArrayList<>();
      long t0 = System.nanoTime();
      for (int t = 0; t < threads; t++) {
        Thread w = new Thread(() -> {
          int i;
          while ((i = next.getAndIncrement()) < count) {
            long s = System.nanoTime();
            try {
              p.send(msg);
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
            lat[i] = System.nanoTime() - s;
          }
        });
        workers.add(w);
        w.start();
      }
      for (Thread w : workers) {
        w.join();
      }
      double secs = (System.nanoTime() - t0) / 1e9;
      java.util.Arrays.sort(lat);
      emit("event", "bench", "msgsPerSec", count / secs, "p50Ms", lat[count / 2] / 1e6,
          "p99Ms", lat[Math.min(count - 1, (int) (count * 0.99))] / 1e6);
    }
  }

  /** An error event: the first ClientException among {@code e} and its causes (else {@code e}'s innermost cause). */
  static void emitError(Throwable e) {
    Throwable t = e;
    while (!(t instanceof org.apache.rocketmq.client.apis.ClientException) && t.getCause() != null) {
      t = t.getCause();
    }
    StringBuilder causes = new StringBuilder();
    for (Throwable u = t.getCause(); u != null && u != u.getCause(); u = u.getCause()) {
      causes.append(u.getClass().getSimpleName()).append(": ").append(u.getMessage()).append("; ");
    }
    emit("event", "error", "type", t.getClass().getSimpleName(), "remark", String.valueOf(t.getMessage()),
        "causes", causes.toString());
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
          case "simple": simple(c); break;
          case "push": push(c); break;
          case "transaction": transaction(c); break;
          case "bench": bench(c); break;
          default: throw new IllegalArgumentException("unknown cmd " + c.get("cmd"));
        }
      } catch (Throwable e) {
        emitError(e);
      }
      emit("event", "done");
    }
    System.exit(0);
  }
}
