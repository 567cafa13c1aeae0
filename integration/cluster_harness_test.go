package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/internal/testpeer"
)

// deployment is one way of running the server that the client suites
// (litmus, cadaver, rclone, the desktop clients) test: whatever runs behind
// the URL, they must see one and the same server.
type deployment struct {
	name  string
	start func(t testing.TB, opts serverOptions) *server
}

var deployments = []deployment{
	{"embedded", startServer},
	{"cluster", startClusterServer},
}

// startClusterServer is startCluster as a deployment: the server the suites
// talk to is the load balancer.
func startClusterServer(t testing.TB, opts serverOptions) *server {
	t.Helper()
	if opts.root != "" || opts.issuer != "" || opts.admin != "" || len(opts.webfinger) > 0 {
		t.Fatalf("the cluster deployment takes only tls and davspaces lines, not %+v", opts)
	}
	return startCluster(t, clusterOptions{tls: opts.tls, davspaces: opts.davspaces, postgresStore: opts.postgresStore}).lb
}

// clusterOptions adjust a cluster for a test.
type clusterOptions struct {
	// tls puts the load balancer on https://localhost:port with Caddy's
	// local CA, as serverOptions.tls does; the nodes stay plain HTTP.
	tls bool
	// davspaces are extra lines for every node's davspaces block.
	davspaces []string
	// postgresStore are extra lines for every node's store block.
	postgresStore []string
	// postgres and minio are servers of the test's own (outage tests);
	// nil means testpeer's shared ones.
	postgres *testpeer.Postgres
	minio    *testpeer.MinIO
	// together starts the nodes at once, as the replicas of a deployment
	// start, so that they set up the fresh database at the same time;
	// otherwise each node is ready before the next starts.
	together bool
	// beforeNodes, if set, runs once the database and the bucket are made
	// and before the nodes start (to stop a server of the test's own).
	beforeNodes func()
	// env is extra environment for every node (NAME=value), such as
	// OIDC_ISSUER for a test provider.
	env []string
	// ports are the nodes' ports, for a test that must name a node's
	// address before it starts (a provider's redirect URI); empty picks
	// free ones.
	ports []int
}

// cluster is the scale-out deployment: two Caddy nodes sharing one
// PostgreSQL database and one S3 bucket, behind a Caddy load balancer.
type cluster struct {
	lb    *server // what clients talk to
	nodes []*clusterNode
	// dsn and bucket are the database and bucket the nodes share.
	dsn    string
	bucket testpeer.S3
}

// clusterNode is one Caddy of a cluster, which a test can kill and start
// again on the same port and configuration.
type clusterNode struct {
	run caddyRun
	*server
}

// kill ends the node abruptly, as a crash would.
func (n *clusterNode) kill() { n.server.kill() }

// start runs the node again after kill.
func (n *clusterNode) start(t testing.TB) {
	t.Helper()
	n.server = n.run.start(t)
}

// clusterSize is the number of nodes: two are enough to show that no node
// keeps state of its own.
const clusterSize = 2

// startCluster starts a fresh database and bucket, the nodes on them and
// the load balancer in front.
func startCluster(t testing.TB, opts clusterOptions) *cluster {
	t.Helper()
	dsn, bucket := clusterStorage(t, opts)
	if opts.beforeNodes != nil {
		opts.beforeNodes()
	}
	c := &cluster{dsn: dsn, bucket: bucket}
	var upstreams []string
	for i := range clusterSize {
		var port int
		if i < len(opts.ports) {
			port = opts.ports[i]
		} else {
			port = freePort(t)
		}
		n := &clusterNode{run: caddyRun{
			dir:    t.TempDir(),
			config: nodeCaddyfile(t, port, dsn, bucket, opts),
			url:    fmt.Sprintf("http://127.0.0.1:%d", port),
			env:    opts.env,
		}}
		n.server = n.run.launch(t)
		if !opts.together {
			n.waitReady(t)
		}
		c.nodes = append(c.nodes, n)
		upstreams = append(upstreams, fmt.Sprintf("127.0.0.1:%d", port))
	}
	for _, n := range c.nodes {
		n.waitReady(t)
	}
	lbPort := freePort(t)
	lb := caddyRun{dir: t.TempDir(), config: lbCaddyfile(lbPort, upstreams, opts.tls), url: fmt.Sprintf("http://127.0.0.1:%d", lbPort)}
	if opts.tls {
		lb.url = fmt.Sprintf("https://localhost:%d", lbPort)
	}
	c.lb = lb.start(t)
	return c
}

