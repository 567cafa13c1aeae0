#!/usr/bin/env bash
# The big-file workload of scripts/bench -bigfile: one file of random bytes
# uploaded by every client davspaces serves, against one curl PUT of it, in
# one run.
#
#   bash scripts/bench -bigfile                          # 1 GiB, every client
#   bash scripts/bench -bigfile -bigfile-size 256MiB -bigfile-memory off
#   bash scripts/bench -bigfile -bigfile-caddy ./caddy-new -bigfile-baseline ./caddy-old
#   bash scripts/bench -bigfile -bigfile-clients curl,nextcloudcmd -bigfile-results big.md
#
# Options:
#
#   -bigfile-size N        the file's size (default 1GiB; 256MiB, 1GB, bytes)
#   -bigfile-caddy BIN     the Caddy to measure (default: ./cmd/caddy, built)
#   -bigfile-baseline BIN  a second Caddy, run with the same file one after
#                          the other per client: a before/after pair from
#                          one session
#   -bigfile-clients LIST  a comma list of curl, curl-sum, curl-h2,
#                          owncloudcmd, nextcloudcmd, page (default: all)
#   -bigfile-caddy-options LINES
#                          more lines in the davspaces block of the Caddy
#                          measured (not the baseline's), e.g.
#                          'tus_max_chunk_size 100MB': with the same binary
#                          as -bigfile-baseline, a setting's before/after
#   -bigfile-http          plain HTTP instead of HTTPS
#   -bigfile-memory on|off the 4 GiB PUT's memory (default on; skipped when
#                          the disk has less than 9 GiB free)
#   -bigfile-results FILE  the table (Markdown) also goes to FILE
#   -bigfile-timeline DIR  keep the timelines in DIR: each Caddy's access
#                          log, each client's log (the desktop clients
#                          with --logdebug, their CPU time by /usr/bin/time)
#                          and the start and end of each client's run
#                          (runs.tsv: label client t0 t1, Unix seconds), for
#                          scripts/lib/bigfile-timeline.py
#
# Each Caddy runs on a fresh data directory, on a free 127.0.0.1 port, as
# Caddyfile.example serves: HTTPS with a certificate of Caddy's local CA
# (`tls internal`, quick_ack), Caddy's basic_auth in front of
# `davspaces { root … }` (trash_retention 0: each file is deleted after its
# row). Every client trusts the local CA: curl by its root certificate,
# owncloudcmd and nextcloudcmd by --trust, chromium by
# --ignore-certificate-errors. Each client signs in as a user of its own:
#
#   curl          one PUT over HTTP/1.1, the reference of the ratios
#   curl-sum      the same with the checksum the desktop clients send,
#                 OC-Checksum: SHA1:<hex> (nextcloudcmd on its PUTs and on
#                 chunking NG's MOVE; owncloudcmd puts the same digest in
#                 the TUS Upload-Metadata)
#   curl-h2       one PUT over HTTP/2 (curl's default over HTTPS; the
#                 page's browser speaks it too)
#   owncloudcmd   ownCloud's desktop client (2.11: TUS)
#   nextcloudcmd  Nextcloud's desktop client (3.7: chunking NG)
#   page          davspaces' page in headless chromium (TUS, 32 MiB PATCHes),
#                 driven by puppeteer-core from integration/testdata/webui
#                 (the script runs npm ci there when node_modules is missing)
#
# For each: the wall time until the client is done (the page: from picking
# the file to the upload's "done"), the Caddy's CPU time (utime + stime of
# /proc/PID/stat) during the upload (the page: over the same span; the
# CPU of its load before the pick is logged and left out), and again once
# oc:checksums shows
# SHA1, MD5 and ADLER32 (PROPFIND polled every 0.2 s), whose values must
# be those of sha1sum, md5sum and Python's zlib.adler32: a mismatch, or a
# client that fails, fails the run (exit status 1) after the table. The
# ratios compare each row with the curl PUT of the same Caddy, bare
# (×PUT) and with the checksum (×PUT+sum): wall / CPU during / CPU with
# the digests. From Caddy's access log, each row also shows the HTTP
# versions and number of the client's requests, and the seconds the server
# spent in them: the rest of the wall time is the client's own (its start,
# its discovery, the desktop clients' hashing of the file before they send
# it).
#
# -bigfile-memory adds a curl PUT of 4 GiB per Caddy, its RssAnon and VmHWM
# (set back first) sampled every 50 ms until its digests are known: the
# peaks are printed below the table.
#
# A client that is not installed is left out, with a message. The clients
# talk to 127.0.0.1 only; everything started is stopped and the
# temporary directory removed at exit. TMPDIR chooses where the data
# goes: a real disk, not tmpfs.
set -euo pipefail
cd "$(dirname "$0")/../.."

