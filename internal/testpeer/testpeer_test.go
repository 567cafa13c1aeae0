package testpeer

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestPostgreSQLDatabasesAreFresh: each test gets an empty database of
// its own on one server.
func TestPostgreSQLDatabasesAreFresh(t *testing.T) {
	ctx := t.Context()
	a, b := PostgreSQL(t), PostgreSQL(t)
	if a == b {
		t.Fatalf("two tests share database %s", a)
	}
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var tables int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Fatalf("fresh database has %d tables", tables)
	}
}

// TestPostgresOutage: a stopped server refuses connections and takes them
// again after Start, on the same address and data.
func TestPostgresOutage(t *testing.T) {
	pg, err := StartPostgres()
	if err != nil {
		Unavailable(t, err)
	}
	defer pg.Close()
	dsn := pg.NewDatabase(t)
	pg.Stop()
	ctx := t.Context()
	if conn, err := pgx.Connect(ctx, dsn); err == nil {
		conn.Close(ctx)
		t.Fatal("connected to a stopped server")
	}
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("after restart: %v", err)
	}
	conn.Close(ctx)
}

// TestMinIOBucket: a fresh bucket takes and returns an object.
func TestMinIOBucket(t *testing.T) {
	s := S3Bucket(t)
	client, err := minio.New(s.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := client.PutObject(ctx, s.Bucket, "k", strings.NewReader("v"), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	obj, err := client.GetObject(ctx, s.Bucket, "k", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	st, err := obj.Stat()
	if err != nil || st.Size != 1 {
		t.Fatalf("stat: %v %+v", err, st)
	}
}