// clusterStorage creates the database and the bucket the nodes share, on
// the test's own servers or on the shared ones.
func clusterStorage(t testing.TB, opts clusterOptions) (dsn string, bucket testpeer.S3) {
	t.Helper()
	if opts.postgres != nil {
		dsn = opts.postgres.NewDatabase(t)
	} else {
		dsn = testpeer.PostgreSQL(t)
	}
	if opts.minio != nil {
		bucket = opts.minio.NewBucket(t)
	} else {
		bucket = testpeer.S3Bucket(t)
	}
	return dsn, bucket
}

// nodeCaddyfile is Caddyfile.example for one node: plain HTTP on port for
// any host name (the load balancer passes on the client's Host, which the
// node's links are made of), listening on loopback alone, the store in
// PostgreSQL and S3, and the load balancer trusted for X-Forwarded-Proto.
func nodeCaddyfile(t testing.TB, port int, dsn string, bucket testpeer.S3, opts clusterOptions) string {
	t.Helper()
	// The root line that exampleCaddyfile writes becomes the store block.
	const rootMarker = "<store>"
	cfg := exampleCaddyfile(t, port, rootMarker, serverOptions{davspaces: opts.davspaces})
	store := postgresStoreBlock(dsn, bucket, opts.postgresStore...)
	for old, repl := range map[string]string{
		fmt.Sprintf("http://127.0.0.1:%d {", port): fmt.Sprintf("http://:%d {\n\tbind 127.0.0.1", port),
		"\t\t\troot " + rootMarker + "\n":          indent(store, "\t\t\t"),
		"\tservers {\n":                            "\tservers {\n\t\ttrusted_proxies static 127.0.0.1/32\n",
	} {
		if !strings.Contains(cfg, old) {
			t.Fatalf("the test Caddyfile no longer contains %q:\n%s", old, cfg)
		}
		cfg = strings.Replace(cfg, old, repl, 1)
	}
	return cfg
}

// postgresStoreBlock is the store block of a node on database dsn and
// bucket, with the extra lines at its end.
func postgresStoreBlock(dsn string, bucket testpeer.S3, extra ...string) []string {
	block := []string{
		"store postgres {",
		"\tdsn " + quoteCaddyfile(dsn),
		"\ts3 {",
		"\t\tendpoint " + bucket.Endpoint,
		"\t\tbucket " + bucket.Bucket,
		"\t\taccess_key " + bucket.AccessKey,
		"\t\tsecret_key " + bucket.SecretKey,
		"\t}",
	}
	for _, l := range extra {
		block = append(block, "\t"+l)
	}
	return append(block, "}")
}

// onEachDeployment runs scenario on a server of each deployment, started
// with opts, the deployments in parallel.
func onEachDeployment(t *testing.T, opts serverOptions, scenario func(t *testing.T, s *server)) {
	for _, d := range deployments {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			scenario(t, d.start(t, opts))
		})
	}
}

// lbCaddyfile is the load balancer: round robin over the nodes; a request
// that cannot reach a node (killed: the connection is refused) is tried on
// the other, and a node that failed is left out for a while.
func lbCaddyfile(port int, upstreams []string, tls bool) string {
	site, tlsLine, global := fmt.Sprintf("http://127.0.0.1:%d", port), "", ""
	if tls {
		site, tlsLine, global = fmt.Sprintf("https://localhost:%d", port), "\ttls internal\n", "\tauto_https disable_redirects\n"
	}
	return fmt.Sprintf(`{
	admin off
	skip_install_trust
	servers {
		# Caddy 2.11 wraps request bodies for this idle timeout, which keeps
		# net/http from seeing an Expect: 100-continue body that was never
		# asked for: once a node refuses the request, the balancer would
		# wait for a body the client never sends (litmus http expect100).
		timeouts {
			read_body_idle -1s
		}
		# A node may answer before the balancer has read the last of the
		# request body from the client (its end, after the bytes a node
		# reads); without full duplex, writing the answer's header
		# closes that body under the upstream's writer, which then drops
		# the node's connection and cuts the answer short (seen under
		# load: a PROPFIND's body ended early).
		enable_full_duplex
	}
%s}

%s {
%s	reverse_proxy %s {
		lb_policy round_robin
		lb_retries 2
		lb_try_duration 5s
		lb_try_interval 50ms
		fail_duration 2s
		# Stream bodies both ways: downloads and uploads of many MB.
		flush_interval -1
		transport http {
			dial_timeout 2s
		}
	}
}
`, global, site, tlsLine, strings.Join(upstreams, " "))
}

// quoteCaddyfile quotes a Caddyfile token that may hold spaces or quotes.
func quoteCaddyfile(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