size=1GiB
caddy_bin=""
baseline_bin=""
caddy_name=""
clients=curl,curl-sum,curl-h2,owncloudcmd,nextcloudcmd,page
scheme=https
memory=on
results=""
timeline=""
caddy_options=""
while [ $# -gt 0 ]; do
	case "$1" in
	-bigfile) ;;
	-bigfile-size) size=$2; shift ;;
	-bigfile-caddy) caddy_bin=$2; shift ;;
	-bigfile-baseline) baseline_bin=$2; shift ;;
	-bigfile-clients) clients=$2; shift ;;
	-bigfile-caddy-options) caddy_options=$2; shift ;;
	-bigfile-http) scheme=http ;;
	-bigfile-memory) memory=$2; shift ;;
	-bigfile-results) results=$2; shift ;;
	-bigfile-timeline) timeline=$2; shift ;;
	-h | -help | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench -bigfile: unknown argument $1 (see scripts/lib/bigfile.sh -help)" >&2; exit 2 ;;
	esac
	shift
done
usage() { echo "bench -bigfile: $*" >&2; exit 2; }

# bytes turns 1GiB, 256MiB, 1GB, 1G or a number of bytes into bytes.
bytes() {
	local n=${1%B}
	case "$n" in
	*i) numfmt --from=iec-i "$n" 2>/dev/null ;;
	*[KMGT]) numfmt --from=si "$n" 2>/dev/null ;;
	*) [[ "$n" =~ ^[0-9]+$ ]] && echo "$n" ;;
	esac
}
size_bytes=$(bytes "$size") && [ "$size_bytes" -gt 0 ] || usage "-bigfile-size takes a size such as 1GiB, 256MiB or 1000000, not $size"
[ "$memory" = on ] || [ "$memory" = off ] || usage "-bigfile-memory is on or off"
IFS=, read -r -a client_list <<<"$clients"
for c in "${client_list[@]}"; do
	case "$c" in curl | curl-sum | curl-h2 | owncloudcmd | nextcloudcmd | page) ;; *) usage "unknown client $c" ;; esac
done
for b in "$caddy_bin" "$baseline_bin"; do
	[ -z "$b" ] || [ -x "$b" ] || usage "$b is not an executable"
done

