#!/usr/bin/env bash
# --web.config.file (exporter-toolkit's web-config.yml) with real clients:
# certificates made by openssl, curl and openssl s_client with and without
# client certificates and passwords, a real Prometheus scraping over HTTPS
# with tls_config and basic_auth, certificates replaced while running, and
# the toolkit's bad files refused.
# Usage: tests/integration/web.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

for tool in openssl curl prometheus; do
	if ! command -v $tool >/dev/null; then
		skip "web config tests" "$tool is not installed (tools/deps.sh test)"
		summary
		exit 0
	fi
done

T="$WORK/tls"
mkdir -p "$T"
cd "$T" || exit 1
ossl() { openssl "$@" >>"$WORK/openssl.log" 2>&1; }
# mkcert NAME CA EXT: an EC key and a certificate for it signed by CA.
mkcert() {
	ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$1"
	ossl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" -CAcreateserial -out "$1.crt" -days 2 \
		-extfile <(printf '%s' "$3")
}
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=test-ca
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout rogue-ca.key -out rogue-ca.crt -days 2 -subj /CN=rogue-ca
mkcert server ca $'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth'
mkcert client ca $'subjectAltName=DNS:prometheus.example\nextendedKeyUsage=clientAuth'
mkcert othersan ca $'subjectAltName=DNS:intruder.example\nextendedKeyUsage=clientAuth'
mkcert rogue rogue-ca $'subjectAltName=DNS:prometheus.example\nextendedKeyUsage=clientAuth'
mkcert serveronly ca $'subjectAltName=DNS:prometheus.example\nextendedKeyUsage=serverAuth'
check "openssl made the certificates" test -s client.crt -a -s rogue.crt -a -s server.crt

# bcrypt hashes from libxcrypt, at cost 12 (about 0.25 s each) so that an
# uncached verification per request would show in the CPU time.
HASH=$($PY -c "import crypt; print(crypt.crypt('s3cret', crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1<<12)))" 2>/dev/null)
check "libxcrypt made a \$2b\$ hash" grep -q '^\$2b\$12\$' <<<"$HASH"
HASH_Y="\$2y\$${HASH:4}" HASH_A="\$2a\$${HASH:4}"

printf 'global:\n  plugin_dir: %s\ncollectors:\n  example: {}\n' "$B/plugins" >"$WORK/cfg.yml"
web_config() { # web_config FILE CLIENT_AUTH [EXTRA_TLS_YAML]
	cat >"$1" <<EOF
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  client_auth_type: $2
  client_ca_file: ca.crt
$3
http_server_config:
  headers:
    X-Frame-Options: deny
    X-Content-Type-Options: nosniff
basic_auth_users:
  alice: '$HASH'
  bob: '$HASH_Y'
  carol: '$HASH_A'
EOF
}

web_config "$T/web.yml" RequireAndVerifyClientCert "  client_allowed_sans: [prometheus.example]"
PORT=$(free_port)
"$EXPORTER" --config.file="$WORK/cfg.yml" --web.config.file="$T/web.yml" \
	--web.listen-address="127.0.0.1:$PORT" >>"$WORK/exporter.log" 2>&1 &
EPID=$!
PIDS+=("$EPID")
URL="https://127.0.0.1:$PORT"
C=(--cacert ca.crt --cert client.crt --key client.key)
for _ in $(seq 100); do
	curl -s "${C[@]}" -u alice:s3cret -o /dev/null "$URL/-/healthy" && break
	sleep 0.05
done
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }

check "HTTPS with a client certificate and alice's password: 200" test "$(code "${C[@]}" -u alice:s3cret "$URL/metrics")" = 200
check "\$2y\$ hash (htpasswd's) verifies" test "$(code "${C[@]}" -u bob:s3cret "$URL/metrics")" = 200
# Unfinished TLS handshakes (a ClientHello's first bytes) held from 20
# addresses x 16, each connecting again when closed: the scraper gets all.
$PY "$HERE/hostile_client.py" "$PORT" tlshold+ 127.0.3.1x20 16 12 >/dev/null &
HOLD=$!
PIDS+=("$HOLD")
for _ in $(seq 100); do
	[ "$(ss -Htn state established "( sport = :$PORT )" | wc -l)" -ge 256 ] && break
	sleep 0.1
