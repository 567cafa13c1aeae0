#!/usr/bin/env bash
# The migration workload of scripts/bench -migrate: a store made by an older
# davspaces, opened by this one.
#
#   bash scripts/bench -migrate                         # from c754eef, 100,000 files
#   bash scripts/bench -migrate -migrate-from REV -migrate-files 10000
#   bash scripts/bench -migrate -migrate-results migrate.txt
#   bash scripts/bench -migrate -migrate-store distributed -migrate-files 20000
#
# The Caddy of ./cmd/caddy as of -migrate-from REV (default c754eef, the
# last commit before the store layouts changed) makes the store (a data
# directory, the embedded default; with -migrate-store distributed,
# PostgreSQL and MinIO started by `scripts/cluster peers`): a local tree of -migrate-files files in
# a folder "big" (default 100,000) and a few folders is brought into
# einstein's personal space with `caddy davspaces import`, Caddy stopped;
# then, through that Caddy, einstein writes a file three times (two
# versions), marks it a favourite, shares a folder with marie and by a
# public link, and deletes a folder of 1,000 files and a file into the
# trash.
#
# Then the Caddy of this tree opens the same data directory, and each step
# below is timed and must hold:
#
#   open                  the server answers (it converts the store first)
#   check                 caddy davspaces check finds nothing wrong
#   ids                   big/ and the versioned file keep their file ids
#   versions              both versions are listed and read back by SHA1
#   favourite             the file is still einstein's favourite
#   shares                marie finds the folder shared with her and reads
#                         a file of it; the public link reads it too
#   trash                 the trash lists both items; the folder's restore
#                         brings it back
#   export                caddy davspaces export (Caddy stopped) writes the
#                         space out; every file's SHA1 is the one expected
#                         (the tree as imported, with the changes above)
#
# It stops at the first step that does not hold (exit status 1). TMPDIR
# chooses where the data goes.
set -euo pipefail
cd "$(dirname "$0")/../.."

from=c754eef
files=100000
store=embedded
results=""
while [ $# -gt 0 ]; do
	case "$1" in
	-migrate) ;;
	-migrate-from) from=$2; shift ;;
	-migrate-files) files=$2; shift ;;
	-migrate-store) store=$2; shift ;;
	-migrate-results) results=$2; shift ;;
	-h | -help | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench -migrate: unknown argument $1 (see scripts/lib/migrate.sh -help)" >&2; exit 2 ;;
	esac
	shift
done
# Older servers know no max_nodes: the space stays under its default cap.
[[ "$files" =~ ^[1-9][0-9]*$ ]] && [ "$files" -le 900000 ] || { echo "bench -migrate: -migrate-files takes a number from 1 to 900000" >&2; exit 2; }
[ "$store" = embedded ] || [ "$store" = distributed ] || { echo "bench -migrate: -migrate-store is embedded or distributed" >&2; exit 2; }
git rev-parse --verify --quiet "$from^{commit}" >/dev/null || { echo "bench -migrate: no commit $from" >&2; exit 2; }

