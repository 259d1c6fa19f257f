#!/usr/bin/env bash
# Installs every Debian package Dualswarm needs and configures the build
# (Ninja + ccache) in build/. Safe to run again. Needs root for apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  g++ cmake ninja-build ccache pkg-config git
  libz3-dev libabsl-dev
  libgoogle-perftools-dev  # tcmalloc_minimal, the programs' allocator (CMakeLists.txt, DS_MALLOC)
  libgtest-dev libgmock-dev libbenchmark-dev
  nginx-core            # a real WebDAV server the end-to-end tests run the tester against
  redis-server          # a real Redis the tests run the tester against (the resp adapter)
  redis-tools           # redis-cli: a replica's launch waits for its primary to answer
  memcached             # a real memcached the tests run the tester against (the memcached adapter)
  etcd-server           # a real etcd the tests run the tester against (the grpc adapter)
  tinyproxy-bin         # real forward proxies the tests run the tester against (specs/http_proxy.dspec)
  squid apache2-bin
  varnish               # a real reverse-proxy cache the tests run the tester against (specs/http_cache.dspec)
  unison                # a real file synchronizer the tests run the tester against (specs/filesync.dspec)
  rsync                 # a real mirror the tests run the tester against (specs/mirror.dspec)
  # The coordinator (proto/, services/): gRPC + protobuf, PostgreSQL (libpqxx
  # client; the server binaries for the embedded database and the integration
  # tests), Prometheus metrics.
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libpqxx-dev postgresql prometheus-cpp-dev
  openssl               # the TLS test makes a self-signed certificate with the CLI
  libcivetweb-dev       # the coordinator's HTTP gateway and web UI (--http-listen)
  chromium chromium-driver  # the browser test drives the web UI in headless Chromium
  # deploy/ tests: YAML manifests parsed with yaml-cpp; Debian's Prometheus scrapes
  # the live coordinator and worker with the shipped config (promtool checks it).
  libyaml-cpp-dev prometheus
  systemd               # `systemd-analyze verify` checks the shipped units
  procps                # pgrep: the distributed tests check that no tester or SUT outlives its job
  # scripts/fuzz.sh (tests/fuzz): clang builds the libFuzzer targets; libFuzzer
  # and the ASan/UBSan runtimes are in compiler-rt's package.
  clang libclang-rt-14-dev
  python3               # shims/python: the library shim the interface tests serve tests/suts/pylib through
  python3-sortedcontainers python3-pyrsistent  # real Python libraries the interface tests check (specs/sortedlist.dspec, specs/pyrsistent.dspec)
  clang-format          # scripts/format.sh; the Format test checks every C++ file against .clang-format
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  # nginx, postgresql, prometheus, squid, apache2 and varnish are installed as
  # programs for the tests to start on 127.0.0.1; keep their packages from
  # starting system services (nginx on :80, prometheus on :9090, squid on
  # :3128, varnish on :6081, all interfaces) while installing.
  policy_rc=/usr/sbin/policy-rc.d
  own_policy=0
  if [ ! -e "$policy_rc" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy_rc" >/dev/null
    $SUDO chmod 755 "$policy_rc"
    own_policy=1
    trap '$SUDO rm -f "$policy_rc"' EXIT
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if [ "$own_policy" -eq 1 ]; then $SUDO rm -f "$policy_rc"; trap - EXIT; fi
fi

# ccache: share hits between checkouts in different directories.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true

BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  echo "== configuring $BUILD_DIR"
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
