#!/usr/bin/env bash
# The OCI image (`make image`) under podman, as docs/operating.md's
# "Containers" runs it: a real KVM VM of another user served from inside
# with the host's PID namespace and CAP_SYS_PTRACE alone, and not without
# them (counted and said); a DCI4 supplier of the host through the mounted
# socket folder with no capability at all; the health check, a reload by
# SIGHUP, a stop within the grace period, a read-only root, a non-root user;
# a Prometheus on the host storing the VM's series; the shipped DaemonSet's
# pod template under `podman kube play` serving the same VM.
# Usage: tests/image/run.sh BUILD_DIR IMAGE   (root; `make check-image`)
set -u
B=$(cd "${1:-build}" && pwd)
IMAGE=${2:?usage: run.sh BUILD_DIR IMAGE}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
. "$TOP/tests/integration/lib.sh"

T0=$(date +%s)
for tool in podman runc mmdebstrap dpkg-buildpackage catatonit; do
	if ! command -v $tool >/dev/null && [ ! -x /usr/sbin/$tool ] && [ ! -x /usr/libexec/podman/$tool ]; then
		skip "the image under podman" "$tool is not installed (tools/deps.sh test)"
		summary
		exit 0
	fi
done
if [ "$(id -u)" != 0 ]; then
	skip "the image under podman" "the test runs podman as root (the host's PID namespace, another user's VMM)"
	summary
	exit 0
fi

# Debian's podman 4.3 runs containers here with runc (crun refuses this
# host's hybrid cgroups), and with limits of the host's (podman's default
# ones are above them).
PODMAN=(podman --runtime=/usr/sbin/runc)
LIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=4096:4096)
UID_IMAGE=10187
CTS=() # the containers this run made, removed at the end
POD_YML=""
stop_containers() {
	local c
	[ -z "$POD_YML" ] || CONTAINERS_CONF="$WORK/containers.conf" podman kube down "$POD_YML" >/dev/null 2>&1
	for c in "${CTS[@]}"; do "${PODMAN[@]}" rm -f -t 0 "$c" >/dev/null 2>&1; done
}
trap 'stop_containers; cleanup' EXIT
trap 'exit 130' INT TERM

# ----------------------------------------------------------- the image
t0=$(date +%s)
make -s -C "$TOP" image IMAGE="$IMAGE" >"$WORK/image.log" 2>&1
rc=$?
check "make image (exit $rc, $(($(date +%s) - t0)) s)" test $rc = 0
[ $rc = 0 ] || { tail -30 "$WORK/image.log"; summary; exit 1; }
size=$(podman image inspect -f '{{.Size}}' "$IMAGE")
pass "the image $IMAGE: $((size / 1000000)) MB"
check "its default user is binstat_exporter ($UID_IMAGE), not root" \
	test "$(podman image inspect -f '{{.Config.User}}' "$IMAGE")" = $UID_IMAGE:$UID_IMAGE

# What it holds: its files listed from an exported container.
CTS+=("binstat-files-$$")
"${PODMAN[@]}" create --name "binstat-files-$$" "$IMAGE" >/dev/null
"${PODMAN[@]}" export "binstat-files-$$" | tar -t | sed 's,^\./,,' >"$WORK/files.txt"
"${PODMAN[@]}" rm "binstat-files-$$" >/dev/null
check "programs: the exporter and its health probe, nothing else ($(grep -E '^(usr/)?s?bin/.' "$WORK/files.txt" | paste -sd' '))" \
	test "$(grep -E '^(usr/)?s?bin/.' "$WORK/files.txt" | sort | paste -sd' ')" = "usr/bin/binstat_exporter usr/bin/binstat_healthcheck"
check "no shell, package manager or compiler: no sh, bash, dpkg, apt, gcc, cc1, ld" sh -c \
	"! grep -E '(^|/)(sh|bash|dash|dpkg|apt|apt-get|gcc|cc1|ld|ld\\.bfd|busybox)$' '$WORK/files.txt'"
