package storage

import (
	"slices"
	"testing"
	"time"
)

func TestRetentionKeeps(t *testing.T) {
	for _, tc := range []struct {
		name            string
		r               Retention
		trash, versions bool
	}{
		{"the default", DefaultRetention, true, true},
		{"nothing", Retention{}, false, false},
		{"versions off", Retention{Trash: time.Hour, VersionsFor: time.Hour, VersionsMax: 3, VersionsOff: true}, true, false},
		{"no versions count", Retention{VersionsFor: time.Hour}, false, false},
		{"no versions time", Retention{VersionsMax: 3}, false, false},
		{"versions without trash", Retention{VersionsFor: time.Hour, VersionsMax: 1}, false, true},
	} {
		if got := tc.r.KeepsTrash(); got != tc.trash {
			t.Errorf("%s: KeepsTrash = %v", tc.name, got)
		}
		if got := tc.r.KeepsVersions(); got != tc.versions {
			t.Errorf("%s: KeepsVersions = %v", tc.name, got)
		}
	}
}

func TestTrashExpired(t *testing.T) {
	deleted := time.Unix(1000, 0)
	r := Retention{Trash: time.Hour}
	for _, tc := range []struct {
		r       Retention
		now     time.Time
		expired bool
	}{
		{r, deleted, false},
		{r, deleted.Add(time.Hour - time.Nanosecond), false},
		{r, deleted.Add(time.Hour), true},
		{r, deleted.Add(48 * time.Hour), true},
		{r, deleted.Add(-time.Hour), false}, // a clock set back
		{Retention{}, deleted, true},        // no trash kept at all
	} {
		if got := tc.r.TrashExpired(deleted, tc.now); got != tc.expired {
			t.Errorf("TrashExpired(%v after deletion, retention %v) = %v", tc.now.Sub(deleted), tc.r.Trash, got)
		}
	}
}

func TestVersionsToPrune(t *testing.T) {
	now := time.Unix(100000, 0)
	// Newest first, as FileVersions gives them: ages 0s, 10m, 59m, 1h, 2h.
	var vs []Version
	for i, age := range []time.Duration{0, 10 * time.Minute, 59 * time.Minute, time.Hour, 2 * time.Hour} {
		vs = append(vs, Version{Key: VersionKey(now.Add(-age), i), Replaced: now.Add(-age)})
	}
	keys := func(vs []Version) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.Key)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		r    Retention
		want []Version
	}{
		{"all kept", Retention{VersionsFor: 24 * time.Hour, VersionsMax: 10}, nil},
		{"by age", Retention{VersionsFor: time.Hour, VersionsMax: 10}, vs[3:]},
		{"by count", Retention{VersionsFor: 24 * time.Hour, VersionsMax: 2}, vs[2:]},
		{"by both", Retention{VersionsFor: 30 * time.Minute, VersionsMax: 4}, vs[2:]},
		{"one kept", Retention{VersionsFor: 24 * time.Hour, VersionsMax: 1}, vs[1:]},
		{"versions off", Retention{VersionsFor: 24 * time.Hour, VersionsMax: 10, VersionsOff: true}, vs},
		{"no retention", Retention{}, vs},
	} {
		if got := tc.r.VersionsToPrune(vs, now); !slices.Equal(keys(got), keys(tc.want)) {
			t.Errorf("%s: VersionsToPrune = %v, want %v", tc.name, keys(got), keys(tc.want))
		}
	}
	if got := DefaultRetention.VersionsToPrune(nil, now); len(got) != 0 {
		t.Errorf("VersionsToPrune of no versions = %v", got)
	}
}

func TestRetentionPolicyFor(t *testing.T) {
	project := Retention{Trash: time.Minute}
	p := RetentionPolicy{Default: DefaultRetention, Spaces: map[string]Retention{"project": project}}
	if got := p.For("project"); got != project {
		t.Errorf("For a space set apart = %+v", got)
	}
	if got := p.For("other"); got != DefaultRetention {
		t.Errorf("For another space = %+v", got)
	}
	if got := (RetentionPolicy{}).For("any"); got.KeepsTrash() || got.KeepsVersions() {
		t.Errorf("the zero policy keeps something: %+v", got)
	}
}

func TestEvictions(t *testing.T) {
	t0 := time.Unix(1000, 0)
	kept := []Kept{
		{TrashKey: "newest", Size: 50, Since: t0.Add(3 * time.Hour)},
		{FileID: "f", VersionKey: "v-old", Size: 10, Since: t0},
		{TrashKey: "middle", Size: 30, Since: t0.Add(time.Hour)},
		{FileID: "f", VersionKey: "v-tie", Size: 0, Since: t0.Add(time.Hour)},
		{FileID: "g", VersionKey: "v-mid", Size: 20, Since: t0.Add(2 * time.Hour)},
	}
	names := func(ks []Kept) []string {
		var out []string
		for _, k := range ks {
			out = append(out, k.TrashKey+k.VersionKey)
		}
		return out
	}
	for _, tc := range []struct {
		need int64
		want []string
	}{
		{-5, nil},
		{0, nil},
		{1, []string{"v-old"}},
		{10, []string{"v-old"}},
		{11, []string{"v-old", "middle"}},
		{40, []string{"v-old", "middle"}},
		{41, []string{"v-old", "middle", "v-tie", "v-mid"}},
		{60, []string{"v-old", "middle", "v-tie", "v-mid"}},
		{61, []string{"v-old", "middle", "v-tie", "v-mid", "newest"}},
		{110, []string{"v-old", "middle", "v-tie", "v-mid", "newest"}},
		{111, nil}, // all of it would not do: nothing goes
	} {
		if got := Evictions(kept, tc.need); !slices.Equal(names(got), tc.want) {
			t.Errorf("Evictions(%d) = %v, want %v", tc.need, names(got), tc.want)
		}
	}
	if names(kept)[0] != "newest" {
		t.Error("Evictions reordered its argument")
	}
	if got := Evictions(nil, 1); got != nil {
		t.Errorf("Evictions of nothing = %v", got)
	}
}
