package origin

import (
	"context"
	"crypto/tls"
	"net/http/httptest"
	"testing"
)

func TestOf(t *testing.T) {
	tests := []struct {
		name   string
		tls    bool
		scheme string // given with WithScheme when not empty
		header string // X-Forwarded-Proto, which alone changes nothing
		want   string
	}{
		{name: "plain HTTP", want: "http://files.example"},
		{name: "TLS", tls: true, want: "https://files.example"},
		{name: "forwarded header alone is not trusted", header: "https", want: "http://files.example"},
		{name: "https behind a TLS-terminating proxy", scheme: "https", want: "https://files.example"},
		{name: "http through a proxy that terminates nothing", tls: true, scheme: "http", want: "http://files.example"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "http://files.example/dav/spaces/x", nil)
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if tt.header != "" {
				r.Header.Set("X-Forwarded-Proto", tt.header)
			}
			if tt.scheme != "" {
				r = r.WithContext(WithScheme(context.Background(), tt.scheme))
			}
			if got := Of(r); got != tt.want {
				t.Errorf("Of = %q, want %q", got, tt.want)
			}
		})
	}
}