done
ok=0
for _ in $(seq 26); do
	[ "$(code "${C[@]}" -m 3 -u alice:s3cret "$URL/metrics")" = 200 ] && ok=$((ok + 1))
done
check "320 held TLS handshakes from 20 addresses: 26 of 26 scrapes over TLS ($ok)" test "$ok" = 26
kill "$HOLD" 2>/dev/null
wait "$HOLD" 2>/dev/null
MANY=$($PY -c "print('&'.join(['collect[]=example'] * 1000))")
check "over TLS, 1,000 arguments are answered 414" \
	test "$(code "${C[@]}" -u alice:s3cret "$URL/metrics?$MANY")" = 414
check "\$2a\$ hash verifies" test "$(code "${C[@]}" -u carol:s3cret "$URL/metrics")" = 200
check "wrong password: 401" test "$(code "${C[@]}" -u alice:nope "$URL/metrics")" = 401
check "unknown user: 401" test "$(code "${C[@]}" -u mallory:s3cret "$URL/metrics")" = 401
check "no credentials: 401 asking for Basic" sh -c "curl -s -D - -o /dev/null --cacert ca.crt --cert client.crt --key client.key '$URL/metrics' | grep -qi '^WWW-Authenticate: Basic'"
curl -s -D "$WORK/h.txt" -o "$WORK/m.txt" "${C[@]}" -u alice:s3cret "$URL/metrics"
check "http_server_config.headers are sent" sh -c "grep -qi '^X-Frame-Options: deny' '$WORK/h.txt' && grep -qi '^X-Content-Type-Options: nosniff' '$WORK/h.txt'"
check "the scrape over TLS is whole" grep -q '^example_events_total' "$WORK/m.txt"
check "keep-alive over TLS: two scrapes, one connection" test "$(curl -s "${C[@]}" -u alice:s3cret -o /dev/null -o /dev/null \
	-w '%{num_connects}' "$URL/metrics" "$URL/metrics")" = 10

refused() { # refused CURL_ARGS...: no HTTP response at all (cut at the handshake)
	local c
	c=$(curl -s -o /dev/null -w '%{http_code}' -u alice:s3cret "$@")
	[ "$c" = 000 ] || { echo "got HTTP $c"; return 1; }
}
check "no client certificate: refused at the handshake" refused --cacert ca.crt "$URL/metrics"
check "no client certificate, TLS 1.2: refused at the handshake" refused --tls-max 1.2 --cacert ca.crt "$URL/metrics"
check "client certificate of another CA: refused" refused --cacert ca.crt --cert rogue.crt --key rogue.key "$URL/metrics"
check "client certificate without an allowed SAN: refused" refused --cacert ca.crt --cert othersan.crt --key othersan.key "$URL/metrics"
check "certificate not for client authentication: refused" refused --cacert ca.crt --cert serveronly.crt --key serveronly.key "$URL/metrics"
check "plain HTTP to the TLS port: no HTTP answer" refused "http://127.0.0.1:$PORT/metrics"
check "still serving after the refusals" test "$(code "${C[@]}" -u alice:s3cret "$URL/metrics")" = 200
cert_refusals() { # cert_refusals PORT
	curl -s "${C[@]}" -u alice:s3cret "https://127.0.0.1:$1/metrics" | awk '$1 == "binstat_exporter_http_refused_total{reason=\"client_certificate\"}" {print $2}'
}
refusals=$(cert_refusals "$PORT")
check "refused client certificates are counted, none sent included (got $refusals, want 5)" test "$refusals" = 5
# Each refusal of openssl s_client: counted once, and logged at info with
# Go's words for the reason (the handshake fails before s_client returns).
# An exporter of their own, whose log has these five lines only: the log
# writes at most five of a kind a second.
PORTC=$(free_port)
"$EXPORTER" --config.file="$WORK/cfg.yml" --web.config.file="$T/web.yml" \
	--web.listen-address="127.0.0.1:$PORTC" >"$WORK/refusals.log" 2>&1 &
