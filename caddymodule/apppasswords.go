package caddymodule

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/davspaces/davspaces/apppass"
	"github.com/davspaces/davspaces/passwordguard"
	"github.com/davspaces/davspaces/storage"
)

// appPasswordStores lists, per configuration, the app password checks of
// the stores its davspaces handlers serve, so that oidc_auth, which runs
// before them and opens no store, checks app passwords against the store
// they are made in.
var appPasswordStores = new(appPasswordDirectory)

// appPasswordStore is a store's verifier and the directory of the users
// who signed in, whose groups an app password's user gets.
type appPasswordStore struct {
	verifier  *apppass.Verifier
	directory storage.DirectoryReader
}

// appPasswordDirectory lists the stores' checks per configuration.
type appPasswordDirectory struct {
	registry[context.Context, appPasswordStore]
}

// add lists a store's checks under config and returns the function that
// takes them off again.
func (d *appPasswordDirectory) add(config context.Context, v *apppass.Verifier, dir storage.DirectoryReader) (remove func()) {
	return d.put(config, &appPasswordStore{verifier: v, directory: dir})
}

// find returns the checks of the first store listed under config.
func (d *appPasswordDirectory) find(config context.Context) (*appPasswordStore, bool) {
	list := d.listed(config)
	if len(list) == 0 {
		return nil, false
	}
	return list[0], true
}

// authenticateAppPassword signs in a request whose Basic password has an
// app password's form. handled is false for any other request, which the
// fallback providers then try. A wrong app password is answered 401, a
// spent budget 429 with Retry-After; neither the password nor its id is
// logged.
func (a *OIDCAuth) authenticateAppPassword(w http.ResponseWriter, r *http.Request, repl *caddy.Replacer) (handled bool, err error) {
	user, password, ok := r.BasicAuth()
	if !ok || !apppass.LooksLike(password) || storage.ValidUserID(user) != nil {
		return false, nil
	}
	store, ok := appPasswordStores.find(a.config)
	if !ok {
		return false, nil
	}
	p, err := store.verifier.Check(r.Context(), user, password, clientKey(r))
	var refusal *passwordguard.Refusal
	switch {
	case errors.As(err, &refusal):
		w.Header().Set("Retry-After", strconv.Itoa(max(int(refusal.RetryAfter.Seconds()+0.999), 1)))
		return true, caddyhttp.Error(http.StatusTooManyRequests, errors.New("too many wrong app passwords"))
	case errors.Is(err, apppass.ErrWrongPassword):
		if c := a.logger.Check(zapcore.DebugLevel, "app password refused"); c != nil {
			c.Write(zap.String("user", user))
		}
		return true, a.challenge(w, r, "")
	case err != nil:
		a.logger.Warn("app passwords unavailable", zap.Error(err))
		w.Header().Set("Retry-After", "5")
		return true, caddyhttp.Error(http.StatusServiceUnavailable, err)
	}
	entry, err := store.directory.DirectoryUser(r.Context(), p.User)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		w.Header().Set("Retry-After", "5")
		return true, caddyhttp.Error(http.StatusServiceUnavailable, err)
	}
	if storage.SignInIdle(entry, err == nil, time.Duration(a.AppPasswordIdle), time.Now()) {
		if c := a.logger.Check(zapcore.InfoLevel, "app password refused: its user has not signed in at the provider within app_password_idle"); c != nil {
			c.Write(zap.String("user", user))
		}
		return true, a.challenge(w, r, "")
	}
	setUser(repl, p.User, entry.DisplayName, entry.Email, entry.Groups)
	repl.Set(userAppPasswordPlaceholder, p.ID)
	setScope(repl, p.Scope())
	return true, nil
}
