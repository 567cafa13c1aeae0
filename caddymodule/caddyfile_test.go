package caddymodule

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"

	// The whole-Caddyfile tests use basic_auth, file_server, header, respond
	// and handle_errors, which the standard modules register.
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

func TestUnmarshalCaddyfile(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  DAVSpaces
	}{
		{
			name:  "bare directive",
			input: `davspaces`,
		},
		{
			name: "empty block",
			input: `davspaces {
			}`,
		},
		{
			name: "root",
			input: `davspaces {
				root /var/lib/davspaces
			}`,
			want: DAVSpaces{Root: "/var/lib/davspaces"},
		},
		{
			name: "root with placeholder is kept for Provision",
			input: `davspaces {
				root {env.DAVSPACES_ROOT}/data
			}`,
			want: DAVSpaces{Root: "{env.DAVSPACES_ROOT}/data"},
		},
		{
			name: "previews off",
			input: `davspaces {
				previews off
			}`,
			want: DAVSpaces{Previews: &PreviewSettings{Disabled: true}},
		},
		{
			name: "previews block",
			input: `davspaces {
				previews {
					sizes 256 64 64 1024
					max_pixels 20000000
					max_memory 64MiB
					max_concurrent 3
					timeout 5s
				}
			}`,
			want: DAVSpaces{Previews: &PreviewSettings{Sizes: []int{64, 256, 1024}, MaxPixels: 20_000_000, MaxMemory: 64 << 20, MaxConcurrent: 3, Timeout: caddy.Duration(5 * time.Second)}},
		},
		{
			name: "storage_id",
			input: `davspaces {
				storage_id 1284d238-aa92-42ce-bdc4-0b0000009157
			}`,
			want: DAVSpaces{StorageID: "1284d238-aa92-42ce-bdc4-0b0000009157"},
		},
		{
			name: "depth_infinity",
			input: `davspaces {
				depth_infinity
			}`,
			want: DAVSpaces{AllowDepthInfinity: true},
		},
		{
			name: "bulk_upload",
			input: `davspaces {
				bulk_upload all
			}`,
			want: DAVSpaces{BulkUpload: "all"},
		},
		{
			name: "max_xml_body binary unit",
			input: `davspaces {
				max_xml_body 2MiB
			}`,
			want: DAVSpaces{MaxXMLBytes: 2 << 20},
		},
		{
			name: "max_xml_body decimal unit",
			input: `davspaces {
				max_xml_body 2MB
			}`,
			want: DAVSpaces{MaxXMLBytes: 2_000_000},
		},
		{
			name: "max_xml_body lower-case unit",
			input: `davspaces {
				max_xml_body 512kib
			}`,
			want: DAVSpaces{MaxXMLBytes: 512 << 10},
		},
		{
			name: "max_xml_body plain bytes",
			input: `davspaces {
				max_xml_body 65536
			}`,
			want: DAVSpaces{MaxXMLBytes: 65536},
		},
		{
			name: "personal_quota binary unit",
			input: `davspaces {
				personal_quota 5GiB
			}`,
			want: DAVSpaces{PersonalQuotaBytes: 5 << 30},
		},
		{
			name: "personal_quota decimal unit",
			input: `davspaces {
				personal_quota 500MB
			}`,
			want: DAVSpaces{PersonalQuotaBytes: 500_000_000},
		},
		{
			name: "personal_quota zero is no limit",
			input: `davspaces {
				personal_quota 0
			}`,
		},
		{
			name: "max_nodes",
			input: `davspaces {
				max_nodes 50000
			}`,
			want: DAVSpaces{MaxNodes: 50000},
		},
		{
			name: "lock_timeout_max in minutes",
			input: `davspaces {
				lock_timeout_max 30m
			}`,
			want: DAVSpaces{LockTimeoutMax: caddy.Duration(30 * time.Minute)},
		},
		{
			name: "lock_timeout_max in days",
			input: `davspaces {
				lock_timeout_max 7d
			}`,
			want: DAVSpaces{LockTimeoutMax: caddy.Duration(7 * 24 * time.Hour)},
		},
		{
			name: "lock_timeout_max compound",
			input: `davspaces {
				lock_timeout_max 1h30m
			}`,
			want: DAVSpaces{LockTimeoutMax: caddy.Duration(90 * time.Minute)},
		},
		{
			name: "lock caps",
			input: `davspaces {
				lock_owner_max 2KiB
				locks_per_resource 8
				lock_bytes_per_user 4MiB
				locks_per_user 50
			}`,
			want: DAVSpaces{LockOwnerMaxBytes: 2048, MaxLocksPerResource: 8, MaxLockBytesPerUser: 4 << 20, MaxLocksPerUser: 50},
		},
		{
			name: "upload_ttl in hours",
			input: `davspaces {
				upload_ttl 6h
			}`,
			want: DAVSpaces{UploadTTL: caddy.Duration(6 * time.Hour)},
		},
		{
			name: "max_open_uploads",
			input: `davspaces {
				max_open_uploads 20
			}`,
			want: DAVSpaces{MaxOpenUploads: 20},
		},
		{
			name: "tus_max_chunk_size",
			input: `davspaces {
				tus_max_chunk_size 5MB
			}`,
			want: DAVSpaces{TUSMaxChunkSize: 5_000_000},
		},
		{
			name: "upload_ttl in days",
			input: `davspaces {
				upload_ttl 7d
			}`,
			want: DAVSpaces{UploadTTL: caddy.Duration(7 * 24 * time.Hour)},
		},
		{
			name: "space without block",
			input: `davspaces {
				space Solo
			}`,
			want: DAVSpaces{Spaces: []ProjectSpace{{Name: "Solo"}}},
		},
		{
			name: "space with empty block",
			input: `davspaces {
				space Solo {
				}
			}`,
			want: DAVSpaces{Spaces: []ProjectSpace{{Name: "Solo"}}},
		},
		{
			name: "space with every subdirective and several users",
			input: `davspaces {
				space Physics {
					id physics
					quota 10GiB
					manager einstein
					editor marie richard
					viewer lise otto niels
				}
			}`,
			want: DAVSpaces{Spaces: []ProjectSpace{{
				ID:         "physics",
				Name:       "Physics",
				QuotaBytes: 10 << 30,
				Managers:   []string{"einstein"},
				Editors:    []string{"marie", "richard"},
				Viewers:    []string{"lise", "otto", "niels"},
			}}},
		},
		{
			name: "repeated role lines add up",
			input: `davspaces {
				space Physics {
					manager einstein
					manager marie
					viewer richard
					viewer lise otto
				}
			}`,
			want: DAVSpaces{Spaces: []ProjectSpace{{
				Name:     "Physics",
				Managers: []string{"einstein", "marie"},
				Viewers:  []string{"richard", "lise", "otto"},
			}}},
		},
		{
			name: "quoted space name",
			input: `davspaces {
				space "Quantum Physics" {
					editor "marie"
				}
			}`,
			want: DAVSpaces{Spaces: []ProjectSpace{{Name: "Quantum Physics", Editors: []string{"marie"}}}},
		},
		{
			name: "everything, with subdirectives after space blocks",
			input: `davspaces {
				root /srv/dav
				space Physics {
					manager einstein
					editor marie
					viewer richard
				}
				storage_id my-storage
				space Chemistry {
					id chem
					quota 1GB
					manager marie
				}
				depth_infinity
				max_xml_body 4MiB
			}`,
			want: DAVSpaces{
				Root:               "/srv/dav",
				StorageID:          "my-storage",
				AllowDepthInfinity: true,
				MaxXMLBytes:        4 << 20,
				Spaces: []ProjectSpace{
					{Name: "Physics", Managers: []string{"einstein"}, Editors: []string{"marie"}, Viewers: []string{"richard"}},
					{ID: "chem", Name: "Chemistry", QuotaBytes: 1_000_000_000, Managers: []string{"marie"}},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got DAVSpaces
			if err := got.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input)); err != nil {
				t.Fatalf("UnmarshalCaddyfile: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestUnmarshalCaddyfileErrors(t *testing.T) {
	tests := []struct {
		name  string
		input string
		// want are substrings the error must contain.
		want []string
	}{
		{
			name:  "directive argument",
			input: `davspaces foo`,
			want:  []string{"wrong argument count", "'foo'"},
		},
		{
			name: "directive argument before block",
			input: `davspaces foo {
				root /srv
			}`,
			want: []string{"wrong argument count", "'foo'"},
		},
		{
			name: "previews sizes not numbers",
			input: `davspaces {
				previews {
					sizes 64 big
				}
			}`,
			want: []string{`sizes: "big" is not a number of pixels`},
		},
		{
			name: "previews neither on nor off",
			input: `davspaces {
				previews maybe
			}`,
			want: []string{`previews: want on, off or a block, got "maybe"`},
		},
		{
			name: "previews unknown subdirective",
			input: `davspaces {
				previews {
					quality 90
				}
			}`,
			want: []string{"unrecognized previews subdirective: quality"},
		},
		{
			name: "unknown subdirective",
			input: `davspaces {
				bogus value
			}`,
			want: []string{"unrecognized subdirective: bogus", "Testfile:2"},
		},
		{
			name: "unknown subdirective on a later line",
			input: `davspaces {
				root /srv

				max_xml_bytes 1MiB
			}`,
			want: []string{"unrecognized subdirective: max_xml_bytes", "Testfile:4"},
		},
		{
			name: "locks_per_resource zero",
			input: `davspaces {
				locks_per_resource 0
			}`,
			want: []string{"locks_per_resource", "not a count above 0"},
		},
		{
			name: "max_nodes zero: no cap is not offered",
			input: `davspaces {
				max_nodes 0
			}`,
			want: []string{"max_nodes", "not a count above 0"},
		},
		{
			name: "locks_per_user not a number",
			input: `davspaces {
				locks_per_user many
			}`,
			want: []string{"locks_per_user", "not a count above 0"},
		},
		{
			name: "lock_owner_max zero",
			input: `davspaces {
				lock_owner_max 0
			}`,
			want: []string{"lock_owner_max must be more than 0"},
		},
		{
			name: "root without argument",
			input: `davspaces {
				root
			}`,
			want: []string{"wrong argument count", "'root'"},
		},
		{
			name: "root with two arguments",
			input: `davspaces {
				root /a /b
			}`,
			want: []string{"wrong argument count"},
		},
		{
			name: "storage_id without argument",
			input: `davspaces {
				storage_id
			}`,
			want: []string{"wrong argument count", "'storage_id'"},
		},
		{
			name: "storage_id with two arguments",
			input: `davspaces {
				storage_id a b
			}`,
			want: []string{"wrong argument count"},
		},
		{
			name: "depth_infinity with an argument",
			input: `davspaces {
				depth_infinity yes
			}`,
			want: []string{"wrong argument count", "'yes'"},
		},
		{
			name: "depth_infinity with a block",
			input: `davspaces {
				depth_infinity {
				}
			}`,
			want: []string{"unrecognized subdirective: {"},
		},
		{
			name: "max_xml_body without argument",
			input: `davspaces {
				max_xml_body
			}`,
			want: []string{"wrong argument count", "'max_xml_body'"},
		},
		{
			name: "max_xml_body with a space before the unit",
			input: `davspaces {
				max_xml_body 2 MiB
			}`,
			want: []string{"wrong argument count"},
		},
		{
			name: "bulk_upload without a choice",
			input: `davspaces {
				bulk_upload
			}`,
			want: []string{"wrong argument count"},
		},
		{
			name: "bulk_upload neither off, auto nor all",
			input: `davspaces {
				bulk_upload on
			}`,
			want: []string{`bulk upload "on": want off, auto or all`, "Testfile:2"},
		},
		{
			name: "max_xml_body not a size",
			input: `davspaces {
				max_xml_body lots
			}`,
			want: []string{`invalid size "lots"`, "Testfile:2"},
		},
		{
			name: "max_xml_body beyond int64",
			input: `davspaces {
				max_xml_body 9EiB
			}`,
			want: []string{`size "9EiB" is too large`},
		},
		{
			name: "space with two names",
			input: `davspaces {
				space Physics Chemistry {
					manager einstein
				}
			}`,
			want: []string{"wrong argument count"},
		},
		{
			name: "personal_quota without argument",
			input: `davspaces {
				personal_quota
			}`,
			want: []string{"wrong argument count", "'personal_quota'"},
		},
		{
			name: "personal_quota with a space before the unit",
			input: `davspaces {
				personal_quota 5 GiB
			}`,
			want: []string{"wrong argument count"},
		},
		{
			name: "personal_quota not a size",
			input: `davspaces {
				personal_quota unlimited
			}`,
			want: []string{`invalid size "unlimited"`, "Testfile:2"},
		},
		{
			name: "personal_quota negative",
			input: `davspaces {
				personal_quota -5GiB
			}`,
			want: []string{`invalid size "-5GiB"`},
		},
		{
			name: "personal_quota beyond int64",
			input: `davspaces {
				personal_quota 16EiB
			}`,
			want: []string{`size "16EiB"`},
		},
		{
			name: "personal_quota inside a space",
			input: `davspaces {
				space Physics {
					personal_quota 1GiB
				}
			}`,
			want: []string{"unrecognized space subdirective: personal_quota"},
		},
		{
			name: "max_xml_body unknown unit",
			input: `davspaces {
				max_xml_body 2XB
			}`,
			want: []string{`invalid size "2XB"`},
		},
		{
			name: "max_xml_body negative",
			input: `davspaces {
				max_xml_body -1
			}`,
			want: []string{`invalid size "-1"`},
		},
		{
			name: "lock_timeout_max without argument",
			input: `davspaces {
				lock_timeout_max
			}`,
			want: []string{"wrong argument count", "'lock_timeout_max'", "Testfile:2"},
		},
		{
			name: "lock_timeout_max with two arguments",
			input: `davspaces {
				lock_timeout_max 1h 2h
			}`,
			want: []string{"wrong argument count"},
		},
		{
			name: "lock_timeout_max negative",
			input: `davspaces {
				lock_timeout_max -1h
			}`,
			want: []string{`invalid duration "-1h"`, "Testfile:2"},
		},
		{
			name: "lock_timeout_max zero",
			input: `davspaces {
				lock_timeout_max 0s
			}`,
			want: []string{"lock_timeout_max must be longer than 0"},
		},
		{
			name: "lock_timeout_max junk",
			input: `davspaces {
				lock_timeout_max forever
			}`,
			want: []string{`invalid duration "forever"`},
		},
		{
			name: "lock_timeout_max as a WebDAV timeout",
			input: `davspaces {
				lock_timeout_max Second-3600
			}`,
			want: []string{`invalid duration "Second-3600"`},
		},
		{
			name: "lock_timeout_max without unit",
			input: `davspaces {
				lock_timeout_max 3600
			}`,
			want: []string{`invalid duration "3600"`},
		},
		{
			name: "lock_timeout_max inside a space",
			input: `davspaces {
				space Physics {
					lock_timeout_max 1h
				}
			}`,
			want: []string{"unrecognized space subdirective: lock_timeout_max"},
		},
		{
			name: "max_open_uploads zero",
			input: `davspaces {
				max_open_uploads 0
			}`,
			want: []string{"max_open_uploads", "must be a positive number"},
		},
		{
			name: "tus_max_chunk_size zero",
			input: `davspaces {
				tus_max_chunk_size 0
			}`,
			want: []string{"tus_max_chunk_size"},
		},
		{
			name: "upload_ttl without argument",
			input: `davspaces {
				upload_ttl
			}`,
			want: []string{"wrong argument count", "'upload_ttl'", "Testfile:2"},
		},
		{
			name: "upload_ttl with two arguments",
			input: `davspaces {
				upload_ttl 1h 2h
			}`,
			want: []string{"wrong argument count"},
		},
		{
			name: "upload_ttl negative",
			input: `davspaces {
				upload_ttl -1h
			}`,
			want: []string{`invalid duration "-1h"`, "Testfile:2"},
		},
		{
			name: "upload_ttl zero",
			input: `davspaces {
				upload_ttl 0s
			}`,
			want: []string{"upload_ttl must be longer than 0"},
		},
		{
			name: "upload_ttl without unit",
			input: `davspaces {
				upload_ttl 86400
			}`,
			want: []string{`invalid duration "86400"`},
		},
		{
			name: "upload_ttl inside a space",
			input: `davspaces {
				space Physics {
					upload_ttl 1h
				}
			}`,
			want: []string{"unrecognized space subdirective: upload_ttl"},
		},
		{
			name: "space without name",
			input: `davspaces {
				space
			}`,
			want: []string{"wrong argument count", "'space'"},
		},
		{
			name: "space without name before block",
			input: `davspaces {
				space {
					manager einstein
				}
			}`,
			want: []string{"wrong argument count", "'space'"},
		},
		{
			name: "space with two names",
			input: `davspaces {
				space Physics Chemistry {
					manager einstein
				}
			}`,
			want: []string{"Chemistry"},
		},
		{
			name: "unknown space subdirective",
			input: `davspaces {
				space Physics {
					owner einstein
				}
			}`,
			want: []string{"unrecognized space subdirective: owner", "Testfile:3"},
		},
		{
			name: "top-level subdirective inside a space",
			input: `davspaces {
				space Physics {
					root /srv
				}
			}`,
			want: []string{"unrecognized space subdirective: root"},
		},
		{
			name: "space id without argument",
			input: `davspaces {
				space Physics {
					id
				}
			}`,
			want: []string{"wrong argument count", "'id'"},
		},
		{
			name: "space id with two arguments",
			input: `davspaces {
				space Physics {
					id a b
				}
			}`,
			want: []string{"wrong argument count"},
		},
		{
			name: "quota not a size",
			input: `davspaces {
				space Physics {
					quota unlimited
				}
			}`,
			want: []string{`invalid size "unlimited"`, "Testfile:3"},
		},
		{
			name: "quota without argument",
			input: `davspaces {
				space Physics {
					quota
				}
			}`,
			want: []string{"wrong argument count", "'quota'"},
		},
		{
			name: "manager without users",
			input: `davspaces {
				space Physics {
					manager
				}
			}`,
			want: []string{"wrong argument count", "'manager'"},
		},
		{
			name: "editor without users",
			input: `davspaces {
				space Physics {
					editor
				}
			}`,
			want: []string{"wrong argument count", "'editor'"},
		},
		{
			name: "viewer without users",
			input: `davspaces {
				space Physics {
					viewer
				}
			}`,
			want: []string{"wrong argument count", "'viewer'"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d DAVSpaces
			err := d.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input))
			if err == nil {
				t.Fatalf("no error; parsed %+v", d)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestParseDAVSpaces checks the function registered for the directive.
func TestParseDAVSpaces(t *testing.T) {
	h := httpcaddyfile.Helper{Dispenser: caddyfile.NewTestDispenser(`davspaces {
		root /srv/dav
		space Physics {
			manager einstein
		}
	}`)}
	mh, err := parseDAVSpaces(h)
	if err != nil {
		t.Fatalf("parseDAVSpaces: %v", err)
	}
	d, ok := mh.(*DAVSpaces)
	if !ok {
		t.Fatalf("parseDAVSpaces returned %T, want *DAVSpaces", mh)
	}
	want := &DAVSpaces{Root: "/srv/dav", Spaces: []ProjectSpace{{Name: "Physics", Managers: []string{"einstein"}}}}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("got %+v, want %+v", d, want)
	}

	h = httpcaddyfile.Helper{Dispenser: caddyfile.NewTestDispenser(`davspaces extra`)}
	if _, err := parseDAVSpaces(h); err == nil {
		t.Error("parseDAVSpaces accepted an argument")
	}
}

// TestCaddyfileJSONShape checks the JSON the Caddyfile produces: the field
// names are the public configuration.
func TestCaddyfileJSONShape(t *testing.T) {
	var d DAVSpaces
	err := d.UnmarshalCaddyfile(caddyfile.NewTestDispenser(`davspaces {
		root /srv/dav
		storage_id sid
		depth_infinity
		max_xml_body 2MiB
		personal_quota 1GiB
		lock_timeout_max 2h
		upload_ttl 12h
		space Physics {
			id phys
			quota 1KiB
			manager einstein
			editor marie
			viewer richard
		}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"root":"/srv/dav","storage_id":"sid","allow_depth_infinity":true,"max_xml_bytes":2097152,"personal_quota_bytes":1073741824,"lock_timeout_max":7200000000000,"upload_ttl":43200000000000,` +
		`"spaces":[{"id":"phys","name":"Physics","quota_bytes":1024,"managers":["einstein"],"editors":["marie"],"viewers":["richard"]}]}`
	if string(got) != want {
		t.Errorf("JSON\n got  %s\n want %s", got, want)
	}
	var back DAVSpaces
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, d) {
		t.Errorf("JSON round trip: got %+v, want %+v", back, d)
	}
}

// siteCaddyfile has davspaces after file_server in the text and no `order`
// line: the directive's registered order must put it after authentication
// and before file_server anyway.
const siteCaddyfile = `{
	admin off
	skip_install_trust
}

http://localhost:9080 {
	@authenticated not method OPTIONS
	basic_auth @authenticated {
		einstein $2a$10$M3.drX6uiFRNL/o1v8tib.HXtzE4k4tpvQkC4C1GY2f5oUjiSnqRe
	}
	file_server
	davspaces {
		root /srv/dav
		max_xml_body 2MiB
		space Physics {
			manager einstein
			editor marie richard
		}
	}
}
`

func adaptCaddyfile(t *testing.T, input string) []byte {
	t.Helper()
	adapter := caddyconfig.GetAdapter("caddyfile")
	if adapter == nil {
		t.Fatal("no caddyfile adapter registered")
	}
	out, warnings, err := adapter.Adapt([]byte(input), map[string]any{"filename": "Caddyfile"})
	if err != nil {
		t.Fatalf("adapting Caddyfile: %v", err)
	}
	for _, w := range warnings {
		t.Logf("adapter warning: %s", w)
	}
	return out
}

func TestAdaptCaddyfileWithoutOrder(t *testing.T) {
	out := adaptCaddyfile(t, siteCaddyfile)
	if !strings.Contains(string(out), `"handler":"davspaces"`) {
		t.Fatalf(`adapted JSON has no "handler":"davspaces": %s`, out)
	}
	handlers := handlerChain(t, out)
	auth := slices.Index(handlers, "authentication")
	dav := slices.Index(handlers, "davspaces")
	files := slices.Index(handlers, "file_server")
	if auth < 0 || dav < 0 || files < 0 {
		t.Fatalf("handler chain %v lacks authentication, davspaces or file_server", handlers)
	}
	if !(auth < dav && dav < files) {
		t.Errorf("handler chain %v: want authentication, then davspaces, then file_server", handlers)
	}

	// The handler's configuration made it into the JSON.
	var cfg map[string]any
	findHandler(t, out, "davspaces", &cfg)
	want := map[string]any{
		"handler":       "davspaces",
		"root":          "/srv/dav",
		"max_xml_bytes": float64(2 << 20),
		"spaces": []any{map[string]any{
			"name":     "Physics",
			"managers": []any{"einstein"},
			"editors":  []any{"marie", "richard"},
		}},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("davspaces handler JSON\n got  %v\n want %v", cfg, want)
	}
}

func TestAdaptCaddyfileWithMatcher(t *testing.T) {
	out := adaptCaddyfile(t, `http://localhost:9080 {
	@dav path /webdav* /dav/* /remote.php/*
	davspaces @dav {
		depth_infinity
	}
	respond "not here" 404
}
`)
	handlers := handlerChain(t, out)
	dav, respond := slices.Index(handlers, "davspaces"), slices.Index(handlers, "static_response")
	if dav < 0 || respond < 0 || dav > respond {
		t.Errorf("handler chain %v: want davspaces before static_response", handlers)
	}
	if !strings.Contains(string(out), `"path":["/webdav*","/dav/*","/remote.php/*"]`) {
		t.Errorf("the matcher did not make it into the route: %s", out)
	}
}

// TestAdaptCaddyfileExample adapts the Caddyfile shipped with the project.
func TestAdaptCaddyfileExample(t *testing.T) {
	body, err := os.ReadFile("../Caddyfile.example")
	if err != nil {
		t.Skipf("no example Caddyfile: %v", err)
	}
	out := adaptCaddyfile(t, string(body))
	handlers := handlerChain(t, out)
	wf, auth, dav := slices.Index(handlers, "webfinger"), slices.Index(handlers, "oidc_auth"), slices.Index(handlers, "davspaces")
	if wf < 0 || auth < 0 || dav < 0 || wf > auth || auth > dav {
		t.Errorf("handler chain %v: want webfinger, oidc_auth, davspaces", handlers)
	}
}

// handlerChain lists the handlers of every server's routes in the order a
// request meets them, descending into subroutes (error routes are left out).
func handlerChain(t *testing.T, adapted []byte) []string {
	t.Helper()
	var cfg struct {
		Apps struct {
			HTTP struct {
				Servers map[string]struct {
					Routes []any `json:"routes"`
				} `json:"servers"`
			} `json:"http"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(adapted, &cfg); err != nil {
		t.Fatalf("adapted JSON: %v", err)
	}
	var chain []string
	var walkRoutes func(routes []any)
	walkRoutes = func(routes []any) {
		for _, r := range routes {
			route, _ := r.(map[string]any)
			handle, _ := route["handle"].([]any)
			for _, h := range handle {
				handler, _ := h.(map[string]any)
				name, _ := handler["handler"].(string)
				chain = append(chain, name)
				if sub, ok := handler["routes"].([]any); ok {
					walkRoutes(sub)
				}
			}
		}
	}
	if len(cfg.Apps.HTTP.Servers) != 1 {
		t.Fatalf("want one server, got %d", len(cfg.Apps.HTTP.Servers))
	}
	for _, srv := range cfg.Apps.HTTP.Servers {
		walkRoutes(srv.Routes)
	}
	return chain
}

// findHandler decodes the first handler object named name into v.
func findHandler(t *testing.T, adapted []byte, name string, v any) {
	t.Helper()
	var found any
	var walk func(x any)
	walk = func(x any) {
		if found != nil {
			return
		}
		switch x := x.(type) {
		case map[string]any:
			if x["handler"] == name {
				found = x
				return
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	var all any
	if err := json.Unmarshal(adapted, &all); err != nil {
		t.Fatal(err)
	}
	walk(all)
	if found == nil {
		t.Fatalf("no %q handler in %s", name, adapted)
	}
	b, _ := json.Marshal(found)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}