PIDS+=($!)
wait_port "$PORTC"
one_refusal() { # one_refusal WHAT LOGGED_REASON S_CLIENT_ARGS...
	local what=$1 reason=$2 before after lines0 lines1 line
	shift 2
	line="level=info msg=\"TLS handshake refused\" reason=client_certificate remote=127.0.0.1:[0-9]* err=\"$reason\"\$"
	before=$(cert_refusals "$PORTC")
	lines0=$(grep -c "$line" "$WORK/refusals.log")
	openssl s_client -connect "127.0.0.1:$PORTC" -CAfile ca.crt "$@" </dev/null >/dev/null 2>&1
	after=$(cert_refusals "$PORTC")
	check "openssl s_client, $what: counted once in reason=client_certificate ($before, then $after)" \
		test "$after" = "$((before + 1))"
	for _ in $(seq 50); do
		lines1=$(grep -c "$line" "$WORK/refusals.log")
		[ "$lines1" -gt "$lines0" ] && break
		sleep 0.05
	done
	check "openssl s_client, $what: logged at info, err=\"$reason\" ($lines0, then $lines1 lines)" \
		test "$lines1" = "$((lines0 + 1))"
}
one_refusal "no client certificate, TLS 1.3" "client didn't provide a certificate" -tls1_3
one_refusal "no client certificate, TLS 1.2" "client didn't provide a certificate" -tls1_2
one_refusal "a client certificate of another CA" "certificate signed by unknown authority" -cert rogue.crt -key rogue.key
one_refusal "a client certificate with a SAN not allowed" "could not find allowed SANs in client cert" -cert othersan.crt -key othersan.key
one_refusal "a server-only certificate" "certificate specifies an incompatible key usage" -cert serveronly.crt -key serveronly.key
openssl s_client -connect "127.0.0.1:$PORTC" -CAfile ca.crt -cert client.crt -key client.key </dev/null >/dev/null 2>&1
check "openssl s_client with a good certificate: not counted (5), nothing more logged" sh -c \
	"test '$(cert_refusals "$PORTC")' = 5 && test \$(grep -c 'TLS handshake refused' '$WORK/refusals.log') = 5"
auths=$(curl -s "${C[@]}" -u alice:s3cret "$URL/metrics" | awk '$1 == "binstat_exporter_http_refused_total{reason=\"basic_auth\"}" {print $2}')
check "failed basic auth is counted (got $auths)" test "$auths" -ge 3

# A successful verification is cached: 40 scrapes with a cost-12 hash
# would take about 10 s of CPU uncached.
cpu() { awk '{print $14 + $15}' "/proc/$EPID/stat"; }
c0=$(cpu)
for _ in $(seq 40); do curl -s -o /dev/null "${C[@]}" -u alice:s3cret "$URL/-/healthy"; done
ticks=$(($(cpu) - c0))
check "40 authenticated requests take ${ticks} ticks of CPU, well under one bcrypt each (< 300)" test "$ticks" -lt 300

