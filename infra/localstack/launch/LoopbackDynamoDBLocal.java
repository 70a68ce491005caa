// DynamoDB Local's own main (ServerRunner, java -jar DynamoDBLocal.jar) builds Jetty's server with
// new Server(port), which listens on every interface, and it has no option for the address. This
// main builds the same server from the same command line and, before it starts, sets the address
// of its connector to the system property agentorch.host (infra/localstack passes 127.0.0.1).
// Compiled once by infra/localstack.EnsureDeps against the installed jar; see stack.go.

import java.lang.reflect.Field;
import org.eclipse.jetty.server.AbstractNetworkConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class LoopbackDynamoDBLocal {
    public static void main(String[] args) throws Exception {
        String host = System.getProperty("agentorch.host");
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("set -Dagentorch.host to the address to listen on");
        }
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        Server server = (Server) field.get(proxy);
        Connector[] connectors = server.getConnectors();
        if (connectors.length == 0) {
            throw new IllegalStateException("DynamoDB Local's server has no connector");
        }
        for (Connector c : connectors) {
            ((AbstractNetworkConnector) c).setHost(host);
        }
        proxy.start();
    }
}
