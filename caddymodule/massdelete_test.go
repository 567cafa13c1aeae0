package caddymodule

import (
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/davspaces/davspaces/davhandler"
)

func TestMassDeleteCaddyfile(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		want        *MassDeleteSettings
		rules       davhandler.MassDeleteRules
		err         string
	}{
		{name: "unset", input: `davspaces`, rules: davhandler.MassDeleteRules{}},
		{name: "off", input: "davspaces {\n mass_delete off\n}", want: &MassDeleteSettings{Off: true},
			rules: davhandler.MassDeleteRules{Off: true}},
		{name: "every option", input: "davspaces {\n mass_delete {\n files 500\n share 5%\n window 1h\n hold\n }\n}",
			want:  &MassDeleteSettings{Files: 500, SharePercent: 5, Window: caddy.Duration(time.Hour), Hold: true},
			rules: davhandler.MassDeleteRules{Files: 500, Share: 0.05, Window: time.Hour, Hold: true}},
		{name: "share off", input: "davspaces {\n mass_delete {\n share off\n }\n}",
			want: &MassDeleteSettings{SharePercent: -1}, rules: davhandler.MassDeleteRules{Share: -0.01}},
		{name: "share without %", input: "davspaces {\n mass_delete {\n share 20\n }\n}", err: `share "20"`},
		{name: "share over 100%", input: "davspaces {\n mass_delete {\n share 120%\n }\n}", err: `share "120%"`},
		{name: "no files", input: "davspaces {\n mass_delete {\n files 0\n }\n}", err: "not a count above 0"},
		{name: "zero window", input: "davspaces {\n mass_delete {\n window 0s\n }\n}", err: "longer than 0"},
		{name: "unknown option", input: "davspaces {\n mass_delete {\n files 5\n keep\n }\n}", err: "unrecognized mass_delete option: keep"},
		{name: "an argument", input: "davspaces {\n mass_delete on\n}", err: `not "on"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dav DAVSpaces
			err := dav.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (dav.MassDelete == nil) != (tc.want == nil) || (tc.want != nil && *dav.MassDelete != *tc.want) {
				t.Fatalf("settings %+v, want %+v", dav.MassDelete, tc.want)
			}
			if got := dav.MassDelete.rules(); got != tc.rules {
				t.Fatalf("rules %+v, want %+v", got, tc.rules)
			}
		})
	}
}
