package caddymodule

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/pgstore"
	"github.com/davspaces/davspaces/storage/s3content"
)

// The postgres store's tests share one PostgreSQL and one MinIO server,
// stopped when the tests are done.
func TestMain(m *testing.M) { os.Exit(testpeer.Main(m)) }

func TestUnmarshalStore(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string // the store's JSON (keys sorted, as Caddy writes a module object)
	}{
		{
			name: "bolt without block",
			input: `davspaces {
				store bolt
			}`,
			want: `{"backend":"bolt"}`,
		},
		{
			name: "bolt with root",
			input: `davspaces {
				store bolt {
					root /var/lib/davspaces
				}
			}`,
			want: `{"backend":"bolt","root":"/var/lib/davspaces"}`,
		},
		{
			name: "bolt with sweep_interval",
			input: `davspaces {
				store bolt {
					root /var/lib/davspaces
					sweep_interval 5s
				}
			}`,
			want: `{"backend":"bolt","root":"/var/lib/davspaces","sweep_interval":5000000000}`,
		},
		{
			name: "bolt with digest_workers",
			input: `davspaces {
				store bolt {
					digest_workers 2
				}
			}`,
			want: `{"backend":"bolt","digest_workers":2}`,
		},
		{
			name: "bolt with digests inline",
			input: `davspaces {
				store bolt {
					digest_workers 0
				}
			}`,
			want: `{"backend":"bolt","digest_workers":0}`,
		},
		{
			name: "postgres, the least",
			input: `davspaces {
				store postgres {
					dsn "postgres://davspaces@127.0.0.1:5432/davspaces?sslmode=disable"
					s3 {
						endpoint 127.0.0.1:9000
						bucket davspaces
					}
				}
			}`,
			want: `{"backend":"postgres","dsn":"postgres://davspaces@127.0.0.1:5432/davspaces?sslmode=disable","s3":{"bucket":"davspaces","endpoint":"127.0.0.1:9000"}}`,
		},
		{
			name: "postgres, everything",
			input: `davspaces {
				store postgres {
					dsn {env.PG_DSN}
					s3 {
						endpoint s3.example.org
						bucket files
						access_key {env.S3_ACCESS_KEY}
						secret_key {env.S3_SECRET_KEY}
						region eu-central-1
						tls
					}
					object_grace 15m
					upload_grace 2h
					sweep_interval 30s
					max_conns 32
				}
			}`,
			want: `{"backend":"postgres","dsn":"{env.PG_DSN}","max_conns":32,"object_grace":900000000000,` +
				`"s3":{"access_key":"{env.S3_ACCESS_KEY}","bucket":"files","endpoint":"s3.example.org","region":"eu-central-1","secret_key":"{env.S3_SECRET_KEY}","tls":true},` +
				`"sweep_interval":30000000000,"upload_grace":7200000000000}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d DAVSpaces
			if err := d.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input)); err != nil {
				t.Fatalf("UnmarshalCaddyfile: %v", err)
			}
			if string(d.StoreRaw) != tt.want {
				t.Errorf("store JSON\n got  %s\n want %s", d.StoreRaw, tt.want)
			}
		})
	}
}

func TestUnmarshalStoreErrors(t *testing.T) {
	const s3 = `s3 {
		endpoint 127.0.0.1:9000
		bucket davspaces
	}`
	tests := []struct {
		name  string
		input string
		want  []string // substrings of the error
	}{
		{"no backend", `davspaces {
			store
		}`, []string{"wrong argument count"}},
		{"unknown backend", `davspaces {
			store mysql
		}`, []string{`unknown store backend "mysql"`, "bolt", "postgres", "Testfile:2"}},
		{"two backends", `davspaces {
			store bolt postgres
		}`, []string{"wrong argument count"}},
		{"store twice", `davspaces {
			store bolt
			store bolt
		}`, []string{"store is set twice", "Testfile:3"}},
		{"root beside store", `davspaces {
			root /srv
			store bolt
		}`, []string{"root and store are both set"}},
		{"bolt unknown subdirective", `davspaces {
			store bolt {
				dsn x
			}
		}`, []string{"unrecognized bolt store subdirective: dsn"}},
		{"bolt zero sweep", `davspaces {
			store bolt {
				sweep_interval 0s
			}
		}`, []string{"sweep_interval must be longer than 0"}},
		{"bolt negative digest_workers", `davspaces {
			store bolt {
				digest_workers -1
			}
		}`, []string{`digest_workers: "-1" is not a count from 0 to 1024`}},
		{"bolt digest_workers not a number", `davspaces {
			store bolt {
				digest_workers many
			}
		}`, []string{`digest_workers: "many" is not a count from 0 to 1024`}},
		{"postgres without dsn", `davspaces {
			store postgres {
				` + s3 + `
			}
		}`, []string{"dsn is required"}},
		{"postgres without s3", `davspaces {
			store postgres {
				dsn postgres://127.0.0.1/davspaces
			}
		}`, []string{"s3 block with endpoint and bucket is required"}},
		{"postgres without bucket", `davspaces {
			store postgres {
				dsn postgres://127.0.0.1/davspaces
				s3 {
					endpoint 127.0.0.1:9000
				}
			}
		}`, []string{"s3 block with endpoint and bucket is required"}},
		{"postgres bad duration", `davspaces {
			store postgres {
				dsn postgres://127.0.0.1/davspaces
				` + s3 + `
				object_grace soon
			}
		}`, []string{`invalid duration "soon"`}},
		{"postgres zero sweep", `davspaces {
			store postgres {
				dsn postgres://127.0.0.1/davspaces
				` + s3 + `
				sweep_interval 0s
			}
		}`, []string{"sweep_interval must be longer than 0"}},
		{"postgres zero max_conns", `davspaces {
			store postgres {
				dsn postgres://127.0.0.1/davspaces
				` + s3 + `
				max_conns 0
			}
		}`, []string{`max_conns "0" must be a positive number`}},
		{"postgres unknown subdirective", `davspaces {
			store postgres {
				host 127.0.0.1
			}
		}`, []string{"unrecognized postgres store subdirective: host"}},
		{"s3 unknown subdirective", `davspaces {
			store postgres {
				dsn postgres://127.0.0.1/davspaces
				s3 {
					url http://127.0.0.1:9000
				}
			}
		}`, []string{"unrecognized s3 subdirective: url"}},
		{"s3 tls with an argument", `davspaces {
			store postgres {
				dsn postgres://127.0.0.1/davspaces
				s3 {
					tls yes
				}
			}
		}`, []string{"wrong argument count"}},
		{"dsn twice on a line", `davspaces {
			store postgres {
				dsn a b
			}
		}`, []string{"wrong argument count"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d DAVSpaces
			err := d.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input))
			if err == nil {
				t.Fatalf("no error; store %s", d.StoreRaw)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestAdaptCaddyfileStore: the store block reaches the handler's JSON as a
// module object Caddy loads by its "backend" key.
func TestAdaptCaddyfileStore(t *testing.T) {
	out := adaptCaddyfile(t, `http://localhost:9080 {
	davspaces {
		store postgres {
			dsn "postgres://davspaces@127.0.0.1:5432/davspaces?sslmode=disable"
			s3 {
				endpoint 127.0.0.1:9000
				bucket davspaces
				access_key {env.S3_ACCESS_KEY}
				secret_key {env.S3_SECRET_KEY}
			}
		}
	}
}
`)
	var cfg struct {
		Store map[string]any `json:"store"`
	}
	findHandler(t, out, "davspaces", &cfg)
	if cfg.Store["backend"] != "postgres" || cfg.Store["dsn"] != "postgres://davspaces@127.0.0.1:5432/davspaces?sslmode=disable" {
		t.Errorf("store JSON %v", cfg.Store)
	}
	s3, _ := cfg.Store["s3"].(map[string]any)
	if s3["access_key"] != "{env.S3_ACCESS_KEY}" {
		t.Errorf("the access key placeholder must stay for Provision (runtime env), got %v", s3["access_key"])
	}
}

// TestProvisionBoltModule: `store bolt { root … }` and `root …` name the
// same store, so a reload from one to the other shares it.
func TestProvisionBoltModule(t *testing.T) {
	root := t.TempDir()
	explicit := &DAVSpaces{StoreRaw: json.RawMessage(fmt.Sprintf(`{"backend":"bolt","root":%q}`, root))}
	mustProvision(t, explicit)
	short := &DAVSpaces{Root: root}
	mustProvision(t, short)
	if n, _ := stores.References(root); n != 2 {
		t.Errorf("%d references to the store of %s, want 2", n, root)
	}
	if got := serve(t, explicit, propfind("/webdav/", "einstein")).Code; got != 207 {
		t.Errorf("PROPFIND through the bolt module: %d", got)
	}
}

func TestProvisionRootBesideStore(t *testing.T) {
	d := &DAVSpaces{Root: t.TempDir(), StoreRaw: json.RawMessage(`{"backend":"bolt"}`)}
	err := provision(t, d)
	if err == nil || !strings.Contains(err.Error(), "root and store are both set") {
		t.Fatalf("Provision: %v, want root and store refused together", err)
	}
}

func TestProvisionUnknownBackend(t *testing.T) {
	d := &DAVSpaces{StoreRaw: json.RawMessage(`{"backend":"mysql"}`)}
	err := provision(t, d)
	if err == nil || !strings.Contains(err.Error(), "davspaces.stores.mysql") {
		t.Fatalf("Provision: %v, want the unknown module named", err)
	}
}

func postgresStoreJSON(dsn string, s3 testpeer.S3) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"backend":"postgres","dsn":%q,"s3":{"endpoint":%q,"bucket":%q,"access_key":%q,"secret_key":%q}}`,
		dsn, s3.Endpoint, s3.Bucket, s3.AccessKey, s3.SecretKey))
}

