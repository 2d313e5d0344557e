#!/usr/bin/env bash
# The plugin workflows, run for real, and their output compiled beside prost and tonic:
#
#   buf     `buf generate` (npm @bufbuild/buf) with the repository's buf.gen.yaml: prost,
#           tonic and our plugin as `local:` plugins, flat output, our module included from
#           the prost file at its `module` insertion point (include_in_prost). Then
#           `buf build -o` feeds grpc-mcp-gateway --descriptor-set (gateway/tests/gateway.rs).
#   protoc  `protoc --prost_out --tonic_out --rust-mcp_out` (protoc from protoc-bin-vendored),
#           protoc-gen-prost's default nested layout, include_in_prost again, over testdata/
#           and the package-naming protos of protoc-gen-rust-mcp/tests/naming/ (keywords,
#           capitals, two packages in one module, `crate`/`gen`, digits, no package).
#   readme  the manual's protoc example, extracted from docs/generating-code.md and run as
#           written from a directory laid out like the repository root, with the plugins on
#           PATH; its output is compiled with the dependencies the Install section of
#           docs/getting-started.md lists. Then the manual's "Add to an existing build.rs"
#           (its toml and build.rs) is built as written in a crate laid out like examples/demo,
#           without protoc on PATH.
#   outside-buf  the manual's "`rust_mcp/options.proto` in a buf workspace", as written, in a buf
#           workspace of its own outside the repository's (target/workflows/outside-buf/): its
#           buf.yaml, the manual's buf.gen.yaml, a proto (tests/workflows/outside-buf/) that
#           imports rust_mcp/options.proto and a well-known type, the section's commands (a link
#           to the clone's proto/rust_mcp, `buf generate --path`), then plain `buf generate`
#           with the section's `inputs`. Neither may write code for the options proto; the
#           output is compiled and loaded.
#   compose a crate whose build.rs keeps its own customised tonic-prost-build configuration
#           (type_attribute, bytes, btree_map, extern_path to a separately compiled package, a
#           custom out dir), emits a descriptor set and adds the MCP modules with
#           `DescriptorSetBuilder`; built twice, so a re-run of the build script is checked.
#           The crate is tests/workflows/compose/, copied to target/workflows/compose/.
#
# Each output is compiled as a scratch crate under target/workflows/<name>/ (its own
# [workspace], depending on prost, prost-types, tonic, tonic-prost and the runtime crate by
# path; the manifest is tests/workflows/scratch/Cargo.toml) whose lib.rs nests the prost files
# by package. Its test builds every tool set with `from_channel` and compares the tool names
# with the plugin's tools JSON. The workspace's target directory is reused, and the crates
# are built as `scratch_cargo` (scripts/lib.sh) says.
#
# Usage: scripts/workflows.sh [buf|protoc|readme|outside-buf|compose]...   (default: all five)
# Needs: cargo, npm. Installs buf, protoc-gen-prost and protoc-gen-tonic into .tools/ with
# scripts/install-tools.sh. Exits non-zero on the first failure.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export CARGO_TARGET_DIR="$TARGET"
WORK="$TARGET/workflows"
TOOLS="$ROOT/.tools"
PLUGIN="$TARGET/debug/protoc-gen-rust-mcp"
NAMING="$ROOT/protoc-gen-rust-mcp/tests/naming"

TIMINGS=()
# Runs a step and records how long it took.
step() {
  local name=$1 start=$SECONDS
  shift
  log "== $name"
  "$@"
  TIMINGS+=("$(printf '%-44s %4ss' "$name" "$((SECONDS - start))")")
}

print_timings() {
  log "timings:"
  local line
  for line in "${TIMINGS[@]}"; do log "  $line"; done
}

RUST_KEYWORDS=" as async await break const continue crate dyn else enum extern false fn for gen if
  impl in let loop match mod move mut pub ref return self static struct super trait true type
  unsafe use where while abstract become box do final macro override priv typeof unsized virtual
  yield try "

# A package segment as a Rust module name, the way prost-build escapes keywords.
module_name() {
  case $RUST_KEYWORDS in
    *" $1 "* | *" $1
"*) if [[ $1 == self || $1 == super || $1 == crate ]]; then printf '%s_' "$1"; else printf 'r#%s' "$1"; fi ;;
    *) printf '%s' "$1" ;;
  esac
}

