package caddymodule

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/webfinger"
)

func init() {
	caddy.RegisterModule(WebFinger{})
	httpcaddyfile.RegisterHandlerDirective("webfinger", parseWebFinger)
	// The lookup does its own (optional) authentication, so it runs before
	// any required one, and no `order` line is needed.
	httpcaddyfile.RegisterDirectiveOrder("webfinger", httpcaddyfile.Before, "basic_auth")
}

// WebFinger answers RFC 7033 lookups at /.well-known/webfinger: the OpenID
// Connect issuer for everybody and, for a request with a valid Bearer token,
// one server-instance link per matching instance rule. It also answers the
// issuer's discovery document at /.well-known/openid-configuration, where
// clients that know only the server's URL look for it. Other requests go
// to the next handler.
type WebFinger struct {
	// OIDC names the issuer (the href of the issuer link, and the provider
	// that checks Bearer tokens). Tokens are checked with the verifier of an
	// oidc_auth handler of the same configuration and issuer when there is
	// one (the one with the same settings, else the first); the settings
	// here apply only without one.
	OIDC
	// PlatformURL is {{.PLATFORM_URL}} (alias {{.OCIS_URL}}) in instance
	// hrefs. Placeholders are expanded. Default: the request's own origin.
	PlatformURL string `json:"platform_url,omitempty"`
	// Relations are the link relations served. Default: the issuer and the
	// server-instance relation.
	Relations []string `json:"relations,omitempty"`
	// Instances are the server-instance rules, evaluated in order against
	// the user's claims. Default: one rule linking every signed-in user to
	// the platform URL.
	Instances []InstanceRule `json:"instances,omitempty"`

	handler     *webfinger.Handler
	discovery   *webfinger.Discovery
	providerKey string
	provider    *verifier    // of its own settings
	checksAt    configIssuer // where to look for oidc_auth's verifier
	logger      *zap.Logger
}

