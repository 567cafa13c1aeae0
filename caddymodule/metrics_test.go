package caddymodule

import (
	"context"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

func TestProviderMetrics(t *testing.T) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	handlers := []*OIDCAuth{{OIDC: OIDC{Issuer: "https://idp.example.org"}}, {OIDC: OIDC{Issuer: "https://idp.example.org"}}}
	for _, a := range handlers {
		if err := a.Provision(ctx); err != nil {
			t.Fatal(err)
		}
		defer a.Cleanup()
	}
	families, err := ctx.GetMetricsRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"davspaces_oidc_discoveries_total":       false,
		"davspaces_oidc_key_fetches_total":       false,
		"davspaces_oidc_userinfo_requests_total": false,
		"davspaces_oidc_token_cache_hits_total":  false,
	}
	for _, f := range families {
		if _, ok := want[f.GetName()]; !ok {
			continue
		}
		want[f.GetName()] = true
		if len(f.GetMetric()) != 1 || f.GetMetric()[0].GetLabel()[0].GetValue() != "https://idp.example.org" {
			t.Errorf("%s: %v", f.GetName(), f.GetMetric())
		}
	}
	for name, seen := range want {
		if !seen {
			t.Errorf("metric %s not registered", name)
		}
	}
}
