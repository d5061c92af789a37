#!/usr/bin/env bash
# Builds the pinned open-loop load generators once, into the cache the runner reuses:
#   ${CROSSBENCH_TOOLS:-$HOME/.cache/crossbench/tools}/<tool>-<version>/bin/<tool>
# Usage: runner/install-openloop.sh [--dry-run] [oha] [k6] [vegeta]   (no tool named: all three)
#   --dry-run: says which are built and what building the others needs, and changes nothing
#   oha 1.16.0 from crates.io (needs cargo, Rust 1.88+, and OpenSSL's headers: libssl-dev, pkg-config; ~5 min on 2 cores)
#   k6  v1.8.1 from the Go module proxy (needs go; ~2 min)
#   vegeta v12.13.0 from the Go module proxy (needs go; ~1 min): the quick profile's held windows
# A tool whose binary is already there and reports the pinned version is not rebuilt. A build says every 30 s how
# many packages it has compiled; a second call while one is under way waits for it.
set -euo pipefail

OHA_VERSION=1.16.0
K6_VERSION=1.8.1
VEGETA_VERSION=12.13.0
TOOLS_DIR="${CROSSBENCH_TOOLS:-$HOME/.cache/crossbench/tools}"

say() { echo "install-openloop: $*" >&2; }

# reports_version BINARY VERSION: the binary runs and names exactly that version
reports_version() {
  local out
  [[ -x "$1" ]] || return 1
  case "$(basename "$1")" in
    oha) out="$("$1" --version 2>/dev/null)" || return 1 ;;    # "oha 1.16.0"
    k6) out="$("$1" version 2>/dev/null)" || return 1 ;;       # "k6 v1.8.1 (commit/..., go1.26.8, linux/amd64)"
    vegeta) out="$("$1" -version 2>/dev/null | head -n 1)" || return 1 ;;  # "Version: v12.13.0" (the build sets it)
  esac
  [[ " $out " == *" $2 "* || " $out " == *" v$2 "* ]]
}

# rustup and the Go tarball install outside the default PATH; a non-login shell (CI) may not have them
PATH="$PATH:$HOME/.cargo/bin:/usr/local/go/bin"

need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  say "$1 not found: $2"
  exit 2
}

# oha's native-tls links the system's OpenSSL: its headers, found through pkg-config (root installs them)
need_openssl_headers() {
  command -v pkg-config >/dev/null 2>&1 && pkg-config --exists openssl && return 0
  crossbench_apt_install install-openloop libssl-dev pkg-config
}

# logged LOG TOOL COMMAND...: runs the build with its output in LOG, saying every 30 s how far it got (the
# packages its log names as compiled); its last lines and exit 1 when it fails
logged() {
  local log="$1" tool="$2" pid started=$SECONDS waited
  shift 2
  "$@" >"$log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    for ((waited = 0; waited < 30; waited++)); do
      kill -0 "$pid" 2>/dev/null || break 2
      sleep 1
    done
    say "building $tool: $(grep -c -E '^ *Compiling |^[a-z0-9.-]+/' "$log" || true) packages compiled in $((SECONDS - started)) s"
  done
  if ! wait "$pid"; then
    tail -n 20 "$log" >&2
    say "building $tool failed"
    exit 1
  fi
}

