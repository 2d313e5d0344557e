//! The deployment files of `deploy/` run the gateway as written: the Dockerfile's entrypoint
//! with the Deployment's arguments, the ConfigMap's `gateway.toml` and the Secret's variables.
//! The gateway parses them all and gets as far as reaching the backends, which do not exist
//! here: `--check` then fails on the first, by name (a parse error would exit 2 instead).
//! `scripts/deploy-check.sh` validates the same files against Kubernetes' schemas.

use std::path::Path;

const GATEWAY: &str = env!("CARGO_BIN_EXE_grpc-mcp-gateway");

fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The items of the YAML block sequence under the first `key:` line (`- item` lines, comments
/// skipped), quotes removed.
fn yaml_list(text: &str, key: &str) -> Vec<String> {
    let mut lines = text.lines().skip_while(|line| line.trim() != key).skip(1);
    let mut items = Vec::new();
    for line in lines.by_ref() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        let Some(item) = line.strip_prefix("- ") else {
            break;
        };
        items.push(item.trim_matches('"').to_owned());
    }
    items
}

/// The block scalar under `key: |`, dedented.
fn yaml_block(text: &str, key: &str) -> String {
    let mut lines = text
        .lines()
        .skip_while(|line| line.trim() != format!("{key}: |"));
    let header = lines.next().expect("the block's key");
    let indent = header.len() - header.trim_start().len() + 2;
    lines
        .take_while(|line| line.trim().is_empty() || line.len() > indent)
        .map(|line| line.get(indent..).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_container_runs_the_deployments_arguments_and_config() {
    let dockerfile = read("deploy/Dockerfile");
    let entrypoint = dockerfile
        .lines()
        .find_map(|line| line.strip_prefix("ENTRYPOINT "))
        .expect("ENTRYPOINT");
    let entrypoint: Vec<String> = serde_json::from_str(entrypoint).expect("exec-form ENTRYPOINT");
    assert_eq!(entrypoint[0], "grpc-mcp-gateway");

    let deployment = read("deploy/kubernetes/deployment.yaml");
    let args = yaml_list(&deployment, "args:");
    let config_path = args
        .iter()
        .position(|arg| arg == "--config")
        .map(|i| args[i + 1].clone())
        .expect("--config in the Deployment's args");
    assert!(
        config_path.starts_with("/etc/grpc-mcp-gateway/"),
        "{config_path}: the ConfigMap's mount path"
    );

    let configmap = read("deploy/kubernetes/configmap.yaml");
    let dir = std::env::temp_dir().join(format!("grpc-mcp-gateway-deploy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let config = dir.join("gateway.toml");
    std::fs::write(&config, yaml_block(&configmap, "gateway.toml")).expect("config");

    // The Secret's keys, as `envFrom` makes them variables.
    let secret = read("deploy/kubernetes/secret.yaml");
    let variables: Vec<(String, String)> = secret
        .lines()
        .skip_while(|line| line.trim() != "stringData:")
        .skip(1)
        .filter_map(|line| line.trim().split_once(": "))
        .map(|(key, value)| (key.to_owned(), value.trim_matches('"').to_owned()))
        .collect();
    assert!(!variables.is_empty(), "{secret}");

    // `$(POD_NAME)` (the replica's name) expands as Kubernetes expands it, from the variable the
    // Deployment sets to the pod's name.
    assert!(
        deployment.contains("name: POD_NAME") && deployment.contains("fieldPath: metadata.name"),
        "the Deployment's POD_NAME"
    );
    let args: Vec<String> = args
        .into_iter()
        .map(|arg| {
            if arg == config_path {
                config.display().to_string()
            } else {
                arg.replace("$(POD_NAME)", "grpc-mcp-gateway-7d9c4b6f5-x2k8q")
            }
        })
        .collect();
    let output = std::process::Command::new(GATEWAY)
        .args(&entrypoint[1..])
        .args(&args)
        .arg("--check")
        .env_clear()
        .envs(variables)
        .output()
        .expect("run the gateway");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        // The cluster's DNS name does not resolve here.
        stderr.contains("gateway.toml:1: backend `shop`") && stderr.contains("dns error"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
