#!/usr/bin/env bash
# Sourced by the bash scripts that have no Python command line of their own (test.sh, install-openloop.sh):
# -h/--help prints the script's header comment, --version the project's version; both exit 0.
# Usage: crossbench_script_options SCRIPT_PATH "$@"

# crossbench_version: "crossbench 0.1.0 (git 1a2b3c4d5e6f)", as the Python commands' --version says it
crossbench_version() {
  local root version rev
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/runner/pyproject.toml")"
  rev="$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
  rev="${rev:0:12}"
  if [[ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
    rev+="+uncommitted"
  fi
  echo "crossbench ${version:-unknown} (git $rev)"
}

crossbench_script_options() {
  local script=$1
  shift
  case "${1:-}" in
    -h | --help)
      # the comment block under the shebang, without its "# "
      sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$script"
      exit 0 ;;
    --version)
      crossbench_version
      exit 0 ;;
  esac
}
