#!/usr/bin/env bash
# The OCI image (`make image`) under podman, as docs/operating.md's
# "Containers" runs it: a real KVM VM of another user served from inside
# by the image's non-root user with the host's PID namespace and
# CAP_SYS_PTRACE alone (from the file capability, as Docker and Kubernetes
# give it: a runtime wrapper takes podman's ambient capabilities away),
# and not without them (counted and said); a DCI4 supplier of the host
# through the mounted socket folder with no capability at all; the health
# check, with basic auth too; a reload by SIGHUP of a configuration
# replaced by a rename; a stop within the grace period, as PID 1 too; a
# read-only root without tmpfs; a Prometheus on the host storing the VM's
# series; the shipped DaemonSet's pod template under `podman kube play`,
# on a network of its own, serving the same VM.
# Usage: tests/image/run.sh BUILD_DIR   (root; `make check-image`). It
# builds the image under a tag of its own run, removed at the end.
set -u
B=$(cd "${1:-build}" && pwd)
IMAGE=localhost/binstat_exporter:check-$$
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
#
# Docker and the kubelet's runtimes raise no added capability into a
# non-root user's sets: no ambient or inheritable ones; Docker gives such a
# user the bounding set alone (moby's oci.SetCapabilities), so that only
# execve decides. podman gives ambient ones, which would hide whether the
# image works there; runc-docker is runc with each container's OCI
# configuration made as Docker makes it.
mkdir -m 0755 "$WORK/bin"
RUNC_DOCKER="$WORK/bin/runc-docker"
cat >"$RUNC_DOCKER" <<EOS
#!/bin/sh
# runc, with no ambient or inheritable capabilities (as Docker gives).
bundle=""; prev=""
for a in "\$@"; do
	[ "\$prev" = --bundle ] && bundle=\$a
	prev=\$a
done
if [ -n "\$bundle" ] && [ -f "\$bundle/config.json" ]; then
	$PY -c 'import json, sys
p = sys.argv[1]; c = json.load(open(p))
proc = c.get("process", {}); caps = proc.get("capabilities", {})
caps["ambient"] = []; caps["inheritable"] = []
if proc.get("user", {}).get("uid", 0) != 0:
    caps["effective"] = []; caps["permitted"] = []
json.dump(c, open(p, "w"))' "\$bundle/config.json" || exit 1
fi
exec /usr/sbin/runc "\$@"
EOS
chmod 0755 "$RUNC_DOCKER"
PODMAN=(podman --runtime="$RUNC_DOCKER")
LIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=4096:4096)
UID_IMAGE=10187
CTS=() # the containers this run made, removed at the end
POD_YML=""
POD=binstat-image-test-$$
stop_containers() {
	local c
	[ -z "$POD_YML" ] || CONTAINERS_CONF="$WORK/containers.conf" podman kube down "$POD_YML" >/dev/null 2>&1
	for c in "${CTS[@]}"; do "${PODMAN[@]}" rm -f -t 0 "$c" >/dev/null 2>&1; done
}
trap 'stop_containers; podman rmi -f "$IMAGE" >/dev/null 2>&1; cleanup' EXIT
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
label=$(podman image inspect -f '{{index .Labels "org.opencontainers.image.version"}}' "$IMAGE")
version=$(dpkg-parsechangelog -l "$TOP/packaging/debian/changelog" -S Version)
check "its version label is the package's ($label), not the tag's (check-$$)" test "$label" = "$version"

# What it holds: its files listed from an exported container, with their
# modes, and the exporter's file capability.
CTS+=("binstat-files-$$")
"${PODMAN[@]}" create --name "binstat-files-$$" "$IMAGE" >/dev/null
mkdir "$WORK/export"
"${PODMAN[@]}" export "binstat-files-$$" >"$WORK/export.tar"
"${PODMAN[@]}" rm "binstat-files-$$" >/dev/null
tar -tvf "$WORK/export.tar" | awk '{ p = $6; sub(/^\.\//, "", p); print $1, p }' >"$WORK/modes.txt"
awk '{ print $2 }' "$WORK/modes.txt" >"$WORK/files.txt"
# Every regular file with an execute bit, anywhere: the two programs, and
# shared objects (ld.so and a few libraries are 0755 in Debian).
# (etc/hostname and etc/resolv.conf: podman's, made empty in the container.)
awk '$1 ~ /^-/ && $1 ~ /x/ { print $2 }' "$WORK/modes.txt" |
	grep -v -E -e '\.so(\.[0-9]+)*$' -e '^etc/(hostname|resolv\.conf|hosts)$' | sort >"$WORK/exec.txt"
