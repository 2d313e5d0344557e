#!/usr/bin/env bash
# Scale-out check on a real load balancer (not run in CI: it installs nginx from Debian with
# apt-get, which needs root, unless nginx is already installed).
#
# Three stateless replicas of the demo (`demo --http ADDR --stateless`) run behind nginx; MCP
# clients (rmcp, e2e/tests/scale_out.rs) call a tool through nginx for SCALE_OUT_SECONDS
# (default 10); one replica is killed (SIGKILL) a third of the way in. Only calls in flight
# on that replica may fail; every call started after the kill must succeed.
#
# Usage: scripts/scale-out.sh            (from the repository root)
# Ports: nginx on 127.0.0.1:${SCALE_OUT_PORT:-18080}, replicas on the next three.
set -euo pipefail

cd "$(dirname "$0")/.."
port=${SCALE_OUT_PORT:-18080}
seconds=${SCALE_OUT_SECONDS:-10}
work=$(mktemp -d)
pids=()
cleanup() {
    if [[ -f "$work/nginx.pid" ]]; then kill "$(cat "$work/nginx.pid")" 2>/dev/null || true; fi
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

if ! command -v nginx >/dev/null 2>&1 && [[ ! -x /usr/sbin/nginx ]]; then
    echo "installing nginx (Debian package)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null 2>&1 ||
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

echo "building the demo and the client"
cargo build -q -p demo
cargo test -q -p e2e --test scale_out --no-run 2>/dev/null

replicas=()
for i in 1 2 3; do
    replica_port=$((port + i))
    target/debug/demo --http "127.0.0.1:$replica_port" --stateless >"$work/replica$i.log" 2>&1 &
    pids+=("$!")
    replicas+=("127.0.0.1:$replica_port")
done

mkdir -p "$work/tmp"
cat >"$work/nginx.conf" <<EOF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log warn;
daemon on;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/tmp/body;
    proxy_temp_path $work/tmp/proxy;
    fastcgi_temp_path $work/tmp/fastcgi;
    uwsgi_temp_path $work/tmp/uwsgi;
    scgi_temp_path $work/tmp/scgi;

    # Stateless replicas: any replica can take any request, so plain round robin works.
    # A replica that refuses a connection is marked down for 10 s; the request goes to the
    # next one (a request already sent is not replayed: tool calls are not idempotent).
    upstream mcp_replicas {
        server ${replicas[0]} max_fails=1 fail_timeout=10s;
        server ${replicas[1]} max_fails=1 fail_timeout=10s;
        server ${replicas[2]} max_fails=1 fail_timeout=10s;
        # No upstream keepalive: a pooled connection to a replica that has just died fails
        # only once the request is on it, and then it cannot be replayed. A fresh connection
        # to a dead replica is refused before anything is sent, and nginx moves on.
    }

    server {
        listen 127.0.0.1:$port;

        location = /mcp {
            proxy_pass http://mcp_replicas;
            proxy_http_version 1.1;
            # The replicas accept loopback Host names only (DNS-rebinding protection). In a
            # real deployment, forward \$host and list the public name in allowed_hosts.
            proxy_set_header Host 127.0.0.1;
            # Progress notifications stream as SSE: no buffering.
            proxy_buffering off;
            proxy_read_timeout 120s;
            proxy_next_upstream error timeout;
        }

        # Health: each replica answers GET /healthz while it accepts connections.
        location = /healthz {
            proxy_pass http://mcp_replicas;
            proxy_set_header Host 127.0.0.1;
        }
    }
}
EOF
"$nginx_bin" -t -c "$work/nginx.conf" -p "$work" 2>/dev/null
"$nginx_bin" -c "$work/nginx.conf" -p "$work"

for _ in $(seq 1 100); do
    if curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then break; fi
    sleep 0.2
done
for replica in "${replicas[@]}"; do
    curl -sf "http://$replica/healthz" >/dev/null || { echo "replica $replica is not healthy"; exit 1; }
done
echo "3 replicas healthy behind nginx on 127.0.0.1:$port"

SCALE_OUT_URL="http://127.0.0.1:$port/mcp" SCALE_OUT_KILL_FILE="$work/killed" SCALE_OUT_SECONDS="$seconds" \
    cargo test -q -p e2e --test scale_out -- --ignored --nocapture &
driver=$!
sleep "$((seconds / 3))"
kill -9 "${pids[1]}"
date +%s%3N >"$work/killed"
echo "killed replica ${replicas[1]}"
status=0
wait "$driver" || status=$?
if [[ $status -eq 0 ]]; then echo "scale-out: PASS"; else echo "scale-out: FAIL"; fi
exit "$status"