started=$SECONDS
tmp=$(mktemp -d "${TMPDIR:-/tmp}/davbigfile.XXXXXX")
servers=()
declare -A pid base ca
cleanup() {
	local status=$?
	set +e
	for s in "${servers[@]}"; do
		kill "${pid[$s]}" 2>/dev/null
		wait "${pid[$s]}" 2>/dev/null
	done
	keep_timeline
	rm -rf "$tmp"
	echo "bench -bigfile: finished in $((SECONDS - started))s (exit status $status)" >&2
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { echo "bench -bigfile: $*" >&2; }

fail() { log "$*"; exit 1; }

# keep_timeline copies what each server's directory holds of the run to
# the -bigfile-timeline directory: LABEL/access.log, LABEL/caddy.log, and
# LABEL/CLIENT.log and LABEL/CLIENT.time of each client.
keep_timeline() {
	[ -n "$timeline" ] || return 0
	local s
	for s in "${servers[@]}"; do
		mkdir -p "$timeline/$s"
		cp "$tmp/$s"/*.log "$tmp/$s"/*.time "$timeline/$s/" 2>/dev/null
	done
}
source scripts/lib/benchstore.sh

password=bigfile-bench
users=(curl curl-sum curl-h2 owncloudcmd nextcloudcmd page memory)

if [ -z "$caddy_bin" ]; then
	log "building ./cmd/caddy"
	nice -n 10 go build -o "$tmp/bin/caddy" ./cmd/caddy
	caddy_bin=$tmp/bin/caddy
	caddy_name="./cmd/caddy at $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!docs' || echo ' with changes')"
fi
hash=$("$caddy_bin" hash-password --plaintext "$password")

# start_server LABEL BIN [OPTIONS] starts BIN on a fresh data directory,
# with OPTIONS in its davspaces block, and waits until it answers.
start_server() {
	local label=$1 bin=$2 options=${3:-} dir=$tmp/$1 site tls="" wrapper="" u code
	mkdir -p "$dir"
	free_port
	site=$scheme://127.0.0.1:$port
	if [ "$scheme" = https ]; then
		tls="tls internal"
		wrapper="tls"
	fi
	{
		cat <<EOF
{
	skip_install_trust
	auto_https disable_redirects
	admin unix/$dir/admin.sock|0600
	servers {
		listener_wrappers {
			quick_ack
			$wrapper
		}
	}
}

$site {
	$tls
	@authenticated {
		not method OPTIONS
		not path /status.php /app/list /healthz
		not path /ocs/v1.php/cloud/capabilities /ocs/v2.php/cloud/capabilities
	}
	basic_auth @authenticated {
EOF
		for u in "${users[@]}"; do
			echo "		$u $hash"
		done
		cat <<EOF
	}
	log {
		output file $dir/access.log
		format json
	}
	route {
		davspaces {
			root $dir/data
			trash_retention 0
			$options
		}
		error 404
	}
}
EOF
	} >"$dir/Caddyfile"
	XDG_DATA_HOME=$dir/xdg-data XDG_CONFIG_HOME=$dir/xdg-config \
		nice -n 10 "$bin" run --config "$dir/Caddyfile" --adapter caddyfile >"$dir/caddy.log" 2>&1 &
	pid[$label]=$!
	servers+=("$label")
	base[$label]=$site
	ca[$label]=$dir/xdg-data/caddy/pki/authorities/local/root.crt
	for _ in $(seq 300); do
		if [ "$scheme" = http ] || [ -f "${ca[$label]}" ]; then
			code=$(dav "$label" curl PROPFIND /remote.php/webdav/ -o /dev/null -w "%{http_code}" -H "Depth: 0" 2>/dev/null || true)
			[ "$code" = 207 ] && return 0
		fi
		kill -0 "${pid[$label]}" 2>/dev/null || { tail -n 20 "$dir/caddy.log" >&2; fail "$label did not start"; }
		sleep 0.2
	done
	fail "$label did not answer: $code"
}

# dav LABEL USER METHOD PATH [curl args] asks server LABEL as USER.
dav() {
	local label=$1 user=$2 method=$3 path=$4 trust=()
	shift 4
	[ "$scheme" = http ] || trust=(--cacert "${ca[$label]}")
	curl -sS --noproxy '*' "${trust[@]}" -u "$user:$password" -X "$method" "$@" "${base[$label]}$path"
}

# cpu LABEL prints the server's CPU seconds so far.
cpu() {
	local ticks
	ticks=$(awk '{ print $14 + $15 }' "/proc/${pid[$1]}/stat")
	awk -v t="$ticks" -v hz="$hz" 'BEGIN { printf "%.2f", t / hz }'
}
hz=$(getconf CLK_TCK)

# checksums LABEL USER PATH prints oc:checksums of the file ("" while none).
checksums() {
	dav "$1" "$2" PROPFIND "$3" -H 'Depth: 0' -H 'Content-Type: application/xml' --data-binary \
		'<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:checksums/></d:prop></d:propfind>' |
		grep -o 'checksum>[^<]*' | sed 's/^checksum>//' | head -n 1 || true
}

# wait_digests LABEL USER PATH waits until oc:checksums holds all three
# digests (at most 30 minutes) and prints them.
wait_digests() {
	local got=""
	for _ in $(seq 9000); do
		got=$(checksums "$@")
		if [[ "$got" == *SHA1:* && "$got" == *MD5:* && "$got" == *ADLER32:* ]]; then
			echo "$got"
			return 0
		fi
		sleep 0.2
	done
	echo "${got:-none}"
	return 1
}

# expected FILE prints the digests as oc:checksums writes them.
expected() {
	local sha md5 adler
	sha=$(sha1sum "$1" | cut -d ' ' -f 1)
	md5=$(md5sum "$1" | cut -d ' ' -f 1)
	adler=$(python3 -c '
import sys, zlib
a = 1
with open(sys.argv[1], "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
        a = zlib.adler32(block, a)
print("%08x" % a)' "$1")
	echo "SHA1:$sha MD5:$md5 ADLER32:$adler"
}

# same_digests WANT GOT: every digest of WANT is in GOT (any case).
same_digests() {
	local d
	for d in $1; do
		[[ " ${2,,} " == *" ${d,,} "* ]] || return 1
	done
}

now() { echo "$EPOCHREALTIME"; }

seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# record_run LABEL CLIENT T0 notes a client's run from T0 to now in the
# timeline's runs.tsv.
record_run() {
	[ -n "$timeline" ] || return 0
	mkdir -p "$timeline"
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$(now)" >>"$timeline/runs.tsv"
}

# The clients. Each uploads $file as user $1 to server $2 and sets wall
# (seconds); the file lands at /remote.php/webdav/$name.
put() {
	local t0
	t0=$(now)
	dav "$2" "$1" PUT "/remote.php/webdav/$name" --fail -o /dev/null -T "$file" "${@:3}" || return 1
	wall=$(seconds "$t0" "$(now)")
	record_run "$2" "$1" "$t0"
}
client_curl() { put "$1" "$2" --http1.1; }
client_curl-sum() { put "$1" "$2" --http1.1 -H "OC-Checksum: SHA1:$sha1"; }
client_curl-h2() { put "$1" "$2" --http2; }

# sync_dir USER LABEL makes a folder holding only the file, for a client.
sync_dir() {
	local dir=$tmp/sync/$2-$1
	rm -rf "$dir"
	mkdir -p "$dir"
	ln "$file" "$dir/$name"
	echo "$dir"
}

# desktop_sync CMD USER SERVER syncs the file up with a desktop client's
# command line (owncloudcmd and nextcloudcmd take the same options).
desktop_sync() {
	local dir t0 verbosity=-s timed=()
	[ -z "$timeline" ] || verbosity=--logdebug timed=(/usr/bin/time -o "$tmp/$3/$2.time" -f '%e %U %S')
	dir=$(sync_dir "$2" "$3")
	t0=$(now)
	HOME=$tmp/home nice -n 10 "${timed[@]}" "$1" "$verbosity" --non-interactive --trust --exclude "$tmp/exclude" \
		-u "$2" -p "$password" "$dir" "${base[$3]}" >"$tmp/$3/$2.log" 2>&1 || return 1
	wall=$(seconds "$t0" "$(now)")
	record_run "$3" "$2" "$t0"
}
client_owncloudcmd() { desktop_sync owncloudcmd "$@"; }
client_nextcloudcmd() { desktop_sync nextcloudcmd "$@"; }

# client_page sets cpu_from and cpu_to besides wall: the server's CPU
# seconds at the pick and at "done", so that its CPU covers the upload, as
# its wall does, without the page's load before it.
client_page() {
	local space ms t0 pick done
	t0=$(now)
	space=$(dav "$2" "$1" PROPFIND /remote.php/webdav/ -H 'Depth: 0' -H 'Content-Type: application/xml' --data-binary \
		'<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:spaceid/></d:prop></d:propfind>' |
		grep -o 'spaceid>[^<]*' | sed 's/^spaceid>//' | head -n 1)
	[ -n "$space" ] || return 1
	nice -n 10 node scripts/lib/bigfile-page.mjs "$(
		printf '{"chromium":"%s","userDataDir":"%s","artifacts":"%s","base":"%s","user":"%s","password":"%s","folder":"%s","file":"%s","ignoreCertificateErrors":true,"timeoutMs":%d,"serverPid":%d}' \
			"$chromium" "$tmp/$2/chromium" "$tmp/$2/artifacts" "${base[$2]}" "$1" "$password" "/dav/spaces/$space/" "$file" 1800000 "${pid[$2]}"
	)" >"$tmp/$2/$1.log" 2>&1 || return 1
	ms=$(sed -n 's/.*"event":"uploaded".*"ms":\([0-9]*\).*/\1/p' "$tmp/$2/$1.log")
	read -r pick done < <(sed -n 's/.*"event":"uploaded".*"cpuTicks":\[\([0-9]*\),\([0-9]*\)\].*/\1 \2/p' "$tmp/$2/$1.log")
	[ -n "$ms" ] && [ -n "$done" ] || return 1
	wall=$(awk -v ms="$ms" 'BEGIN { printf "%.2f", ms / 1000 }')
	cpu_from=$(awk -v t="$pick" -v hz="$hz" 'BEGIN { printf "%.2f", t / hz }')
	cpu_to=$(awk -v t="$done" -v hz="$hz" 'BEGIN { printf "%.2f", t / hz }')
	record_run "$2" "$1" "$t0"
}

# available CLIENT says whether the client can run here.
available() {
	case "$1" in
	curl | curl-sum) return 0 ;;
	curl-h2) [ "$scheme" = https ] || { log "curl-h2 needs HTTPS: left out"; return 1; } ;;
	owncloudcmd | nextcloudcmd) command -v "$1" >/dev/null || { log "$1 is not installed: left out"; return 1; } ;;
	page)
		chromium=$(command -v chromium || command -v chromium-browser || true)
		[ -n "$chromium" ] || { log "chromium is not installed: the page is left out"; return 1; }
		command -v node >/dev/null || { log "node is not installed: the page is left out"; return 1; }
		[ -d integration/testdata/webui/node_modules/puppeteer-core ] ||
			nice -n 10 npm ci --prefix integration/testdata/webui --no-audit --no-fund >&2 ||
			{ log "npm ci in integration/testdata/webui failed: the page is left out"; return 1; }
		;;
	esac
}

