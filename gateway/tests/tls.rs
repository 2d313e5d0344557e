//! `https://` targets: a tonic server with TLS on loopback, its certificate issued by a test CA
//! (`tests/tls/`: `ca.pem`, and `server.pem`/`server.key` for `localhost`, valid until 2126; the
//! CA's key was discarded). The gateway verifies the server: with the CA it connects, without
//! it (the system roots alone) it refuses. For mutual TLS, `client.pem`/`client.key` are a
//! client certificate issued by `client-ca.pem` (P-256, made with openssl, valid until 2126; that
//! CA's key was discarded too).

use std::net::SocketAddr;
use std::path::Path;

use grpc_mcp_gateway::Gateway;
use support::{Reflection, connect_error, gateway_config, serve_scalars, serves_only_scalar_echo};
use tonic::transport::{Certificate, Identity, ServerTlsConfig};

mod support;

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tls")
        .join(name)
        .display()
        .to_string()
}

/// `ScalarService` and reflection v1 over TLS, on a free loopback port.
async fn serve_tls() -> SocketAddr {
    serve_tls_with(ServerTlsConfig::new()).await
}

/// As [`serve_tls`], with `tls` (client certificate requirements) for the server's TLS.
async fn serve_tls_with(tls: ServerTlsConfig) -> SocketAddr {
    let identity = Identity::from_pem(
        std::fs::read(fixture("server.pem")).expect("server.pem"),
        std::fs::read(fixture("server.key")).expect("server.key"),
    );
    serve_scalars(Reflection::V1, Some(tls.identity(identity))).await
}

/// As [`serve_tls`], for a server that requires a client certificate issued by
/// `client-ca.pem`.
async fn serve_mutual_tls() -> SocketAddr {
    let client_ca = std::fs::read(fixture("client-ca.pem")).expect("client-ca.pem");
    serve_tls_with(ServerTlsConfig::new().client_ca_root(Certificate::from_pem(client_ca))).await
}

#[tokio::test]
async fn verifies_the_server_against_the_given_ca() {
    let addr = serve_tls().await;
    let target = format!("https://127.0.0.1:{}", addr.port());
    let ca = fixture("ca.pem");
    // The certificate names localhost, the URL an IP address: --tls-server-name bridges them.
    let config = gateway_config(
        &target,
        &["--tls-ca", &ca, "--tls-server-name", "localhost"],
    );
    let gateway = Gateway::connect(&config).await.expect("gateway over TLS");
    serves_only_scalar_echo(&gateway);

    // The system roots do not know the test CA: the handshake fails and nothing is served.
    let error = connect_error(
        &target,
        &["--tls-server-name", "localhost", "--connect-timeout", "5s"],
    )
    .await;
    assert!(
        error.contains("UnknownIssuer") && error.contains("--tls-ca"),
        "{error}"
    );

    // Nor does a certificate for another name pass.
    let error = connect_error(
        &target,
        &[
            "--tls-ca",
            &ca,
            "--tls-server-name",
            "grpc.example.com",
            "--connect-timeout",
            "5s",
        ],
    )
    .await;
    assert!(
        error.contains("not valid for name") && error.contains("--tls-server-name"),
        "{error}"
    );
}

/// A server that requires client certificates (etcd `--client-cert-auth`, service meshes):
/// `--tls-cert`/`--tls-key` present one; without them the handshake fails and the error says
/// a certificate is what is missing.
#[tokio::test]
async fn presents_a_client_certificate_to_a_server_that_requires_one() {
    let addr = serve_mutual_tls().await;
    let target = format!("https://127.0.0.1:{}", addr.port());
    let (ca, cert, key) = (
        fixture("ca.pem"),
        fixture("client.pem"),
        fixture("client.key"),
    );
    let base = [
        "--tls-ca",
        &ca,
        "--tls-server-name",
        "localhost",
        "--connect-timeout",
        "5s",
    ];

    let with_identity = [&base[..], &["--tls-cert", &cert, "--tls-key", &key]].concat();
    let gateway = Gateway::connect(&gateway_config(&target, &with_identity))
        .await
        .expect("gateway over mutual TLS");
    assert_eq!(gateway.server.tools().len(), 1);

    let error = connect_error(&target, &base).await;
    assert!(
        error.to_lowercase().contains("certificate") && error.contains("--tls-cert"),
        "{error}"
    );

    // A certificate file with no certificate in it is refused at once, naming the flag.
    let empty = std::env::temp_dir().join(format!("gateway-empty-{}.pem", std::process::id()));
    std::fs::write(&empty, "not a certificate\n").expect("write");
    let empty = empty.display().to_string();
    for flag in ["--tls-ca", "--tls-cert"] {
        let mut args: Vec<&str> = vec![flag, &empty];
        if flag == "--tls-cert" {
            args.extend(["--tls-key", &key]);
        }
        let error = connect_error(&target, &args).await;
        assert!(
            error.contains(flag) && error.contains("holds no PEM CERTIFICATE"),
            "{error}"
        );
    }
    std::fs::remove_file(&empty).ok();
}

/// The text of one `ScalarService_Echo` call through `gateway`'s server, in process.
async fn echo_text(gateway: Gateway) -> (bool, String) {
    let client = test_kit::connect(gateway.server).await;
    let result = test_kit::call(
        &client,
        "ScalarService_Echo",
        serde_json::json!({"f_string": "x"}),
    )
    .await
    .expect("tools/call");
    client.cancel().await.ok();
    (
        result.is_error == Some(true),
        serde_json::to_string(&result.content).expect("content"),
    )
}

/// Calls (not only startup) name the TLS cause: an untrusted server certificate, a client
/// certificate the server demands. The descriptors come from a file, so the gateway starts
/// without talking to the server and the first call meets the failure.
#[tokio::test]
async fn calls_that_fail_in_tls_name_the_cause() {
    let dir = std::env::temp_dir().join(format!("gateway-tls-calls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let set = dir.join("testdata.binpb");
    std::fs::write(&set, e2e::TESTDATA_DESCRIPTOR_SET).expect("descriptor set");
    let set = set.display().to_string();
    let ca = fixture("ca.pem");

    let plain = serve_tls().await;
    let mutual = serve_mutual_tls().await;
    let cases: [(String, &[&str], &str); 3] = [
        (
            format!("https://127.0.0.1:{}", plain.port()),
            &["--tls-server-name", "localhost"],
            "not signed by a trusted authority",
        ),
        (
            format!("https://127.0.0.1:{}", mutual.port()),
            &["--tls-ca", &ca, "--tls-server-name", "localhost"],
            "requires a client certificate",
        ),
        // Plain text to the TLS port.
        (
            format!("http://127.0.0.1:{}", plain.port()),
            &["--connect-timeout", "5s"],
            "an http:// target for a TLS server",
        ),
    ];
    for (target, args, expect) in cases {
        let from_file = [
            "--descriptor-set",
            &set,
            "--service",
            "testdata.scalars.ScalarService",
        ];
        let args: Vec<&str> = from_file.into_iter().chain(args.iter().copied()).collect();
        let gateway = Gateway::connect(&gateway_config(&target, &args))
            .await
            .expect("gateway");
        let (is_error, text) = echo_text(gateway).await;
        assert!(is_error && text.contains(expect), "{target}: {text}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
