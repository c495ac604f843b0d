import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.URL;
import javax.net.ssl.HttpsURLConnection;

/**
 * GETs a URL through the HTTP proxy at 127.0.0.1:PORT with HttpsURLConnection, trusting what the
 * JVM's trust store (javax.net.ssl.trustStore) holds and nothing else.
 * Prints "STATUS BODY"; on failure the exception's class and message, and exits 3.
 * Usage: java -Djavax.net.ssl.trustStore=FILE TrustStoreClient.java PORT URL
 */
public class TrustStoreClient {
    public static void main(String[] args) throws Exception {
        Proxy proxy = new Proxy(Proxy.Type.HTTP, new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0])));
        HttpsURLConnection connection = (HttpsURLConnection) new URL(args[1]).openConnection(proxy);
        connection.setConnectTimeout(10000);
        connection.setReadTimeout(10000);
        try {
            int status = connection.getResponseCode();
            try (InputStream in = connection.getInputStream()) {
                System.out.print(status + " " + new String(in.readAllBytes(), "UTF-8"));
            }
        } catch (Exception e) {
            System.out.print(e.getClass().getName() + ": " + e.getMessage());
            System.exit(3);
        }
    }
}