# A certificate replaced while running is served on a connection that
# comes once the files have settled (stood unchanged for a second: one
# written in place is never taken half-written); a broken one keeps the
# last good one, and says why.
serial() { openssl s_client -connect "127.0.0.1:$PORT" -cert client.crt -key client.key -CAfile ca.crt </dev/null 2>/dev/null | openssl x509 -noout -serial; }
# settled CMD...: runs CMD, each run new connections that may re-read the
# web config, until it succeeds, 5 s at most.
settled() { for _ in $(seq 50); do "$@" && return 0; sleep 0.1; done; return 1; }
serial_is() { [ "$(serial)" = "$1" ]; }
serial_not() { local s; s=$(serial); [ -n "$s" ] && [ "$s" != "$1" ]; }
before=$(serial)
mkcert server2 ca $'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth'
cp server.crt server.crt.orig
cp server.key server.key.orig
cp server2.key server.key
cp server2.crt server.crt
settled serial_not "$before"
after=$(serial)
check "replaced certificate served once settled ($before, then $after)" sh -c "[ -n '$after' ] && [ '$before' != '$after' ] && [ '$after' = '$(openssl x509 -noout -serial -in server2.crt)' ]"
echo garbage >server.crt
rejected() { serial >/dev/null; grep -q "web config rejected.*$1" "$2"; }
settled rejected server.crt "$WORK/exporter.log"
check "a broken certificate: logged, naming the file" grep -q 'web config rejected.*server.crt' "$WORK/exporter.log"
check "a broken certificate: the last good one is still served" test "$(serial)" = "$after"
reload_ok=$(curl -s "${C[@]}" -u alice:s3cret "$URL/metrics" | awk '$1 == "binstat_exporter_web_config_last_reload_successful" {print $2}')
check "binstat_exporter_web_config_last_reload_successful is 0" test "$reload_ok" = 0
cp server.crt.orig server.crt
cp server.key.orig server.key
check "the fixed certificate is served again" settled serial_is "$before"
sed -i 's/^  bob: .*//' "$T/web.yml"
bob_refused() { [ "$(code "${C[@]}" -u bob:s3cret "$URL/metrics")" = 401 ]; }
check "a user removed from the file is refused once it has settled" settled bob_refused
printf 'tls_server_config:\n' >"$WORK/notls.yml"
cp "$T/web.yml" "$T/web.yml.tls"
cp "$WORK/notls.yml" "$T/web.yml"
kill -HUP "$EPID"
settled grep -q 'TLS cannot be turned off without a restart' "$WORK/exporter.log"
check "TLS cannot be turned off without a restart: refused, TLS kept" sh -c "grep -q 'TLS cannot be turned off without a restart' '$WORK/exporter.log' && curl -s -o /dev/null --cacert ca.crt --cert client.crt --key client.key -u alice:s3cret '$URL/-/healthy'"
cp "$T/web.yml.tls" "$T/web.yml"

# ---------------------------------------------- a real Prometheus over HTTPS
run_prometheus "  - job_name: good
    scheme: https
    tls_config: {ca_file: $T/ca.crt, cert_file: $T/client.crt, key_file: $T/client.key}
    basic_auth: {username: alice, password: s3cret}
    static_configs: [{targets: ['127.0.0.1:$PORT']}]
  - job_name: badpassword
    scheme: https
    tls_config: {ca_file: $T/ca.crt, cert_file: $T/client.crt, key_file: $T/client.key}
    basic_auth: {username: alice, password: wrong}
    static_configs: [{targets: ['127.0.0.1:$PORT']}]
  - job_name: nocert
    scheme: https
    tls_config: {ca_file: $T/ca.crt}
    basic_auth: {username: alice, password: s3cret}
    static_configs: [{targets: ['127.0.0.1:$PORT']}]"
got=$(prom_wait "$PROM_PORT" 'example_events_total{job="good",device="max"}')
check "Prometheus scrapes over HTTPS with tls_config and basic_auth and stores the series ($got)" test "$got" = 18446744073709552000
sleep 2
check "Prometheus: up{job=good} is 1" test "$(prom_query "$PROM_PORT" 'up{job="good"}')" = 1
check "Prometheus: wrong password, up is 0" test "$(prom_query "$PROM_PORT" 'up{job="badpassword"}')" = 0
check "Prometheus: no client certificate, up is 0" test "$(prom_query "$PROM_PORT" 'up{job="nocert"}')" = 0
# Prometheus keeps its connection: the same client port across scrapes.
peers() { ss -Htn state established "( dport = :$PORT )" | awk '{print $3}' | sort; }
p1=$(peers)
sleep 2.5
p2=$(peers)
kept=$(comm -12 <(echo "$p1") <(echo "$p2"))
check "Prometheus's scrapes reuse their connections (client ports $(echo $p1), then $(echo $p2))" test -n "$kept"

