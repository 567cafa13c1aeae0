package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage/pgstore"
	"github.com/davspaces/davspaces/storage/s3content"
)

func init() {
	caddy.RegisterModule(PostgresStore{})
}

// PostgresStore is the distributed store: metadata, locks and upload
// sessions in PostgreSQL, file content in an S3-compatible bucket. Every
// Caddy node configured with the same database and bucket serves the same
// data, so nodes can stand side by side behind a load balancer.
//
// Provisioning fails when the database or the bucket cannot be reached:
// Caddy does not start (or a reload is refused) rather than serve nothing
// but errors. Once running, an outage is answered 503 with Retry-After.
type PostgresStore struct {
	// DSN is the PostgreSQL connection string, a URL or key=value pairs
	// (pgx's format). Required. Placeholders such as {env.PG_PASSWORD} are
	// replaced at provisioning.
	DSN string `json:"dsn"`
	// S3 is the bucket holding file content. Required.
	S3 S3Bucket `json:"s3"`
	// ObjectGrace is how long the content of a replaced or removed file
	// stays readable for the readers that opened it before. Default: 15m.
	ObjectGrace caddy.Duration `json:"object_grace,omitempty"`
	// UploadGrace is how long content being uploaded may stay
	// unreferenced before it is taken for the orphan of a crashed node
	// (and its incomplete multipart upload aborted). Default: 24h.
	UploadGrace caddy.Duration `json:"upload_grace,omitempty"`
	// SweepInterval is how often expired sessions and unreferenced
	// content are removed. Default: 1m.
	SweepInterval caddy.Duration `json:"sweep_interval,omitempty"`
	// MaxConns bounds the node's connections to the database. Default:
	// the DSN's pool_max_conns, or else pgstore.DefaultMaxConns (16).
	MaxConns int `json:"max_conns,omitempty"`

	opts pgstore.Options // placeholders replaced
	key  string
}

// S3Bucket names an S3-compatible bucket and how to reach it.
type S3Bucket struct {
	// Endpoint is the server's host[:port]. Required.
	Endpoint string `json:"endpoint"`
	// Bucket is created when it does not exist. Required.
	Bucket    string `json:"bucket"`
	AccessKey string `json:"access_key,omitempty"`
	SecretKey string `json:"secret_key,omitempty"`
	Region    string `json:"region,omitempty"`
	// TLS selects https.
	TLS bool `json:"tls,omitempty"`
}

// maxPostgresConns bounds max_conns: pgx counts connections in an int32,
// and no PostgreSQL serves more.
const maxPostgresConns = 10000

// postgresOpenTimeout bounds connecting, migrating the schema and checking
// the bucket at provisioning.
const postgresOpenTimeout = 30 * time.Second

// CaddyModule returns the Caddy module information.
func (PostgresStore) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  storeNamespace + ".postgres",
		New: func() caddy.Module { return new(PostgresStore) },
	}
}

// Provision replaces placeholders and derives the store's key.
func (p *PostgresStore) Provision(caddy.Context) error {
	if err := p.Validate(); err != nil {
		return err
	}
	// Known placeholders only: an unknown {…} in a password stays as
	// written.
	repl := caddy.NewReplacer()
	resolve := func(s string) string { return repl.ReplaceKnown(s, "") }
	p.opts = pgstore.Options{
		DSN: resolve(p.DSN),
		S3: s3content.Config{
			Endpoint:  resolve(p.S3.Endpoint),
			Bucket:    resolve(p.S3.Bucket),
			AccessKey: resolve(p.S3.AccessKey),
			SecretKey: resolve(p.S3.SecretKey),
			Region:    resolve(p.S3.Region),
			TLS:       p.S3.TLS,
		},
		ObjectGrace: time.Duration(p.ObjectGrace),
		UploadGrace: time.Duration(p.UploadGrace),
		Sweep:       time.Duration(p.SweepInterval),
		MaxConns:    int32(p.MaxConns),
	}
	if (p.opts.S3.AccessKey == "") != (p.opts.S3.SecretKey == "") {
		return errors.New("postgres store: s3 access_key and secret_key must both be set (check their environment variables) or both be empty")
	}
	key, err := postgresStoreKey(p.opts)
	if err != nil {
		return err
	}
	p.key = key
	return nil
}

