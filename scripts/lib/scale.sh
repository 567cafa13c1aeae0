#!/usr/bin/env bash
# The scale workload of scripts/bench -scale: one space of many files on the
# embedded store or the distributed one, through the real Caddy.
#
#   bash scripts/bench -scale                      # 1,000 folders x 1,000 files + a folder of 100,000
#   bash scripts/bench -scale -scale-files 100000  # 100 folders x 1,000 + a folder of 10,000
#   bash scripts/bench -scale -scale-files 100000 -scale-big 100000
#   bash scripts/bench -scale -scale-caddy ./caddy-main -scale-results scale.txt
#   bash scripts/bench -scale -scale-keep ...; bash scripts/bench -scale -scale-data DIR/data
#   bash scripts/bench -scale -scale-import-only; bash scripts/bench -scale -scale-data COPY
#   bash scripts/bench -scale -scale-store distributed -scale-files 20000 -scale-big 20000
#
# -scale-files N files in folders of 1,000 (default 1,000,000) and a folder
# "big" of -scale-big M files (default N/10) are generated as a local tree
# (each file a few bytes, made by split(1)) and brought into einstein's
# personal space with `caddy davspaces import`, Caddy stopped; then Caddy
# (Caddy's basic_auth in front of davspaces, the admin endpoint on a unix
# socket; max_nodes twice the files, above the default 1,000,000) is
# started on the store and each step below is timed:
#
#   backup (full)         caddy davspaces backup DEST, from the running server
#   PROPFIND big          Depth 1 of "big", with the ownCloud client's properties
#   DELETE 1,000 files    the files of d0000 one by one (one connection), so
#                         that the trash holds 1,000 items
#   DELETE big            into the trash
#   list the trash        PROPFIND Depth 1 of the trash-bin root: 1,001 items
#   list the deleted big  PROPFIND Depth 1 of the trash item: its M children
#   restore big           MOVE of the item back to /big
#   DELETE big again
#   empty the trash       DELETE of the trash-bin root; meanwhile marie PROPFINDs
#                         her home every 200 ms: the slowest of her answers and
#                         how many took 1 s or more are shown
#   search a name         REPORT oc:search-files of one name (N/1,000 matches),
#                         a page of 100
#   check                 caddy davspaces check, in the running server
#   backup (incremental)  into the full backup's directory
#   DELETE every folder   d0001… one request each, on one connection: the
#                         trash then holds the rest of the space, N - 1,000
#                         files (d0000's went with the first emptying)
#   empty the rest        DELETE of the trash-bin root, marie probing as above
#   check after           caddy davspaces check again: nothing orphaned
#
# -scale-store distributed runs the same on the distributed store:
# PostgreSQL and MinIO started by `scripts/cluster peers` in the run's
# directory (removed at the end), one Caddy node with `store postgres`.
# The backups do not apply there (caddy davspaces backup is the embedded
# store's; PostgreSQL and the bucket have their own, docs/operations.md):
# their rows say "skipped". The table gains a column: the longest
# transaction open on the database during the step, from pg_stat_activity
# sampled every 100 ms (clock_timestamp() - xact_start of every other
# client session of the davspaces database, the server's and check's):
# a transaction of 1 s or more is open across ten samples, whether it
# runs one long statement or many short ones or sits idle between them,
# which log_min_duration_statement (one statement at a time) would miss.
# It reads at most 100 ms short; the query the longest was running is in
# the last column's "tx:" note.
#
# A step of one request (DELETE big, restore big) also shows in its answer
# the time curl waited for the answer, without curl's own start.
#
# -scale-data DIR runs the steps on the data of an earlier run (kept with
# -scale-keep or -scale-import-only, made with the same -scale-files and
# -scale-big) instead of generating and importing: the steps change it, so
# run them on a copy. For the embedded store DIR is that run's data
# directory; for the distributed store its cluster directory (the
# PostgreSQL and MinIO data; copy it with `cp -a` while they are stopped),
# which the run stops at its end but keeps. -scale-import-only generates
# and imports, keeps the run's directory and stops: the import of a
# million files into the distributed store takes more than half an hour,
# and the steps can then run on copies of it, under more than one binary.
#
# Each step shows its wall time, the server's VmHWM during it (set back
# before each step: "5" in /proc/PID/clear_refs) and its largest RssAnon
# sampled every 100 ms; the answers are checked (counts of responses, the
# status), and a step that fails ends the run. The workload speaks only HTTP
# and the caddy commands, so it measures whatever layout the binary's store
# has. The machine is shared: everything runs under nice -n 10. TMPDIR
# chooses where the data goes (a real disk: fsync is part of the cost).
set -euo pipefail
cd "$(dirname "$0")/../.."

