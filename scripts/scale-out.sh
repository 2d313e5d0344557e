#!/usr/bin/env bash
# Scale-out check on a real load balancer (not run in CI).
#
# Three stateless replicas of the demo (`demo --http ADDR --stateless`) run behind nginx, with
# the manual's nginx block (docs/scaling-out.md) as its configuration: its three upstream servers
# become the replicas and `listen 443 ssl` a plain loopback port, nothing else changes (the
# block is read from docs/scaling-out.md, so the two cannot drift; scripts/readme.sh checks the block as
# written with `nginx -t`). nginx is Debian's package, unpacked into .tools/ without root by
# scripts/install-tools.sh nginx. MCP clients (rmcp, e2e/tests/scale_out.rs) call a tool
# through nginx for SCALE_OUT_SECONDS (default 10); one replica is killed (SIGKILL) a third of
# the way in. Only calls in flight on that replica may fail; every call started after the kill
# must succeed.
#
# Usage: scripts/scale-out.sh            (from the repository root)
# Ports: nginx on 127.0.0.1:${SCALE_OUT_PORT:-18080}, replicas on the next three.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=scripts/nginx-conf.sh
source scripts/nginx-conf.sh
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

nginx_bin=$(nginx_bin)

echo "building the demo and the client"
cargo build -q -p demo
cargo test -q -p e2e --test scale_out --no-run 2>/dev/null

replicas=()
for i in 1 2 3; do
    replica_port=$((port + i))
    "$TARGET/debug/demo" --http "127.0.0.1:$replica_port" --stateless >"$work/replica$i.log" 2>&1 &
    pids+=("$!")
    replicas+=("127.0.0.1:$replica_port")
done

# The manual's block, with the replicas for its upstream servers and a loopback port for its TLS
# listener; each replacement must apply exactly once.
site=$(readme_nginx_block)
replace() {
    [[ $(grep -cF -- "$1" <<<"$site") == 1 ]] || { echo "the nginx block of docs/scaling-out.md has no single line with '$1'" >&2; exit 1; }
    site=${site//"$1"/"$2"}
}
replace "server 10.0.0.11:8080 " "server ${replicas[0]} "
replace "server 10.0.0.12:8080 " "server ${replicas[1]} "
replace "server 10.0.0.13:8080 " "server ${replicas[2]} "
replace "listen 443 ssl;" "listen 127.0.0.1:$port;"
printf '%s\n' "$site" >"$work/site.conf"
nginx_conf "$work" "$work/site.conf" >"$work/nginx.conf"
"$nginx_bin" -t -q -e stderr -c "$work/nginx.conf" -p "$work"
"$nginx_bin" -e stderr -c "$work/nginx.conf" -p "$work"

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
