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
		"davspaces_oidc_discoveries_total":            false,
		"davspaces_oidc_key_fetches_total":            false,
		"davspaces_oidc_userinfo_requests_total":      false,
		"davspaces_oidc_introspection_requests_total": false,
		"davspaces_oidc_token_cache_hits_total":       false,
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

// Handlers configured differently for one issuer get providers of their
// own; the issuer's counters add up what each of them did.
func TestProviderMetricsAddUpPerIssuer(t *testing.T) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	const issuer = "http://127.0.0.1:1" // nothing listens: each check costs one discovery attempt
	handlers := []*OIDCAuth{
		{OIDC: OIDC{Issuer: issuer, CacheSize: 100}},
		{OIDC: OIDC{Issuer: issuer, CacheSize: 200}},
	}
	for _, a := range handlers {
		if err := a.Provision(ctx); err != nil {
			t.Fatal(err)
		}
		defer a.Cleanup()
		if _, err := a.provider.Verify(context.Background(), "opaque-token"); err == nil {
			t.Fatal("a token was accepted by an unreachable provider")
		}
	}
	if handlers[0].provider == handlers[1].provider {
		t.Fatal("differently configured handlers share a provider")
	}
	families, err := ctx.GetMetricsRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "davspaces_oidc_discoveries_total" {
			continue
		}
		if len(f.GetMetric()) != 1 {
			t.Fatalf("%d series, want one per issuer", len(f.GetMetric()))
		}
		if got := f.GetMetric()[0].GetCounter().GetValue(); got != 2 {
			t.Errorf("discoveries = %v, want 2 (one per provider)", got)
		}
		return
	}
	t.Fatal("davspaces_oidc_discoveries_total not registered")
}
