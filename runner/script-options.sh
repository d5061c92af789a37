#!/usr/bin/env bash
# Sourced by every script: --help, --version and --dry-run answered before anything is installed or prepared.
# A script with no Python command line of its own (test.sh, install-openloop.sh) calls
#   crossbench_script_options SCRIPT_PATH "$@"    -h/--help: the script's header comment; --version: the version
# A script whose command line is Python's calls
#   crossbench_answers_alone "$@" && crossbench_from_source CALLER MODULE "$@"
# which runs the module from the source tree (its modules load on the standard library alone) with no environment.

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

# crossbench_answers_alone ARG...: true when the arguments ask for -h/--help, --version or --dry-run (before a "--")
crossbench_answers_alone() {
  local arg
  for arg in "$@"; do
    case "$arg" in
      --) return 1 ;;
      -h | --help | --version | --dry-run) return 0 ;;
    esac
  done
  return 1
}

# crossbench_from_source CALLER MODULE ARG...: `python -m MODULE ARG...` from the source tree, on the project's
# environment's interpreter when it exists, else on python3 (3.11 or later) with the project's folders on its path:
# nothing is installed, made or written (no bytecode either). Returns the module's exit status. --version without
# --help is answered here.
crossbench_from_source() {
  local caller=$1 root python
  shift
  case " $* " in
    *" -h "* | *" --help "*) ;;
    *" --version "*) crossbench_version; return 0 ;;      # the line the Python commands print, without Python
  esac
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  python="${CROSSBENCH_VENV:-$root/.venv}/bin/python"
  if [[ ! -x "$python" ]]; then
    python=python3
    if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then
      echo "$caller: needs python3, 3.11 or later (on Debian: sudo apt-get install -y python3)" >&2
      return 2
    fi
  fi
  PYTHONPATH="$root/runner:$root/analysis:$root/python-contract${PYTHONPATH:+:$PYTHONPATH}" \
    PYTHONDONTWRITEBYTECODE=1 "$python" -m "$@"
}

# crossbench_python_command CALLER MODULE ARG...: a script that is its Python module's command line and needs
# nothing else prepared: --help, --version and --dry-run from the source tree, anything else after the project's
# environment is made current (python-env.sh). Does not return.
crossbench_python_command() {
  local caller=$1 module=$2
  shift 2
  if crossbench_answers_alone "$@"; then      # nothing prepared
    crossbench_from_source "$caller" "$module" "$@"
    exit
  fi
  # shellcheck source=runner/python-env.sh
  source "$(dirname "${BASH_SOURCE[0]}")/python-env.sh"
  exec "$PYTHON" -m "$module" "$@"
}
