#!/usr/bin/env bash
# The suite's main job: ./runner/run_all.sh [--quick | --experiment NAME] [overrides...]  (--help lists them)
# Checks the tools (installing missing Debian packages when root), prepares the Python environment,
# lifts the open-file limit, then hands over to the runner (crossbench.run), which plans, measures and
# draws the charts into results/<run-id>/.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# command -> Debian package that provides it
declare -A package_of=(
  [wrk]=wrk [ab]=apache2-utils [gnuplot]=gnuplot-nox [taskset]=util-linux [java]=openjdk-17-jdk-headless
  [python3]=python3 [ss]=iproute2
)

missing_packages() {
  local tool
  for tool in "${!package_of[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || echo "${package_of[$tool]}"
  done
  python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || echo python3-venv
  [[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]] || echo fonts-dejavu-core
}

install_missing() {
  local -a missing
  mapfile -t missing < <(missing_packages | sort -u)
  ((${#missing[@]})) || return 0
  if [[ $EUID -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "run_all: installing ${missing[*]}" >&2
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
  else
    echo "run_all: missing tools; install them with:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 2
  fi
}

case " $* " in
  *" --help "* | *" -h "*) ;;
  *) install_missing ;;
esac

# shellcheck source=runner/python-env.sh
source "$here/python-env.sh"

# Many connections need many descriptors: take the hard limit; the runner refuses if that is still short.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

exec "$PYTHON" -m crossbench.run "$@"
