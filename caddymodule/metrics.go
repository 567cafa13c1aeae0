package caddymodule

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/davspaces/davspaces/identity"
)

// providerCollector exports what the identity providers of one issuer did,
// so that the round trips to the OpenID Connect provider show on Caddy's
// /metrics. Handlers configured differently for the same issuer (another
// audience, say) have providers of their own; their counts add up.
type providerCollector struct {
	discoveries, keyFetches, userinfo, introspections, cacheHit *prometheus.Desc

	mu        sync.Mutex
	providers []*identity.Provider
}

func newProviderCollector(p *identity.Provider) *providerCollector {
	labels := prometheus.Labels{"issuer": p.Issuer()}
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName("davspaces", "oidc", name), help, nil, labels)
	}
	return &providerCollector{
		providers:      []*identity.Provider{p},
		discoveries:    desc("discoveries_total", "Discovery documents fetched from the OpenID Connect provider."),
		keyFetches:     desc("key_fetches_total", "JWKS documents fetched from the OpenID Connect provider."),
		userinfo:       desc("userinfo_requests_total", "Requests sent to the provider's userinfo endpoint."),
		introspections: desc("introspection_requests_total", "Requests sent to the provider's token introspection endpoint."),
		cacheHit:       desc("token_cache_hits_total", "Token checks answered from the cache."),
	}
}

func (c *providerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.discoveries
	ch <- c.keyFetches
	ch <- c.userinfo
	ch <- c.introspections
	ch <- c.cacheHit
}

func (c *providerCollector) add(p *identity.Provider) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.providers, p) {
		c.providers = append(c.providers, p)
	}
}

func (c *providerCollector) stats() identity.Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	var sum identity.Stats
	for _, p := range c.providers {
		s := p.Stats()
		sum.Discoveries += s.Discoveries
		sum.KeyFetches += s.KeyFetches
		sum.UserinfoCalls += s.UserinfoCalls
		sum.Introspections += s.Introspections
		sum.CacheHits += s.CacheHits
	}
	return sum
}

func (c *providerCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	for _, m := range []struct {
		desc *prometheus.Desc
		v    int64
	}{{c.discoveries, s.Discoveries}, {c.keyFetches, s.KeyFetches}, {c.userinfo, s.UserinfoCalls},
		{c.introspections, s.Introspections}, {c.cacheHit, s.CacheHits}} {
		ch <- prometheus.MustNewConstMetric(m.desc, prometheus.CounterValue, float64(m.v))
	}
}

// registerProviderMetrics adds p's counters to registry: to the collector of
// p's issuer when one is registered already, else as a new one.
func registerProviderMetrics(registry prometheus.Registerer, p *identity.Provider) error {
	err := registry.Register(newProviderCollector(p))
	if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
		existing, ok := are.ExistingCollector.(*providerCollector)
		if !ok {
			return fmt.Errorf("metrics for issuer %s registered by another collector", p.Issuer())
		}
		existing.add(p)
		return nil
	}
	return err
}
