#!/usr/bin/env bash
# Scale-out check on a real load balancer, in CI (scripts/test.sh).
#
# Three phases, each with three replicas behind nginx, whose configuration is one of
# the manual's nginx blocks (docs/scaling-out.md) with its three upstream addresses replaced by
# the replicas' and `listen 443 ssl` by a plain loopback port, nothing else changed (the blocks
# are read from docs/scaling-out.md, so the two cannot drift; scripts/readme.sh checks them as
# written with `nginx -t`). nginx is Debian's package, unpacked into .tools/ without root by
# scripts/install-tools.sh nginx. The clients are the ignored tests of tests/e2e/tests/scale_out.rs.
#
#   stateless  the first block; `demo --http ADDR --stateless`. MCP clients (rmcp) call a tool
#              through nginx for SCALE_OUT_SECONDS (default 10); one replica is killed (SIGKILL)
#              a third of the way in. Only calls in flight on that replica may fail; every call
#              started after the kill must succeed.
#   sessions   the second block; `demo --http ADDR --replica rN` (session mode, N = 1, 2, 3),
#              routed on the session id's prefix. The client opens sessions through nginx and
#              calls tools in each (a request on another replica would get 404), then names a
#              replica holding some of them in the ready file; this script kills it (SIGKILL)
#              and writes the time to the kill file. Its sessions must then get 404, every other
#              session must keep working, and a new session must open and work.
#   tasks      the first block; three gateways (`grpc-mcp-gateway --stateless --replica gN`)
#              on one Redis task store (Debian's redis-server, started here on a loopback port)
#              and one task key, in front of two backends: e2e-server's inventory (its counters
#              of started and cancelled calls in backend.log) and the demo's task tracker, whose
#              ArchiveTasks waits on long-running operations. The client runs 300 tasks through
#              nginx (streaming ones, and operation ones one after another), orders a replica
#              killed a third of the way in and Redis stopped and started after, through the
#              control file: a line per order (a replica's name, `redis-stop`, `redis-start`),
#              acknowledged by a line in the done file. Then the official Python SDK's task
#              client (tests/python/test_scale_out_tasks.py) runs tasks through nginx.
#
# Usage: scripts/scale-out.sh [stateless|sessions|tasks]...   (default: all; from anywhere)
# Ports: nginx on 127.0.0.1:${SCALE_OUT_PORT:-18080}, replicas on the next three, the tasks
# phase's Redis and backends on the four after port + 10.
# Each client run is bounded by SCALE_OUT_TIMEOUT seconds (default 300); every process it starts
# is stopped on exit.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=scripts/nginx-conf.sh
source scripts/nginx-conf.sh
port=${SCALE_OUT_PORT:-18080}
seconds=${SCALE_OUT_SECONDS:-10}
client_timeout=${SCALE_OUT_TIMEOUT:-300}
work=$(mktemp -d)
phase_dir=
declare -A replica_pid=()
declare -A replica_addr=()
replica_names=()
# The tasks phase's other processes, stopped with the phase.
extra_pids=()
redis_pid=

# Stops the phase's nginx and replicas, and waits for them (their ports are free after).
stop_phase() {
    local pid name
    if [[ -n $phase_dir && -f "$phase_dir/nginx.pid" ]]; then
        pid=$(cat "$phase_dir/nginx.pid")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    fi
    for name in "${replica_names[@]}"; do
        pid=${replica_pid[$name]}
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    replica_names=()
    replica_pid=()
    replica_addr=()
    stop_redis
    for pid in "${extra_pids[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    extra_pids=()
}
client=
cleanup() {
    if [[ -n $client ]]; then kill "$client" 2>/dev/null || true; fi
    stop_phase
    rm -rf "$work"
}
trap cleanup EXIT

# Starts the replicas named $2... on the ports after $port, in mode $1: `stateless` (the demo,
# --stateless), `sessions` (the demo, --replica NAME: session mode, session ids NAME.<uuid>) or
# `gateway` (grpc-mcp-gateway, stateless, named, with the arguments in gateway_args).
start_replicas() {
    local mode=$1 name i=0 addr command
    shift
    for name in "$@"; do
        i=$((i + 1))
        addr="127.0.0.1:$((port + i))"
        case $mode in
            stateless) command=("$TARGET/debug/demo" --http "$addr" --stateless) ;;
            sessions) command=("$TARGET/debug/demo" --http "$addr" --replica "$name") ;;
            gateway) command=("$TARGET/debug/grpc-mcp-gateway" "${gateway_args[@]}" --http "$addr" --stateless --replica "$name") ;;
            *) die "unknown mode $mode" ;;
        esac
        "${command[@]}" >"$phase_dir/$name.log" 2>&1 &
        replica_pid[$name]=$!
        replica_addr[$name]=$addr
        replica_names+=("$name")
    done
}