started=$SECONDS
tmp=$(mktemp -d "${TMPDIR:-/tmp}/davmigrate.XXXXXX")
server=""
cleanup() {
	local status=$?
	set +e
	[ -z "$server" ] || { kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; }
	[ ! -d "$tmp/cluster" ] || DAVSPACES_CLUSTER_DIR=$tmp/cluster bash scripts/cluster down -purge
	rm -rf "$tmp"
	echo "bench -migrate: finished in $((SECONDS - started))s (exit status $status)" >&2
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { echo "bench -migrate: $*" >&2; }
fail() { log "$*"; exit 1; }

log "building ./cmd/caddy as of $from and of this tree"
mkdir "$tmp/old"
git archive "$from" | tar -x -C "$tmp/old"
(cd "$tmp/old" && nice -n 10 go build -o "$tmp/caddy-old" ./cmd/caddy)
rm -rf "$tmp/old"
nice -n 10 go build -o "$tmp/caddy-new" ./cmd/caddy

# The tree: big/ of $files files, keep/ with the file to version and a
# file to delete, shared/ for marie, gone/ of 1,000 files to delete.
log "generating $files + 1,000 files"
mkdir -p "$tmp/tree/big" "$tmp/tree/keep" "$tmp/tree/shared" "$tmp/tree/gone"
seq "$files" | (cd "$tmp/tree/big" && split -l 1 -a "${#files}" -d - b)
seq 1000 | (cd "$tmp/tree/gone" && split -l 1 -a 3 -d - g)
echo "first words" >"$tmp/tree/keep/notes.txt"
echo "soon gone" >"$tmp/tree/keep/single.txt"
echo "for marie" >"$tmp/tree/shared/letter.txt"

source scripts/lib/benchstore.sh
store_config="root $tmp/data"
if [ "$store" = distributed ]; then
	start_distributed_store
fi
hash=$("$tmp/caddy-new" hash-password --plaintext relativity)
# caddyfile writes the configuration on a port free now: the import takes
# minutes, after which each server gets a port free then.
caddyfile() {
	free_port
	cat >"$tmp/Caddyfile" <<EOF
{
	admin unix/$tmp/admin.sock|0600
}

http://127.0.0.1:$port {
	@authenticated {
		not method OPTIONS
		not path /dav/public-files/*
	}
	basic_auth @authenticated {
		einstein $hash
		marie $hash
	}
	davspaces {
		$store_config
	}
}
EOF
	base=http://127.0.0.1:$port
}
caddyfile

log "importing with the Caddy of $from"
t0=$EPOCHREALTIME
nice -n 10 "$tmp/caddy-old" davspaces import --config "$tmp/Caddyfile" --adapter caddyfile --space user:einstein "$tmp/tree" / \
	>"$tmp/import.log" 2>&1 || { tail -n 5 "$tmp/import.log" >&2; fail "import failed"; }
imported=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
log "$(tail -n 1 "$tmp/import.log") in ${imported}s"

start() {
	caddyfile
	XDG_DATA_HOME="$tmp/xdg-data" XDG_CONFIG_HOME="$tmp/xdg-config" \
		nice -n 10 "$1" run --config "$tmp/Caddyfile" --adapter caddyfile >>"$tmp/caddy.log" 2>&1 &
	server=$!
	for _ in $(seq 3000); do
		code=$(curl -s --noproxy '*' -o /dev/null -w '%{http_code}' -u einstein:relativity -X PROPFIND -H 'Depth: 0' "$base/remote.php/webdav/" || true)
		[ "$code" = 207 ] && return 0
		kill -0 "$server" 2>/dev/null || { tail -n 20 "$tmp/caddy.log" >&2; fail "caddy did not start"; }
		sleep 0.2
	done
	fail "caddy did not answer: $code"
}
stop() {
	kill "$server"
	wait "$server" 2>/dev/null || true
	server=""
}

# as USER METHOD PATH [curl args]: the answer in $tmp/answer, the status in $code.
as() {
	local user=$1 method=$2 path=$3
	shift 3
	code=$(curl -s --noproxy '*' -o "$tmp/answer" -w '%{http_code}' ${user:+-u "$user:relativity"} -X "$method" "$@" "$base$path")
}
want() {
	local status=$1
	shift
	as "$@"
	[ "$code" = "$status" ] || fail "$2 $3 as ${1:-nobody}: $code, want $status: $(head -c 300 "$tmp/answer")"
}
prop() { sed -n "s#.*<$1>\([^<]*\)</$1>.*#\1#p" "$tmp/answer" | head -n 1; }
propfind() {
	want 207 "$1" PROPFIND "$2" -H 'Depth: 0' -H 'Content-Type: application/xml' --data-binary \
		"<d:propfind xmlns:d=\"DAV:\" xmlns:oc=\"http://owncloud.org/ns\"><d:prop>$3</d:prop></d:propfind>"
}
ocs() {
	local user=$1 method=$2 endpoint=$3
	shift 3
	want 200 "$user" "$method" "/ocs/v2.php/apps/files_sharing/api/v1$endpoint" -H 'OCS-APIRequest: true' "$@"
}
json() { grep -o "\"$1\":\"[^\"]*\"" "$tmp/answer" | head -n 1 | sed 's/.*:"\(.*\)"/\1/'; }
sha() { sha1sum | cut -d ' ' -f 1; }

log "making versions, a favourite, shares and trash with the Caddy of $from"
start "$tmp/caddy-old"
webdav=/remote.php/webdav
want 207 marie PROPFIND "$webdav/" -H 'Depth: 0'
for words in "second words" "third words"; do
	echo "$words" | want 204 einstein PUT "$webdav/keep/notes.txt" --data-binary @-
done
echo "third words" >"$tmp/tree/keep/notes.txt"
want 207 einstein PROPPATCH "$webdav/keep/notes.txt" -H 'Content-Type: application/xml' --data-binary \
	'<d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:set><d:prop><oc:favorite>1</oc:favorite></d:prop></d:set></d:propertyupdate>'
ocs einstein POST '/shares?format=json' --data 'path=/shared&shareType=0&shareWith=marie&permissions=1'
ocs einstein POST '/shares?format=json' --data 'path=/shared&shareType=3&permissions=1'
token=$(json token)
[ -n "$token" ] || fail "no link token in $(cat "$tmp/answer")"
propfind einstein "$webdav/big" '<oc:fileid/>'
big_id=$(prop oc:fileid)
propfind einstein "$webdav/keep/notes.txt" '<oc:fileid/><oc:spaceid/>'
notes_id=$(prop oc:fileid)
space=$(prop oc:spaceid)
[ -n "$big_id" ] && [ -n "$notes_id" ] && [ -n "$space" ] || fail "no ids in $(cat "$tmp/answer")"
want 204 einstein DELETE "$webdav/gone"
want 204 einstein DELETE "$webdav/keep/single.txt"
rm "$tmp/tree/keep/single.txt"
stop

rows=()
step() {
	local name=$1 t0
	shift
	log "$name"
	note=""
	t0=$EPOCHREALTIME
	"$@" || fail "$name failed${note:+: $note}"
	rows+=("$(printf '%-10s %9.3f  %s' "$name" "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')" "$note")")
}

open_new() {
	local before
	before=$(wc -l <"$tmp/caddy.log")
	start "$tmp/caddy-new"
	note="$(tail -n +"$((before + 1))" "$tmp/caddy.log" | grep -c -i -e migrat -e layout || true) log lines on the conversion"
}
check() {
	local out
	out=$(nice -n 10 "$tmp/caddy-new" davspaces check --config "$tmp/Caddyfile" --adapter caddyfile 2>&1) || { note=$(echo "$out" | tail -n 3 | tr '\n' ' '); return 1; }
	note=$(echo "$out" | tail -n 1 | sed 's/^check: //')
}
ids() {
	propfind einstein "$webdav/big" '<oc:fileid/>'
	[ "$(prop oc:fileid)" = "$big_id" ] || { note="big/ is $(prop oc:fileid), was $big_id"; return 1; }
	propfind einstein "$webdav/keep/notes.txt" '<oc:fileid/>'
	[ "$(prop oc:fileid)" = "$notes_id" ] || { note="notes.txt is $(prop oc:fileid), was $notes_id"; return 1; }
	note="big/ and notes.txt keep theirs"
}
versions() {
	local hrefs got
	want 207 einstein PROPFIND "/remote.php/dav/meta/$notes_id/v" -H 'Depth: 1'
	mapfile -t hrefs < <(grep -o '<d:href>[^<]*/v/[^<]\{1,\}</d:href>' "$tmp/answer" | sed 's:</\{0,1\}d\:href>::g')
	[ "${#hrefs[@]}" = 2 ] || { note="${#hrefs[@]} versions"; return 1; }
	got=""
	for href in "${hrefs[@]}"; do
		want 200 einstein GET "$href"
		got+="$(sha <"$tmp/answer") "
	done
	for words in "first words" "second words"; do
		[[ "$got" == *"$(echo "$words" | sha)"* ]] || { note="no version reads \"$words\""; return 1; }
	done
	note="2 versions, SHA1s match"
}
favourite() {
	propfind einstein "$webdav/keep/notes.txt" '<oc:favorite/>'
	[ "$(prop oc:favorite)" = 1 ] || { note="oc:favorite is $(prop oc:favorite)"; return 1; }
}
shares() {
	ocs marie GET '/shares?shared_with_me=true&format=json'
	grep -q '"path":"[^"]*shared' "$tmp/answer" || { note="marie's shares: $(head -c 300 "$tmp/answer")"; return 1; }
	want 200 "" GET "/dav/public-files/$token/letter.txt"
	[ "$(sha <"$tmp/answer")" = "$(sha <"$tmp/tree/shared/letter.txt")" ] || { note="the link reads $(cat "$tmp/answer")"; return 1; }
	note="marie's share listed, the link reads letter.txt"
}
trash() {
	local key
	want 207 einstein PROPFIND "/remote.php/dav/spaces/trash-bin/$space" -H 'Depth: 1' -H 'Content-Type: application/xml' --data-binary \
		'<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:trashbin-original-filename/></d:prop></d:propfind>'
	[ "$(grep -o '<d:response>' "$tmp/answer" | wc -l)" = 3 ] || { note="$(grep -o '<d:response>' "$tmp/answer" | wc -l) responses, want the root and 2 items"; return 1; }
	key=$(awk -v RS='</d:response>' '/<oc:trashbin-original-filename>gone</' "$tmp/answer" |
		sed -n 's:.*<d\:href>[^<]*/\([^/<]\{1,\}\)/\{0,1\}</d\:href>.*:\1:p' | head -n 1)
	[ -n "$key" ] || { note="no trash item named gone"; return 1; }
	want 201 einstein MOVE "/remote.php/dav/spaces/trash-bin/$space/$key" -H "Destination: $base/remote.php/dav/spaces/$space/gone"
	note="2 items; gone/ restored"
}
export_space() {
	stop
	nice -n 10 "$tmp/caddy-new" davspaces export --config "$tmp/Caddyfile" --adapter caddyfile --space user:einstein "$tmp/out" >"$tmp/export.log" 2>&1 ||
		{ note=$(tail -n 3 "$tmp/export.log" | tr '\n' ' '); return 1; }
	(cd "$tmp/tree" && find . -type f -print0 | sort -z | xargs -0 sha1sum) >"$tmp/want.sha1"
	(cd "$tmp/out" && find . -type f -print0 | sort -z | xargs -0 sha1sum) >"$tmp/got.sha1"
	diff -q "$tmp/want.sha1" "$tmp/got.sha1" >/dev/null || { note="$(diff "$tmp/want.sha1" "$tmp/got.sha1" | head -n 4 | tr '\n' ' ')"; return 1; }
	note="$(wc -l <"$tmp/got.sha1") files, every SHA1 as expected"
}

step open open_new
step check check
step ids ids
step versions versions
step favourite favourite
step shares shares
step trash trash
step export export_space

table() {
	echo "# davspaces migration ($store store) from $from to $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "# $files files in big/ + 1,004 others: imported by $from in ${imported}s"
	printf '%-10s %9s  %s\n' step seconds answer
	printf '%s\n' "${rows[@]}"
}
table
[ -z "$results" ] || table >>"$results"