check "the plugins, the default configuration" sh -c "grep -qx 'usr/lib/binstat_exporter/plugins/kvm.so' '$WORK/files.txt' &&
	grep -qx 'usr/lib/binstat_exporter/plugins/dci.so' '$WORK/files.txt' &&
	grep -qx 'usr/lib/binstat_exporter/plugins/xen.so' '$WORK/files.txt' &&
	grep -qx 'etc/binstat_exporter/binstat_exporter.yml' '$WORK/files.txt'"
out=$("${PODMAN[@]}" run --rm "${LIMITS[@]}" --network=none --cap-drop=all --read-only "$IMAGE" --check-config 2>&1)
check "the default configuration checks out in the image, its plugins loaded: $(tail -1 <<<"$out")" \
	grep -qx 'configuration OK' <<<"$out"

# ------------------------------------------------- what the host runs
# The VMM of another user (uid 4243, allowed /dev/kvm by its group), and
# the DCI4 test supplier in a folder the container mounts.
HAVE_KVM=""
if [ -w /dev/kvm ] && [ -x "$B/tests/kvm_fixture" ]; then
	HAVE_KVM=1
else
	skip "the VM checks" "/dev/kvm is missing here (or $B/tests/kvm_fixture is not built)"
fi
chmod 0711 "$WORK"
mkdir -m 0755 "$WORK/bin" "$WORK/dci4" "$WORK/libvirt"
mkdir -m 0777 "$WORK/run"
VM=ctvm
FX=""
if [ -n "$HAVE_KVM" ]; then
	cp "$B/tests/kvm_fixture" "$WORK/bin/"
	setpriv --reuid=4243 --regid=4243 --groups="$(stat -c %g /dev/kvm)" \
		"$WORK/bin/kvm_fixture" 1 2 5 "$WORK/run/vmm.ready" -name "guest=$VM" >"$WORK/vmm.log" 2>&1 &
	FX=$!
	PIDS+=("$FX")
	for _ in $(seq 200); do [ -s "$WORK/run/vmm.ready" ] && break; sleep 0.05; done
	check "a VMM of uid 4243 runs a real KVM VM on the host ($VM, pid $FX)" sh -c \
		"[ -s '$WORK/run/vmm.ready' ] && [ \$(stat -c %u /proc/$FX) = 4243 ]"
fi
SUPPLIER=""
if [ -x "$B/tests/dci4_test_supplier" ]; then
	"$B/tests/dci4_test_supplier" "$WORK/dci4" >"$WORK/supplier.log" 2>&1 &
	SUPPLIER=$!
	PIDS+=("$SUPPLIER")
	for _ in $(seq 200); do grep -qs ready "$WORK/supplier.log" && break; sleep 0.05; done
	check "a DCI4 supplier of root's on the host, its socket in $WORK/dci4" grep -q ready "$WORK/supplier.log"
else
	skip "the DCI4 checks" "$B/tests/dci4_test_supplier is not built"
fi

# The configuration, a file mounted read-only: it is edited in place
# (same inode, as a bind mount of a file needs) for the reload below.
CONF="$WORK/binstat_exporter.yml"
printf 'collectors:\n  kvm:\n    trusted_users: [0, 4243]\n  dci:\n    supplier_dir: /run/dci4\n' >"$CONF"
chmod 0644 "$CONF"
MOUNTS=(-v "$CONF:/etc/binstat_exporter/binstat_exporter.yml:ro" -v "$WORK/dci4:/run/dci4:ro")