# measure CLIENT LABEL uploads the file with CLIENT to server LABEL and
# records the row: wall, CPU during, CPU with the digests, digests.
declare -A row_wall row_during row_total row_ok row_requests
measure() {
	local client=$1 label=$2 n0 c0 c1 c2 got ok=ok
	sync
	n0=$(wc -l <"$tmp/$label/access.log")
	c0=$(cpu "$label")
	wall="" cpu_from="" cpu_to=""
	if ! "client_$client" "$client" "$label"; then
		log "$client against $label failed:"
		tail -n 20 "$tmp/$label/$client.log" >&2 2>/dev/null || true
		row_ok[$client,$label]=failed
		failed=1
		return
	fi
	c1=$(cpu "$label")
	if [ -n "$cpu_from" ]; then
		log "$client against $label: $(seconds "$c0" "$cpu_from")s CPU before the upload (its start), left out"
		c0=$cpu_from c1=$cpu_to
	fi
	row_requests[$client,$label]=$(requests "$label" "$client" "$n0")
	if ! got=$(wait_digests "$label" "$client" "/remote.php/webdav/$name"); then
		ok="no digests ($got)"
	elif ! same_digests "$want" "$got"; then
		ok="MISMATCH ($got)"
	fi
	c2=$(cpu "$label")
	[ "$ok" = ok ] || { log "$client against $label: $ok, want $want"; failed=1; }
	row_wall[$client,$label]=$wall
	row_during[$client,$label]=$(seconds "$c0" "$c1")
	row_total[$client,$label]=$(seconds "$c0" "$c2")
	row_ok[$client,$label]=$ok
	log "$client against $label: ${wall}s wall, ${row_during[$client,$label]}s CPU during, ${row_total[$client,$label]}s with digests, digests $ok"
	dav "$label" "$client" DELETE "/remote.php/webdav/$name" -o /dev/null || true
}

