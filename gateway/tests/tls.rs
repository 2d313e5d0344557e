//! `https://` targets: a tonic server with TLS on loopback, its certificate issued by a test CA
//! (`tests/tls/`: `ca.pem`, and `server.pem`/`server.key` for `localhost`, valid until 2126; the
//! CA's key was discarded). The gateway verifies the server: with the CA it connects, without
//! it (the system roots alone) it refuses.

use std::net::SocketAddr;
use std::path::Path;

use grpc_mcp_gateway::{Config, Gateway};
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Identity, Server, ServerTlsConfig};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tls")
        .join(name)
        .display()
        .to_string()
}

/// `ScalarService` and reflection v1 over TLS, on a free loopback port.
async fn serve_tls() -> SocketAddr {
    let incoming = TcpIncoming::bind(SocketAddr::from(([127, 0, 0, 1], 0))).expect("bind");
    let addr = incoming.local_addr().expect("addr");
    let identity = Identity::from_pem(
        std::fs::read(fixture("server.pem")).expect("server.pem"),
        std::fs::read(fixture("server.key")).expect("server.key"),
    );
    let router = Server::builder()
        .tls_config(ServerTlsConfig::new().identity(identity))
        .expect("server TLS")
        .add_service(
            e2e::testdata::scalars::scalar_service_server::ScalarServiceServer::new(
                e2e::services::Scalars,
            ),
        )
        .add_service(
            tonic_reflection::server::Builder::configure()
                .register_encoded_file_descriptor_set(e2e::TESTDATA_DESCRIPTOR_SET)
                .with_service_name("testdata.scalars.ScalarService")
                .build_v1()
                .expect("reflection"),
        );
    tokio::spawn(router.serve_with_incoming(incoming));
    addr
}

#[tokio::test]
async fn verifies_the_server_against_the_given_ca() {
    let addr = serve_tls().await;
    let target = format!("https://127.0.0.1:{}", addr.port());
    let ca = fixture("ca.pem");
    // The certificate names localhost, the URL an IP address: --tls-server-name bridges them.
    let config = Config::parse([
        "--target",
        &target,
        "--tls-ca",
        &ca,
        "--tls-server-name",
        "localhost",
    ])
    .expect("config");
    let gateway = Gateway::connect(&config).await.expect("gateway over TLS");
    let names: Vec<&str> = gateway
        .server
        .tools()
        .iter()
        .map(|t| t.name.as_ref())
        .collect();
    assert_eq!(names, ["ScalarService_Echo"]);

    // The system roots do not know the test CA: the handshake fails and nothing is served.
    let untrusted = Config::parse([
        "--target",
        &target,
        "--tls-server-name",
        "localhost",
        "--connect-timeout",
        "5s",
    ])
    .expect("config");
    let error = Gateway::connect(&untrusted).await.unwrap_err().to_string();
    assert!(
        error.contains("UnknownIssuer") && error.contains("--tls-ca"),
        "{error}"
    );

    // Nor does a certificate for another name pass.
    let wrong_name = Config::parse([
        "--target",
        &target,
        "--tls-ca",
        &ca,
        "--tls-server-name",
        "grpc.example.com",
        "--connect-timeout",
        "5s",
    ])
    .expect("config");
    let error = Gateway::connect(&wrong_name).await.unwrap_err().to_string();
    assert!(
        error.contains("not valid for name") && error.contains("--tls-server-name"),
        "{error}"
    );
}
