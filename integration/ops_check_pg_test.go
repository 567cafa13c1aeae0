package integration

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// TestOpsCheckCluster is TestOpsCheckFindsAndRepairs on the scale-out
// deployment: `caddy davspaces check` on a node's Caddyfile checks the
// PostgreSQL database and the bucket the nodes share while they serve,
// finds a missing object, an orphan one, a wrong folder size and a
// session whose part is gone, each with its space and path; --repair
// fixes all but the missing content; once the object is back from a
// backup, a deep check is clean and the cluster serves the file.
func TestOpsCheckCluster(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOptions{})
	// The node's Caddyfile, with a grace that lets the check judge an
	// object written a moment ago (the default is 15 minutes).
	config := filepath.Join(t.TempDir(), "Caddyfile")
	cfg := c.nodes[0].run.config
	store := cfg[strings.LastIndex(cfg[:strings.Index(cfg, "store postgres {")], "\n")+1:]
	store = store[:strings.Index(store, "{")+1] // the line, indented
	cfg = strings.Replace(cfg, store, store+"\n\t"+strings.TrimSuffix(store, "store postgres {")+"object_grace 1ms", 1)
	if err := os.WriteFile(config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	run := c.nodes[0].run

	cl := newClient(t, c.lb.URL, "einstein")
	cl.expect(http.StatusCreated, "MKCOL", "/webdav/docs", "")
	cl.expect(http.StatusCreated, "MKCOL", "/webdav/docs/sub", "")
	a, b, d := randomBytes(t, 40<<10), randomBytes(t, 50<<10), randomBytes(t, 30<<10)
	cl.expect(http.StatusCreated, "PUT", "/webdav/docs/a.bin", string(a))
	cl.expect(http.StatusCreated, "PUT", "/webdav/docs/sub/b.bin", string(b))
	cl.expect(http.StatusNoContent, "PUT", "/webdav/docs/sub/b.bin", string(d)) // a version of b.bin
	cl.expect(http.StatusNoContent, "DELETE", "/webdav/docs/sub/b.bin", "")     // into the trash
	cl.expect(http.StatusCreated, "PUT", "/webdav/docs/sub/c.bin", string(b))
	resp, body, err := cl.tusCreate("/webdav/docs/", "tus.bin", 100, []byte("0123456789"))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("TUS POST: %v %v %s", resp, err, body)
	}

	// The shared store is checked while the nodes serve.
	for _, args := range [][]string{{"check"}, {"check", "--deep"}} {
		out, code := runCaddyDavspaces(t, run, append(args, "--config", config)...)
		if code != 0 || !strings.Contains(out, "0 problems") {
			t.Fatalf("%v of a sound store: exit %d\n%s", args, code, out)
		}
	}

	db := connectClusterDB(t, c)
	bucket := openClusterBucket(t, c)
	objectA := sqlString(t, db, `SELECT content->0->>'k' FROM nodes WHERE name = 'a.bin'`)
	removeClusterObject(t, c, bucket, objectA)
	putClusterObject(t, c, bucket, "files/"+strings.ReplaceAll(uuid.NewString(), "-", ""), []byte("nobody's"))
	sqlExec(t, db, `UPDATE nodes SET size = size + 1000 WHERE name = 'sub'`)
	removeClusterObject(t, c, bucket, sqlString(t, db, `SELECT parts->0->>'k' FROM upload_sessions`))

	checkFindsTheDamage(t, run, config)

	putClusterObject(t, c, bucket, objectA, a) // back from a backup
	out, code := runCaddyDavspaces(t, run, "check", "--deep", "--config", config)
	if code != 0 || !strings.Contains(out, "0 problems") {
		t.Fatalf("check after the repair: exit %d\n%s", code, out)
	}
	if _, got := cl.expect(http.StatusOK, "GET", "/webdav/docs/a.bin", ""); got != string(a) {
		t.Error("docs/a.bin changed")
	}
	if got := cl.prop("/webdav/docs/sub", ocNS, "size"); got != fmt.Sprint(len(b)) {
		t.Errorf("docs/sub oc:size %s, want %d", got, len(b))
	}
}

// connectClusterDB connects to the cluster's database, to damage it.
func connectClusterDB(t *testing.T, c *cluster) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := pgx.Connect(ctx, c.dsn)
	if err != nil {
		t.Fatalf("connecting to the cluster's database: %v", err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	return db
}

func sqlString(t *testing.T, db *pgx.Conn, query string) string {
	t.Helper()
	var s string
	if err := db.QueryRow(t.Context(), query).Scan(&s); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return s
}

func sqlExec(t *testing.T, db *pgx.Conn, query string) {
	t.Helper()
	if tag, err := db.Exec(t.Context(), query); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("%s: %v, %v", query, tag, err)
	}
}

// openClusterBucket is a client of the cluster's bucket, to damage it.
func openClusterBucket(t *testing.T, c *cluster) *minio.Client {
	t.Helper()
	client, err := minio.New(c.bucket.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(c.bucket.AccessKey, c.bucket.SecretKey, "")})
	if err != nil {
		t.Fatalf("MinIO client: %v", err)
	}
	return client
}

func removeClusterObject(t *testing.T, c *cluster, bucket *minio.Client, key string) {
	t.Helper()
	if err := bucket.RemoveObject(t.Context(), c.bucket.Bucket, key, minio.RemoveObjectOptions{}); err != nil {
		t.Fatalf("removing object %s: %v", key, err)
	}
}

func putClusterObject(t *testing.T, c *cluster, bucket *minio.Client, key string, content []byte) {
	t.Helper()
	_, err := bucket.PutObject(t.Context(), c.bucket.Bucket, key, bytes.NewReader(content), int64(len(content)), minio.PutObjectOptions{})
	if err != nil {
		t.Fatalf("putting object %s: %v", key, err)
	}
}
