//! The reflection client against real tonic servers on loopback: the v1alpha fallback, and the
//! errors a user sees when reflection is missing or the server is down.

use std::net::SocketAddr;
use std::time::Duration;

use grpc_mcp_gateway::{Config, Gateway, Headers, descriptors};
use serde_json::json;
use support::{Reflection, connect_error, serve_scalars, serves_only_scalar_echo};

mod support;

/// Serves `ScalarService`, with gRPC reflection v1alpha only (no v1) when asked, on a free
/// loopback port.
async fn serve(reflection_v1alpha: bool) -> SocketAddr {
    let reflection = if reflection_v1alpha {
        Reflection::V1Alpha
    } else {
        Reflection::Off
    };
    serve_scalars(reflection, None).await
}

fn channel(addr: SocketAddr) -> tonic::transport::Channel {
    tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("url")
        .connect_lazy()
}

/// The descriptors the gateway's reflection client reads from the server at `addr`.
async fn reflect(addr: SocketAddr) -> Result<descriptors::Descriptors, grpc_mcp_gateway::Error> {
    descriptors::from_reflection(
        channel(addr),
        &Headers::default(),
        Duration::from_secs(10),
        &[],
    )
    .await
}

#[tokio::test]
async fn falls_back_to_v1alpha() {
    let addr = serve(true).await;
    let found = reflect(addr).await.expect("reflection v1alpha");
    assert_eq!(found.services, ["testdata.scalars.ScalarService"]);

    let config = Config::parse(["--target", &format!("http://{addr}")]).expect("config");
    let gateway = Gateway::new(&config, found, channel(addr)).expect("gateway");
    serves_only_scalar_echo(&gateway);

    let client = test_kit::connect(gateway.server).await;
    let result = test_kit::call(
        &client,
        "ScalarService_Echo",
        json!({"f_int64": "-5", "f_string": "x"}),
    )
    .await
    .expect("call");
    assert_eq!(
        result.structured_content,
        Some(json!({"f_int64": "-5", "f_string": "x"}))
    );
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn a_server_without_reflection_points_to_descriptor_sets() {
    let addr = serve(false).await;
    let error = reflect(addr).await.unwrap_err().to_string();
    assert!(
        error.contains("does not offer gRPC reflection") && error.contains("--descriptor-set"),
        "{error}"
    );
}

#[tokio::test]
async fn a_stopped_server_is_named_as_unavailable() {
    // A port that was free a moment ago: nothing listens there.
    let addr = SocketAddr::from(([127, 0, 0, 1], test_kit::free_port()));
    let error = connect_error(&format!("http://{addr}"), &["--connect-timeout", "2s"]).await;
    assert!(
        error.contains("gRPC reflection failed") && error.contains("is the server running"),
        "{error}"
    );
}

#[tokio::test]
async fn an_unknown_service_lists_the_known_ones() {
    let addr = serve(true).await;
    let error = connect_error(
        &format!("http://{addr}"),
        &["--service", "testdata.scalars.NoSuchService"],
    )
    .await;
    assert!(error.contains("testdata.scalars.NoSuchService"), "{error}");
}