# ct_run NAME PORT [PODMAN_RUN_FLAGS...] -- [EXPORTER_FLAGS...]: a
# container of the image on the host's network, listening on PORT, read-only
# and without any capability but those given; waits until it is ready.
ct_run() {
	local name=$1 port=$2 flags=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do flags+=("$1"); shift; done
	shift
	CTS+=("$name")
	"${PODMAN[@]}" run -d --name "$name" "${LIMITS[@]}" --network=host --read-only --cap-drop=all --security-opt=no-new-privileges \
		"${MOUNTS[@]}" "${flags[@]}" "$IMAGE" --config.file=/etc/binstat_exporter/binstat_exporter.yml \
		--web.listen-address="127.0.0.1:$port" --log.format=json "$@" >"$WORK/$name.id" 2>"$WORK/$name.err" ||
		{ cat "$WORK/$name.err"; return 1; }
	for _ in $(seq 200); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/-/ready")" = 200 ] && return 0
		sleep 0.05
	done
	return 1
}
ct_pid() { "${PODMAN[@]}" inspect -f '{{.State.Pid}}' "$1"; }
ct_log() { "${PODMAN[@]}" logs "$1" 2>&1; }
status_of() { sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status"; } # status_of PID FIELD
root_opts() { awk '$5 == "/" { print $6 }' "/proc/$1/mountinfo"; } # the root mount's options
until_ok() { # until_ok SECONDS CMD...
	local n=$(($1 * 10))
	shift
	for _ in $(seq "$n"); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
has_vm() { curl -s "http://127.0.0.1:$1/metrics" | grep -q "^kvm_vm_info{.*name=\"$VM\".*pid=\"$FX\""; }

# ------------- 1. the documented KVM flags: --pid=host and CAP_SYS_PTRACE
P=$(free_port)
ct_run binstat-kvm-$$ "$P" --pid=host --cap-add=SYS_PTRACE --stop-timeout=10 \
	--health-cmd "[\"/usr/bin/binstat_healthcheck\",\"$P\"]" --health-interval=disable --
check "the container runs and is ready" test $? = 0
CT=binstat-kvm-$$
CPID=$(ct_pid $CT)
check "it runs as uid $UID_IMAGE with CAP_SYS_PTRACE alone: uid $(status_of "$CPID" Uid | cut -f1), CapEff $(status_of "$CPID" CapEff)" \
	test "$(status_of "$CPID" Uid | cut -f1)/$(status_of "$CPID" CapEff)" = "$UID_IMAGE/0000000000080000"
check "its root is read-only ($(root_opts "$CPID"))" sh -c \
	"root_ro=\$(awk '\$5 == \"/\" { print \$6 }' /proc/$CPID/mountinfo); case ,\$root_ro, in *,ro,*) ;; *) exit 1 ;; esac"
if [ -n "$HAVE_KVM" ]; then
	until_ok 10 has_vm "$P"
	check "the VM of uid 4243 is served from inside the container" has_vm "$P"
	curl -s "http://127.0.0.1:$P/metrics" >"$WORK/kvm.txt"
	check "with its vCPUs' statistics, and no VMM counted unreadable" sh -c \
		"grep -q '^kvm_vcpu_.*vm=\"$VM' '$WORK/kvm.txt' && ! grep -q '^binstat_collector_dropped_total{collector=\"kvm\",reason=\"vmm_not_permitted\"}' '$WORK/kvm.txt'"
fi
if [ -n "$SUPPLIER" ]; then
	check "the DCI4 supplier of the host, through the mounted folder" sh -c \
		"curl -s http://127.0.0.1:$P/metrics | grep -qx 'dci_supplier_up{supplier=\"test.unit0\"} 1'"
fi

# The health check, as the runtime runs it (its timer is systemd's, absent
# here: run once by hand), and that it can fail.
"${PODMAN[@]}" healthcheck run $CT >"$WORK/health.out" 2>&1
rc=$?
check "podman healthcheck run: exit $rc, $("${PODMAN[@]}" inspect -f '{{.State.Health.Status}}' $CT)" \
	test "$rc/$("${PODMAN[@]}" inspect -f '{{.State.Health.Status}}' $CT)" = 0/healthy
out=$("${PODMAN[@]}" exec $CT /usr/bin/binstat_healthcheck 1 2>&1)
rc=$?
check "the probe fails where nothing answers (exit $rc: $out)" test $rc = 1

# A Prometheus on the host scraping the container's port.
if [ -n "$HAVE_KVM" ]; then
	start_prometheus "$P"
	got=$(prom_wait "$PROM_PORT" "kvm_vm_info{name=\"$VM\",pid=\"$FX\"}")
	check "Prometheus stores the VM's series from the container: kvm_vm_info = ${got:-nothing}" test "$got" = 1
	got=$(prom_wait "$PROM_PORT" "count({__name__=~\"kvm_vcpu_.+\",vm=\"$VM\"})")
	check "and its vCPUs' series: ${got:-none}" test "${got:-0}" -gt 0
fi

# A reload by SIGHUP through podman: the example collector switched on in
# the mounted file appears, in the same process.
printf '  example: {}\n' >>"$CONF"
"${PODMAN[@]}" kill --signal HUP $CT >/dev/null
reloaded() { ct_log $CT | grep -q '"msg":"configuration reloaded"'; }
until_ok 10 reloaded
check "podman kill --signal HUP: the log says configuration reloaded" reloaded
check "the collector the new file names is served, by the same process" sh -c \
	"curl -s http://127.0.0.1:$P/metrics | grep -q '^example_' && [ \$(${PODMAN[*]} inspect -f '{{.State.Pid}}' $CT) = $CPID ]"

# Logs on stderr, JSON as asked, one object a line.
ct_log $CT >"$WORK/kvm.log"
check "the log is JSON, one object a line" $PY -c "
import json, sys
lines = [json.loads(l) for l in open('$WORK/kvm.log') if l.startswith('{')]
assert lines and all('level' in l and 'msg' in l for l in lines), lines[:3]"

# A stop within the grace period (--stop-timeout=10): SIGTERM ends it.
t0=$(date +%s%N)
"${PODMAN[@]}" stop $CT >/dev/null
ms=$((($(date +%s%N) - t0) / 1000000))
code=$("${PODMAN[@]}" inspect -f '{{.State.ExitCode}}' $CT)
check "podman stop: $ms ms, exit code $code (SIGTERM handled; no SIGKILL after the 10 s)" test "$ms" -lt 5000 -a "$code" = 0
ct_log $CT >"$WORK/stop.log"
own=$($PY -c "
import json, datetime
ts = {}
for l in open('$WORK/stop.log'):
    if l.startswith('{'):
        e = json.loads(l)
        ts[e['msg']] = datetime.datetime.fromisoformat(e['ts'].replace('Z', '+00:00'))
print(int((ts['stopped'] - ts['shutting down']).total_seconds() * 1000))" 2>/dev/null)
check "the log says shutting down on SIGTERM, then stopped ${own:-?} ms later" sh -c \
	"grep -q '\"msg\":\"shutting down\".*SIGTERM' '$WORK/stop.log' && [ -n '$own' ]"

# ------------- 2. no capability: the VM counted and said, DCI4 still served
if [ -n "$HAVE_KVM" ]; then
	P=$(free_port)
	ct_run binstat-nocap-$$ "$P" --pid=host --
	CT=binstat-nocap-$$
	check "without CAP_SYS_PTRACE: CapEff $(status_of "$(ct_pid $CT)" CapEff)" \
		test "$(status_of "$(ct_pid $CT)" CapEff)" = 0000000000000000
	curl -s "http://127.0.0.1:$P/metrics" >"$WORK/nocap.txt"
	gauge=$(awk '$1 == "kvm_collector_vmms_not_permitted" { print $2 }' "$WORK/nocap.txt")
	check "the VM is not served; the VMM counted in kvm_collector_vmms_not_permitted (${gauge:-absent})" sh -c \
		"! grep -q '^kvm_vm_info{.*name=\"$VM\"' '$WORK/nocap.txt' && [ '${gauge:-0}' -ge 1 ] &&
		 grep -q '^binstat_collector_dropped_total{collector=\"kvm\",reason=\"vmm_not_permitted\"} [1-9]' '$WORK/nocap.txt'"
	ct_log $CT >"$WORK/nocap.log"
	check "the log says why, at warn: missing=CAP_SYS_PTRACE" $PY -c "
import json
warn = [l for l in map(json.loads, filter(lambda s: s.startswith('{'), open('$WORK/nocap.log')))
        if l['level'] == 'warn' and l.get('missing') == 'CAP_SYS_PTRACE']
assert warn, open('$WORK/nocap.log').read()"
	[ -n "$SUPPLIER" ] && check "DCI4 needs no capability: served" sh -c \
		"grep -qx 'dci_supplier_up{supplier=\"test.unit0\"} 1' '$WORK/nocap.txt'"
	"${PODMAN[@]}" rm -f -t 0 $CT >/dev/null

	# ---------- 3. no --pid=host: the container's own processes only
	P=$(free_port)
	ct_run binstat-nopid-$$ "$P" --cap-add=SYS_PTRACE --
	CT=binstat-nopid-$$
	curl -s "http://127.0.0.1:$P/metrics" >"$WORK/nopid.txt"
	check "without --pid=host the VM is not served (kvm_collector_vms $(awk '$1 == "kvm_collector_vms" { print $2 }' "$WORK/nopid.txt"))" \
		grep -qx 'kvm_collector_vms 0' "$WORK/nopid.txt"
	"${PODMAN[@]}" rm -f -t 0 $CT >/dev/null
fi

# --------------------- 4. the DaemonSet's pod template, by podman kube play
# The limits and runc in a containers.conf; and pidns = "host": podman 4.3
# ignores a pod's hostPID (podman 4.5 reads it), the runtime must be told.
printf '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]\npidns = "host"\n[engine]\nruntime = "runc"\n' \
	>"$WORK/containers.conf"
P=$(free_port)
POD_YML="$WORK/pod.yml"
$PY "$HERE/pod_from_daemonset.py" "$TOP/packaging/container/deploy/kubernetes/daemonset.yml" "$IMAGE" "$P" \
	"$WORK/dci4" "$WORK/libvirt" >"$POD_YML"
CONTAINERS_CONF="$WORK/containers.conf" podman kube play "$POD_YML" >"$WORK/kube.log" 2>&1
rc=$?
check "podman kube play of the DaemonSet's pod template (exit $rc)" test $rc = 0
[ $rc = 0 ] || tail -5 "$WORK/kube.log"
KCT=binstat-image-test-binstat-exporter
until_ok 10 curl -sf "http://127.0.0.1:$P/-/ready"
KPID=$("${PODMAN[@]}" inspect -f '{{.State.Pid}}' $KCT 2>/dev/null)
check "the pod's container: uid 0 with CAP_SYS_PTRACE alone, read-only root (uid $(status_of "$KPID" Uid | cut -f1), CapEff $(status_of "$KPID" CapEff))" sh -c \
	"[ '$(status_of "$KPID" Uid | cut -f1)/$(status_of "$KPID" CapEff)' = 0/0000000000080000 ] &&
	 case ,$(root_opts "$KPID"), in *,ro,*) ;; *) exit 1 ;; esac"
if [ -n "$HAVE_KVM" ]; then
	until_ok 10 has_vm "$P"
	check "the pod serves the same VM of uid 4243" has_vm "$P"
fi
[ -n "$SUPPLIER" ] && check "and the DCI4 supplier, through the hostPath" sh -c \
	"curl -s http://127.0.0.1:$P/metrics | grep -qx 'dci_supplier_up{supplier=\"test.unit0\"} 1'"
# The liveness probe's command, run in the container as the kubelet runs it.
read -ra probe <<<"$(sed -n 's/^# liveness: //p' "$POD_YML")"
out=$("${PODMAN[@]}" exec $KCT "${probe[@]}" 2>&1)
rc=$?
check "its liveness probe's command (${probe[*]}): exit $rc $out" test $rc = 0
check "its readiness probe's path answers: /-/ready" curl -sf "http://127.0.0.1:$P/-/ready"

stop_containers
POD_YML=""
left=$("${PODMAN[@]}" ps -a --format '{{.Names}}' | grep -c -e "-$$\$" -e '^binstat-image-test')
check "no container of this run is left ($left)" test "$left" = 0
echo "the image test took $(($(date +%s) - T0)) s"
summary