check "$(wc -l <"$WORK/files.txt") files; executables but shared objects: the exporter and its probe ($(paste -sd' ' "$WORK/exec.txt"))" \
	test "$(wc -l <"$WORK/files.txt")" -gt 100 -a "$(paste -sd' ' "$WORK/exec.txt")" = "usr/bin/binstat_exporter usr/bin/binstat_healthcheck"
check "no shell, package manager, interpreter or compiler anywhere: no sh, bash, dpkg, apt, perl, python, gcc, cc1, ld" sh -c \
	"[ -s '$WORK/files.txt' ] && ! grep -E '(^|/)(sh|bash|dash|dpkg|apt|apt-get|perl|python3?|gcc|cc|cc1|ld|ld\\.bfd|busybox)$' '$WORK/files.txt'"
tar -xf "$WORK/export.tar" -C "$WORK/export" --xattrs --xattrs-include=security.capability usr/bin/binstat_exporter
fcap=$(getcap "$WORK/export/usr/bin/binstat_exporter" 2>&1)
check "the exporter carries CAP_SYS_PTRACE as a file capability, permitted only: ${fcap##* }" \
	test "${fcap##* }" = cap_sys_ptrace=p
rm -rf "$WORK/export" "$WORK/export.tar"
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
mkdir -m 0755 "$WORK/dci4"
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

# The configuration's folder mounted read-only, as the docs say: the reload
# below replaces the file by a rename, which a file's bind mount would hide.
CONFDIR="$WORK/conf"
mkdir -m 0755 "$CONFDIR"
CONF="$CONFDIR/binstat_exporter.yml"
printf 'collectors:\n  kvm:\n    trusted_users: [0, 4243]\n  dci:\n    supplier_dir: /run/dci4\n' >"$CONF"
chmod 0644 "$CONF"
MOUNTS=(-v "$CONFDIR:/etc/binstat_exporter:ro" -v "$WORK/dci4:/run/dci4:ro")