files=1000000
big=""
caddy_bin=""
data=""
results=""
keep=""
import_only=""
store=embedded
while [ $# -gt 0 ]; do
	case "$1" in
	-scale) ;;
	-scale-files) files=$2; shift ;;
	-scale-big) big=$2; shift ;;
	-scale-caddy) caddy_bin=$2; shift ;;
	-scale-results) results=$2; shift ;;
	-scale-keep) keep=1 ;;
	-scale-data) data=$2; shift ;;
	-scale-import-only) import_only=1 keep=1 ;;
	-scale-store) store=$2; shift ;;
	-h | -help | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench -scale: unknown argument $1 (see scripts/lib/scale.sh -help)" >&2; exit 2 ;;
	esac
	shift
done
[[ "$files" =~ ^[0-9]+$ ]] && [ "$files" -ge 1000 ] || { echo "bench -scale: -scale-files takes a number of at least 1000" >&2; exit 2; }
big=${big:-$((files / 10))}
[[ "$big" =~ ^[1-9][0-9]*$ ]] || { echo "bench -scale: -scale-big takes a positive number" >&2; exit 2; }
folders=$((files / 1000))
[ "$store" = embedded ] || [ "$store" = distributed ] || { echo "bench -scale: -scale-store is embedded or distributed" >&2; exit 2; }
[ -z "$data" ] || [ -z "$import_only" ] || { echo "bench -scale: -scale-data and -scale-import-only exclude each other" >&2; exit 2; }

started=$SECONDS
tmp=$(mktemp -d "${TMPDIR:-/tmp}/davscale.XXXXXX")
pids=()
cleanup() {
	local status=$?
	set +e
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null
	done
	# A kept run keeps the database too: its data stays in $tmp/cluster.
	# Data given with -scale-data stays where it is.
	if [ -n "$data" ] && [ "$store" = distributed ]; then
		DAVSPACES_CLUSTER_DIR=$data bash scripts/cluster down
	elif [ -d "$tmp/cluster" ] && [ -n "$keep" ]; then
		DAVSPACES_CLUSTER_DIR=$tmp/cluster bash scripts/cluster down
	elif [ -d "$tmp/cluster" ]; then
		DAVSPACES_CLUSTER_DIR=$tmp/cluster bash scripts/cluster down -purge
	fi
	if [ -n "$keep" ]; then
		echo "bench -scale: kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
	echo "bench -scale: finished in $((SECONDS - started))s (exit status $status)" >&2
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { echo "bench -scale: $*" >&2; }
fail() { log "$*"; exit 1; }

# revision names what the table measured: the checkout's commit, which a
# binary given with -scale-caddy need not be built from.
revision=$(git rev-parse --short HEAD 2>/dev/null || echo '?')
[ -z "$caddy_bin" ] || revision="the binary of -scale-caddy (checkout at $revision)"
if [ -z "$caddy_bin" ]; then
	log "building ./cmd/caddy"
	nice -n 10 go build -o "$tmp/caddy" ./cmd/caddy
	caddy_bin=$tmp/caddy
fi
caddy=(nice -n 10 "$caddy_bin")

# generate makes the tree: folders d0000… of 1,000 files f000…f999, and
# big/ of M files.
generate() {
	local i dir
	log "generating $folders folders of 1,000 files and big/ of $big files"
	mkdir -p "$tmp/tree/big"
	for ((i = 0; i < folders; i++)); do
		printf -v dir '%s/tree/d%04d' "$tmp" "$i"
		mkdir "$dir"
		seq 1000 | (cd "$dir" && split -l 1 -a 3 -d - f)
	done
	seq "$big" | (cd "$tmp/tree/big" && split -l 1 -a "${#big}" -d - b)
}

source scripts/lib/benchstore.sh

if [ "$store" = distributed ]; then
	[ -z "$data" ] || [ -f "$data/ports" ] || fail "$data is no cluster directory of an earlier run (no ports file)"
	start_distributed_store "${data:-$tmp/cluster}"
else
	store_config="root ${data:-$tmp/data}"
fi
hash=$("$caddy_bin" hash-password --plaintext relativity)
# caddyfile writes the configuration on a port free now: the import takes
# minutes, after which the server gets a port free then.
caddyfile() {
	free_port
	cat >"$tmp/Caddyfile" <<EOF
{
	admin unix/$tmp/admin.sock|0600
}

http://127.0.0.1:$port {
	@authenticated not method OPTIONS
	basic_auth @authenticated {
		einstein $hash
		marie $hash
	}
	davspaces {
		$store_config
		max_nodes $((2 * (folders * 1000 + big)))
	}
}
EOF
}
caddyfile

