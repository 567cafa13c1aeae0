package caddymodule

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/caddyauth"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/davspaces/davspaces/identity"
	"github.com/davspaces/davspaces/ocs"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/webui"
)

func init() {
	caddy.RegisterModule(OIDCAuth{})
	httpcaddyfile.RegisterHandlerDirective("oidc_auth", parseOIDCAuth)
	// Authenticates where basic_auth would, so no `order` line is needed.
	httpcaddyfile.RegisterDirectiveOrder("oidc_auth", httpcaddyfile.After, "basic_auth")
}

// OIDCAuth authenticates requests with OpenID Connect access tokens
// (Authorization: Bearer) and, for requests without one, with the configured
// fallback providers (http_basic for development, for example).
//
// On success it sets {http.auth.user.id} (from UserClaim), and when known
// {http.auth.user.name}, {http.auth.user.email} and {http.auth.user.groups}
// (comma-separated), which davspaces reads. A missing or refused token is
// answered 401 with a Bearer challenge (plus the fallback providers' ones);
// a provider that cannot be reached is answered 503, never 401, so clients
// keep their tokens.
type OIDCAuth struct {
	OIDC
	// UserClaim names the claim that becomes the user id.
	// Default: preferred_username.
	UserClaim string `json:"user_claim,omitempty"`
	// NameClaim names the display-name claim. Default: name.
	NameClaim string `json:"name_claim,omitempty"`
	// GroupsClaim names the groups claim; groups can be given space roles
	// as "group:<name>". Default: groups.
	GroupsClaim string `json:"groups_claim,omitempty"`
	// Realm is the realm of the Bearer challenge. Default: the request's host.
	Realm string `json:"realm,omitempty"`
	// ProvidersRaw are authentication providers tried for requests without
	// a Bearer token, such as http_basic.
	ProvidersRaw caddy.ModuleMap `json:"providers,omitempty" caddy:"namespace=http.authentication.providers"`
	// BrowserPages lets a browser's page load (webui.WantsPage) and the
	// page's assets (GET or HEAD under webui.AssetPrefix) through without
	// a user when they carry no Authorization header: a browser that
	// navigates sends none. davspaces answers them itself, without a
	// user: the page (which then signs in with OpenID Connect) or a Basic
	// challenge. A Nextcloud client's GET of / without credentials comes
	// through too (isNextcloudProbe). Put it only in front of davspaces:
	// a handler behind it that does not check for a user would serve such
	// requests. Other requests without credentials still get 401.
	// Default: off.
	BrowserPages bool `json:"browser_pages,omitempty"`
	// AppPasswordIdle refuses the app passwords of a user the provider
	// has not signed in (with a token, storage.DirectoryEntry.Seen) for
	// this long, so that a user removed at the provider loses them too
	// (storage.SignInIdle). At least two days, as Seen is renewed once a
	// day. Default: 0, off: a user who only syncs with app passwords keeps
	// them until they are revoked.
	AppPasswordIdle caddy.Duration `json:"app_password_idle,omitempty"`

	provider    *verifier
	providerKey string
	unlist      func() // takes the verifier off authVerifiers
	fallbacks   []caddyauth.Authenticator
	// logger writes the warnings of requests, throttled with those of
	// every handler sharing the verifier.
	logger *zap.Logger
	// config is the configuration's context, under which its davspaces
	// handlers list the app password checks of their stores.
	config context.Context
}

// minAppPasswordIdle is the shortest AppPasswordIdle: twice the
// directory's refresh, so that a user who signs in every day is never
// refused.
const minAppPasswordIdle = 2 * storage.DirectoryRefresh

// CaddyModule returns the Caddy module information.
func (OIDCAuth) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.oidc_auth",
		New: func() caddy.Module { return new(OIDCAuth) },
	}
}

