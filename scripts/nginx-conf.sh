# shellcheck shell=bash
# The manual's nginx blocks (docs/scaling-out.md: the first for stateless replicas, the second
# for session mode) inside a complete nginx configuration, for the scripts that run them:
# scripts/readme.sh checks each block as written with `nginx -t`, and scripts/scale-out.sh
# serves them, with their addresses replaced, in front of real replicas.
# Sourced; needs ROOT (the repository root).

# Prints the N-th (from 1; default 1) ```nginx block of docs/scaling-out.md; fails when there is
# none.
readme_nginx_block() {
  local n=${1:-1}
  awk -v n="$n" '
    /^```nginx$/ { seen++; inside = (seen == n); next }
    inside && /^```$/ { found = 1; exit }
    inside { print }
    END { exit !found }' "$ROOT/docs/scaling-out.md"
}

# Prints the path of nginx: the one scripts/install-tools.sh nginx unpacks into .tools/ (from
# Debian's archive, no root needed).
nginx_bin() {
  "$ROOT/scripts/install-tools.sh" nginx >&2 || return
  printf '%s\n' "$ROOT/.tools/nginx/usr/sbin/nginx"
}

# Prints a configuration whose http {} block includes the file $2 (the block) after the lines
# $3..., with its pid file, log and temporary files under the directory $1, which it makes
# (nginx's compiled-in paths are under /var and /run, which need root).
nginx_conf() {
  local dir=$1 site=$2 line
  shift 2
  mkdir -p "$dir/tmp"
  cat <<EOF
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
EOF
  for line in "$@"; do printf '    %s\n' "$line"; done
  printf '    include %s;\n}\n' "$site"
}