generated=- imported=-
if [ -z "$data" ]; then
	t0=$EPOCHREALTIME
	generate
	generated=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	log "importing $((folders * 1000 + big)) files"
	t0=$EPOCHREALTIME
	"${caddy[@]}" davspaces import --config "$tmp/Caddyfile" --adapter caddyfile --space user:einstein "$tmp/tree" / \
		>"$tmp/import.log" 2>&1 || { tail -n 5 "$tmp/import.log" >&2; fail "import failed"; }
	imported=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	log "$(tail -n 1 "$tmp/import.log") in ${imported}s"
	if [ -n "$import_only" ]; then
		log "imported: run the steps with -scale-data on a copy of $tmp/$([ "$store" = distributed ] && echo cluster || echo data) (cp -a, the server stopped)"
		exit 0
	fi
fi

caddyfile
XDG_DATA_HOME="$tmp/xdg-data" XDG_CONFIG_HOME="$tmp/xdg-config" \
	"${caddy[@]}" run --config "$tmp/Caddyfile" --adapter caddyfile >"$tmp/caddy.log" 2>&1 &
server=$!
pids+=("$server")
base=http://127.0.0.1:$port
for _ in $(seq 300); do
	code=$(curl -s --noproxy '*' -o /dev/null -w '%{http_code}' -u einstein:relativity -X PROPFIND -H 'Depth: 0' "$base/remote.php/webdav/" || true)
	[ "$code" = 207 ] && break
	kill -0 "$server" 2>/dev/null || { cat "$tmp/caddy.log" >&2; fail "caddy did not start"; }
	sleep 0.2
done
[ "$code" = 207 ] || fail "caddy did not answer"

# sample writes "<unix ns> <RssAnon kB>" every 100 ms while the server runs.
sample() {
	local key value rest anon pause
	set +e
	exec {pause}<> <(:)
	while kill -0 "$server" 2>/dev/null; do
		anon=""
		while read -r key value rest; do
			[ "$key" = RssAnon: ] && { anon=$value; break; }
		done 2>/dev/null <"/proc/$server/status"
		[ -z "$anon" ] || echo "${EPOCHREALTIME/./} $anon"
		read -r -t 0.1 -u "$pause"
	done
}
sample >"$tmp/rss.log" &
pids+=($!)

# sample_tx writes "<unix µs> <seconds> <query>" every 100 ms while the
# server runs: the transaction open longest on the database, with the
# statement it runs or ran last. Only client sessions count (autovacuum's
# workers are PostgreSQL's own), the sampler's left out.
sample_tx() {
	local pause psql
	set +e
	exec {pause}<> <(:)
	source scripts/lib/peers.sh
	psql=$(command -v psql || echo "$(postgres_bin)/psql")
	while kill -0 "$server" 2>/dev/null; do
		echo "SELECT (extract(epoch FROM clock_timestamp()) * 1e6)::bigint,
			round(extract(epoch FROM clock_timestamp() - xact_start)::numeric, 3),
			left(regexp_replace(query, '\s+', ' ', 'g'), 100)
			FROM pg_stat_activity
			WHERE datname = 'davspaces' AND backend_type = 'client backend'
				AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
			ORDER BY xact_start LIMIT 1;"
		read -r -t 0.1 -u "$pause"
	done | PGPASSWORD=$PG_PASSWORD "$psql" -h 127.0.0.1 -p "$pg_port" -U davspaces -d davspaces -qtA -F ' '
}
if [ "$store" = distributed ]; then
	sample_tx >"$tmp/tx.log" 2>"$tmp/tx.err" &
	pids+=($!)
fi

status_kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$server/status"; }
mb() { awk -v kb="$1" 'BEGIN { printf "%.0f", kb / 1024 }'; }