// Provision sets defaults, loads the fallback providers and acquires the
// identity provider (without contacting it).
func (a *OIDCAuth) Provision(ctx caddy.Context) error {
	logger := ctx.Logger()
	a.logger = logger
	a.config = ctx.Context
	if a.UserClaim == "" {
		a.UserClaim = "preferred_username"
	}
	if a.NameClaim == "" {
		a.NameClaim = "name"
	}
	if a.GroupsClaim == "" {
		a.GroupsClaim = "groups"
	}
	cfg, err := a.verifierConfig()
	if err != nil {
		return err
	}
	if idle := time.Duration(a.AppPasswordIdle); idle != 0 && idle < minAppPasswordIdle {
		return fmt.Errorf("app_password_idle must be 0 (off) or at least %s: a signed-in user's last sign-in is written once per %s", minAppPasswordIdle, storage.DirectoryRefresh)
	}
	if a.ProvidersRaw != nil {
		mods, err := ctx.LoadModule(a, "ProvidersRaw")
		if err != nil {
			return fmt.Errorf("loading authentication providers: %w", err)
		}
		// Sorted by module name so that challenges come in the same order
		// on every request and every reload.
		byName := mods.(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(byName)) {
			a.fallbacks = append(a.fallbacks, byName[name].(caddyauth.Authenticator))
		}
	}
	warnAnyAudience(logger, cfg.Identity)
	a.provider, a.providerKey, err = acquireProvider(ctx, cfg)
	if err != nil {
		return err
	}
	a.logger = throttled(logger, a.provider.warnings)
	a.unlist = authVerifiers.add(newConfigIssuer(ctx.Context, cfg.Identity.Issuer), a.providerKey, a.provider)
	return nil
}

// Cleanup releases the identity provider.
func (a *OIDCAuth) Cleanup() error {
	if a.unlist != nil {
		a.unlist()
		a.unlist = nil
	}
	err := releaseProvider(a.providerKey)
	a.providerKey = ""
	return err
}

// ServeHTTP authenticates the request and passes it on.
func (a *OIDCAuth) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	repl := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if a.BrowserPages && (isBrowserPageLoad(r) || isNextcloudProbe(r)) {
		return next.ServeHTTP(w, r)
	}
	token, bearer := bearerToken(r)
	if !bearer {
		if handled, err := a.authenticateAppPassword(w, r, repl); handled {
			if err != nil {
				return err
			}
			return next.ServeHTTP(w, r)
		}
		if a.authenticateFallback(w, r, repl) {
			return next.ServeHTTP(w, r)
		}
		return a.challenge(w, r, "")
	}
	id, err := a.provider.Verify(r.Context(), token, a.UserClaim)
	var tooMany *identity.TooManyTokensError
	switch {
	case errors.As(err, &tooMany):
		return a.tooManyTokens(w, tooMany)
	case errors.Is(err, identity.ErrInvalidToken):
		if c := a.logger.Check(zapcore.DebugLevel, "bearer token refused"); c != nil {
			c.Write(zap.Error(err))
		}
		return a.challenge(w, r, `error="invalid_token"`)
	case err != nil:
		a.logger.Warn("identity provider unavailable", zap.Error(err))
		w.Header().Set("Retry-After", "5")
		return caddyhttp.Error(http.StatusServiceUnavailable, err)
	}
	user := id.String(a.UserClaim)
	if user == "" {
		if c := a.logger.Check(zapcore.DebugLevel, "bearer token has no user claim"); c != nil {
			c.Write(zap.String("claim", a.UserClaim))
		}
		return a.challenge(w, r, `error="invalid_token"`)
	}
	if err := storage.ValidUserID(user); err != nil {
		// Not the client's mistake alone: a user_claim the provider lets
		// users choose freely, say. The operator needs to see it.
		a.logger.Warn("bearer token refused: its user claim is not a valid user id",
			zap.String("claim", a.UserClaim), zap.Error(err))
		return a.challenge(w, r, `error="invalid_token"`)
	}
	setUser(repl, user, id.String(a.NameClaim), id.String("email"), id.Strings(a.GroupsClaim))
	if client := cmp.Or(id.String("azp"), id.String("client_id")); client != "" {
		repl.Set(userClientPlaceholder, client)
	}
	return next.ServeHTTP(w, r)
}