# memory_run LABEL puts a 4 GiB file with curl, sampling the server's
# RssAnon and VmHWM every 50 ms until its digests are known.
declare -A mem_line
memory_run() {
	local label=$1 p=${pid[$1]} t0 c0 wall got ok=ok
	echo 5 >"/proc/$p/clear_refs"
	: >"$tmp/sampling"
	(
		anon=0 hwm=0
		while [ -e "$tmp/sampling" ]; do
			while read -r k v _; do
				case "$k" in
				RssAnon:) [ "$v" -le "$anon" ] || anon=$v ;;
				VmHWM:) hwm=$v ;;
				esac
			done <"/proc/$p/status"
			sleep 0.05
		done
		echo "$anon $hwm" >"$tmp/peaks"
	) &
	local sampler=$!
	sync
	c0=$(cpu "$label")
	t0=$(now)
	dav "$label" memory PUT /remote.php/webdav/big4.bin --fail -o /dev/null -T "$tmp/big4.bin" || ok=failed
	wall=$(seconds "$t0" "$(now)")
	if [ "$ok" = ok ]; then
		if ! got=$(wait_digests "$label" memory /remote.php/webdav/big4.bin); then
			ok="no digests"
		elif ! same_digests "$want4" "$got"; then
			ok="MISMATCH ($got)"
		fi
	fi
	rm -f "$tmp/sampling"
	wait "$sampler"
	[ "$ok" = ok ] || { log "4 GiB PUT against $label: $ok"; failed=1; }
	read -r anon hwm <"$tmp/peaks"
	mem_line[$label]=$(printf '%s: 4 GiB curl PUT %ss wall, %ss CPU with digests; peak RssAnon %d MiB, VmHWM %d MiB; digests %s' \
		"$label" "$wall" "$(seconds "$c0" "$(cpu "$label")")" $((anon / 1024)) $((hwm / 1024)) "$ok")
	log "${mem_line[$label]}"
	dav "$label" memory DELETE /remote.php/webdav/big4.bin -o /dev/null || true
}