# ------------------------------------------ versions, suites, curves, plain
PORT2=$(free_port)
cat >"$T/strict.yml" <<EOF
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  min_version: TLS12
  max_version: TLS12
  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]
  curve_preferences: [CurveP384]
EOF
"$EXPORTER" --config.file="$WORK/cfg.yml" --web.config.file="$T/strict.yml" \
	--web.listen-address="127.0.0.1:$PORT2" >>"$WORK/exporter.log" 2>&1 &
PIDS+=($!)
wait_port "$PORT2"
s_client() { openssl s_client -connect "127.0.0.1:$PORT2" -CAfile ca.crt "$@" </dev/null >/dev/null 2>&1; }
check "max_version TLS12: a TLS 1.3-only client is refused" sh -c "! openssl s_client -connect 127.0.0.1:$PORT2 -tls1_3 </dev/null >/dev/null 2>&1"
# The certificate's key is P-256, so the clients offer it for its signature.
check "cipher_suites: the listed suite is served" s_client -tls1_2 -cipher ECDHE-ECDSA-AES128-GCM-SHA256 -groups P-384:P-256
check "cipher_suites: an unlisted suite is refused" sh -c "! openssl s_client -connect 127.0.0.1:$PORT2 -tls1_2 -cipher ECDHE-ECDSA-AES256-GCM-SHA384 -groups P-384:P-256 </dev/null >/dev/null 2>&1"
check "curve_preferences: a client with P-256 only is refused" sh -c "! openssl s_client -connect 127.0.0.1:$PORT2 -tls1_2 -groups P-256 </dev/null >/dev/null 2>&1"
check "TLS 1.2 only: GnuTLS enables no suite beyond the list" sh -c "! grep -q 'cipher_suites also enables' '$WORK/exporter.log'"

# Users without TLS, and the rate limit (plain HTTP, as the toolkit allows).
PORT3=$(free_port)
printf "basic_auth_users:\n  alice: '%s'\nrate_limit:\n  interval: 1m\n  burst: 3\n" "$HASH" >"$T/plain.yml"
"$EXPORTER" --config.file="$WORK/cfg.yml" --web.config.file="$T/plain.yml" \
	--web.listen-address="127.0.0.1:$PORT3" >>"$WORK/exporter.log" 2>&1 &
PIDS+=($!)
wait_port "$PORT3"
codes=""
for _ in 1 2 3 4; do codes="$codes $(code -u alice:s3cret "http://127.0.0.1:$PORT3/-/healthy")"; done
check "rate_limit burst 3: the fourth request is 429 ($codes)" test "$codes" = " 200 200 200 429"

# The processing's write_users: the basic-auth user decides who may POST.
cat >"$WORK/proc.yml" <<EOF
global:
  plugin_dir: $B/plugins
collectors:
  example: {}
processing:
  write: true
  write_users: [alice]
  groups:
    - name: events
      select: 'example_events_total{device="vda"}'
      statistics: [{name: ev, type: value}]
EOF
printf "basic_auth_users:\n  alice: '%s'\n  bob: '%s'\n" "$HASH" "$HASH_Y" >"$T/users.yml"
PORT4=$(free_port)
"$EXPORTER" --config.file="$WORK/proc.yml" --web.config.file="$T/users.yml" \
	--web.listen-address="127.0.0.1:$PORT4" >>"$WORK/exporter.log" 2>&1 &
PIDS+=($!)
wait_port "$PORT4"
post() { code -u "$1" --data-binary 'on=1' "http://127.0.0.1:$PORT4/statistics/events/0/definition"; }
check "write_users: alice may POST a definition" test "$(post alice:s3cret)" = 200
check "write_users: bob, authenticated, may not (403)" test "$(post bob:s3cret)" = 403
check "write_users: a wrong password is 401 before anything" test "$(post alice:nope)" = 401