// tooManyTokens answers a client that presents new tokens faster than its
// budget allows: 429 with Retry-After, not 401, which would make a client
// whose token is fine drop it and ask its user to sign in again.
func (a *OIDCAuth) tooManyTokens(w http.ResponseWriter, err *identity.TooManyTokensError) error {
	w.Header().Set("Retry-After", strconv.Itoa(err.RetryAfter()))
	if c := a.logger.Check(zapcore.DebugLevel, "bearer token not checked"); c != nil {
		c.Write(zap.Error(err))
	}
	return caddyhttp.Error(http.StatusTooManyRequests, err)
}

// authenticateFallback tries the fallback providers. Their challenges are
// collected instead of written, so that a 401 carries all of them once.
func (a *OIDCAuth) authenticateFallback(w http.ResponseWriter, r *http.Request, repl *caddy.Replacer) bool {
	for _, p := range a.fallbacks {
		rec := &challengeRecorder{ResponseWriter: w, header: http.Header{}}
		user, ok, err := p.Authenticate(rec, r)
		if err != nil {
			a.logger.Error("authentication provider failed", zap.Error(err))
			continue
		}
		if ok {
			setUser(repl, user.ID, user.Metadata["name"], user.Metadata["email"], nil)
			return true
		}
	}
	return false
}

// challenge answers 401 with a Bearer challenge and those of the fallback
// providers (Basic, for example). A script's request (X-Requested-With:
// XMLHttpRequest, as ownCloud Web sends) gets the Bearer challenge alone:
// a Basic one would make the browser put up its password prompt over the
// page, which signs in with OpenID Connect; the oCIS proxy leaves it out
// for such requests too.
func (a *OIDCAuth) challenge(w http.ResponseWriter, r *http.Request, params string) error {
	realm := a.Realm
	if realm == "" {
		realm = r.Host
	}
	c := fmt.Sprintf("Bearer realm=%q", realm)
	if params != "" {
		c += ", " + params
	}
	w.Header().Add("WWW-Authenticate", c)
	if strings.EqualFold(r.Header.Get("X-Requested-With"), "XMLHttpRequest") {
		return caddyhttp.Error(http.StatusUnauthorized, errors.New("not authenticated"))
	}
	for _, p := range a.fallbacks {
		rec := &challengeRecorder{ResponseWriter: w, header: http.Header{}}
		anonymous := r.Clone(r.Context())
		anonymous.Header.Del("Authorization")
		if _, ok, err := p.Authenticate(rec, anonymous); !ok && err == nil {
			for _, v := range rec.header.Values("WWW-Authenticate") {
				w.Header().Add("WWW-Authenticate", v)
			}
		}
	}
	return caddyhttp.Error(http.StatusUnauthorized, errors.New("not authenticated"))
}

// isBrowserPageLoad reports whether r is a browser's navigation to a page
// or its fetch of the page's assets, without credentials.
func isBrowserPageLoad(r *http.Request) bool {
	if _, has := r.Header["Authorization"]; has {
		return false
	}
	asset := (r.Method == http.MethodGet || r.Method == http.MethodHead) && strings.HasPrefix(r.URL.Path, webui.AssetPrefix)
	return asset || webui.WantsPage(r)
}

// isNextcloudProbe reports whether r is a Nextcloud client's GET of the
// server's root without credentials, by which it chooses how to sign in:
// a 401 with a Basic or Bearer challenge there makes it ask for a
// password instead of signing in by Login Flow v2 (nextcloud/desktop
// src/libsync/networkjobs.cpp DetermineAuthTypeJob). davspaces answers
// it 404.
func isNextcloudProbe(r *http.Request) bool {
	_, has := r.Header["Authorization"]
	return !has && r.Method == http.MethodGet && r.URL.Path == "/" && ocs.IsNextcloudClient(r.UserAgent())
}

