#!/usr/bin/env bash
# Installs the Debian packages adstore needs to build, test and benchmark,
# and only those that are missing. Run as root on Debian 12; as another user
# it prints the apt-get command to run instead and fails.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  liblmdb-dev lmdb-utils     # storage engine, and mdb_dump/mdb_load for the benchmark
  libmsgpack-dev             # msgpack-c: row, value and dump encoding
  libxxhash-dev              # xxHash (XXH3): row and dump checksums, long-key hashes
  libcmocka-dev              # unit tests
  libpcre2-dev               # ClassAd regexp() functions
  libedit-dev                # line editing in `adstore shell`
  libmicrohttpd-dev libgnutls28-dev  # `adstore serve`: HTTP (with GnuTLS), tokens' SHA-256
  curl openssl               # the server's tests: requests, a test certificate
  chromium fonts-liberation  # the server's web page, tested headless (its text in a font
                             # chromium only recommends; this machine had it)
  libsqlite3-dev sqlite3     # the benchmark's peer only
  time                       # /usr/bin/time: the benchmark's peak-memory figures
  wrk                        # P13's comparison load generator (bench_serve --wrk)
  clang libclang-rt-dev      # fuzz targets (libFuzzer) and the sanitizer runtime
  locales                    # localedef: the comma-decimal locale below
  python3-dev python3-setuptools python3-pip  # the Python module (python/)
  python3-pytest python3-hypothesis          # its tests
)

# tests/base/test_num.c reads and writes numbers under de_DE.UTF-8 (a comma
# radix): numbers must not depend on the locale a program sets.
ensure_locale() {
  local have
  have=$(locale -a 2>/dev/null || true) # read whole: 'locale -a | grep -q' fails under pipefail
  if grep -qix 'de_DE\.utf-\?8' <<< "$have"; then
    return 0
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing locale de_DE.UTF-8; run as root:  localedef -i de_DE -f UTF-8 de_DE.UTF-8" >&2
    return 1
  fi
  echo "setup: generating locale de_DE.UTF-8"
  localedef -i de_DE -f UTF-8 de_DE.UTF-8
}

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done

# DuckDB, the benchmark's analytic peer (issue 17): the npm registry's
# @duckdb/node-api, which ships libduckdb, installed into tests/bench/duckdb
# when node and npm are there (Debian 12's nodejs and npm packages, or any
# Node.js >= 18). Without it adstore-bench skips the DuckDB rows and says so.
ensure_duckdb() {
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/tests/bench/duckdb"
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "setup: node/npm not found; adstore-bench will skip its DuckDB rows" >&2
    return 0
  fi
  if [ -f "$dir/node_modules/@duckdb/node-api/package.json" ]; then
    return 0
  fi
  echo "setup: installing @duckdb/node-api into $dir"
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error) ||
    echo "setup: npm install failed; adstore-bench will skip its DuckDB rows" >&2
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  ensure_locale
  ensure_duckdb
  exit 0
fi

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "setup: missing packages: ${missing[*]}" >&2
  echo "setup: run as root:  apt-get update && $cmd" >&2
  exit 1
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
$cmd >/dev/null
ensure_locale
ensure_duckdb
echo "setup: done"