# requests LABEL CLIENT FROM prints, from the access log after line FROM,
# the HTTP versions of the client's requests with their numbers, and the
# seconds the server spent in them (the script's own requests by curl left
# out for the other clients).
requests() {
	tail -n +"$(($3 + 1))" "$tmp/$1/access.log" | python3 -c '
import collections, json, sys
client = sys.argv[1]
versions, busy = collections.Counter(), 0.0
for line in sys.stdin:
    entry = json.loads(line)
    request = entry.get("request", {})
    agent = " ".join(request.get("headers", {}).get("User-Agent", []))
    if entry.get("user_id") != client or (agent.startswith("curl/") and not client.startswith("curl")):
        continue
    versions[request.get("proto", "?").removeprefix("HTTP/")] += 1
    busy += entry.get("duration", 0)
print(" ".join("%s×%d" % v for v in sorted(versions.items())), "| %.2f s" % busy)' "$2"
}

# ratio A B prints A/B with two decimals, or - without B.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }

# table prints the Markdown table of every row.
table() {
	local label client put sum
	echo "| server | client | HTTP×requests | in requests | wall | CPU during | CPU with digests | ×PUT wall/during/with | ×PUT+sum wall/during/with | digests |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	for client in "${run_clients[@]}"; do
		for label in "${servers[@]}"; do
			[ -n "${row_ok[$client,$label]:-}" ] || continue
			put="$(ratio "${row_wall[$client,$label]:-}" "${row_wall[curl,$label]:-}")/$(ratio "${row_during[$client,$label]:-}" "${row_during[curl,$label]:-}")/$(ratio "${row_total[$client,$label]:-}" "${row_total[curl,$label]:-}")"
			sum="$(ratio "${row_wall[$client,$label]:-}" "${row_wall[curl-sum,$label]:-}")/$(ratio "${row_during[$client,$label]:-}" "${row_during[curl-sum,$label]:-}")/$(ratio "${row_total[$client,$label]:-}" "${row_total[curl-sum,$label]:-}")"
			printf '| %s | %s | %s | %s s | %s s | %s s | %s | %s | %s |\n' "$label" "$client" "${row_requests[$client,$label]:-- | -}" \
				"${row_wall[$client,$label]:--}" "${row_during[$client,$label]:--}" "${row_total[$client,$label]:--}" \
				"$put" "$sum" "${row_ok[$client,$label]}"
		done
	done
}