# An unknown user takes as long to refuse as a known one: the decoy hash
# has the users' cost (cost 12 here; a fixed cost-10 decoy took a quarter).
refusal_ms() { # refusal_ms USER:PASSWORD: how long a refusal took, in ms
	curl -s -o /dev/null -w '%{time_total}\n' -u "$1" "http://127.0.0.1:$PORT4/metrics" |
		awk '{printf "%d", $1 * 1000}'
}
known=999999 unknown=999999
for _ in 1 2 3 4; do # alternated, the quickest of each: a busy core slows both alike
	k=$(refusal_ms alice:wrong) u=$(refusal_ms mallory:wrong)
	[ "$k" -lt "$known" ] && known=$k
	[ "$u" -lt "$unknown" ] && unknown=$u
done
check "a wrong password: an unknown user ($unknown ms) as slow as a known one ($known ms)" \
	test "$((unknown * 10))" -ge "$((known * 6))"
HASH4=$($PY -c "import crypt; print(crypt.crypt('x', crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1<<4)))")
printf "basic_auth_users:\n  alice: '%s'\n  carol: '%s'\n" "$HASH" "$HASH4" >"$T/mixed.yml"
"$EXPORTER" --config.file="$WORK/cfg.yml" --web.config.file="$T/mixed.yml" \
	--web.listen-address="127.0.0.1:$(free_port)" >"$WORK/mixed.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do grep -qs "listening" "$WORK/mixed.log" && break; sleep 0.1; done
check "users' bcrypt costs 4 and 12: a warning says the time tells them apart" \
	grep -q "bcrypt costs differ.*lowest=4 highest=12" "$WORK/mixed.log"

# The toolkit's bad files are refused at start, with the reason and the
# place of the value at fault (a list's element), as file:line:col.
bad() { # bad NAME YAML EXPECTED_MESSAGE
	printf '%s\n' "$2" >"$T/bad.yml"
	local out
	out=$("$EXPORTER" --config.file="$WORK/cfg.yml" --web.config.file="$T/bad.yml" \
		--web.listen-address="127.0.0.1:$(free_port)" 2>&1)
	check "bad web config ($1): refused saying '$3'" grep -qF "$3" <<<"$out"
}
bad "unknown key" $'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  certfile: x' "unknown key 'certfile'"
bad "invalid ClientAuth" $'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: Sometimes' "bad.yml:4:21: invalid ClientAuth: Sometimes"
bad "CA without a policy" $'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: ca.crt' "bad.yml:4:19: client CA's have been configured without a Client Auth Policy"
bad "verify without a CA" $'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert' "bad.yml:4:21: client_auth_type RequireAndVerifyClientCert needs client_ca_file or client_ca"
bad "key missing" $'tls_server_config:\n  cert_file: server.crt' "bad.yml:1:1: missing one of key or key_file"
bad "cert file missing" $'tls_server_config:\n  cert_file: nope.crt\n  key_file: server.key' "failed to read cert_file"
bad "key of another cert" $'tls_server_config:\n  cert_file: server.crt\n  key_file: client.key' "bad.yml:3:13: failed to load the certificate"
echo garbage >"$T/garbage.crt"
bad "unparsable certificate" $'tls_server_config:\n  key_file: server.key\n  cert_file: garbage.crt' "bad.yml:3:14: failed to load the certificate ($T/garbage.crt)"
bad "client CA without a certificate" $'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: server.key' "bad.yml:5:19: no usable certificate in the client CA"
bad "invented cipher" $'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]' "bad.yml:4:19: unknown cipher suite TLS_RSA_WITH_RC4_128_SHA"
bad "invented curve" $'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  curve_preferences: [CurveP999]' "bad.yml:4:23: unknown curve CurveP999"
bad "invented curve, second in a block list" $'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  curve_preferences:\n    - X25519\n    - CurveP999' "bad.yml:6:7: unknown curve CurveP999"
bad "unknown TLS version" $'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  min_version: TLS14' "bad.yml:4:16: unknown TLS version TLS14"
bad "extra header" $'http_server_config:\n  headers:\n    X-Evil: 1' 'HTTP header \"X-Evil\" can not be configured'
bad "bad X-Frame-Options" $'http_server_config:\n  headers:\n    X-Frame-Options: allow' "invalid value for X-Frame-Options"
bad "plain-text password" $'basic_auth_users:\n  alice: s3cret' "is not a bcrypt hash"
bad "rate limit refusing all" $'rate_limit:\n  interval: 1s\n  burst: 0' "bad.yml:3:10: a rate limit with burst 0 refuses every request"
bad "not YAML" $'tls_server_config: [' "bad.yml"