# ct_run NAME PORT [PODMAN_RUN_FLAGS...] -- [EXPORTER_FLAGS...]: a
# container of the image on the host's network, listening on PORT, read-only
# (no tmpfs either) and without any capability but those given; waits until
# it is ready (asked with CT_AUTH's USER:PASSWORD when set).
CT_AUTH=""
ct_run() {
	local name=$1 port=$2 flags=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do flags+=("$1"); shift; done
	shift
	CTS+=("$name")
	"${PODMAN[@]}" run -d --name "$name" "${LIMITS[@]}" --network=host --read-only --read-only-tmpfs=false --cap-drop=all \
		"${MOUNTS[@]}" "${flags[@]}" "$IMAGE" --config.file=/etc/binstat_exporter/binstat_exporter.yml \
		--web.listen-address="127.0.0.1:$port" --log.format=json "$@" >"$WORK/$name.id" 2>"$WORK/$name.err" ||
		{ cat "$WORK/$name.err"; return 1; }
	for _ in $(seq 200); do
		[ "$(curl -s ${CT_AUTH:+-u "$CT_AUTH"} -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/-/ready")" = 200 ] && return 0
		sleep 0.05
	done
	return 1
}
ct_pid() { "${PODMAN[@]}" inspect -f '{{.State.Pid}}' "$1"; }
ct_log() { "${PODMAN[@]}" logs "$1" 2>&1; }
status_of() { sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status"; } # status_of PID FIELD
root_opts() { awk '$5 == "/" { print $6 }' "/proc/$1/mountinfo"; } # the root mount's options
# The tmpfs mounts a container has on /tmp, /run, /var/tmp (podman's
# --read-only adds them unless --read-only-tmpfs=false).
tmpfs_of() { awk '$5 ~ "^/(tmp|run|var/tmp)$" { for (i = 7; $i != "-"; i++); if ($(i + 1) == "tmpfs") print $5 }' "/proc/$1/mountinfo" | paste -sd' '; }
metric() { awk -v m="$2" '$1 == m { print $2 }' "$1"; } # metric FILE NAME: its value
json_lines() { # json_lines FILE: every line of the log is one JSON object
	$PY -c "
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
objs = [json.loads(l) for l in lines]
assert objs and all(isinstance(o, dict) and 'level' in o and 'msg' in o for o in objs), lines[:3]" "$1"
}
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
caps="uid $(status_of "$CPID" Uid | cut -f1), CapAmb $(status_of "$CPID" CapAmb), CapPrm $(status_of "$CPID" CapPrm), CapEff $(status_of "$CPID" CapEff), NoNewPrivs $(status_of "$CPID" NoNewPrivs)"
check "it runs as uid $UID_IMAGE with CAP_SYS_PTRACE alone, from the file, none ambient: $caps" \
	test "$caps" = "uid $UID_IMAGE, CapAmb 0000000000000000, CapPrm 0000000000080000, CapEff 0000000000080000, NoNewPrivs 0"
tmpfs_ct=$(tmpfs_of "$CPID")
check "its root is read-only ($(root_opts "$CPID")), with no tmpfs on /tmp or /run (${tmpfs_ct:-none})" sh -c \
	"case ,$(root_opts "$CPID"), in *,ro,*) ;; *) exit 1 ;; esac; [ -z '$tmpfs_ct' ]"
if [ -n "$HAVE_KVM" ]; then
	until_ok 10 has_vm "$P"
	check "the VM of uid 4243 is served from inside the container" has_vm "$P"
	curl -s "http://127.0.0.1:$P/metrics" >"$WORK/kvm.txt"
	check "with its vCPUs' statistics, and no VMM counted unreadable" sh -c \
		"grep -q '^kvm_vcpu_.*vm=\"$VM' '$WORK/kvm.txt' && ! grep -q '^binstat_collector_dropped_total{collector=\"kvm\",reason=\"vmm_not_permitted\"}' '$WORK/kvm.txt'"
	check "in the host's PID namespace: kvm_collector_host_pid_namespace $(metric "$WORK/kvm.txt" kvm_collector_host_pid_namespace)" \
		test "$(metric "$WORK/kvm.txt" kvm_collector_host_pid_namespace)" = 1
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

# The health check with basic auth in the web configuration: every path
# asks credentials, the probe reads them from the file its environment
# names (never its arguments, which ps shows).
HASH=$($PY -W ignore -c "import crypt; print(crypt.crypt('pr0be', crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1<<4)))")
printf "basic_auth_users:\n  probe: '%s'\n" "$HASH" >"$CONFDIR/web.yml"
printf 'probe:pr0be\n' >"$CONFDIR/probe.auth"
chmod 0644 "$CONFDIR/web.yml"
chown $UID_IMAGE:$UID_IMAGE "$CONFDIR/probe.auth"
chmod 0600 "$CONFDIR/probe.auth"
PA=$(free_port)
CT_AUTH=probe:pr0be ct_run binstat-auth-$$ "$PA" -e BINSTAT_HEALTHCHECK_AUTH_FILE=/etc/binstat_exporter/probe.auth \
	--health-cmd "[\"/usr/bin/binstat_healthcheck\",\"127.0.0.1:$PA\"]" --health-interval=disable -- \
	--web.config.file=/etc/binstat_exporter/web.yml
check "a container with basic auth runs and is ready to its user" test $? = 0
check "without credentials it answers 401" \
	test "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PA/-/healthy")" = 401
"${PODMAN[@]}" healthcheck run binstat-auth-$$ >"$WORK/health-auth.out" 2>&1
rc=$?
check "podman healthcheck run with basic auth: exit $rc, $("${PODMAN[@]}" inspect -f '{{.State.Health.Status}}' binstat-auth-$$)" \
	test "$rc/$("${PODMAN[@]}" inspect -f '{{.State.Health.Status}}' binstat-auth-$$)" = 0/healthy
out=$("${PODMAN[@]}" exec -e BINSTAT_HEALTHCHECK_AUTH_FILE= binstat-auth-$$ /usr/bin/binstat_healthcheck "$PA" 2>&1)
rc=$?
check "the probe without its credentials fails (exit $rc: $out)" test "$rc/${out//[^0-9]/}" = 1/401
"${PODMAN[@]}" rm -f -t 0 binstat-auth-$$ >/dev/null

