#!/usr/bin/env bash
# Installs the Debian packages binstat_exporter needs and are missing:
#   tools/deps.sh run    to build and run
#   tools/deps.sh test   to build and pass `make check`, `make check-systemd` and `make check-image`
#   tools/deps.sh bench  to run `make bench` with its Go peer
set -eu
run=(build-essential pkg-config libmicrohttpd-dev libyaml-dev zlib1g-dev libxen-dev curl libxml2-dev
	libgnutls28-dev libsystemd-dev libcrypt-dev libisal-dev)
test=("${run[@]}" libcmocka-dev clang-format prometheus python3-prometheus-client
	python3 python3-markdown-it gzip qemu-system-x86 clang libclang-rt-14-dev xen-utils-4.17 xenstore-utils
	wrk strace iproute2 util-linux golang-go golang-github-influxdata-tdigest-dev
	openssl systemd chromium prometheus-alertmanager groff-base
	debhelper lintian fakeroot rpm cpio
	libvirt-daemon-system libvirt-daemon-driver-qemu libvirt-clients
	mmdebstrap systemd-container podman runc catatonit libcap2-bin)
bench=("${run[@]}" golang-go golang-github-prometheus-client-golang-dev xen-utils-4.17 libdeflate-dev
	xenstore-utils golang-github-influxdata-tdigest-dev)
case "${1:-}" in
run) want=("${run[@]}") ;;
test) want=("${test[@]}") ;;
bench) want=("${bench[@]}") ;;
*) echo "usage: $0 run|test|bench" >&2; exit 2 ;;
esac
missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} = 0 ] && exit 0
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "installing: ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