rows=()
peak_hwm=0 peak_anon=0 peak_tx=0
# longest_tx FROM TO prints the longest transaction sampled between the two
# times (µs) and, from 0.5 s, the statement it ran.
longest_tx() {
	awk -v a="$1" -v b="$2" '$1 >= a && $1 <= b && $2 > m { m = $2; q = $0; sub(/^[^ ]+ [^ ]+ ?/, "", q) }
		END { printf "%.3f", m; if (m >= 0.5) printf " %s", q; print "" }' "$tmp/tx.log"
}
# step NAME CMD… runs CMD, timed, with the server's memory during it; CMD
# sets note to what the table says of its answer.
step() {
	local name=$1 t0 t1 hwm anon tx="" query
	shift
	echo 5 >"/proc/$server/clear_refs"
	note=""
	log "$name"
	t0=$EPOCHREALTIME
	"$@" || fail "$name failed${note:+: $note}"
	t1=$EPOCHREALTIME
	hwm=$(status_kb VmHWM)
	anon=$(awk -v a="${t0/./}" -v b="${t1/./}" -v now="$(status_kb RssAnon)" \
		'BEGIN { m = now } $1 >= a && $1 <= b && $2 > m { m = $2 } END { print m }' "$tmp/rss.log")
	[ "$hwm" -le "$peak_hwm" ] || peak_hwm=$hwm
	[ "$anon" -le "$peak_anon" ] || peak_anon=$anon
	if [ "$store" = distributed ]; then
		sleep 0.2 # the sampler's last answers
		read -r tx query < <(longest_tx "${t0/./}" "${t1/./}")
		awk -v a="$tx" -v b="$peak_tx" 'BEGIN { exit !(a > b) }' && peak_tx=$tx
		[ -z "$query" ] || note="$note; tx: $query"
		tx=$(printf ' %12s' "$tx")
	fi
	rows+=("$(printf '%-22s %9.3f %9s %12s%s  %s' "$name" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$(mb "$hwm")" "$(mb "$anon")" "$tx" "$note")")
}
# skip NAME: a step that does not apply to the store, with why.
skip() {
	log "$1: skipped"
	rows+=("$(printf '%-22s %9s %9s %12s %12s  %s' "$1" - - - - "skipped: $2")")
}

propfind_body='<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><d:resourcetype/><d:getlastmodified/><d:getcontentlength/><d:getetag/><oc:id/><oc:fileid/><oc:permissions/><oc:size/><oc:trashbin-original-filename/></d:prop></d:propfind>'

# dav METHOD PATH [curl args…] sends one request as einstein; the answer's
# body goes to $tmp/answer, its status to code, and the seconds curl waited
# for it to took (a step's own time also counts starting curl, which on a
# loaded machine is tens of milliseconds).
dav() {
	local method=$1 path=$2
	shift 2
	read -r code took < <(curl -s --noproxy '*' -o "$tmp/answer" -w '%{http_code} %{time_total}\n' -u einstein:relativity -X "$method" "$@" "$base$path")
}
responses() { grep -o '<d:response>' "$tmp/answer" | wc -l; }

# listing PATH WANT: PROPFIND Depth 1 of PATH answers WANT responses.
listing() {
	dav PROPFIND "$1" -H 'Depth: 1' -H 'Content-Type: application/xml' --data-binary "$propfind_body"
	local n
	n=$(responses)
	note="$code, $((n - 1)) entries"
	[ "$code" = 207 ] && [ "$n" = "$2" ]
}
expect() {
	local want=$1
	shift
	dav "$@"
	note="$code in ${took}s"
	[ "$code" = "$want" ]
}

dav PROPFIND /remote.php/webdav/ -H 'Depth: 0' -H 'Content-Type: application/xml' \
	--data-binary '<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:spaceid/></d:prop></d:propfind>'
space=$(sed -n 's:.*<oc\:spaceid>\([^<]*\)</oc\:spaceid>.*:\1:p' "$tmp/answer")
[ -n "$space" ] || fail "no space id in $(cat "$tmp/answer")"
space_path=/remote.php/dav/spaces/$space
trash_path=/remote.php/dav/spaces/trash-bin/$space