# A Prometheus on the host scraping the container's port.
if [ -n "$HAVE_KVM" ]; then
	start_prometheus "$P"
	got=$(prom_wait "$PROM_PORT" "kvm_vm_info{name=\"$VM\",pid=\"$FX\"}")
	check "Prometheus stores the VM's series from the container: kvm_vm_info = ${got:-nothing}" test "$got" = 1
	got=$(prom_wait "$PROM_PORT" "count({__name__=~\"kvm_vcpu_.+\",vm=\"$VM\"})")
	check "and its vCPUs' series: ${got:-none}" test "${got:-0}" -gt 0
fi

# A reload by SIGHUP through podman of a configuration replaced by a
# rename, as editors and configuration management write one: the example
# collector the new file switches on appears, in the same process.
{ cat "$CONF"; printf '  example: {}\n'; } >"$CONFDIR/.new.yml"
chmod 0644 "$CONFDIR/.new.yml"
mv "$CONFDIR/.new.yml" "$CONF"
"${PODMAN[@]}" kill --signal HUP $CT >/dev/null
reloaded() { ct_log $CT | grep -q '"msg":"configuration reloaded"'; }
until_ok 10 reloaded
check "podman kill --signal HUP after a rename of the file: the log says configuration reloaded" reloaded
check "the collector the new file names is served, by the same process" sh -c \
	"curl -s http://127.0.0.1:$P/metrics | grep -q '^example_' && [ \$(${PODMAN[*]} inspect -f '{{.State.Pid}}' $CT) = $CPID ]"

# Logs on stderr, JSON as asked, one object a line.
ct_log $CT >"$WORK/kvm.log"
check "the log is JSON, every line one object ($(wc -l <"$WORK/kvm.log") lines)" json_lines "$WORK/kvm.log"

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
# (and the file capability does not stop the exporter from starting there)
if [ -n "$HAVE_KVM" ]; then
	P=$(free_port)
	ct_run binstat-nocap-$$ "$P" --pid=host --
	check "without CAP_SYS_PTRACE the exporter starts all the same" test $? = 0
	CT=binstat-nocap-$$
	check "without CAP_SYS_PTRACE: CapPrm $(status_of "$(ct_pid $CT)" CapPrm), CapEff $(status_of "$(ct_pid $CT)" CapEff)" \
		test "$(status_of "$(ct_pid $CT)" CapPrm)/$(status_of "$(ct_pid $CT)" CapEff)" = 0000000000000000/0000000000000000
	curl -s "http://127.0.0.1:$P/metrics" >"$WORK/nocap.txt"
	gauge=$(metric "$WORK/nocap.txt" kvm_collector_vmms_not_permitted)
	check "the VM is not served; VMMs counted in kvm_collector_vmms_not_permitted (${gauge:-absent})" sh -c \
		"! grep -q '^kvm_vm_info{.*name=\"$VM\"' '$WORK/nocap.txt' && [ '${gauge:-0}' -ge 1 ] &&
		 grep -q '^binstat_collector_dropped_total{collector=\"kvm\",reason=\"vmm_not_permitted\"} [1-9]' '$WORK/nocap.txt'"
	ct_log $CT >"$WORK/nocap.log"
	check "the log says why, at warn: missing=CAP_SYS_PTRACE, and names the container's fix" $PY -c "
import json
warn = [l for l in map(json.loads, filter(None, open('$WORK/nocap.log')))
        if l['level'] == 'warn' and l.get('missing') == 'CAP_SYS_PTRACE' and '--cap-add=SYS_PTRACE' in l['msg']]
