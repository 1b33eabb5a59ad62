// One send with the official Java client (rocketmq-client 5.5.0, remoting) signed by AclClientRPCHook:
//   java -cp <classpath> AclDriver <namesrv> <accessKey> <secretKey> <topic>
// prints "OK <sendStatus>" or "ERR <exception class> <message>" (used by tests/compat/test_java_acl2.py).
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;

public class AclDriver {
    public static void main(String[] args) throws Exception {
        AclClientRPCHook hook = new AclClientRPCHook(new SessionCredentials(args[1], args[2]));
        DefaultMQProducer producer = new DefaultMQProducer("PG_java_acl", hook);
        producer.setNamesrvAddr(args[0]);
        producer.setRetryTimesWhenSendFailed(0);
        producer.setSendMsgTimeout(10000);
        producer.start();
        try {
            SendResult r = producer.send(new Message(args[3], "java acl".getBytes("UTF-8")));
            System.out.println("OK " + r.getSendStatus());
        } catch (Exception e) {
            StringBuilder line = new StringBuilder("ERR");
            for (Throwable t = e; t != null; t = t.getCause()) {  // the client wraps the broker's answer
                line.append(' ').append(t.getClass().getSimpleName()).append(' ')
                    .append(String.valueOf(t.getMessage()).replace('\n', ' '));
            }
            System.out.println(line);
        } finally {
            producer.shutdown();
        }
    }
}