// postgresStoreKey names the database and the bucket without the password:
// two DSNs that differ only in options share one store.
func postgresStoreKey(opts pgstore.Options) (string, error) {
	cfg, err := pgconn.ParseConfig(opts.DSN)
	if err != nil {
		return "", fmt.Errorf("postgres store: invalid dsn: %w", err)
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s s3://%s/%s",
		cfg.User, cfg.Host, cfg.Port, cfg.Database, opts.S3.Endpoint, opts.S3.Bucket), nil
}

// Validate checks that the required settings are there.
func (p *PostgresStore) Validate() error {
	switch {
	case p.DSN == "":
		return errors.New("postgres store: dsn is required")
	case p.S3.Endpoint == "":
		return errors.New("postgres store: s3 endpoint is required")
	case p.S3.Bucket == "":
		return errors.New("postgres store: s3 bucket is required")
	case p.ObjectGrace < 0, p.UploadGrace < 0, p.SweepInterval < 0:
		return errors.New("postgres store: durations must not be negative")
	case p.MaxConns < 0 || p.MaxConns > maxPostgresConns:
		return fmt.Errorf("postgres store: max_conns must be between 1 and %d", maxPostgresConns)
	}
	return nil
}

// StoreKey names the database and the bucket.
func (p *PostgresStore) StoreKey() string { return p.key }

// OpenStore connects to the database and the bucket and brings the schema
// up to date; when they cannot be reached, the store it returns answers
// 503 until it reaches them.
func (p *PostgresStore) OpenStore(ctx context.Context, storageID string, logger *zap.Logger) (Store, error) {
	ctx, cancel := context.WithTimeout(ctx, postgresOpenTimeout)
	defer cancel()
	opts := p.opts
	opts.StorageID, opts.Logger = storageID, logger
	s, err := pgstore.Open(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("opening davspaces store %s: %w", p.key, err)
	}
	return s, nil
}

// UnmarshalCaddyfile reads the backend's block. Syntax:
//
//	store postgres {
//		dsn <connection string>
//		s3 {
//			endpoint   <host[:port]>
//			bucket     <name>
//			access_key <key>
//			secret_key <secret>
//			region     <region>
//			tls
//		}
//		object_grace   <duration>
//		upload_grace   <duration>
//		sweep_interval <duration>
//		max_conns      <n>
//	}
func (p *PostgresStore) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return parseDirective(d, "postgres store subdirective", p.options(), p.checkCaddyfile)
}

// checkCaddyfile refuses a block without the database or the bucket.
func (p *PostgresStore) checkCaddyfile() error {
	if p.DSN == "" {
		return errors.New("postgres store: dsn is required")
	}
	if p.S3.Endpoint == "" || p.S3.Bucket == "" {
		return errors.New("postgres store: an s3 block with endpoint and bucket is required")
	}
	return nil
}

// options are the subdirectives of the backend's block.
func (p *PostgresStore) options() options {
	return options{
		"dsn": set(&p.DSN, oneArg),
		"s3": func(d *caddyfile.Dispenser) error {
			return parseBlock(d, "s3 subdirective", p.S3.options())
		},
		"object_grace":   set(&p.ObjectGrace, durationArg),
		"upload_grace":   set(&p.UploadGrace, durationArg),
		"sweep_interval": set(&p.SweepInterval, positiveDurationArg),
		"max_conns":      set(&p.MaxConns, positiveIntArg),
	}
}

// options are the subdirectives of an s3 block.
func (b *S3Bucket) options() options {
	return options{
		"endpoint":   set(&b.Endpoint, oneArg),
		"bucket":     set(&b.Bucket, oneArg),
		"access_key": set(&b.AccessKey, oneArg),
		"secret_key": set(&b.SecretKey, oneArg),
		"region":     set(&b.Region, oneArg),
		"tls":        set(&b.TLS, flagArg),
	}
}

// Interface guards
var (
	_ StoreBackend          = (*PostgresStore)(nil)
	_ caddy.Provisioner     = (*PostgresStore)(nil)
	_ caddy.Validator       = (*PostgresStore)(nil)
	_ caddyfile.Unmarshaler = (*PostgresStore)(nil)
)