assert warn, open('$WORK/nocap.log').read()"
	# The count is this test's VMM's: with no other VMM on the host, the
	# gauge is 1 and the warn line names its pid.
	others=$(ls -l /proc/[0-9]*/fd 2>/dev/null | grep -c 'anon_inode:kvm-vm$')
	others=$((others - 1))
	if [ "$others" = 0 ]; then
		said=$($PY -c "
import json
print(next(l.get('pid') for l in map(json.loads, filter(None, open('$WORK/nocap.log'))) if l.get('missing')))")
		check "the VMM counted is this test's own: gauge ${gauge:-absent}, the warn line's pid $said (the VMM's $FX)" \
			test "${gauge:-0}/$said" = "1/$FX"
	else
		skip "the count tied to this test's VMM" "$others VM(s) of other VMMs run on this host"
	fi
	[ -n "$SUPPLIER" ] && check "DCI4 needs no capability: served" sh -c \
		"grep -qx 'dci_supplier_up{supplier=\"test.unit0\"} 1' '$WORK/nocap.txt'"
	"${PODMAN[@]}" rm -f -t 0 $CT >/dev/null

	# No-new-privileges voids the file capability at execve where the
	# runtime starts a non-root user with an empty permitted set, as Docker
	# does: why the documented line leaves it out.
	P=$(free_port)
	ct_run binstat-nnp-$$ "$P" --pid=host --cap-add=SYS_PTRACE --security-opt=no-new-privileges --
	CT=binstat-nnp-$$
	check "with no-new-privileges, as Docker runs it, the file capability is not granted: NoNewPrivs $(status_of "$(ct_pid $CT)" NoNewPrivs), CapEff $(status_of "$(ct_pid $CT)" CapEff)" \
		test "$(status_of "$(ct_pid $CT)" NoNewPrivs)/$(status_of "$(ct_pid $CT)" CapEff)" = 1/0000000000000000
	"${PODMAN[@]}" rm -f -t 0 $CT >/dev/null

	# ---------- 3. no --pid=host: the container's own processes only, said
	P=$(free_port)
	ct_run binstat-nopid-$$ "$P" --cap-add=SYS_PTRACE --stop-timeout=10 --
	CT=binstat-nopid-$$
	curl -s "http://127.0.0.1:$P/metrics" >"$WORK/nopid.txt"
	check "without --pid=host the VM is not served (kvm_collector_vms $(metric "$WORK/nopid.txt" kvm_collector_vms))" \
		grep -qx 'kvm_collector_vms 0' "$WORK/nopid.txt"
	check "and the exporter says so: kvm_collector_host_pid_namespace $(metric "$WORK/nopid.txt" kvm_collector_host_pid_namespace)" \
		test "$(metric "$WORK/nopid.txt" kvm_collector_host_pid_namespace)" = 0
	ct_log $CT >"$WORK/nopid.log"
	check "the log says why at warn, naming --pid=host and hostPID" $PY -c "
import json
warn = [l for l in map(json.loads, filter(None, open('$WORK/nopid.log')))
        if l['level'] == 'warn' and '--pid=host' in l['msg'] and 'hostPID: true' in l['msg']]
assert len(warn) == 1, open('$WORK/nopid.log').read()"
	check "the landing page says it too" sh -c \
		"curl -s http://127.0.0.1:$P/ | grep -q 'not in the host.*PID namespace'"
	# PID 1 of its own namespace: the kernel sends it no signal it has no
	# handler for; SIGTERM ends it all the same.
	check "it is PID 1 there: NSpid $(status_of "$(ct_pid $CT)" NSpid)" \
		test "$(status_of "$(ct_pid $CT)" NSpid | awk '{ print $NF }')" = 1
	t0=$(date +%s%N)
	"${PODMAN[@]}" stop $CT >/dev/null
	ms=$((($(date +%s%N) - t0) / 1000000))
	code=$("${PODMAN[@]}" inspect -f '{{.State.ExitCode}}' $CT)
	check "podman stop of PID 1: $ms ms, exit code $code" test "$ms" -lt 5000 -a "$code" = 0
	"${PODMAN[@]}" rm -f -t 0 $CT >/dev/null
fi

# --------------------- 4. the DaemonSet's pod template, by podman kube play
# The limits and the runtime without ambient capabilities (as the kubelet's)
# in a containers.conf; and pidns = "host" when the template asks hostPID:
# podman 4.3 ignores a pod's hostPID (podman 4.5 reads it), the runtime
# must be told. No hostNetwork: the pod has a network of its own, and is
# asked at its address, as the PodMonitor scrapes it.
POD_YML="$WORK/pod.yml"
$PY "$HERE/pod_from_daemonset.py" "$TOP/packaging/container/deploy/kubernetes/daemonset.yml" "$IMAGE" "$POD" \
	"$WORK/dci4" >"$POD_YML" 2>"$WORK/pod.err"
rc=$?
check "the DaemonSet's pod template asks hostPID: true $(cat "$WORK/pod.err")" test $rc = 0
printf '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]\n%b[engine]\nruntime = "runc-docker"\n[engine.runtimes]\nrunc-docker = ["%s"]\n' \
	"$([ $rc = 0 ] && printf 'pidns = "host"\\n')" "$RUNC_DOCKER" >"$WORK/containers.conf"
KCT=$POD-binstat-exporter
CONTAINERS_CONF="$WORK/containers.conf" podman kube play "$POD_YML" >"$WORK/kube.log" 2>&1
rc=$?
check "podman kube play of the DaemonSet's pod template (exit $rc)" test $rc = 0
[ $rc = 0 ] || tail -5 "$WORK/kube.log"
INFRA=$(podman pod inspect -f '{{.InfraContainerID}}' "$POD" 2>/dev/null)
KIP=$(podman inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$INFRA" 2>/dev/null)
KP=10187
until_ok 10 curl -sf "http://$KIP:$KP/-/ready"
KPID=$("${PODMAN[@]}" inspect -f '{{.State.Pid}}' "$KCT" 2>/dev/null)
kcaps="uid $(status_of "$KPID" Uid | cut -f1), CapAmb $(status_of "$KPID" CapAmb), CapEff $(status_of "$KPID" CapEff)"
check "the pod's container: the image's user with CAP_SYS_PTRACE alone, from the file ($kcaps), read-only root" sh -c \
	"[ '$kcaps' = 'uid $UID_IMAGE, CapAmb 0000000000000000, CapEff 0000000000080000' ] &&
	 case ,$(root_opts "$KPID"), in *,ro,*) ;; *) exit 1 ;; esac"