build() {
  local tool="$1" version="$2" dir bin started
  dir="$TOOLS_DIR/$tool-$version"
  bin="$dir/bin/$tool"
  if reports_version "$bin" "$version"; then
    say "$tool $version already built: $bin"
    return 0
  fi
  case "$tool" in
    oha) need cargo "install Rust 1.88+ (https://rustup.rs: curl -sSf https://sh.rustup.rs | sh -s -- -y), then re-run"
         need_openssl_headers ;;
    k6 | vegeta) need go "install Go 1.24+ (https://go.dev/dl/, or apt-get install golang-go where it is recent enough), then re-run" ;;
  esac
  mkdir -p "$dir/bin"
  started=$SECONDS
  say "building $tool $version into $dir (log: $dir/build.log)"
  case "$tool" in
    oha)
      # --locked: without it a newer dependency wants a newer rustc than 1.88. native-tls (the system's OpenSSL)
      # in place of the default rustls, whose aws-lc-sys is a C build of its own that this one skips: the suite
      # sends plain HTTP. oha 1.16.0 does not compile with no TLS feature at all.
      logged "$dir/build.log" oha cargo install oha --version "$OHA_VERSION" --locked --no-default-features \
        --features native-tls --root "$dir" ;;
    k6)
      logged "$dir/build.log" k6 env GOBIN="$dir/bin" go install -v "go.k6.io/k6@v$K6_VERSION" ;;
    vegeta)
      # vegeta's releases set main.Version when they link; go install leaves it empty, so the build sets it
      logged "$dir/build.log" vegeta env GOBIN="$dir/bin" go install -v -ldflags "-X main.Version=v$VEGETA_VERSION" \
        "github.com/tsenart/vegeta/v12@v$VEGETA_VERSION" ;;
  esac
  if ! reports_version "$bin" "$version"; then
    say "$bin was built but does not report version $version"
    exit 1
  fi
  say "built $tool $version in $((SECONDS - started)) s: $bin"
}

# plan_build TOOL VERSION: what build would do, said and not done (--dry-run)
plan_build() {
  local tool="$1" version="$2" bin lacking=()
  bin="$TOOLS_DIR/$tool-$version/bin/$tool"
  if reports_version "$bin" "$version"; then
    say "$tool $version: built ($bin)"
    return 0
  fi
  case "$tool" in
    oha) command -v cargo >/dev/null 2>&1 || lacking+=("cargo (Rust 1.88+: https://rustup.rs)")
         { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists openssl; } ||
           lacking+=("OpenSSL's headers (sudo apt-get install -y libssl-dev pkg-config)") ;;
    k6 | vegeta) command -v go >/dev/null 2>&1 || lacking+=("go 1.24+ (https://go.dev/dl/)") ;;
  esac
  if ((${#lacking[@]})); then
    say "$tool $version: not built; building it needs $(printf '%s; ' "${lacking[@]}" | sed 's/; $//')"
  else
    say "$tool $version: not built; ./runner/install-openloop.sh $tool builds it into $TOOLS_DIR"
  fi
}

main() {
  local tool dry=false
  if [[ "${1:-}" == --dry-run ]]; then
    dry=true
    shift
  fi
  (($#)) || set -- oha k6 vegeta
  if $dry; then
    for tool in "$@"; do
      case "$tool" in
        oha) plan_build oha "$OHA_VERSION" ;;
        k6) plan_build k6 "$K6_VERSION" ;;
        vegeta) plan_build vegeta "$VEGETA_VERSION" ;;
        *) say "unknown tool $tool (known: oha, k6, vegeta)"; exit 2 ;;
      esac
    done
    return 0
  fi
  mkdir -p "$TOOLS_DIR"
  exec 9>"$TOOLS_DIR/.install.lock"    # two runners starting at once build each tool only once
  if ! flock -n 9; then
    say "a build is under way (run_all.sh starts it at once): waiting for it"
    flock 9
  fi
  for tool in "$@"; do
    case "$tool" in
      oha) build oha "$OHA_VERSION" ;;
      k6) build k6 "$K6_VERSION" ;;
      vegeta) build vegeta "$VEGETA_VERSION" ;;
      *) say "unknown tool $tool (known: oha, k6, vegeta)"; exit 2 ;;
    esac
  done
}

# shellcheck source=runner/prerequisites.sh
source "$(dirname "${BASH_SOURCE[0]}")/prerequisites.sh"
# shellcheck source=runner/script-options.sh
source "$(dirname "${BASH_SOURCE[0]}")/script-options.sh"
crossbench_script_options "$0" "$@"
main "$@"
