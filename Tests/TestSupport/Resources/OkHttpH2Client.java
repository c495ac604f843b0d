// OkHttp 3.13 (Debian's libokhttp-java) as an everyday client for DevProxy's HTTP/2 tests: it offers
// h2 and http/1.1 in ALPN, as Android apps' OkHttp does, and reuses one connection for its calls.
// Usage: java OkHttpH2Client PROXY_PORT CA_PEM URL [COUNT]   trusting only CA_PEM, through the HTTP proxy.
// Fetches URL COUNT times (default 1) on one client; prints `PROTOCOL STATUS` per fetch, then the last
// body; exits 3 with the exception on a failure.
import java.io.FileInputStream;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

public class OkHttpH2Client {
    public static void main(String[] args) throws Exception {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        try (FileInputStream in = new FileInputStream(args[1])) {
            int n = 0;
            for (Certificate certificate : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                store.setCertificateEntry("ca" + n++, certificate);
            }
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(store);
        X509TrustManager manager = (X509TrustManager) trust.getTrustManagers()[0];
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, new TrustManager[] {manager}, null);
        OkHttpClient client = new OkHttpClient.Builder()
            .proxy(new Proxy(Proxy.Type.HTTP, new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0]))))
            .sslSocketFactory(context.getSocketFactory(), manager)
            .build();
        int count = args.length > 3 ? Integer.parseInt(args[3]) : 1;
        String body = "";
        try {
            for (int i = 0; i < count; i++) {
                try (Response response = client.newCall(new Request.Builder().url(args[2]).build()).execute()) {
                    System.out.println(response.protocol() + " " + response.code());
                    body = response.body().string();
                }
            }
            System.out.print(body);
        } catch (Exception error) {
            System.out.print(error.getClass().getSimpleName() + ": " + error.getMessage());
            System.exit(3);
        }
        System.exit(0);
    }
}