# Serves the N-th ($1) nginx block of docs/scaling-out.md on 127.0.0.1:$port, its upstream
# addresses 10.0.0.11:8080, .12 and .13 replaced by those of the replicas in start order (each
# must occur) and its `listen 443 ssl;` by the port (exactly once); waits until nginx and every
# replica answer /healthz.
start_nginx() {
    local n=$1 site i=0 name from
    site=$(readme_nginx_block "$n") || die "docs/scaling-out.md has no nginx block $n"
    [[ $(grep -cF -- "listen 443 ssl;" <<<"$site") == 1 ]] \
        || die "nginx block $n of docs/scaling-out.md has no single line with 'listen 443 ssl;'"
    site=${site//"listen 443 ssl;"/"listen 127.0.0.1:$port;"}
    for name in "${replica_names[@]}"; do
        i=$((i + 1))
        from="10.0.0.1$i:8080"
        grep -qF -- "server $from " <<<"$site" \
            || die "nginx block $n of docs/scaling-out.md has no 'server $from'"
        site=${site//"server $from "/"server ${replica_addr[$name]} "}
    done
    ! grep -q '10\.0\.0\.' <<<"$site" || die "nginx block $n has more upstream addresses than replicas"
    printf '%s\n' "$site" >"$phase_dir/site.conf"
    nginx_conf "$phase_dir" "$phase_dir/site.conf" >"$phase_dir/nginx.conf"
    # The phases run in `||` context, where set -e does not apply: each step checks itself.
    "$nginx_bin" -t -q -e stderr -c "$phase_dir/nginx.conf" -p "$phase_dir" \
        || die "nginx -t refuses block $n with the replicas' addresses ($phase_dir/nginx.conf)"
    "$nginx_bin" -e stderr -c "$phase_dir/nginx.conf" -p "$phase_dir" || die "nginx did not start"
    for _ in $(seq 1 100); do
        if curl -sf --max-time 2 "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then break; fi
        sleep 0.2
    done
    for name in "${replica_names[@]}"; do
        for _ in $(seq 1 100); do
            if curl -sf --max-time 2 "http://${replica_addr[$name]}/healthz" >/dev/null 2>&1; then break; fi
            sleep 0.2
        done
        curl -sf --max-time 2 "http://${replica_addr[$name]}/healthz" >/dev/null \
            || die "replica $name (${replica_addr[$name]}) is not healthy: $(tail -n 5 "$phase_dir/$name.log")"
    done
    echo "${#replica_names[@]} replicas healthy behind nginx (block $n of docs/scaling-out.md) on 127.0.0.1:$port"
}

# Runs the ignored test $1 of tests/e2e/tests/scale_out.rs against nginx, in the background (its pid
# in $client), bounded by $client_timeout seconds; the environment is the phase's.
start_client() {
    SCALE_OUT_URL="http://127.0.0.1:$port/mcp" SCALE_OUT_KILL_FILE="$phase_dir/killed" \
        SCALE_OUT_READY_FILE="$phase_dir/ready" SCALE_OUT_SECONDS="$seconds" \
        SCALE_OUT_CONTROL="$phase_dir/control" SCALE_OUT_DONE="$phase_dir/done" \
        SCALE_OUT_REPLICAS="$(replica_list)" SCALE_OUT_BACKEND_LOG="$phase_dir/backend.log" \
        timeout -k 10 "$client_timeout" \
        cargo test -q "${TEST_BUILD[@]}" --test scale_out -- --ignored --exact --nocapture "$1" &
    client=$!
}

# The replicas as name=addr,... (SCALE_OUT_REPLICAS).
replica_list() {
    local name list=()
    for name in "${replica_names[@]}"; do list+=("$name=${replica_addr[$name]}"); done
    (IFS=,; echo "${list[*]}")
}

# Starts Redis on 127.0.0.1:$redis_port without persistence (a restart loses the tasks, as a
# store that failed over to an empty replica would); waits until it answers.
start_redis() {
    "$redis_run" --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no \
        >>"$phase_dir/redis.log" 2>&1 &
    redis_pid=$!
    wait_port "$redis_port" || die "Redis did not listen on $redis_port: $(tail -n 5 "$phase_dir/redis.log")"
}

stop_redis() {
    if [[ -n $redis_pid ]]; then
        kill "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
        redis_pid=
    fi
}

# Waits (10 s at most) until 127.0.0.1:$1 accepts connections.
wait_port() {
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    return 1
}

# The ports this script listens on (see Ports above) must be free: another server there (a
# demo left running) would answer in their place, or keep nginx from starting.
for taken in $(seq "$port" $((port + 3))) $(seq $((port + 10)) $((port + 13))); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$taken") 2>/dev/null; then
        die "127.0.0.1:$taken is taken, and this script listens there (SCALE_OUT_PORT=$port): stop what listens there, or set SCALE_OUT_PORT to another first port"
    fi
done

# Kills replica $1 with SIGKILL and writes the time (Unix milliseconds) to the kill file.
kill_replica() {
    kill -9 "${replica_pid[$1]}" || die "replica $1 was not running any more: $(tail -n 5 "$phase_dir/$1.log")"
    wait "${replica_pid[$1]}" 2>/dev/null || true
    date +%s%3N >"$phase_dir/killed"
    echo "killed replica $1 (${replica_addr[$1]})"
}

# Waits for the client; prints PASS or FAIL for phase $1; returns the client's status.
finish_client() {
    local status=0
    wait "$client" || status=$?
    client=
    if [[ $status -eq 124 || $status -eq 137 ]]; then echo "the client ran out of its ${client_timeout}s"; fi
    if [[ $status -eq 0 ]]; then echo "scale-out $1: PASS"; else echo "scale-out $1: FAIL"; fi
    return "$status"
}

phase_stateless() {
    phase_dir="$work/stateless"
    mkdir -p "$phase_dir"
    start_replicas stateless r1 r2 r3
    start_nginx 1
    start_client calls_through_the_load_balancer_survive_a_replica_kill
    sleep "$((seconds / 3))"
    kill_replica r2
    finish_client stateless
}

phase_sessions() {
    local victim
    phase_dir="$work/sessions"
    mkdir -p "$phase_dir"
    start_replicas sessions r1 r2 r3
    start_nginx 2
    start_client sessions_stay_on_their_replica_and_end_only_with_it
    # The client names the replica to kill once its sessions are open on every replica.
    for _ in $(seq 1 600); do
        [[ -s "$phase_dir/ready" ]] && break
        kill -0 "$client" 2>/dev/null || break
        sleep 0.2
    done
    if [[ ! -s "$phase_dir/ready" ]]; then
        echo "the client named no replica to kill"
        finish_client sessions || return
        return 1
    fi
    victim=$(tr -d '[:space:]' <"$phase_dir/ready")
    [[ -n ${replica_pid[$victim]:-} ]] || die "the client named $victim, not a replica"
    kill_replica "$victim"
    finish_client sessions
}

phase_tasks() {
    local backend_port=$((port + 11)) demo_grpc=$((port + 12)) demo_http=$((port + 13)) given=0 order
    redis_port=$((port + 10))
    phase_dir="$work/tasks"
    mkdir -p "$phase_dir"
    : >"$phase_dir/control"
    : >"$phase_dir/done"
    start_redis
    "$TARGET/debug/e2e-server" --backend-only "127.0.0.1:$backend_port" >"$phase_dir/backend.log" 2>&1 &
    extra_pids+=("$!")
    "$TARGET/debug/demo" --http "127.0.0.1:$demo_http" --grpc "127.0.0.1:$demo_grpc" \
        >"$phase_dir/demo.log" 2>&1 </dev/null &
    extra_pids+=("$!")
    wait_port "$backend_port" || die "e2e-server did not listen: $(tail -n 5 "$phase_dir/backend.log")"
    wait_port "$demo_grpc" || die "the demo did not listen: $(tail -n 5 "$phase_dir/demo.log")"
    head -c 32 /dev/urandom >"$phase_dir/task.key"
    cat >"$phase_dir/gateway.toml" <<EOF
[[backend]]
name = "inventory"
target = "http://127.0.0.1:$backend_port"
include = ["testdata.streaming.*"]

[[backend]]
name = "tracker"
target = "http://127.0.0.1:$demo_grpc"
EOF
    gateway_args=(--config "$phase_dir/gateway.toml" --metrics
        --task-store "redis://127.0.0.1:$redis_port/0" --task-key-file "$phase_dir/task.key")
    start_replicas gateway g1 g2 g3
    start_nginx 1
    start_client tasks_survive_a_replica_kill_and_a_store_restart
    # Carries out the client's orders as they come, until it ends.
    while kill -0 "$client" 2>/dev/null; do
        while IFS= read -r order; do
            case $order in
                redis-stop) stop_redis; echo "stopped Redis" ;;
                redis-start) start_redis; echo "started Redis again" ;;
                *)
                    [[ -n ${replica_pid[$order]:-} ]] || die "the client ordered '$order', not a replica"
                    kill_replica "$order"
                    ;;
            esac
            echo "$order" >>"$phase_dir/done"
            given=$((given + 1))
        done < <(tail -n +"$((given + 1))" "$phase_dir/control")
        sleep 0.1
    done
    finish_client tasks || return
    echo "the Python SDK's task client through nginx"
    scripts/install-tools.sh python >&2
    timeout -k 10 120 .tools/venv/bin/python tests/python/test_scale_out_tasks.py \
        "http://127.0.0.1:$port/mcp" || { echo "scale-out tasks (Python SDK): FAIL"; return 1; }
}

phases=("$@")
((${#phases[@]})) || phases=(stateless sessions tasks)
for phase in "${phases[@]}"; do
    case $phase in stateless | sessions | tasks) ;; *) die "unknown phase $phase (stateless, sessions, tasks)" ;; esac
done

nginx_bin=$(nginx_bin)
scripts/install-tools.sh redis >&2
redis_run="$ROOT/.tools/redis/run"
echo "building the demo, e2e-server, the gateway and the client"
# As the test build makes them (TEST_BUILD, scripts/lib.sh).
cargo test -q "${TEST_BUILD[@]}" --no-run

failed=()
for phase in "${phases[@]}"; do
    "phase_$phase" || failed+=("$phase")
    stop_phase
done
if ((${#failed[@]})); then
    echo "scale-out: FAIL (${failed[*]})"
    exit 1
fi
echo "scale-out: PASS (${phases[*]})"
