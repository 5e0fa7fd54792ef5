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
  libsqlite3-dev sqlite3     # the benchmark's peer only
  time                       # /usr/bin/time: the benchmark's peak-memory figures
  clang libclang-rt-dev      # fuzz targets (libFuzzer) and the sanitizer runtime
  locales                    # localedef: the comma-decimal locale below
  python3-dev python3-setuptools python3-pip  # the Python module (python/)
  python3-pytest python3-hypothesis          # its tests
)

# tests/base/test_num.c reads and writes numbers under de_DE.UTF-8 (a comma
# radix): numbers must not depend on the locale a program sets.
ensure_locale() {
  if locale -a 2>/dev/null | grep -qix 'de_DE\.utf-\?8'; then
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

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  ensure_locale
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
echo "setup: done"