// bearerToken returns the token of an "Authorization: Bearer" header.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// challengeRecorder keeps a provider's response headers to itself.
type challengeRecorder struct {
	http.ResponseWriter
	header http.Header
}

func (c *challengeRecorder) Header() http.Header { return c.header }

func (c *challengeRecorder) WriteHeader(int) {}

func (c *challengeRecorder) Write(b []byte) (int, error) { return len(b), nil }

func parseOIDCAuth(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	return parseHandler(h, new(OIDCAuth))
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	oidc_auth [<matcher>] {
//		issuer       <url>
//		audience     <aud...>
//		introspection <client_id> <client_secret> [<endpoint>]
//		algorithms   <alg...>
//		insecure
//		timeout      <duration>
//		leeway       <duration>
//		cache_size   <n>
//		opaque_ttl   <duration>
//		user_claim   <claim>
//		name_claim   <claim>
//		groups_claim <claim>
//		realm        <realm>
//		browser_pages
//		app_password_idle <duration>
//		token_rate   <per_second> [<burst>]
//		userinfo_concurrency <n>
//		basic [<hash_algorithm> [<realm>]] {
//			<username> <hashed_password>
//		}
//	}
func (a *OIDCAuth) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return parseDirective(d, "subdirective", a.OIDC.options().with(a.options()), func() error {
		if a.Issuer == "" {
			return errors.New("oidc_auth needs an issuer")
		}
		return nil
	})
}

// options are the handler's own subdirectives, beside the provider's.
func (a *OIDCAuth) options() options {
	return options{
		"user_claim":        set(&a.UserClaim, oneArg),
		"name_claim":        set(&a.NameClaim, oneArg),
		"groups_claim":      set(&a.GroupsClaim, oneArg),
		"realm":             set(&a.Realm, oneArg),
		"browser_pages":     set(&a.BrowserPages, flagArg),
		"app_password_idle": set(&a.AppPasswordIdle, durationArg),
		"basic":             a.parseBasic,
	}
}

// parseBasic reads a basic block into the handler's providers.
func (a *OIDCAuth) parseBasic(d *caddyfile.Dispenser) error {
	basic, err := parseBasic(d)
	if err != nil {
		return err
	}
	a.ProvidersRaw = caddy.ModuleMap{"http_basic": caddyconfig.JSON(basic, nil)}
	return nil
}

// parseBasic reads a basic block, written like the basic_auth directive.
func parseBasic(d *caddyfile.Dispenser) (caddyauth.HTTPBasicAuth, error) {
	ba := caddyauth.HTTPBasicAuth{HashCache: new(caddyauth.Cache)}
	hashName := "bcrypt"
	args := d.RemainingArgs()
	switch len(args) {
	case 0:
	case 2:
		ba.Realm = args[1]
		fallthrough
	case 1:
		hashName = args[0]
	default:
		return ba, d.ArgErr()
	}
	var hash caddyauth.Comparer
	switch hashName {
	case "bcrypt":
		hash = caddyauth.BcryptHash{}
	case "argon2id":
		hash = caddyauth.Argon2idHash{}
	default:
		return ba, d.Errf("unrecognized hash algorithm: %s", hashName)
	}
	ba.HashRaw = caddyconfig.JSONModuleObject(hash, "algorithm", hashName, nil)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		user := d.Val()
		var hashed string
		if !d.AllArgs(&hashed) {
			return ba, d.Err("basic: each line needs a username and a hashed password")
		}
		ba.AccountList = append(ba.AccountList, caddyauth.Account{Username: user, Password: hashed})
	}
	if len(ba.AccountList) == 0 {
		return ba, d.Err("basic: no accounts")
	}
	return ba, nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*OIDCAuth)(nil)
	_ caddy.CleanerUpper          = (*OIDCAuth)(nil)
	_ caddyhttp.MiddlewareHandler = (*OIDCAuth)(nil)
	_ caddyfile.Unmarshaler       = (*OIDCAuth)(nil)
)