# A certificate whose RSA key may only encipher (key usage
# keyEncipherment, as exporter-toolkit's own test server.crt and older
# enterprise CAs have it): GnuTLS signs nothing with it, so only the RSA
# key exchange suites can serve it. Served with those, and said; a
# handshake that fails is logged and counted; with only ECDHE suites
# configured it is refused at start (within 10 s: one taken would serve
# on) and at a renewal, with the reason.
kecert() { # kecert NAME KEY_USAGE
	ossl req -x509 -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.crt" -days 2 -subj /CN=localhost \
		-addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -addext "keyUsage=critical,$2" \
		-addext "extendedKeyUsage=serverAuth"
}
kecert encipher keyEncipherment
kecert rsaboth digitalSignature,keyEncipherment
cp rsaboth.crt renewed.crt
cp rsaboth.key renewed.key
check "openssl made an RSA certificate for key encipherment only" \
	sh -c "openssl x509 -in encipher.crt -noout -ext keyUsage | grep -qx '    Key Encipherment'"
printf 'tls_server_config:\n  cert_file: encipher.crt\n  key_file: encipher.key\n' >"$T/encipher.yml"
PORT5=$(free_port)
# Freed memory filled (glibc's MALLOC_PERTURB_, AddressSanitizer's free
# fill): a TLS session read after libmicrohttpd freed it at the close
# would give no client address to log.
MALLOC_PERTURB_=85 ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_free_fill_size=65536" \
	"$EXPORTER" --config.file="$WORK/cfg.yml" --web.config.file="$T/encipher.yml" \
	--web.listen-address="127.0.0.1:$PORT5" >"$WORK/encipher.log" 2>&1 &
PIDS+=($!)
wait_port "$PORT5"
E=(--cacert encipher.crt "https://127.0.0.1:$PORT5")
tlsfail() { # tlsfail: binstat_exporter_http_refused_total{reason="tls_handshake_failed"}
	curl -s --cacert encipher.crt "https://127.0.0.1:$PORT5/metrics" |
		awk '$1 == "binstat_exporter_http_refused_total{reason=\"tls_handshake_failed\"}" {print $2}'
}
check "key encipherment only: served to a client offering RSA key exchange (curl's defaults)" \
	test "$(code "${E[0]}" "${E[1]}" "${E[2]}/-/healthy")" = 200
check "... and the log says it is served with RSA key exchange alone" \
	grep -q 'key usage allows key encipherment only: it is served with the RSA key exchange suites alone.*key_usage=0x20' "$WORK/encipher.log"
before=$(tlsfail)
check "... a client offering only ECDHE suites fails the handshake" \
	test "$(code --tls-max 1.2 --ciphers ECDHE-RSA-AES128-GCM-SHA256 "${E[0]}" "${E[1]}" "${E[2]}/-/healthy")" = 000
check "... so does a TLS 1.3 client" test "$(code --tlsv1.3 "${E[0]}" "${E[1]}" "${E[2]}/-/healthy")" = 000
after=$(tlsfail)
check "... both counted: http_refused_total{reason=\"tls_handshake_failed\"} ${before:-none} -> ${after:-none}" \
	test "${before:-x}" = 0 -a "${after:-x}" = 2