check "the pod has a network of its own, not the host's: ${KIP:-no address}" sh -c \
	"[ -n '$KIP' ] && [ \$(readlink /proc/$KPID/ns/net) != \$(readlink /proc/$$/ns/net) ]"
has_vm_at() { curl -s "http://$KIP:$KP/metrics" | grep -q "^kvm_vm_info{.*name=\"$VM\".*pid=\"$FX\""; }
if [ -n "$HAVE_KVM" ]; then
	until_ok 10 has_vm_at
	check "the pod serves the same VM of uid 4243, at its address $KIP:$KP" has_vm_at
	# A VM started now is found by KVM's uevent, which reaches the pod's
	# own network namespace (the next full walk is 60 s away).
	setpriv --reuid=4243 --regid=4243 --groups="$(stat -c %g /dev/kvm)" \
		"$WORK/bin/kvm_fixture" 1 1 5 "$WORK/run/vmm2.ready" -name "guest=${VM}2" >"$WORK/vmm2.log" 2>&1 &
	FX2=$!
	PIDS+=("$FX2")
	has_vm2() { curl -s "http://$KIP:$KP/metrics" | grep -q "^kvm_vm_info{.*name=\"${VM}2\".*pid=\"$FX2\""; }
	until_ok 10 has_vm2
	check "a VM started after the pod is served within 10 s: KVM's uevent reached the pod's network namespace" has_vm2
	kill "$FX2" 2>/dev/null
fi
[ -n "$SUPPLIER" ] && check "and the DCI4 supplier, through the hostPath" sh -c \
	"curl -s http://$KIP:$KP/metrics | grep -qx 'dci_supplier_up{supplier=\"test.unit0\"} 1'"
# The liveness probe's command, run in the container as the kubelet runs it.
read -ra probe <<<"$(sed -n 's/^# liveness: //p' "$POD_YML")"
out=$(CONTAINERS_CONF="$WORK/containers.conf" podman exec "$KCT" "${probe[@]}" 2>&1)
rc=$?
check "its liveness probe's command (${probe[*]}): exit $rc $out" test $rc = 0
check "its readiness probe's path answers: /-/ready" curl -sf "http://$KIP:$KP/-/ready"

stop_containers
POD_YML=""
left=$("${PODMAN[@]}" ps -a --format '{{.Names}}' | grep -c -e "-$$\$" -e "^$POD")
check "no container of this run is left ($left)" test "$left" = 0
echo "the image test took $(($(date +%s) - T0)) s"
summary