run_clients=()
for c in "${client_list[@]}"; do
	! available "$c" || run_clients+=("$c")
done
[ "${#run_clients[@]}" -gt 0 ] || fail "no client to run"
mkdir -p "$tmp/home" "$tmp/sync"
: >"$tmp/exclude"

log "making $size_bytes bytes of random data"
name=big.bin
file=$tmp/$name
head -c "$size_bytes" /dev/urandom >"$file"
want=$(expected "$file")
sha1=$(echo "$want" | sed 's/^SHA1:\([0-9a-f]*\) .*/\1/')

start_server caddy "$caddy_bin" "$caddy_options"
[ -z "$baseline_bin" ] || start_server baseline "$baseline_bin"
log "servers: caddy ${caddy_name:-$caddy_bin}${caddy_options:+ with $caddy_options}${baseline_bin:+, baseline $baseline_bin} ($scheme, load average $(cut -d ' ' -f 1-3 /proc/loadavg))"

failed=""
for client in "${run_clients[@]}"; do
	for label in "${servers[@]}"; do
		measure "$client" "$label"
	done
done

if [ "$memory" = on ]; then
	free=$(df -B1 --output=avail "$tmp" | tail -n 1)
	if [ "$free" -lt $((9 << 30)) ]; then
		log "less than 9 GiB free in ${TMPDIR:-/tmp}: the 4 GiB PUT is left out"
		memory=off
	else
		log "making 4 GiB of random data"
		head -c $((4 << 30)) /dev/urandom >"$tmp/big4.bin"
		want4=$(expected "$tmp/big4.bin")
		for label in "${servers[@]}"; do
			memory_run "$label"
		done
		rm -f "$tmp/big4.bin"
	fi
fi

{
	echo "$size_bytes bytes of random data, $scheme on 127.0.0.1, $(nproc) cores, load average $(cut -d ' ' -f 1-3 /proc/loadavg) at the end"
	echo "caddy: ${caddy_name:-$caddy_bin}${caddy_options:+ with $caddy_options}${baseline_bin:+; baseline: $baseline_bin}"
	echo
	table
	if [ "$memory" = on ]; then
		echo
		for label in "${servers[@]}"; do
			echo "- ${mem_line[$label]}"
		done
	fi
} >"$tmp/table.md"
cat "$tmp/table.md"
[ -z "$results" ] || cp "$tmp/table.md" "$results"
[ -z "$failed" ] || fail "a client failed or a digest was wrong (see above)"