check "... and logged with the client's address (the session, freed by then, is not read)" \
	grep -q 'msg="TLS handshake failed" remote=127.0.0.1:' "$WORK/encipher.log"
printf 'tls_server_config:\n  cert_file: encipher.crt\n  key_file: encipher.key\n  max_version: TLS12\n  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]\n' >"$T/ecdhe.yml"
out=$(timeout 10 "$EXPORTER" --config.file="$WORK/cfg.yml" --web.config.file="$T/ecdhe.yml" \
	--web.listen-address="127.0.0.1:$(free_port)" 2>&1)
check "... with only ECDHE suites configured it is refused at start, with the reason" \
	grep -q 'ecdhe.yml:2:14: the certificate (.*encipher.crt) can complete no handshake.*allows key encipherment only' <<<"$out"
# A renewal: the files of a certificate that signs replaced by the
# encipher-only pair while ECDHE suites alone are configured.
printf 'tls_server_config:\n  cert_file: renewed.crt\n  key_file: renewed.key\n  max_version: TLS12\n  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]\n' >"$T/renew.yml"
PORT6=$(free_port)
"$EXPORTER" --config.file="$WORK/cfg.yml" --web.config.file="$T/renew.yml" \
	--web.listen-address="127.0.0.1:$PORT6" >"$WORK/renew.log" 2>&1 &
PIDS+=($!)
wait_port "$PORT6"
check "a certificate for signing with ECDHE suites alone: served" \
	test "$(code --cacert rsaboth.crt "https://127.0.0.1:$PORT6/-/healthy")" = 200
cp encipher.key renewed.key.new && cp encipher.crt renewed.crt.new &&
	mv renewed.key.new renewed.key && mv renewed.crt.new renewed.crt
renew_rejected() { code --cacert rsaboth.crt "https://127.0.0.1:$PORT6/-/healthy" >/dev/null; grep -q 'web config rejected.*can complete no handshake' "$WORK/renew.log"; }
settled renew_rejected
check "... renewed by one for key encipherment only: refused, with the reason" \
	grep -q 'web config rejected.*can complete no handshake' "$WORK/renew.log"
check "... and the last good one still served" \
	test "$(code --cacert rsaboth.crt "https://127.0.0.1:$PORT6/-/healthy")" = 200

# The rate limit with client certificates: a client whose certificate was
# verified has a bucket of its own, which a stranger without one, at the
# same address and as fast as curl goes, does not drain.
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ca.crt\nrate_limit:\n  interval: 100ms\n  burst: 20\n' >"$T/certrate.yml"
PORT7=$(free_port)
"$EXPORTER" --config.file="$WORK/cfg.yml" --web.config.file="$T/certrate.yml" \
	--web.listen-address="127.0.0.1:$PORT7" >>"$WORK/exporter.log" 2>&1 &
PIDS+=($!)
wait_port "$PORT7"
: >"$WORK/stranger.codes" # before the loop's own redirection: polled at once
(
	end=$((SECONDS + 6))
	while [ $SECONDS -lt $end ]; do code --cacert ca.crt "https://127.0.0.1:$PORT7/metrics"; echo; done
) >>"$WORK/stranger.codes" &
STRANGER=$!
for _ in $(seq 100); do grep -q 429 "$WORK/stranger.codes" && break; sleep 0.05; done
codes=""
for _ in $(seq 15); do
	codes="$codes $(code "${C[@]}" "https://127.0.0.1:$PORT7/metrics")"
	sleep 0.2 # the scraper's own pace, 5 a second: within its bucket
done
wait "$STRANGER"
check "a stranger without a certificate drains its bucket ($(sort "$WORK/stranger.codes" | uniq -c | tr -s ' \n' ' '))" \
	grep -q 429 "$WORK/stranger.codes"
check "... a client with a verified certificate at the same address: 15 of 15 scrapes 200 ($codes)" \
	test "$(tr ' ' '\n' <<<"$codes" | grep -c '^200$')" = 15

summary
