package caddymodule

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/davspaces/davspaces/storage"
)

const day = 24 * time.Hour

func durationOf(d time.Duration) *caddy.Duration {
	c := caddy.Duration(d)
	return &c
}

func TestUnmarshalCaddyfileRetention(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  DAVSpaces
	}{
		{
			name:  "trash_retention in days",
			input: "davspaces {\n trash_retention 7d\n}",
			want:  DAVSpaces{TrashRetention: durationOf(7 * day)},
		},
		{
			name:  "trash_retention in Go units",
			input: "davspaces {\n trash_retention 36h\n}",
			want:  DAVSpaces{TrashRetention: durationOf(36 * time.Hour)},
		},
		{
			name:  "trash_retention off",
			input: "davspaces {\n trash_retention off\n}",
			want:  DAVSpaces{TrashRetention: durationOf(0)},
		},
		{
			name:  "trash_retention 0 is off",
			input: "davspaces {\n trash_retention 0\n}",
			want:  DAVSpaces{TrashRetention: durationOf(0)},
		},
		{
			name:  "versions off",
			input: "davspaces {\n versions off\n}",
			want:  DAVSpaces{Versions: &VersionsRetention{Off: true}},
		},
		{
			name: "versions keep and max",
			input: `davspaces {
				versions {
					keep 14d
					max 10
				}
			}`,
			want: DAVSpaces{Versions: &VersionsRetention{Keep: caddy.Duration(14 * day), Max: 10}},
		},
		{
			name: "versions with an empty block turns them on",
			input: `davspaces {
				versions {
				}
			}`,
			want: DAVSpaces{Versions: &VersionsRetention{}},
		},
		{
			name: "space overrides beside the handler's",
			input: `davspaces {
				trash_retention 30d
				versions off
				space Physics {
					manager einstein
					trash_retention 7d
					versions {
						max 10
					}
				}
				space Chemistry {
					versions off
					trash_retention off
				}
			}`,
			want: DAVSpaces{
				TrashRetention: durationOf(30 * day),
				Versions:       &VersionsRetention{Off: true},
				Spaces: []ProjectSpace{
					{Name: "Physics", Managers: []string{"einstein"}, TrashRetention: durationOf(7 * day), Versions: &VersionsRetention{Max: 10}},
					{Name: "Chemistry", Versions: &VersionsRetention{Off: true}, TrashRetention: durationOf(0)},
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

func TestUnmarshalCaddyfileRetentionErrors(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []string // substrings of the error
	}{
		{"trash_retention negative", "davspaces {\n trash_retention -1h\n}", []string{"trash_retention", `"-1h"`}},
		{"trash_retention not a duration", "davspaces {\n trash_retention forever\n}", []string{"trash_retention", `"forever"`}},
		{"trash_retention without argument", "davspaces {\n trash_retention\n}", []string{"wrong argument count"}},
		{"trash_retention with two arguments", "davspaces {\n trash_retention 1d 2d\n}", []string{"wrong argument count"}},
		{"versions without off or block", "davspaces {\n versions\n}", nil},
		{"versions on", "davspaces {\n versions on\n}", []string{"wrong argument count"}},
		{"versions off with a block", "davspaces {\n versions off {\n max 3\n }\n}", []string{"versions off takes no block"}},
		{"versions keep 0", "davspaces {\n versions {\n keep 0\n }\n}", []string{"keep must be longer than 0"}},
		{"versions keep negative", "davspaces {\n versions {\n keep -2d\n }\n}", []string{`invalid duration "-2d"`}},
		{"versions max 0", "davspaces {\n versions {\n max 0\n }\n}", []string{"max", "not a count above 0"}},
		{"versions max not a number", "davspaces {\n versions {\n max lots\n }\n}", []string{"max", `"lots"`}},
		{"versions unknown subdirective", "davspaces {\n versions {\n min 3\n }\n}", []string{"unrecognized versions subdirective: min"}},
		{"space trash_retention negative", "davspaces {\n space Physics {\n trash_retention -1s\n }\n}", []string{"trash_retention", "Testfile:3"}},
		{"space versions max 0", "davspaces {\n space Physics {\n versions {\n max 0\n }\n }\n}", []string{"not a count above 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d DAVSpaces
			err := d.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input))
			if tt.want == nil {
				// `versions` alone is an empty block: versions on, with
				// the defaults; nothing to refuse.
				if err != nil || d.Versions == nil || d.Versions.Off {
					t.Fatalf("versions alone: %v, %+v", err, d.Versions)
				}
				return
			}
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

// TestRetentionJSON: the Caddyfile's settings as JSON, and back; an unset
// trash_retention stays absent, so that it means the default, and off is
// an explicit 0.
func TestRetentionJSON(t *testing.T) {
	var d DAVSpaces
	err := d.UnmarshalCaddyfile(caddyfile.NewTestDispenser(`davspaces {
		trash_retention off
		versions {
			keep 1d
			max 5
		}
		space Physics {
			trash_retention 2d
			versions off
		}
		space Chemistry {
		}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"trash_retention":0,"versions":{"keep":86400000000000,"max":5},` +
		`"spaces":[{"name":"Physics","trash_retention":172800000000000,"versions":{"off":true}},{"name":"Chemistry"}]}`
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
	// Caddy's JSON takes durations as strings too.
	var written DAVSpaces
	if err := json.Unmarshal([]byte(`{"trash_retention":"30d","versions":{"keep":"12h"}}`), &written); err != nil {
		t.Fatal(err)
	}
	if *written.TrashRetention != caddy.Duration(30*day) || written.Versions.Keep != caddy.Duration(12*time.Hour) {
		t.Errorf("durations as strings: %+v %+v", *written.TrashRetention, *written.Versions)
	}
}

func TestValidateRetention(t *testing.T) {
	for _, tt := range []struct {
		name    string
		d       DAVSpaces
		wantErr string
	}{
		{"defaults", DAVSpaces{}, ""},
		{"off", DAVSpaces{TrashRetention: durationOf(0), Versions: &VersionsRetention{Off: true}}, ""},
		{"negative trash_retention", DAVSpaces{TrashRetention: durationOf(-time.Second)}, "trash_retention"},
		{"negative versions keep", DAVSpaces{Versions: &VersionsRetention{Keep: -1}}, "versions"},
		{"negative versions max", DAVSpaces{Versions: &VersionsRetention{Max: -1}}, "versions"},
		{"negative in a space", DAVSpaces{Spaces: []ProjectSpace{{Name: "Physics", TrashRetention: durationOf(-day)}}}, `project space "Physics": trash_retention`},
		{"negative versions in a space", DAVSpaces{Spaces: []ProjectSpace{{Name: "Physics", Versions: &VersionsRetention{Max: -3}}}}, `project space "Physics": versions`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.d.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate = %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}

// TestRetentionPolicy: what a handler asks of its store. A space's unset
// fields are the handler's, the handler's unset fields the defaults.
func TestRetentionPolicy(t *testing.T) {
	physics := ProjectSpace{Name: "Physics"}.space().ID
	def := storage.DefaultRetention
	tests := []struct {
		name   string
		d      DAVSpaces
		want   storage.Retention // the handler's default
		spaces map[string]storage.Retention
	}{
		{name: "defaults", want: def},
		{
			name: "trash off",
			d:    DAVSpaces{TrashRetention: durationOf(0)},
			want: storage.Retention{Trash: 0, VersionsFor: def.VersionsFor, VersionsMax: def.VersionsMax},
		},
		{
			name: "versions off",
			d:    DAVSpaces{Versions: &VersionsRetention{Off: true}},
			want: storage.Retention{Trash: def.Trash, VersionsFor: def.VersionsFor, VersionsMax: def.VersionsMax, VersionsOff: true},
		},
		{
			name: "versions max alone keeps the default keep",
			d:    DAVSpaces{TrashRetention: durationOf(day), Versions: &VersionsRetention{Max: 3}},
			want: storage.Retention{Trash: day, VersionsFor: def.VersionsFor, VersionsMax: 3},
		},
		{
			name: "a space without overrides has the handler's",
			d:    DAVSpaces{TrashRetention: durationOf(2 * day), Spaces: []ProjectSpace{{Name: "Chemistry", ID: "chem"}}},
			want: storage.Retention{Trash: 2 * day, VersionsFor: def.VersionsFor, VersionsMax: def.VersionsMax},
			spaces: map[string]storage.Retention{
				"chem": {Trash: 2 * day, VersionsFor: def.VersionsFor, VersionsMax: def.VersionsMax},
			},
		},
		{
			name: "a space's overrides on top of the handler's",
			d: DAVSpaces{
				TrashRetention: durationOf(30 * day),
				Versions:       &VersionsRetention{Off: true, Keep: caddy.Duration(5 * day)},
				Spaces: []ProjectSpace{
					{Name: "Physics", TrashRetention: durationOf(7 * day), Versions: &VersionsRetention{Max: 10}},
					{ID: "chem", Name: "Chemistry", TrashRetention: durationOf(0)},
				},
			},
			want: storage.Retention{Trash: 30 * day, VersionsFor: 5 * day, VersionsMax: def.VersionsMax, VersionsOff: true},
			spaces: map[string]storage.Retention{
				// A versions block in the space turns them on there.
				physics: {Trash: 7 * day, VersionsFor: 5 * day, VersionsMax: 10},
				"chem":  {Trash: 0, VersionsFor: 5 * day, VersionsMax: def.VersionsMax, VersionsOff: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.d.retentionPolicy()
			if p.Default != tt.want {
				t.Errorf("default %+v, want %+v", p.Default, tt.want)
			}
			if tt.spaces == nil {
				tt.spaces = map[string]storage.Retention{}
			}
			if !reflect.DeepEqual(p.Spaces, tt.spaces) {
				t.Errorf("spaces %+v, want %+v", p.Spaces, tt.spaces)
			}
		})
	}
}

func TestMergeRetention(t *testing.T) {
	short := storage.Retention{Trash: day, VersionsFor: day, VersionsMax: 1}
	long := storage.DefaultRetention
	first := storage.RetentionPolicy{Default: long, Spaces: map[string]storage.Retention{"a": short, "b": long}}
	second := storage.RetentionPolicy{Default: short, Spaces: map[string]storage.Retention{"b": short, "c": short}}

	var merged storage.RetentionPolicy
	if ignored := mergeRetention(&merged, first); ignored != nil {
		t.Errorf("first policy: ignored %q", ignored)
	}
	ignored := mergeRetention(&merged, second)
	want := storage.RetentionPolicy{Default: long, Spaces: map[string]storage.Retention{"a": short, "b": long, "c": short}}
	if !reflect.DeepEqual(merged, want) {
		t.Errorf("merged %+v, want %+v", merged, want)
	}
	if !reflect.DeepEqual(ignored, []string{"the default (personal spaces)", "space b"}) {
		t.Errorf("ignored %q", ignored)
	}
	// The same policy again changes nothing and ignores nothing.
	if ignored := mergeRetention(&merged, first); ignored != nil || !reflect.DeepEqual(merged, want) {
		t.Errorf("merging the first again: ignored %q, merged %+v", ignored, merged)
	}
}

// TestRetentionSharedStore: handlers of one configuration on one store
// give it their merged retention (the first handler's default), and a
// reload's replaces it; a reload that fails leaves the running one.
func TestRetentionSharedStore(t *testing.T) {
	root := t.TempDir()
	ctx := newContext(t)
	first := &DAVSpaces{Root: root, TrashRetention: durationOf(7 * day), Spaces: []ProjectSpace{{ID: "phys", Name: "Physics"}}}
	second := &DAVSpaces{Root: root, TrashRetention: durationOf(0), Spaces: []ProjectSpace{{ID: "chem", Name: "Chemistry"}}}
	for _, d := range []*DAVSpaces{first, second} {
		if err := provisionIn(t, ctx, d); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cleanup(t, d) })
	}
	week := applyRetention(storage.DefaultRetention, durationOf(7*day), nil)
	none := applyRetention(storage.DefaultRetention, durationOf(0), nil)
	_, got := settingsInForce(t, root)
	want := storage.RetentionPolicy{Default: week, Spaces: map[string]storage.Retention{"phys": week, "chem": none}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("retention of two handlers: %+v, want %+v", got, want)
	}

	// The second handler's personal spaces keep the first's default; its
	// project space keeps its own.
	granted := storage.RetentionPolicy{Default: week, Spaces: map[string]storage.Retention{"chem": none}}
	if !reflect.DeepEqual(second.claim.granted, granted) {
		t.Errorf("granted to the second handler: %+v, want %+v", second.claim.granted, granted)
	}

	failed := &DAVSpaces{Root: root, Versions: &VersionsRetention{Off: true}}
	if err := provision(t, failed); err != nil {
		t.Fatal(err)
	}
	if _, got := settingsInForce(t, root); !got.Default.VersionsOff {
		t.Errorf("retention during a reload: %+v, want the new configuration's", got)
	}
	cleanup(t, failed)
	if _, got := settingsInForce(t, root); !reflect.DeepEqual(got, want) {
		t.Errorf("retention after a failed reload: %+v, want the running %+v", got, want)
	}
}

// TestCapabilitiesGrantedRetention: a handler advertises what the store
// keeps for its spaces, which a handler before it on the same store may
// have decided.
func TestCapabilitiesGrantedRetention(t *testing.T) {
	root := t.TempDir()
	ctx := newContext(t)
	first := &DAVSpaces{Root: root, TrashRetention: durationOf(0), Versions: &VersionsRetention{Off: true}}
	second := &DAVSpaces{Root: root}
	for _, d := range []*DAVSpaces{first, second} {
		if err := provisionIn(t, ctx, d); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cleanup(t, d) })
	}
	rec := serve(t, second, request{method: http.MethodGet, target: "/ocs/v2.php/cloud/capabilities?format=json", user: "einstein"})
	if body := rec.Body.String(); !strings.Contains(body, `"undelete":false`) || !strings.Contains(body, `"versioning":false`) || strings.Contains(body, "trashbin") {
		t.Errorf("the second handler advertises what the first turned off: %s", body)
	}
}

// TestCapabilitiesFollowRetention: a handler advertises the trash-bin and
// versions when it keeps them, for its default or for any of its spaces.
func TestCapabilitiesFollowRetention(t *testing.T) {
	for _, tt := range []struct {
		name                   string
		d                      DAVSpaces
		trashbin, undelete, ve bool
	}{
		{"defaults", DAVSpaces{}, true, true, true},
		{"both off", DAVSpaces{TrashRetention: durationOf(0), Versions: &VersionsRetention{Off: true}}, false, false, false},
		{"trash off", DAVSpaces{TrashRetention: durationOf(0)}, false, false, true},
		{"versions off", DAVSpaces{Versions: &VersionsRetention{Off: true}}, true, true, false},
		{"off but for one space", DAVSpaces{
			TrashRetention: durationOf(0), Versions: &VersionsRetention{Off: true},
			Spaces: []ProjectSpace{{Name: "Physics", TrashRetention: durationOf(day), Versions: &VersionsRetention{}}},
		}, true, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.d
			d.Root = t.TempDir()
			mustProvision(t, &d)
			rec := serve(t, &d, request{method: http.MethodGet, target: "/ocs/v2.php/cloud/capabilities?format=json", user: "einstein"})
			var caps struct {
				OCS struct {
					Data struct {
						Capabilities struct {
							DAV   map[string]any `json:"dav"`
							Files struct {
								Undelete   bool `json:"undelete"`
								Versioning bool `json:"versioning"`
							} `json:"files"`
						} `json:"capabilities"`
					} `json:"data"`
				} `json:"ocs"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &caps); err != nil {
				t.Fatalf("%v: %s", err, rec.Body)
			}
			c := caps.OCS.Data.Capabilities
			if got := c.DAV["trashbin"] == "1.0"; got != tt.trashbin || c.Files.Undelete != tt.undelete || c.Files.Versioning != tt.ve {
				t.Errorf("dav %v, undelete %v, versioning %v; want trashbin %v, undelete %v, versioning %v",
					c.DAV, c.Files.Undelete, c.Files.Versioning, tt.trashbin, tt.undelete, tt.ve)
			}
		})
	}
}