// InstanceRule adds a server-instance link for users whose claim matches.
type InstanceRule struct {
	// Claim is the userinfo claim tested.
	Claim string `json:"claim"`
	// Regex is matched against the claim's value (unanchored, RE2).
	Regex string `json:"regex"`
	// Href is the link target, a Go template over the claims, e.g.
	// "https://{{.preferred_username}}.example.org" or "{{.PLATFORM_URL}}".
	Href string `json:"href"`
	// Titles maps language tags to titles.
	Titles map[string]string `json:"titles,omitempty"`
	// Break stops the evaluation after this rule when it matched.
	Break bool `json:"break,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (WebFinger) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.webfinger",
		New: func() caddy.Module { return new(WebFinger) },
	}
}

// Provision compiles the rules and acquires the identity provider (without
// contacting it).
func (wf *WebFinger) Provision(ctx caddy.Context) error {
	wf.logger = ctx.Logger()
	if wf.Issuer == "" {
		// As in the original's configuration, the platform URL doubles as
		// the issuer when none is named.
		wf.Issuer = wf.PlatformURL
	}
	cfg, err := wf.verifierConfig()
	if err != nil {
		return err
	}
	handlerCfg := webfinger.Config{
		Issuer:      cfg.Identity.Issuer,
		PlatformURL: caddy.NewReplacer().ReplaceAll(wf.PlatformURL, ""),
		Relations:   wf.Relations,
		Rules:       wf.rules(),
		Logger:      wf.logger,
	}
	// Compile before acquiring, so a bad rule leaves nothing to release.
	if _, err := webfinger.New(handlerCfg); err != nil {
		return fmt.Errorf("webfinger: %w", err)
	}
	warnAnyAudience(wf.logger, cfg.Identity)
	provider, key, err := acquireProvider(ctx, cfg)
	if err != nil {
		return err
	}
	wf.providerKey, wf.provider = key, provider
	wf.checksAt = newConfigIssuer(ctx.Context, cfg.Identity.Issuer)
	late := &lateVerifier{choose: wf.chooseVerifier}
	handlerCfg.Verifier = late
	handlerCfg.Logger = throttled(wf.logger, provider.warnings)
	if wf.handler, err = webfinger.New(handlerCfg); err != nil {
		return err
	}
	wf.discovery, err = webfinger.NewDiscovery(cfg.Identity.Issuer, late, handlerCfg.Logger)
	return err
}

// chooseVerifier returns the verifier of an oidc_auth handler of the same
// configuration and issuer, one with the same settings when there is one:
// one token cache, one budget of new tokens per client address, one budget
// of userinfo requests. Without such a handler it is the lookup's own.
func (wf *WebFinger) chooseVerifier() *verifier {
	v, same, found := authVerifiers.find(wf.checksAt, wf.providerKey)
	switch {
	case !found:
		return wf.provider
	case !same:
		wf.logger.Info("webfinger checks tokens with the verifier of oidc_auth for its issuer, whose provider settings differ from its own",
			zap.String("issuer", wf.checksAt.issuer))
	}
	return v
}

func (wf *WebFinger) rules() []webfinger.Rule {
	if wf.Instances == nil {
		return nil
	}
	rules := make([]webfinger.Rule, 0, len(wf.Instances))
	for _, in := range wf.Instances {
		rules = append(rules, in.webfingerRule())
	}
	return rules
}

func (in InstanceRule) webfingerRule() webfinger.Rule {
	return webfinger.Rule{Claim: in.Claim, Regex: in.Regex, Href: in.Href, Titles: in.Titles, Break: in.Break}
}

// Cleanup releases the identity provider.
func (wf *WebFinger) Cleanup() error {
	err := releaseProvider(wf.providerKey)
	wf.providerKey = ""
	return err
}

// ServeHTTP answers lookups and the discovery document and passes other
// requests on. CORS preflights (OPTIONS) pass on too, to the site's CORS
// route.
func (wf *WebFinger) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if r.Method == http.MethodOptions {
		return next.ServeHTTP(w, r)
	}
	switch r.URL.Path {
	case webfinger.Path:
		wf.handler.ServeHTTP(w, withForwardedScheme(r))
	case webfinger.DiscoveryPath:
		wf.discovery.ServeHTTP(w, withForwardedScheme(r))
	default:
		return next.ServeHTTP(w, r)
	}
	return nil
}

func parseWebFinger(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	return parseHandler(h, new(WebFinger))
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	webfinger [<matcher>] {
//		issuer       <url>
//		platform_url <url>
//		insecure
//		relations    <uri...>
//		instance {
//			claim <claim>
//			regex <regex>
//			href  <template>
//			title <language> <text>
//			break
//		}
//	}
//
// The other oidc_auth provider settings (audience, introspection,
// algorithms, timeout, leeway, cache_size, opaque_ttl, userinfo_concurrency,
// token_rate) are accepted too; they apply only where no oidc_auth handler
// of the configuration names the issuer, since tokens are checked with that
// handler's verifier. Rules are checked here, so that `caddy adapt` already
// refuses a bad regex or template.
func (wf *WebFinger) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return parseDirective(d, "subdirective", wf.OIDC.options().with(wf.options()), func() error {
		if wf.Issuer == "" && wf.PlatformURL == "" {
			return errors.New("webfinger needs an issuer (or a platform_url, which then names the issuer too)")
		}
		return nil
	})
}

// options are the handler's own subdirectives, beside the provider's.
func (wf *WebFinger) options() options {
	return options{
		"platform_url": set(&wf.PlatformURL, oneArg),
		"relations":    allArgs(&wf.Relations),
		"instance":     add(&wf.Instances, parseInstance),
	}
}

// parseInstance reads one instance block.
func parseInstance(d *caddyfile.Dispenser) (InstanceRule, error) {
	var rule InstanceRule
	if err := parseBlock(d, "instance subdirective", rule.options()); err != nil {
		return rule, err
	}
	if err := webfinger.CheckRule(rule.webfingerRule()); err != nil {
		return rule, d.Errf("instance: %v", err)
	}
	return rule, nil
}

// options are the subdirectives of an instance block.
func (in *InstanceRule) options() options {
	return options{
		"claim": set(&in.Claim, oneArg),
		"regex": set(&in.Regex, oneArg),
		"href":  set(&in.Href, oneArg),
		"title": in.parseTitle,
		"break": set(&in.Break, flagArg),
	}
}

// parseTitle reads "title <language> <text>".
func (in *InstanceRule) parseTitle(d *caddyfile.Dispenser) error {
	var lang, text string
	if !d.AllArgs(&lang, &text) {
		return d.ArgErr()
	}
	if in.Titles == nil {
		in.Titles = map[string]string{}
	}
	in.Titles[lang] = text
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*WebFinger)(nil)
	_ caddy.CleanerUpper          = (*WebFinger)(nil)
	_ caddyhttp.MiddlewareHandler = (*WebFinger)(nil)
	_ caddyfile.Unmarshaler       = (*WebFinger)(nil)
)
