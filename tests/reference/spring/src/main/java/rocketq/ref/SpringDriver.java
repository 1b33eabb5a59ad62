package rocketq.ref;

import com.google.gson.Gson;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.apache.rocketmq.spring.core.RocketMQTemplate;
import org.apache.rocketmq.spring.support.RocketMQHeaders;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.CommandLineRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.messaging.support.MessageBuilder;
import org.springframework.stereotype.Service;

/**
 * A Spring Boot app as a rocketmq-spring-boot-starter user writes one, for tests/reference: RocketMQTemplate sends
 * {@code ref.count} messages (syncSend, then asyncSend, then sendOneWay, in turn) to {@code ref.topic}; a
 * {@code @RocketMQMessageListener} of group {@code ref.group} receives them. What it observed goes to stdout as JSON
 * lines ({"event":"sent"|"msg"|"timeout"|"error"}), then the app exits. The name server is
 * {@code rocketmq.name-server}, the producer group {@code rocketmq.producer.group} (Spring properties).
 */
@SpringBootApplication
public class SpringDriver implements CommandLineRunner {
  static final Gson GSON = new Gson();
  static CountDownLatch received;

  @Autowired RocketMQTemplate template;

  @Value("${ref.topic}") String topic;

  @Value("${ref.count:6}") int count;

  static synchronized void emit(Map<String, Object> m) {
    System.out.println(GSON.toJson(m));
    System.out.flush();
  }

  static Map<String, Object> event(String name) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("event", name);
    return m;
  }

  static void sent(SendResult r) {
    Map<String, Object> m = event("sent");
    m.put("status", r.getSendStatus().name());
    m.put("hasMsgId", r.getMsgId() != null && !r.getMsgId().isEmpty());
    m.put("hasOffsetMsgId", r.getOffsetMsgId() != null && !r.getOffsetMsgId().isEmpty());
    emit(m);
  }

  @Service
  @RocketMQMessageListener(topic = "${ref.topic}", consumerGroup = "${ref.group}")
  public static class Listener implements RocketMQListener<MessageExt> {
    @Override
    public void onMessage(MessageExt x) {
      Map<String, Object> m = event("msg");
      m.put("topic", x.getTopic());
      m.put("tags", x.getTags());
      m.put("keys", x.getKeys());
      m.put("body", new String(x.getBody(), StandardCharsets.UTF_8));
      m.put("queueId", x.getQueueId());
      m.put("queueOffset", x.getQueueOffset());
      m.put("reconsumeTimes", x.getReconsumeTimes());
      m.put("props", new TreeMap<>(x.getProperties()));
      emit(m);
      received.countDown();
    }
  }

  @Override
  public void run(String... args) throws Exception {
    CountDownLatch async = new CountDownLatch(count / 3 + 1);
    for (int i = 0; i < count; i++) {
      org.springframework.messaging.Message<String> msg = MessageBuilder.withPayload("sp-body-" + i)
          .setHeader(RocketMQHeaders.KEYS, "sp-key-" + i).setHeader("seq", Integer.toString(i)).build();
      String dest = topic + ":Tag" + "ABC".charAt(i % 3);
      switch (i % 3) {
        case 0:
          sent(template.syncSend(dest, msg));
          break;
        case 1:
          template.asyncSend(dest, msg, new org.apache.rocketmq.client.producer.SendCallback() {
            @Override
            public void onSuccess(SendResult r) {
              sent(r);
              async.countDown();
            }

            @Override
            public void onException(Throwable e) {
              Map<String, Object> m = event("error");
              m.put("type", e.getClass().getSimpleName());
              m.put("remark", String.valueOf(e.getMessage()));
              emit(m);
              async.countDown();
            }
          });
          break;
        default:
          template.sendOneWay(dest, msg);
      }
    }
    async.await(60, TimeUnit.SECONDS);
    if (!received.await(60, TimeUnit.SECONDS)) {
      Map<String, Object> m = event("timeout");
      m.put("missing", received.getCount());
      emit(m);
    }
  }

  public static void main(String[] args) {
    int count = 6;
    for (String a : args) {
      if (a.startsWith("--ref.count=")) {
        count = Integer.parseInt(a.substring("--ref.count=".length()));
      }
    }
    received = new CountDownLatch(count);
    System.exit(SpringApplication.exit(SpringApplication.run(SpringDriver.class, args)));
  }
}
