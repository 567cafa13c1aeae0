package caddymodule

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/davspaces/davspaces/identity"
)

// providerCollector exports what an identity provider did, so that the
// round trips to the OpenID Connect provider show on Caddy's /metrics.
type providerCollector struct {
	provider                                    *identity.Provider
	discoveries, keyFetches, userinfo, cacheHit *prometheus.Desc
}

func newProviderCollector(p *identity.Provider) *providerCollector {
	labels := prometheus.Labels{"issuer": p.Issuer()}
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName("davspaces", "oidc", name), help, nil, labels)
	}
	return &providerCollector{
		provider:    p,
		discoveries: desc("discoveries_total", "Discovery documents fetched from the OpenID Connect provider."),
		keyFetches:  desc("key_fetches_total", "JWKS documents fetched from the OpenID Connect provider."),
		userinfo:    desc("userinfo_requests_total", "Requests sent to the provider's userinfo endpoint."),
		cacheHit:    desc("token_cache_hits_total", "Token checks answered from the cache."),
	}
}

func (c *providerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.discoveries
	ch <- c.keyFetches
	ch <- c.userinfo
	ch <- c.cacheHit
}

func (c *providerCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.provider.Stats()
	for _, m := range []struct {
		desc *prometheus.Desc
		v    int64
	}{{c.discoveries, s.Discoveries}, {c.keyFetches, s.KeyFetches}, {c.userinfo, s.UserinfoCalls}, {c.cacheHit, s.CacheHits}} {
		ch <- prometheus.MustNewConstMetric(m.desc, prometheus.CounterValue, float64(m.v))
	}
}

// registerProviderMetrics adds p's counters to registry once: handlers
// sharing a provider share its counters.
func registerProviderMetrics(registry prometheus.Registerer, p *identity.Provider) error {
	err := registry.Register(newProviderCollector(p))
	if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
		return nil
	}
	return err
}
