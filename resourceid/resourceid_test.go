package resourceid

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ID
	}{
		{"st$sp!n", ID{"st", "sp", "n"}},
		{"st$sp", ID{"st", "sp", ""}},
		{"sp", ID{"", "sp", ""}},
		{"sp!n", ID{"", "sp", "n"}},
		{"a0ca6a90-a365$Physics Lab!7f3e", ID{"a0ca6a90-a365", "Physics Lab", "7f3e"}},
		{"st$sp!", ID{"st", "sp", ""}},
		{"sp!", ID{"", "sp", ""}},
	} {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if s := got.String(); s != strings.TrimSuffix(tc.in, "!") {
			t.Errorf("Parse(%q).String() = %q", tc.in, s)
		}
	}
}

// TestParseRefusals: what no front-end may take for an id; each turns
// ErrMalformed into its refusal (WebDAV 400, OCS and Graph 404).
func TestParseRefusals(t *testing.T) {
	for _, in := range []string{
		"",
		"$",
		"$sp",
		"$!x",
		"st$",
		"st$!n",
		"!n",
		"st$a$b",
		"st$sp!n!m",
		"st$sp!n$m",
		"st$sp!a/b",
		"st$a/b",
		"st/x$sp",
		"st!x$sp",
	} {
		if id, err := Parse(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) = %+v, %v; want ErrMalformed", in, id, err)
		}
	}
}

func TestSeparable(t *testing.T) {
	for p, want := range map[string]bool{"lab": true, "Physics Lab": true, "": true, "a$b": false, "a!b": false, "a/b": false} {
		if got := Separable(p); got != want {
			t.Errorf("Separable(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestFormat(t *testing.T) {
	id := New("st", "sp", "n")
	for _, tc := range []struct {
		got, want string
	}{
		{id.String(), "st$sp!n"},
		{id.SpaceRef().String(), "st$sp"},
		{Space("st", "sp").String(), "st$sp"},
		{New("", "sp", "n").String(), "sp!n"},
		{Space("st", "sp").At("n").String(), "st$sp!n"},
		{id.At("m").String(), "st$sp!m"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	if !id.Of("st") || id.Of("other") || New("", "sp", "n").Of("") {
		t.Error("Of: an id of one store is taken for another's, or a bare id for one")
	}
	if id.IsSpace() || !id.SpaceRef().IsSpace() {
		t.Error("IsSpace: a node's id names a space, or its space's does not")
	}
}

// TestAppend: each part goes through the escaper, the separators do not.
func TestAppend(t *testing.T) {
	upper := func(dst []byte, s string) []byte { return append(dst, strings.ToUpper(s)...) }
	if got := string(New("st", "a&b", "n").Append([]byte("<"), upper)); got != "<ST$A&B!N" {
		t.Errorf("Append = %q", got)
	}
	ref := Space("st", "sp").Append(nil, upper)
	if got := string(AppendNode(ref, "n", upper)); got != "ST$SP!N" {
		t.Errorf("AppendNode = %q", got)
	}
}

// FuzzParse: what Parse takes, String gives back as it was; what it
// refuses is ErrMalformed.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"st$sp!n", "st$sp", "sp", "sp!n", "$!x", "st$sp!", "a$b$c", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Parse(%q): %v", s, err)
			}
			return
		}
		if id.String() != s && id.String()+"!" != s {
			t.Fatalf("Parse(%q).String() = %q", s, id.String())
		}
		if again, err := Parse(id.SpaceRef().String()); err != nil || again != id.SpaceRef() {
			t.Fatalf("the space of %q reads back as %+v, %v", s, again, err)
		}
	})
}

// FuzzRoundTrip: an id of parts without separators reads back as formed.
func FuzzRoundTrip(f *testing.F) {
	f.Add("st", "sp", "n")
	f.Add("", "sp", "")
	f.Fuzz(func(t *testing.T, storageID, spaceID, nodeID string) {
		for _, p := range []string{storageID, spaceID, nodeID} {
			if strings.ContainsAny(p, forbidden) {
				return
			}
		}
		if spaceID == "" {
			return
		}
		id := New(storageID, spaceID, nodeID)
		if got, err := Parse(id.String()); err != nil || got != id {
			t.Fatalf("Parse(%q) = %+v, %v; want %+v", id.String(), got, err, id)
		}
	})
}