// TestProvisionBeforeTheDatabase: a database that cannot be reached when
// Caddy starts does not fail Provision, so Caddy's other sites start: the
// handler answers 503 with Retry-After, and once the database is up it
// serves, with its project spaces declared, and no reload.
func TestProvisionBeforeTheDatabase(t *testing.T) {
	testpeer.PostgreSQL(t) // skips or fails as the shared servers do when PostgreSQL is missing
	pg := testpeer.OwnPostgres(t)
	dsn := pg.NewDatabase(t)
	pg.Stop()
	physics := ProjectSpace{Name: "Physics", Managers: []string{"einstein"}}
	d := &DAVSpaces{StoreRaw: postgresStoreJSON(dsn, testpeer.S3Bucket(t)), Spaces: []ProjectSpace{physics}}
	mustProvision(t, d)
	rec := serve(t, d, propfind("/webdav/", "einstein"))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("PROPFIND before the database is up: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}

	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for serve(t, d, propfind("/webdav/", "einstein")).Code != http.StatusMultiStatus {
		if time.Now().After(deadline) {
			t.Fatal("the handler does not serve once the database is up")
		}
		time.Sleep(100 * time.Millisecond)
	}
	target := "/dav/spaces/" + d.store.StorageID() + "$" + physics.space().ID + "/"
	for serve(t, d, propfind(target, "einstein")).Code != http.StatusMultiStatus {
		if time.Now().After(deadline) {
			t.Fatal("the project space is not declared once the database is up")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestProvisionPostgresRefused: a store the database refuses (another
// storage id than the one it keeps) fails Provision with a message naming
// the store, and leaves nothing in the pool.
func TestProvisionPostgresRefused(t *testing.T) {
	dsn, s3 := testpeer.PostgreSQL(t), testpeer.S3Bucket(t)
	first := &DAVSpaces{StoreRaw: postgresStoreJSON(dsn, s3)}
	mustProvision(t, first)
	cleanup(t, first)
	d := &DAVSpaces{StoreRaw: postgresStoreJSON(dsn, s3), StorageID: "another"}
	err := provision(t, d)
	if err == nil {
		cleanup(t, d)
		t.Fatal("Provision succeeded with another storage id")
	}
	t.Logf("Provision: %v", err)
	if !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("error %q is not storage.ErrInvalid", err)
	}
	key, kerr := postgresStoreKey(pgstore.Options{DSN: dsn, S3: s3content.Config{Endpoint: s3.Endpoint, Bucket: s3.Bucket}})
	if kerr != nil {
		t.Fatal(kerr)
	}
	if !strings.Contains(err.Error(), key) {
		t.Errorf("error %q does not name the store %s", err, key)
	}
	if _, ok := stores.References(key); ok {
		t.Error("a failed open left an entry in the pool")
	}
	if err := d.Cleanup(); err != nil {
		t.Errorf("Cleanup after a failed Provision: %v", err)
	}
}

// closedPort returns a loopback port nobody listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestPostgresStoreProvision(t *testing.T) {
	t.Setenv("DAVSPACES_TEST_S3_KEY", "the-key")
	tests := []struct {
		name    string
		store   PostgresStore
		wantKey string
		wantErr string
	}{
		{
			name: "url dsn, placeholders replaced",
			store: PostgresStore{DSN: "postgres://u:pw@db.example:6432/files?sslmode=disable",
				S3: S3Bucket{Endpoint: "s3.example", Bucket: "b", AccessKey: "{env.DAVSPACES_TEST_S3_KEY}", SecretKey: "x"}},
			wantKey: "postgres://u@db.example:6432/files s3://s3.example/b",
		},
		{
			name: "key=value dsn",
			store: PostgresStore{DSN: "host=127.0.0.1 port=5433 user=dav dbname=d password=pw",
				S3: S3Bucket{Endpoint: "127.0.0.1:9000", Bucket: "b"}},
			wantKey: "postgres://dav@127.0.0.1:5433/d s3://127.0.0.1:9000/b",
		},
		{
			name:    "no dsn",
			store:   PostgresStore{S3: S3Bucket{Endpoint: "e", Bucket: "b"}},
			wantErr: "dsn is required",
		},
		{
			name:    "no endpoint",
			store:   PostgresStore{DSN: "postgres://127.0.0.1/d", S3: S3Bucket{Bucket: "b"}},
			wantErr: "s3 endpoint is required",
		},
		{
			name:    "no bucket",
			store:   PostgresStore{DSN: "postgres://127.0.0.1/d", S3: S3Bucket{Endpoint: "e"}},
			wantErr: "s3 bucket is required",
		},
		{
			name: "secret key from an unset variable",
			store: PostgresStore{DSN: "postgres://127.0.0.1/d",
				S3: S3Bucket{Endpoint: "e", Bucket: "b", AccessKey: "k", SecretKey: "{env.DAVSPACES_TEST_UNSET}"}},
			wantErr: "access_key and secret_key must both be set",
		},
		{
			name:    "bad dsn",
			store:   PostgresStore{DSN: "postgres://127.0.0.1:port/d", S3: S3Bucket{Endpoint: "e", Bucket: "b"}},
			wantErr: "invalid dsn",
		},
		{
			name: "negative grace",
			store: PostgresStore{DSN: "postgres://127.0.0.1/d", S3: S3Bucket{Endpoint: "e", Bucket: "b"},
				ObjectGrace: -1},
			wantErr: "must not be negative",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.store
			err := p.Provision(newContext(t))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Provision: %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Provision: %v", err)
			}
			if p.StoreKey() != tt.wantKey {
				t.Errorf("key %q, want %q", p.StoreKey(), tt.wantKey)
			}
			if strings.Contains(p.opts.S3.AccessKey, "{") {
				t.Errorf("access key %q: placeholder not replaced", p.opts.S3.AccessKey)
			}
		})
	}
}

// TestProvisionPostgres opens the distributed store on a real PostgreSQL
// and MinIO: two handlers on the same database and bucket share one store,
// and the storage id kept in the database is the one configured.
func TestProvisionPostgres(t *testing.T) {
	raw := postgresStoreJSON(testpeer.PostgreSQL(t), testpeer.S3Bucket(t))
	first := &DAVSpaces{StoreRaw: raw, StorageID: "cluster"}
	mustProvision(t, first)
	second := &DAVSpaces{StoreRaw: raw}
	mustProvision(t, second)
	if first.storeKey != second.storeKey || !strings.HasPrefix(first.storeKey, "postgres://") {
		t.Fatalf("store keys %q and %q, want one postgres key", first.storeKey, second.storeKey)
	}
	if n, _ := stores.References(first.storeKey); n != 2 {
		t.Errorf("%d references to %s, want 2", n, first.storeKey)
	}
	if got := first.store.StorageID(); got != "cluster" {
		t.Errorf("storage id %q, want cluster", got)
	}
}
