// A real pinned client for DevProxy's tests: OkHttp 3.13 (Debian's libokhttp-java) with a
// CertificatePinner, trusting only the given CA files, through an HTTP proxy.
// Usage: java PinnedClient PROXY_PORT URL PIN CA_PEM [CA_PEM...]
// Prints the body and exits 0, or prints the exception and exits 3.
import java.io.FileInputStream;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import okhttp3.CertificatePinner;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

public class PinnedClient {
    public static void main(String[] args) throws Exception {
        int proxyPort = Integer.parseInt(args[0]);
        HttpUrl url = HttpUrl.get(args[1]);
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        for (int i = 3; i < args.length; i++) {
            try (FileInputStream in = new FileInputStream(args[i])) {
                int n = 0;
                for (Certificate certificate : factory.generateCertificates(in)) {
                    store.setCertificateEntry("ca" + i + "-" + n++, certificate);
                }
            }
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(store);
        X509TrustManager manager = (X509TrustManager) trust.getTrustManagers()[0];
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, new javax.net.ssl.TrustManager[] {manager}, null);
        OkHttpClient client = new OkHttpClient.Builder()
            .proxy(new Proxy(Proxy.Type.HTTP, new InetSocketAddress("127.0.0.1", proxyPort)))
            .sslSocketFactory(context.getSocketFactory(), manager)
            .certificatePinner(new CertificatePinner.Builder().add(url.host(), args[2]).build())
            .retryOnConnectionFailure(false)
            .build();
        try (Response response = client.newCall(new Request.Builder().url(url).build()).execute()) {
            System.out.print(response.code() + " " + response.body().string());
            System.exit(0);
        } catch (Exception error) {
            System.out.print(error.getClass().getSimpleName() + ": " + error.getMessage());
            System.exit(3);
        }
    }
}
