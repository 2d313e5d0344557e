//! The gRPC server behind the gateway: its URL and how to reach it (`http://` in plain text,
//! `https://` over TLS verified against the system's root certificates).

use std::path::PathBuf;
use std::time::Duration;

use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

use crate::error::Error;

/// Where and how to connect.
#[derive(Debug, Clone)]
pub struct Target {
    /// `http://host:port` or `https://host[:port]`.
    pub url: String,
    /// Extra PEM root certificates trusted beside the system's (`--tls-ca`).
    pub tls_ca: Option<PathBuf>,
    /// The name the server certificate must carry, when it differs from the URL's host
    /// (`--tls-server-name`).
    pub tls_server_name: Option<String>,
    /// A PEM client certificate (chain) and its PEM private key, for servers that require
    /// mutual TLS (`--tls-cert`, `--tls-key`).
    pub tls_identity: Option<(PathBuf, PathBuf)>,
    /// Bound on establishing the connection and on each reflection exchange.
    pub timeout: Duration,
}

/// A lazily connecting channel to the target: the gateway starts even when the server is not
/// up yet (with `--descriptor-set`), and tonic reconnects after the server restarts.
///
/// # Errors
///
/// The URL is not `http://` or `https://`, or the CA file cannot be read.
pub fn channel(target: &Target) -> Result<Channel, Error> {
    let url = target.url.as_str();
    let invalid = |why: String| Error::new(format!("--target {url}: {why}"));
    let scheme = url.split_once("://").map(|(scheme, _)| scheme);
    let tls = match scheme {
        Some("http") => false,
        Some("https") => true,
        _ => {
            return Err(invalid(
                "expects a URL such as http://127.0.0.1:50051 (plain text) or \
                 https://grpc.example.com (TLS)"
                    .to_owned(),
            ));
        }
    };
    let mut endpoint = Endpoint::from_shared(url.to_owned())
        .map_err(|e| invalid(format!("not a valid URL ({e})")))?
        .connect_timeout(target.timeout)
        .tcp_nodelay(true)
        .user_agent(concat!("grpc-mcp-gateway/", env!("CARGO_PKG_VERSION")))
        .map_err(|e| invalid(e.to_string()))?;
    if tls {
        let mut config = ClientTlsConfig::new().with_native_roots();
        if let Some(path) = &target.tls_ca {
            let pem = read_pem("--tls-ca", path, "CERTIFICATE")?;
            config = config.ca_certificate(Certificate::from_pem(pem));
        }
        if let Some((cert, key)) = &target.tls_identity {
            let cert = read_pem("--tls-cert", cert, "CERTIFICATE")?;
            let key = read_pem("--tls-key", key, "PRIVATE KEY")?;
            config = config.identity(Identity::from_pem(cert, key));
        }
        if let Some(name) = &target.tls_server_name {
            config = config.domain_name(name.clone());
        }
        endpoint = endpoint
            .tls_config(config)
            .map_err(|e| invalid(format!("TLS setup failed ({e})")))?;
    } else if target.tls_ca.is_some()
        || target.tls_server_name.is_some()
        || target.tls_identity.is_some()
    {
        return Err(invalid(
            "--tls-ca, --tls-server-name, --tls-cert and --tls-key apply to https:// targets only"
                .to_owned(),
        ));
    }
    Ok(endpoint.connect_lazy())
}

/// The contents of the PEM file `path` given to `flag`, which must hold at least one block
/// whose label ends with `label` (`CERTIFICATE`; `PRIVATE KEY` matches `RSA PRIVATE KEY` and
/// `EC PRIVATE KEY` too). tonic would take anything and fail later, at the handshake, with a
/// message that does not name the file.
fn read_pem(flag: &str, path: &std::path::Path, label: &str) -> Result<Vec<u8>, Error> {
    let shown = path.display();
    let pem = std::fs::read(path)
        .map_err(|e| Error::new(format!("{flag} {shown}: cannot read it ({e})")))?;
    let text = String::from_utf8_lossy(&pem);
    let found = text.lines().any(|line| {
        line.trim()
            .strip_prefix("-----BEGIN ")
            .and_then(|rest| rest.strip_suffix("-----"))
            .is_some_and(|found| found.ends_with(label))
    });
    if !found {
        return Err(Error::new(format!(
            "{flag} {shown}: holds no PEM {label} (a block starting with -----BEGIN {label}-----)"
        )));
    }
    Ok(pem)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(url: &str) -> Target {
        Target {
            url: url.to_owned(),
            tls_ca: None,
            tls_server_name: None,
            tls_identity: None,
            timeout: Duration::from_secs(1),
        }
    }

    #[tokio::test]
    async fn accepts_http_and_https_only() {
        assert!(channel(&target("http://127.0.0.1:1")).is_ok());
        assert!(channel(&target("https://grpc.example.com")).is_ok());
        for url in ["127.0.0.1:50051", "ftp://x", "grpc://x:1"] {
            let error = channel(&target(url)).unwrap_err().to_string();
            assert!(error.contains("expects a URL such as"), "{url}: {error}");
        }
        let mut plain = target("http://127.0.0.1:1");
        plain.tls_server_name = Some("x".to_owned());
        assert!(
            channel(&plain)
                .unwrap_err()
                .to_string()
                .contains("https:// targets only")
        );
    }
}
