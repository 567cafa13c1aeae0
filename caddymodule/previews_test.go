package caddymodule

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestPreviewCacheSize(t *testing.T) {
	for _, tc := range []struct {
		input string
		want  int64
		err   string
	}{
		{input: "cache_size 64MiB", want: 64 << 20},
		{input: "cache_size off", want: -1},
		{input: "cache_size 0", err: "cache_size must be more than 0"},
		{input: "cache_size", err: "wrong argument count"},
		{input: "cache_size 1GB off", err: "wrong argument count"},
		{input: "cache_size lots", err: `invalid size "lots"`},
	} {
		t.Run(tc.input, func(t *testing.T) {
			var got DAVSpaces
			err := got.UnmarshalCaddyfile(caddyfile.NewTestDispenser("davspaces {\n previews {\n " + tc.input + "\n }\n}"))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil || got.Previews == nil || got.Previews.CacheSize != tc.want {
				t.Fatalf("got %+v, %v; want a cache size of %d", got.Previews, err, tc.want)
			}
		})
	}
}
