package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/davspaces/davspaces/identity"
)

// verifier is what the handlers of one issuer and one set of settings
// share, oidc_auth and webfinger alike: the provider (its keys, token cache
// and userinfo budget), each client address's budget of new tokens, and the
// throttle of warnings. So a flood of random tokens costs the same whether
// it is sent to one handler or spread over both.
type verifier struct {
	*identity.Provider
	limiter  *identity.ClientLimiter
	warnings *warnThrottle
}

// Verify checks token for the client of ctx's request. A token the cache
// does not know first takes one check from that client's budget; when the
// budget is spent the error is an *identity.TooManyTokensError and the
// provider is not asked.
func (v *verifier) Verify(ctx context.Context, token string, want ...string) (*identity.Identity, error) {
	if !v.Known(token) {
		if ok, wait := v.limiter.Allow(clientKeyOf(ctx)); !ok {
			return nil, &identity.TooManyTokensError{Wait: wait}
		}
	}
	return v.Provider.Verify(ctx, token, want...)
}

func (v *verifier) Destruct() error {
	v.Close()
	return nil
}

// providers shares verifiers between handlers and across reloads, so a
// reload keeps the discovered keys, the token cache and the budgets.
var providers = caddy.NewUsagePool()

// acquireProvider returns the shared verifier for cfg and the key to release
// it with, and registers its provider's metrics. It does no network I/O.
func acquireProvider(ctx caddy.Context, cfg verifierConfig) (*verifier, string, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, "", err
	}
	key := string(b)
	pooled, _, err := providers.LoadOrNew(key, func() (caddy.Destructor, error) {
		p, err := identity.New(cfg.Identity)
		if err != nil {
			return nil, err
		}
		return &verifier{
			Provider: p,
			limiter:  identity.NewClientLimiter(cfg.TokenRate, cfg.TokenBurst, identity.DefaultClientLimiters, nil),
			warnings: newWarnThrottle(nil),
		}, nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("oidc: %w", err)
	}
	v := pooled.(*verifier)
	if reg := ctx.GetMetricsRegistry(); reg != nil {
		if err := registerProviderMetrics(reg, v.Provider); err != nil {
			providers.Delete(key)
			return nil, "", fmt.Errorf("oidc metrics: %w", err)
		}
	}
	return v, key, nil
}

// releaseProvider gives back what acquireProvider handed out.
func releaseProvider(key string) error {
	if key == "" {
		return nil
	}
	_, err := providers.Delete(key)
	return err
}

// clientKeyOf is clientKey for the request whose context ctx is.
func clientKeyOf(ctx context.Context) string {
	r, _ := ctx.Value(caddyhttp.OriginalRequestCtxKey).(http.Request)
	return clientAddressKey(ctx, r.RemoteAddr)
}

// clientKey names the client whose budget a request spends: the address
// Caddy determined (trusted_proxies honoured), an IPv6 address by its /64,
// which one subscriber usually holds whole.
func clientKey(r *http.Request) string {
	return clientAddressKey(r.Context(), r.RemoteAddr)
}

// clientAddressKey is clientKey of the request with context ctx, coming
// from remoteAddr.
func clientAddressKey(ctx context.Context, remoteAddr string) string {
	ip, _ := caddyhttp.GetVar(ctx, caddyhttp.ClientIPVarKey).(string)
	if ip == "" {
		host, _, err := net.SplitHostPort(remoteAddr)
		if err != nil {
			host = remoteAddr
		}
		ip = host
	}
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	addr = addr.Unmap().WithZone("")
	if addr.Is6() {
		prefix, _ := addr.Prefix(64)
		return prefix.String()
	}
	return addr.String()
}
