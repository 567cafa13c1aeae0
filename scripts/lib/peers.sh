# Sourced by scripts/test, scripts/cluster and scripts/bench: installs the
# servers the distributed store runs on when they are missing. PostgreSQL
# comes from Debian's packages, MinIO from the Go module proxy at a pinned
# version (building it takes a few minutes, once).

MINIO_MODULE=github.com/minio/minio
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c

# postgres_bin prints the directory of PostgreSQL's server binaries.
postgres_bin() {
	if command -v initdb >/dev/null 2>&1; then
		dirname "$(command -v initdb)"
		return
	fi
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[ -n "$d" ] && [ -x "$d/postgres" ] && echo "$d"
}

# minio_bin prints the path of the minio server.
minio_bin() {
	if command -v minio >/dev/null 2>&1; then
		command -v minio
		return
	fi
	local bin
	bin="$(go env GOBIN)"
	[ -n "$bin" ] || bin="$(go env GOPATH | cut -d: -f1)/bin"
	[ -x "$bin/minio" ] && echo "$bin/minio"
}

install_postgresql() {
	[ -n "$(postgres_bin)" ] && return
	local sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	echo "installing PostgreSQL"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
}

install_minio() {
	[ -n "$(minio_bin)" ] && return
	echo "installing MinIO $MINIO_VERSION (go install, a few minutes)"
	go install "$MINIO_MODULE@$MINIO_VERSION"
}
