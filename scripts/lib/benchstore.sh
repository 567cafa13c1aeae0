# Shared by the bench workloads scale.sh and migrate.sh: a free port, and
# the distributed store of scripts/cluster peers. Callers define fail and
# tmp.

# free_port sets port to a 127.0.0.1 port nothing listens on now.
free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			port=$p
			return
		fi
	done
	fail "no free port found"
}

# start_distributed_store [DIR] starts PostgreSQL and MinIO in DIR (default
# $tmp/cluster; a directory an earlier run kept starts on its data):
# scripts/cluster peers, which `scripts/cluster down [-purge]` with the
# same DAVSPACES_CLUSTER_DIR stops. It exports their ports and secrets, and
# sets store_config to the davspaces block's store lines.
start_distributed_store() {
	local dir=${1:-$tmp/cluster}
	chmod 755 "$tmp" # the postgres user goes through it
	DAVSPACES_CLUSTER_DIR=$dir bash scripts/cluster peers
	set -a
	source "$dir/ports"
	source "$dir/secrets"
	set +a
	store_config="store postgres {
			dsn \"postgres://davspaces:{env.PG_PASSWORD}@127.0.0.1:$pg_port/davspaces?sslmode=disable\"
			s3 {
				endpoint 127.0.0.1:$minio_port
				bucket davspaces
				access_key {env.S3_ACCESS_KEY}
				secret_key {env.S3_SECRET_KEY}
			}
		}"
}