# Writes src/lib.rs of a scratch crate: every prost file under gen/ (`<package>.rs`, or `_`
# for protos without a package) included inside modules that mirror its package. The tonic
# and MCP files are not listed: the prost files include them at their insertion point.
write_lib_rs() {
  local crate=$1 label=$2
  local -a files=() open=() segments=()
  local file package depth common i
  # The module path of each prost file: its directory in protoc-gen-prost's nested layout (one
  # directory per Rust module, `edge/r#type/foo_bar/`), else its package (flat layout).
  mapfile -t files < <(cd "$crate/gen" && find . -type f \( -name '*.rs' -o -name '_' \) \
    ! -name '*.tonic.rs' ! -name '*.pb.mcp.rs' | sed 's#^\./##' |
    awk -F/ '{ if (NF > 1) { key = $0; sub(/\/[^\/]*$/, "", key); gsub(/\//, ".", key) }
               else { key = $NF; sub(/\.rs$/, "", key) }
               print key "\t" $0 }' | LC_ALL=C sort)
  [[ ${#files[@]} -gt 0 ]] || die "no prost files under $crate/gen"
  {
    echo "// @generated by scripts/workflows.sh: the $label output, nested by proto package."
    echo "#![allow(clippy::all, dead_code, missing_docs, non_camel_case_types, unused)]"
    for file in "${files[@]}"; do
      package=${file%%$'\t'*}
      file=${file#*$'\t'}
      if [[ $package == _ ]]; then
        segments=()
      else
        IFS=. read -ra segments <<<"$package"
      fi
      # Close the modules that are not a prefix of this package, open the missing ones.
      common=0
      while [[ $common -lt ${#open[@]} && $common -lt ${#segments[@]} && ${open[$common]} == "${segments[$common]}" ]]; do
        common=$((common + 1))
      done
      for ((i = ${#open[@]} - 1; i >= common; i--)); do
        printf '%*s}\n' $((i * 4)) ''
      done
      open=("${open[@]:0:common}")
      for ((i = common; i < ${#segments[@]}; i++)); do
        printf '%*spub mod %s {\n' $((i * 4)) '' "$(module_name "${segments[$i]}")"
        open+=("${segments[$i]}")
      done
      depth=${#open[@]}
      printf '%*sinclude!(concat!(env!("CARGO_MANIFEST_DIR"), "/gen/%s"));\n' $((depth * 4)) '' "$file"
    done
    for ((i = ${#open[@]} - 1; i >= 0; i--)); do
      printf '%*s}\n' $((i * 4)) ''
    done
  } >"$crate/src/lib.rs"
}

# The crates (and the manifest of the scratch crates) that the workflows build, as files.
FIXTURES="$ROOT/tests/workflows"

# Copies the fixture file $1 to $2 with @REPO@ replaced by the repository's path and @NAME@ by
# $3 (if given).
fill() {
  local text
  text="$(<"$1")"
  text="${text//@REPO@/$ROOT}"
  [[ -z ${3:-} ]] || text="${text//@NAME@/$3}"
  printf '%s\n' "$text" >"$2"
}

# Creates the scratch crate `$1` under target/workflows, with `gen/` for the generated code and
# the manifest of tests/workflows/scratch/.
new_crate() {
  local name=$1 crate="$WORK/$1"
  rm -rf "$crate"
  mkdir -p "$crate/src" "$crate/gen"
  fill "$FIXTURES/scratch/Cargo.toml" "$crate/Cargo.toml" "$name"
  # The workspace's lock file pins the same versions the workspace was built with.
  cp "$ROOT/Cargo.lock" "$crate/Cargo.lock"
}

# Writes tests/load.rs: every generated tool set is built with `from_channel` (descriptors
# resolve, schemas parse and pass the meta-schema check), and the tools are exactly those of the
# tools JSON.
write_load_test() {
  local crate=$1 name=$2
  local module package rust_path file rel mods clients i
  local -a names=() segments=()
  mkdir -p "$crate/tests"
  mapfile -t names < <(find "$crate/gen" -name '*.mcp.json' -exec sed -n 's/^      "name": "\(.*\)",$/\1/p' {} + | LC_ALL=C sort)
  [[ ${#names[@]} -gt 0 ]] || die "$name: no tools in the tools JSON files"
  {
    echo "// @generated by scripts/workflows.sh: every tool set loads and matches the tools JSON."
    echo "use tonic::transport::Channel;"
    echo
    echo "fn channel() -> Channel {"
    echo "    // Never connected: building a tool set makes no call."
    echo "    Channel::from_static(\"http://127.0.0.1:9\").connect_lazy()"
    echo "}"
    echo
    echo "#[tokio::test(flavor = \"current_thread\")]"
    echo "async fn every_tool_set_loads() {"
    echo "    let mut names: Vec<String> = Vec::new();"
    while IFS= read -r file; do
      package=$(basename "$file" .pb.mcp.rs)
      rust_path="workflow_$name"
      rel=${file#"$crate/gen/"}
      if [[ $rel == */* ]]; then
        # Nested layout: the directories are the Rust module path.
        IFS=/ read -ra segments <<<"${rel%/*}"
        for module in "${segments[@]}"; do rust_path+="::$module"; done
      elif [[ $package != _ ]]; then
        IFS=. read -ra segments <<<"$package"
        for module in "${segments[@]}"; do rust_path+="::$(module_name "$module")"; done
      fi
      mapfile -t mods < <(grep -oE 'pub mod [A-Za-z0-9_#]+_mcp\b' "$file" | sed 's/^pub mod //')
      [[ ${#mods[@]} -gt 0 ]] || die "$name: no tool modules in $file"
      for ((i = 0; i < ${#mods[@]}; i++)); do
        echo "    let set = $rust_path::${mods[$i]}::from_channel(channel())"
        echo "        .expect(\"$package ${mods[$i]}\");"
        echo "    assert_eq!(set.len(), $rust_path::${mods[$i]}::TOOLS.len());"
        echo "    names.extend(set.names().map(str::to_owned));"
      done
    done < <(find "$crate/gen" -name '*.pb.mcp.rs' | LC_ALL=C sort)
    echo "    names.sort();"
    printf '    let expected: &[&str] = &[\n'
    printf '        "%s",\n' "${names[@]}"
    printf '    ];\n'
    echo "    assert_eq!(names, expected);"
    echo "}"
  } >"$crate/tests/load.rs"
}

build_crate() {
  local crate="$WORK/$1" modules
  scratch_cargo test --quiet --manifest-path "$crate/Cargo.toml" --test load
  modules=$(find "$crate/gen" -type f -name '*.pb.mcp.rs' | wc -l)
  if [[ $modules -gt 0 ]]; then
    log "$1: $modules MCP modules compiled beside prost and tonic, and loaded"
  else
    log "$1: compiled and loaded (its code is generated by its build script)"
  fi
}

# Checks that every MCP module is included exactly once, from a prost file in its directory
# (packages that share a Rust module share protoc-gen-prost's file).
check_included() {
  local gen="$WORK/$1/gen" module line count missing=0
  while IFS= read -r module; do
    line="include!(\"$(basename "$module")\");"
    count=$(find "$(dirname "$module")" -maxdepth 1 -type f \( -name '*.rs' -o -name '_' \) \
      ! -name '*.tonic.rs' ! -name '*.pb.mcp.rs' -exec cat {} + | grep -cF "$line" || true)
    if [[ $count != 1 ]]; then
      log "$1: $module is included $count times by the prost files of its directory"
      missing=1
    fi
  done < <(find "$gen" -type f -name '*.pb.mcp.rs')
  [[ $missing == 0 ]] || die "$1: include_in_prost did not insert every module exactly once"
}

build_plugin() {
  cargo build --quiet -p protoc-gen-rust-mcp
  [[ -x $PLUGIN ]] || die "cargo did not produce $PLUGIN"
}

run_buf() {
  local template="$ROOT/buf.gen.yaml" crate="$WORK/buf"
  new_crate buf
  if [[ $PLUGIN != "$ROOT/target/debug/protoc-gen-rust-mcp" ]]; then
    # buf.gen.yaml names the plugin under ./target; follow CARGO_TARGET_DIR instead.
    template="$WORK/buf.gen.yaml"
    sed "s#local: target/debug/protoc-gen-rust-mcp#local: $PLUGIN#" "$ROOT/buf.gen.yaml" >"$template"
  fi
  local out
  out="$(sed -n 's/^ *out: *//p' "$template" | sort -u)"
  [[ $(wc -l <<<"$out") == 1 ]] || die "buf.gen.yaml: expected one output directory, got: $out"
  step "buf generate" "$TOOLS/buf/node_modules/.bin/buf" generate --template "$template"
  cp -R "$ROOT/$out/." "$crate/gen/"
  check_included buf
  # As the test build builds the gateway's tests (TEST_BUILD, scripts/lib.sh).
  step "grpc-mcp-gateway --descriptor-set (buf build -o)" \
    env GATEWAY_BUF="$TOOLS/buf/node_modules/.bin/buf" \
    cargo test --quiet "${TEST_BUILD[@]}" --test gateway -- --ignored buf_descriptor_set
  write_lib_rs "$crate" "buf generate"
  write_load_test "$crate" buf
  step "compile and load the buf output" build_crate buf
}

# The vendored protoc and its include directory, printed by a throwaway crate, so the lookup
# is protoc-bin-vendored's own (PROTOC overrides the binary, as for prost-build).
find_protoc() {
  local helper="$WORK/protoc-path"
  mkdir -p "$helper/src"
  cp "$FIXTURES/protoc-path/Cargo.toml" "$helper/Cargo.toml"
  cp "$FIXTURES/protoc-path/src/main.rs" "$helper/src/main.rs"
  [[ -f $helper/Cargo.lock ]] || cp "$ROOT/Cargo.lock" "$helper/Cargo.lock"
  local paths
  paths="$(scratch_cargo run --quiet --manifest-path "$helper/Cargo.toml")"
  PROTOC_BIN="${PROTOC:-$(sed -n 1p <<<"$paths")}"
  PROTOC_INCLUDE="$(sed -n 2p <<<"$paths")"
  [[ -x $PROTOC_BIN ]] || die "no protoc at $PROTOC_BIN"
  log "protoc: $("$PROTOC_BIN" --version)"
}

run_protoc() {
  local crate="$WORK/protoc"
  local -a files=()
  new_crate protoc
  step "find the vendored protoc" find_protoc
  # The same inputs as buf.yaml: testdata/ without the error cases and the third-party protos,
  # and our options proto.
  mapfile -t files < <(cd testdata && find . -name '*.proto' ! -path './errors/*' ! -path './third_party/*' | sed 's#^\./##' | LC_ALL=C sort)
  files+=(rust_mcp/options.proto)
  # Packages whose Rust module path differs from their name.
  mapfile -t -O "${#files[@]}" files < <(cd "$NAMING" && find . -name '*.proto' | sed 's#^\./##' | LC_ALL=C sort)
  # Plugin order matters: insertion points are filled in files written earlier in the run.
  step "protoc --prost_out --tonic_out --rust-mcp_out" \
    "$PROTOC_BIN" -I testdata -I proto -I "$NAMING" -I "$PROTOC_INCLUDE" \
    --plugin=protoc-gen-prost="$TOOLS/cargo/bin/protoc-gen-prost" \
    --prost_out="$crate/gen" --prost_opt=compile_well_known_types=false \
    --plugin=protoc-gen-tonic="$TOOLS/cargo/bin/protoc-gen-tonic" \
    --tonic_out="$crate/gen" --tonic_opt=compile_well_known_types=false \
    --plugin=protoc-gen-rust-mcp="$PLUGIN" \
    --rust-mcp_out="$crate/gen" --rust-mcp_opt=include_in_prost,tools_json \
    "${files[@]}"
  check_included protoc
  write_lib_rs "$crate" "protoc"
  write_load_test "$crate" protoc
  step "compile and load the protoc output" build_crate protoc
}

# Prints the first ```sh block after the heading `$1` in docs/generating-code.md.
readme_block() {
  awk -v heading="$1" '
    $0 == heading { found = 1; next }
    found && /^#/ { exit }
    found && /^```sh$/ { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }
  ' "$ROOT/docs/generating-code.md"
}

# Prints the `[dependencies]` block of the Install section of docs/getting-started.md.
readme_dependencies() {
  awk '
    $0 == "## Install" { found = 1; next }
    found && /^## / { exit }
    found && /^```toml$/ { inside = 1; next }
    inside && /^```$/ { if (deps) exit; inside = 0; next }
    inside && $0 == "[dependencies]" { deps = 1 }
    inside && deps { print }
  ' "$ROOT/docs/getting-started.md"
}

run_readme() {
  local crate="$WORK/readme" block entry deps
  new_crate readme
  # The crate depends on exactly what the manual's Install section lists; only the runtime, not
  # published from here, comes from the repository.
  deps="$(readme_dependencies)"
  [[ $deps == *'tonic-mcp = { path = "path/to/clone/runtime" }'* ]] \
    || die "the manual's Install section has no [dependencies] block with tonic-mcp"
  deps="${deps//path\/to\/clone/$ROOT}"
  cat >"$crate/Cargo.toml" <<TOML
# @generated by scripts/workflows.sh: the dependencies the manual's Install section lists.
[package]
name = "workflow-readme"
version = "0.0.0"
edition = "2024"
publish = false

$deps

[dev-dependencies]
tokio = { version = "1", default-features = false, features = ["rt", "macros"] }

# Not part of the repository's workspace.
[workspace]
TOML
  [[ -n ${PROTOC_BIN:-} ]] || step "find the vendored protoc" find_protoc
  block="$(readme_block '## protoc')"
  [[ -n $block ]] || die "docs/generating-code.md has no sh block under '## protoc'"
  log "the manual's protoc example:"$'\n'"$block"
  # Run from a directory laid out like the repository root (the paths the manual names), with
  # protoc, the prost/tonic plugins and ours on PATH, as the manual says.
  rm -rf "$crate/gen"
  for entry in examples testdata proto; do ln -s "$ROOT/$entry" "$crate/$entry"; done
  (
    cd "$crate"
    PATH="$(dirname "$PROTOC_BIN"):$TOOLS/cargo/bin:$(dirname "$PLUGIN"):$PATH"
    export PATH
    bash -euo pipefail -c "$block"
  ) || die "the manual's protoc example failed"
  [[ -n $(find "$crate/gen" -name '*.pb.mcp.rs') ]] || die "the manual's protoc example wrote no MCP module"
  check_included readme
  write_lib_rs "$crate" "manual protoc example"
  write_load_test "$crate" readme
  step "compile and load the manual example's output" build_crate readme
  step "build the manual's 'Add to an existing build.rs' as written" run_readme_build_rs
}

# Prints the first block in language $2 under the heading $1 of docs/generating-code.md.
readme_code() {
  awk -v heading="$1" -v fence="\`\`\`$2" '
    $0 == heading { found = 1; next }
    found && /^#/ { exit }
    found && $0 == fence { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }
  ' "$ROOT/docs/generating-code.md"
}

# The manual's "Add to an existing build.rs", as written: its [build-dependencies] (paths into
# this clone) and its build.rs, in a crate laid out as examples/demo is (the paths the snippet
# names), built on a PATH without protoc. The build script must write prost's file for
# demo.v1 with the MCP module included.
run_readme_build_rs() {
  local heading='## Add to an existing build.rs' crate="$WORK/readme-build/crates/demo" deps code
  deps="$(readme_code "$heading" toml)"
  code="$(readme_code "$heading" rust,ignore)"
  [[ $deps == *'[build-dependencies]'* && $code == *DescriptorSetBuilder* ]] \
    || die "docs/generating-code.md has no toml and rust blocks under '$heading'"
  rm -rf "$WORK/readme-build"
  mkdir -p "$crate/src"
  ln -s "$ROOT/testdata" "$WORK/readme-build/testdata"
  ln -s "$ROOT/examples/demo/proto" "$crate/proto"
  cat >"$crate/Cargo.toml" <<TOML
# @generated by scripts/workflows.sh: the manual's "Add to an existing build.rs".
[package]
name = "workflow-readme-build-rs"
version = "0.0.0"
edition = "2024"
publish = false

${deps//path\/to\/clone/$ROOT}

# Not part of the repository's workspace.
[workspace]
TOML
  printf '%s\n' "$code" >"$crate/build.rs"
  : >"$crate/src/lib.rs"
  cp "$ROOT/Cargo.lock" "$crate/Cargo.lock"
  # No protoc on PATH or in PROTOC: the snippet brings its own.
  (cd "$crate" && unset PROTOC && PATH="$(dirname "$(command -v cargo)"):/usr/bin:/bin" \
    scratch_cargo build --quiet) || die "the manual's build.rs snippet failed to build"
  local out
  out="$(find "$TARGET/debug/build" -path '*workflow-readme-build-rs-*/out/demo.v1.rs' -newer "$crate/build.rs" | head -n 1)"
  [[ -n $out ]] || die "the manual's build.rs snippet wrote no demo.v1.rs"
  grep -q 'include!("demo.v1.pb.mcp.rs");' "$out" || die "the manual's build.rs snippet did not include the MCP module in $out"
  [[ -f $(dirname "$out")/demo.v1.pb.mcp.rs ]] || die "the manual's build.rs snippet wrote no MCP module"
  log "the manual's build.rs snippet built without protoc on PATH; $(basename "$out") includes its MCP module"
}

# Prints block number $3 (from 1) in language $2 under the heading $1 of
# docs/generating-code.md.
readme_code_n() {
  awk -v heading="$1" -v fence="\`\`\`$2" -v want="$3" '
    $0 == heading { found = 1; next }
    !found { next }
    /^```/ && !block { block = 1; if ($0 == fence) n++; mine = $0 == fence && n == want; next }
    /^```$/ && block { if (mine) exit; block = 0; next }
    /^#/ && !block { exit }
    mine { print }
  ' "$ROOT/docs/generating-code.md"
}

# The manual's buf workspace with rust_mcp/options.proto, as written, outside the repository's
# buf workspace (its buf.yaml names testdata/ and proto/ of the repository root; this one is a
# workspace of its own, which `buf ls-files` proves).
run_outside_buf() {
  local heading='## `rust_mcp/options.proto` in a buf workspace' dir="$WORK/outside-buf"
  local buf="$TOOLS/buf/node_modules/.bin/buf" buf_yaml commands inputs template files first
  buf_yaml="$(readme_code_n "$heading" yaml 1)"
  inputs="$(readme_code_n "$heading" yaml 2)"
  commands="$(readme_code_n "$heading" sh 1)"
  template="$(readme_code_n '## buf' yaml 1)"
  [[ $buf_yaml == '# buf.yaml'* && $inputs == *exclude_paths* && $commands == *'buf generate'* \
    && $template == '# buf.gen.yaml'* ]] \
    || die "docs/generating-code.md: no buf.yaml, commands and inputs under '$heading', or no buf.gen.yaml under '## buf'"
  rm -rf "$dir"
  mkdir -p "$dir/proto/shop/v1"
  printf '%s\n' "$buf_yaml" >"$dir/buf.yaml"
  printf '%s\n' "$template" >"$dir/buf.gen.yaml"
  cp "$FIXTURES/outside-buf/shop.proto" "$dir/proto/shop/v1/shop.proto"
  log "the manual's commands, in $dir:"$'\n'"$commands"
  # buf and the three plugins on PATH, as the manual's buf.gen.yaml names them.
  outside_buf() {
    (
      cd "$dir"
      PATH="$(dirname "$buf"):$TOOLS/cargo/bin:$(dirname "$PLUGIN"):$PATH"
      export PATH
      bash -euo pipefail -c "$1"
    )
  }
  step "buf generate --path, outside the repository" \
    outside_buf "${commands//path\/to\/clone/$ROOT}" || die "the manual's buf commands failed"
  files="$(cd "$dir" && "$buf" ls-files | LC_ALL=C sort)"
  [[ $files == $'proto/rust_mcp/options.proto\nproto/shop/v1/shop.proto' ]] \
    || die "outside-buf: buf's workspace is not the one of $dir; its files: $files"
  check_outside_buf_output "$dir/gen"
  first="$(cd "$dir/gen" && find . -type f | LC_ALL=C sort)"
  # Plain `buf generate`, with the section's inputs added to the template.
  rm -rf "$dir/gen"
  printf '%s\n' "$inputs" >>"$dir/buf.gen.yaml"
  step "buf generate with the manual's inputs" outside_buf "buf generate" \
    || die "buf generate with the manual's inputs failed"
  check_outside_buf_output "$dir/gen"
  [[ $(cd "$dir/gen" && find . -type f | LC_ALL=C sort) == "$first" ]] \
    || die "outside-buf: buf generate with the inputs wrote other files than with --path"
  # The scratch crate, inside the workspace's directory (the workflow's name is `outside`).
  local crate="$dir/crate"
  mkdir -p "$crate/src"
  fill "$FIXTURES/scratch/Cargo.toml" "$crate/Cargo.toml" outside
  cp "$ROOT/Cargo.lock" "$crate/Cargo.lock"
  cp -R "$dir/gen" "$crate/gen"
  write_lib_rs "$crate" "outside-buf"
  write_load_test "$crate" outside
  step "compile and load the outside-buf output" build_crate outside-buf/crate
}

# The output of the manual's buf workspace: the MCP module of shop.v1, and no file at all for
# the options proto (protoc-gen-prost would write rust_mcp.rs).
check_outside_buf_output() {
  local gen=$1 stray
  [[ -f $gen/shop/v1/shop.v1.pb.mcp.rs ]] || die "outside-buf: no shop/v1/shop.v1.pb.mcp.rs under $gen"
  grep -qF 'include!("shop.v1.pb.mcp.rs");' "$gen/shop/v1/shop.v1.rs" \
    || die "outside-buf: shop.v1.rs does not include its MCP module"
  stray="$(find "$gen" -path '*rust_mcp*')"
  [[ -z $stray ]] || die "outside-buf: buf generated code for the options proto: $stray"
  log "outside-buf: $(find "$gen" -type f | wc -l) files, none for rust_mcp/options.proto"
}

# A crate with its own tonic-prost-build configuration; DescriptorSetBuilder adds the MCP
# modules from the descriptor set that configuration writes: tests/workflows/compose/, copied.
write_compose_crate() {
  local crate="$WORK/compose" file
  rm -rf "$crate"
  mkdir -p "$crate/src" "$crate/tests" "$crate/gen"
  for file in Cargo.toml build.rs src/lib.rs tests/load.rs; do
    fill "$FIXTURES/compose/$file" "$crate/$file"
  done
  # The workspace's lock file pins the same versions the workspace was built with.
  cp "$ROOT/Cargo.lock" "$crate/Cargo.lock"
}

# Every MCP module is included exactly once from prost-build's file of its package.
check_compose_included() {
  local custom module count
  custom="$(ls -td "$TARGET"/debug/build/workflow-compose-*/out/custom 2>/dev/null | head -1)"
  [[ -n $custom ]] || die "compose: no out/custom directory of the build script"
  for module in "$custom"/*.pb.mcp.rs; do
    count=$(cat "$custom"/*.rs | grep -cF "include!(\"$(basename "$module")\");" || true)
    [[ $count == 1 ]] || die "compose: $(basename "$module") is included $count times"
  done
  log "compose: $(find "$custom" -name '*.pb.mcp.rs' | wc -l) MCP modules, each included once"
}

# The descriptor set the compose build script wrote last, or nothing.
compose_descriptors() {
  ls -t "$TARGET"/debug/build/workflow-compose-*/out/descriptors.bin 2>/dev/null | head -1
}

run_compose() {
  local first
  write_compose_crate
  COMPOSE_RUN=1 step "compile and load the composed build" build_crate compose
  first="$(compose_descriptors)"
  [[ -n $first ]] || die "compose: the build script wrote no descriptor set"
  # The build script runs again (as after any proto change), over the files of its first run:
  # the result must still compile. The descriptor set is removed so its return proves the run.
  rm "$first"
  COMPOSE_RUN=2 step "re-run the build script, compile and load again" build_crate compose
  [[ -f $first ]] || die "compose: the build script did not run again"
  check_compose_included
}

main() {
  local -a parts=("$@")
  local part total=$SECONDS
  [[ ${#parts[@]} -gt 0 ]] || parts=(buf protoc readme outside-buf compose)
  for part in "${parts[@]}"; do
    case $part in
      buf | protoc | readme | outside-buf | compose) ;;
      -h | --help) sed -n '2,40p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; return ;;
      *) die "unknown workflow '$part' (valid: buf, protoc, readme, outside-buf, compose)" ;;
    esac
  done
  trap print_timings EXIT
  local need=(prost-plugins)
  [[ " ${parts[*]} " == *" buf "* || " ${parts[*]} " == *" outside-buf "* ]] && need+=(buf)
  step "install tools (${need[*]})" "$ROOT/scripts/install-tools.sh" "${need[@]}"
  step "build protoc-gen-rust-mcp" build_plugin
  mkdir -p "$WORK"
  for part in "${parts[@]}"; do
    case $part in
      buf) run_buf ;;
      protoc) run_protoc ;;
      readme) run_readme ;;
      outside-buf) run_outside_buf ;;
      compose) run_compose ;;
    esac
  done
  TIMINGS+=("$(printf '%-44s %4ss' total "$((SECONDS - total))")")
  log "all workflows passed"
}

main "$@"