backup() {
	local out
	out=$("${caddy[@]}" davspaces backup --config "$tmp/Caddyfile" --adapter caddyfile "$tmp/backup" 2>&1) || { note=$out; return 1; }
	note=$(echo "$out" | tail -n 1 | sed 's/^backup: //')
}
check() {
	local out
	out=$("${caddy[@]}" davspaces check --config "$tmp/Caddyfile" --adapter caddyfile 2>&1) || { note=$(echo "$out" | tail -n 3 | tr '\n' ' '); return 1; }
	note=$(echo "$out" | tail -n 1 | sed 's/^check: //')
}
# delete_all DELETEs the URLs given, one request each on one connection,
# and sets note to the count of each status.
delete_all() {
	local args=() url codes
	for url; do
		args+=(-o /dev/null "$url")
	done
	codes=$(curl -s --noproxy '*' -w '%{http_code}\n' -u einstein:relativity -X DELETE "${args[@]}" | sort | uniq -c | tr -s ' \n' ' ')
	note=${codes# }
	note=${note% }
	[ "$codes" = " $# 204 " ]
}
# delete_files deletes the 1,000 files of d0000.
delete_files() {
	local urls=() i
	for ((i = 0; i < 1000; i++)); do
		printf -v 'urls[i]' '%s%s/d0000/f%03d' "$base" "$space_path" "$i"
	done
	delete_all "${urls[@]}"
}
# delete_folders deletes the folders d0001… whole.
delete_folders() {
	local urls=() i
	for ((i = 1; i < folders; i++)); do
		printf -v 'urls[i-1]' '%s%s/d%04d' "$base" "$space_path" "$i"
	done
	delete_all "${urls[@]}"
}
# list_trash lists the trash root and sets key to the newest item's (big).
list_trash() {
	listing "$trash_path" 1002 || return 1
	key=$(grep -o "<d:href>[^<]*</d:href>" "$tmp/answer" | sed -n '2s:.*/\([^/]*\)/</d\:href>:\1:p')
	[ -n "$key" ]
}
restore() {
	expect 201 MOVE "$trash_path/$key" -H "Destination: $base$space_path/big"
}

# empty_trash empties the trash while marie, another user, reads her home
# every 200 ms; it fails when one of her answers took 1 s or more.
empty_trash() {
	local prober slowest slow
	curl -s --noproxy '*' -o /dev/null -u marie:relativity -X PROPFIND -H 'Depth: 0' "$base/remote.php/webdav/"
	(
		while :; do
			curl -s --noproxy '*' -o /dev/null -w '%{http_code} %{time_total}\n' -u marie:relativity \
				-X PROPFIND -H 'Depth: 0' "$base/remote.php/webdav/"
			sleep 0.2
		done
	) >"$tmp/probe.log" &
	prober=$!
	expect 204 DELETE "$trash_path"
	local emptied=$?
	kill "$prober"
	wait "$prober" 2>/dev/null || true
	slowest=$(awk '$2 > m { m = $2 } END { printf "%.3f", m }' "$tmp/probe.log")
	slow=$(awk '$1 != 207 || $2 >= 1 { n++ } END { print n + 0 }' "$tmp/probe.log")
	note="$note; marie: $(wc -l <"$tmp/probe.log") answers, slowest ${slowest}s, $slow of 1 s or more (or failed)"
	[ "$emptied" = 0 ] && [ "$slow" = 0 ]
}
search() {
	dav REPORT "$space_path" -H 'Content-Type: application/xml' -D "$tmp/headers" --data-binary \
		'<oc:search-files xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:fileid/></d:prop><oc:search><oc:pattern>f500</oc:pattern><oc:limit>100</oc:limit><oc:offset>0</oc:offset></oc:search></oc:search-files>'
	note="$code, $(responses) results, $(tr -d '\r' <"$tmp/headers" | sed -n 's/^[Cc]ontent-[Rr]ange: //p')"
	[ "$code" = 207 ]
}

no_backup="caddy davspaces backup is the embedded store's; PostgreSQL and S3 have their own"
if [ "$store" = embedded ]; then step "backup (full)" backup; else skip "backup (full)" "$no_backup"; fi
step "PROPFIND big" listing "$space_path/big/" $((big + 1))
step "DELETE 1,000 files" delete_files
step "DELETE big" expect 204 DELETE "$space_path/big"
step "list the trash" list_trash
step "list the deleted big" listing "$trash_path/$key/" $((big + 1))
step "restore big" restore
step "DELETE big again" expect 204 DELETE "$space_path/big"
step "empty the trash" empty_trash
step "search a name" search
step "check" check
if [ "$store" = embedded ]; then step "backup (incremental)" backup; else skip "backup (incremental)" "$no_backup"; fi
step "DELETE every folder" delete_folders
step "empty the rest" empty_trash
step "check after" check

table() {
	echo "# davspaces scale workload ($store store), $(date -u +%Y-%m-%dT%H:%MZ), $revision"
	echo "# $folders folders x 1,000 files + big/ of $big files: generated in ${generated}s, imported in ${imported}s"
	if [ "$store" = distributed ]; then
		printf '%-22s %9s %9s %12s %12s  %s\n' step seconds "VmHWM MB" "RssAnon MB" "longest tx s" answer
	else
		printf '%-22s %9s %9s %12s  %s\n' step seconds "VmHWM MB" "RssAnon MB" answer
	fi
	printf '%s\n' "${rows[@]}"
	echo "# whole run: VmHWM $(mb "$peak_hwm") MB, RssAnon $(mb "$peak_anon") MB at most${tx_peak_note:-}"
}
[ "$store" = embedded ] || tx_peak_note=", the longest transaction ${peak_tx}s (sampled every 100 ms)"
table
[ -z "$results" ] || table >>"$results"
