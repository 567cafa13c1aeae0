// Package loginflow serves Nextcloud's Login Flow v2 (nextcloud/server
// core/Controller/ClientFlowLoginV2Controller.php), by which Nextcloud's
// desktop, Android and iOS clients sign in where people sign in with
// OpenID Connect and have no password to type:
//
//  1. the client POSTs StartPath without credentials and gets a login URL
//     and a poll token;
//  2. its user opens the login URL in a browser, signs in there (the
//     browser page's OpenID Connect sign-in, or the Basic prompt) and
//     grants the client access: the grant makes an app password
//     (package apppass) named after the client;
//  3. the client polls PollPath with its token: 404 until the grant, then
//     once the server, the user id and the app password, with which it
//     signs in as Basic from then on.
//
// The flows live in the store (storage.LoginFlows), so that each step may
// reach another node of a cluster. The browser's page is the browser
// page's (package webui); this package answers its requests.
package loginflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/apppass"
	"github.com/davspaces/davspaces/internal/origin"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/webui"
)

// The paths of the flow, as the clients call them: under /index.php, and
// without it (Nextcloud's "pretty URLs"), which some clients build.
const (
	// StartPath starts a flow (POST, anonymous).
	StartPath = "/index.php/login/v2"
	// PollPath takes a granted flow's password (POST token=…, anonymous).
	PollPath = StartPath + "/poll"
	// FlowPrefix + login token is the login URL: the page for a browser
	// (which comes without credentials), the flow's client as JSON for
	// the page's script; DELETE cancels the flow.
	FlowPrefix = StartPath + "/flow/"
	// GrantPath (token=…) names the signed-in user the flow would connect
	// (GET) and grants the flow (POST); it needs a signed-in user.
	GrantPath = StartPath + "/grant"

	// prettyPrefix is what a path without /index.php lacks.
	prettyPrefix = "/index.php"
)

// Defaults of Config.
const (
	// DefaultStartsPerAddress bounds the flows one client address (an
	// IPv6 /64) starts within storage.LoginFlowTTL: a person signs a few
	// devices in, no more.
	DefaultStartsPerAddress = 10
	// unnamedClient is the name of a client that sends no User-Agent.
	unnamedClient = "Unknown client"
)

// Config configures a Handler.
type Config struct {
	// Flows keeps the flows. Required.
	Flows storage.LoginFlows
	// AppPasswords makes the password a grant hands out. Required.
	AppPasswords *apppass.Service
	// Budgets bounds the flows an address starts. Required.
	Budgets storage.AttemptBudgets
	// ClientAddress names a request's client for its budget (an address,
	// an IPv6 address by its /64). Required.
	ClientAddress func(*http.Request) string
	// StartsPerAddress bounds the flows one address starts within
	// storage.LoginFlowTTL; 0 means DefaultStartsPerAddress.
	StartsPerAddress int
	// Page answers a browser's GET of a login URL; nil answers 404 (no
	// browser page is served).
	Page Page
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger logs what fails on the server's side; never a token or a
	// password. nil logs nothing.
	Logger *zap.Logger
}

// Page is the browser page of a login URL: it signs the user in and asks
// to grant client access (webui.Handler.ServeLoginFlow). found is false
// for a link of no open flow.
type Page interface {
	ServeLoginFlow(w http.ResponseWriter, r *http.Request, client string, found bool)
}

// Handler serves the flow's paths.
type Handler struct {
	cfg    Config
	starts storage.AttemptBudget
}

// New returns the Handler of cfg.
func New(cfg Config) (*Handler, error) {
	if cfg.Flows == nil || cfg.AppPasswords == nil || cfg.Budgets == nil || cfg.ClientAddress == nil {
		return nil, errors.New("loginflow: flows, app passwords, budgets and a client address are required")
	}
	if cfg.StartsPerAddress <= 0 {
		cfg.StartsPerAddress = DefaultStartsPerAddress
	}
	if cfg.StartsPerAddress > storage.MaxAttemptLimit {
		return nil, fmt.Errorf("loginflow: at most %d starts per address", storage.MaxAttemptLimit)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	return &Handler{cfg: cfg, starts: storage.AttemptBudget{Limit: cfg.StartsPerAddress, Window: storage.LoginFlowTTL}}, nil
}

// canonical is path with the /index.php a client may leave out.
func canonical(path string) string {
	if strings.HasPrefix(path, "/login/v2") {
		return prettyPrefix + path
	}
	return path
}

// IsPage reports whether path is a login URL, which a browser opens
// without credentials.
func IsPage(path string) bool {
	token, ok := strings.CutPrefix(canonical(path), FlowPrefix)
	return ok && token != "" && !strings.Contains(token, "/")
}

// Route returns the handler of r, or false for a path this package does
// not serve.
func (h *Handler) Route(r *http.Request) (http.Handler, bool) {
	switch path := canonical(r.URL.Path); {
	case path == StartPath:
		return http.HandlerFunc(h.serveStart), true
	case path == PollPath:
		return http.HandlerFunc(h.servePoll), true
	case path == GrantPath:
		return http.HandlerFunc(h.serveGrant), true
	case IsPage(path):
		return http.HandlerFunc(h.serveFlow), true
	}
	return nil, false
}

// startAnswer is Nextcloud's answer to a start.
type startAnswer struct {
	Poll struct {
		Token    string `json:"token"`
		Endpoint string `json:"endpoint"`
	} `json:"poll"`
	Login string `json:"login"`
}

// serveStart starts a flow for the client the User-Agent names, within
// its address's budget.
func (h *Handler) serveStart(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeMethodNotAllowed(w, "POST")
		return
	}
	now := h.cfg.Now().UTC().Truncate(time.Microsecond)
	taken, wait, err := h.cfg.Budgets.TakeAttempt(r.Context(), "login flow starts "+h.cfg.ClientAddress(r), h.starts, now)
	switch {
	case err != nil:
		h.unavailable(w, "login flow budget", err)
		return
	case !taken:
		w.Header().Set("Retry-After", strconv.Itoa(max(int(wait.Seconds()+0.999), 1)))
		writeError(w, http.StatusTooManyRequests, "too many sign-ins started from this address; try again later")
		return
	}
	loginToken, pollToken := newToken(), newToken()
	public, err := publicOf(pollToken)
	if err != nil {
		h.unavailable(w, "login flow key", err)
		return
	}
	client := apppass.CutLabel(strings.TrimSpace(r.UserAgent()))
	if client == "" {
		client = unnamedClient
	}
	err = h.cfg.Flows.CreateLoginFlow(r.Context(), storage.LoginFlow{
		LoginKey:   storage.LoginFlowKey(loginToken),
		PollKey:    storage.LoginFlowKey(pollToken),
		Client:     client,
		Created:    now,
		Expires:    now.Add(storage.LoginFlowTTL),
		PollPublic: public,
	})
	switch {
	case errors.Is(err, storage.ErrInsufficientStorage):
		w.Header().Set("Retry-After", "60")
		writeError(w, http.StatusServiceUnavailable, "too many sign-ins are open; try again later")
		return
	case err != nil:
		h.unavailable(w, "starting a login flow", err)
		return
	}
	server := origin.Of(r)
	var a startAnswer
	a.Poll.Token = pollToken
	a.Poll.Endpoint = server + PollPath
	a.Login = server + FlowPrefix + loginToken
	writeJSON(w, http.StatusOK, a)
}

// pollAnswer is what a granted flow's poll gets, once.
type pollAnswer struct {
	Server      string `json:"server"`
	LoginName   string `json:"loginName"`
	AppPassword string `json:"appPassword"`
}

// servePoll answers a poll: 404 with [] (as Nextcloud) until the flow is
// granted, then once the password; a token that is not one is not looked
// up.
func (h *Handler) servePoll(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeMethodNotAllowed(w, "POST")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	token := r.PostFormValue("token")
	if !validToken(token) {
		writePending(w)
		return
	}
	f, err := h.cfg.Flows.TakeLoginFlow(r.Context(), storage.LoginFlowKey(token), h.cfg.Now())
	switch {
	case errors.Is(err, storage.ErrNotFound):
		writePending(w)
		return
	case err != nil:
		h.unavailable(w, "polling a login flow", err)
		return
	}
	password, err := open(token, f.Sealed)
	if err != nil {
		h.unavailable(w, "opening a login flow's password", err)
		return
	}
	writeJSON(w, http.StatusOK, pollAnswer{Server: origin.Of(r), LoginName: f.User, AppPassword: password})
}

// writePending is Nextcloud's answer to a poll of a flow not granted (or
// not there): the client polls again.
func writePending(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNotFound)
	w.Write([]byte("[]\n"))
}

// flowInfo is what the page shows of a flow before its user signs in.
type flowInfo struct {
	Client  string    `json:"client"`
	Expires time.Time `json:"expires"`
}

// serveFlow answers a login URL: the page for a browser, which a browser
// that navigates gets without credentials, showing the client that asks;
// the flow's client as JSON; and cancels the flow on DELETE.
func (h *Handler) serveFlow(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimPrefix(canonical(r.URL.Path), FlowPrefix)
	switch {
	case webui.WantsPage(r):
		h.servePage(w, r, token)
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		f, ok := h.openFlow(w, r, token)
		if ok {
			writeJSON(w, http.StatusOK, flowInfo{Client: f.Client, Expires: f.Expires})
		}
	case r.Method == http.MethodDelete:
		h.serveCancel(w, r, token)
	default:
		writeMethodNotAllowed(w, "GET, HEAD, DELETE")
	}
}

func (h *Handler) servePage(w http.ResponseWriter, r *http.Request, token string) {
	if h.cfg.Page == nil {
		writeError(w, http.StatusNotFound, "the browser page is off: this server signs in no client by Login Flow v2")
		return
	}
	var f storage.LoginFlow
	err := storage.LoginFlowNotFound()
	if validToken(token) {
		f, err = h.cfg.Flows.LoginFlow(r.Context(), storage.LoginFlowKey(token), h.cfg.Now())
	}
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		h.unavailable(w, "reading a login flow", err)
		return
	}
	h.cfg.Page.ServeLoginFlow(w, r, f.Client, err == nil)
}

// serveCancel ends the flow of token: its user said no.
func (h *Handler) serveCancel(w http.ResponseWriter, r *http.Request, token string) {
	if !validToken(token) {
		writeGone(w)
		return
	}
	err := h.cfg.Flows.DeleteLoginFlow(r.Context(), storage.LoginFlowKey(token))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		writeGone(w)
	case err != nil:
		h.unavailable(w, "cancelling a login flow", err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// openFlow reads the open flow of token, answering 404 when there is none.
func (h *Handler) openFlow(w http.ResponseWriter, r *http.Request, token string) (storage.LoginFlow, bool) {
	if !validToken(token) {
		writeGone(w)
		return storage.LoginFlow{}, false
	}
	f, err := h.cfg.Flows.LoginFlow(r.Context(), storage.LoginFlowKey(token), h.cfg.Now())
	switch {
	case errors.Is(err, storage.ErrNotFound):
		writeGone(w)
		return storage.LoginFlow{}, false
	case err != nil:
		h.unavailable(w, "reading a login flow", err)
		return storage.LoginFlow{}, false
	}
	return f, true
}

// grantInfo is what the page shows its signed-in user before the grant,
// and after it.
type grantInfo struct {
	Client      string `json:"client"`
	User        string `json:"user"`
	DisplayName string `json:"displayName"`
	// Granted says the flow is granted already: its client picks the
	// password up at its next poll.
	Granted bool `json:"granted"`
}

// serveGrant names the account a flow would connect (GET) and grants the
// flow (POST): a new app password of the signed-in user, labelled with the
// client's name, sealed to the flow's poll token. A request signed in
// with an app password grants nothing (apppass.ErrAppPasswordInUse).
func (h *Handler) serveGrant(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		writeMethodNotAllowed(w, "GET, POST")
		return
	}
	user, ok := h.cfg.AppPasswords.User(r)
	if !ok {
		writeError(w, http.StatusUnauthorized, "sign in to grant a client access")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	token := r.FormValue("token")
	f, ok := h.openFlow(w, r, token)
	if !ok {
		return
	}
	info := grantInfo{Client: f.Client, User: user.ID, DisplayName: user.DisplayName, Granted: f.Granted()}
	if info.DisplayName == "" {
		info.DisplayName = user.ID
	}
	if r.Method == http.MethodGet {
		writeJSON(w, http.StatusOK, info)
		return
	}
	if f.Granted() {
		writeError(w, http.StatusConflict, "this sign-in is granted already")
		return
	}
	if err := h.grant(r, f, user); err != nil {
		h.writeGrantFailure(w, err)
		return
	}
	info.Granted = true
	writeJSON(w, http.StatusOK, info)
}

// grant makes the app password of f and hands it to the flow; a flow that
// ended meanwhile takes the password with it.
func (h *Handler) grant(r *http.Request, f storage.LoginFlow, user storage.User) error {
	p, password, err := h.cfg.AppPasswords.Create(r, user, f.Client, 0, apppass.ScopeRequest{})
	if err != nil {
		return err
	}
	sealed, err := seal(f.PollPublic, password)
	if err == nil {
		err = h.cfg.Flows.GrantLoginFlow(r.Context(), f.LoginKey, user.ID, sealed, h.cfg.Now())
	}
	if err != nil {
		if derr := h.cfg.AppPasswords.Delete(r.Context(), user, p.ID); derr != nil {
			h.cfg.Logger.Error("revoking the app password of a failed grant", zap.Error(derr))
		}
		return fmt.Errorf("granting a login flow: %w", err)
	}
	return nil
}

func (h *Handler) writeGrantFailure(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, apppass.ErrAppPasswordInUse):
		writeError(w, http.StatusForbidden, "signed in with an app password: sign in with your account to grant a client access")
	case errors.Is(err, storage.ErrNotFound):
		writeGone(w)
	case errors.Is(err, storage.ErrConflict):
		writeError(w, http.StatusConflict, "this sign-in is granted already")
	case errors.Is(err, storage.ErrInsufficientStorage):
		writeError(w, http.StatusInsufficientStorage,
			fmt.Sprintf("you keep %d app passwords, the most there may be: revoke one first", storage.MaxAppPasswordsPerUser))
	default:
		h.unavailable(w, "granting a login flow", err)
	}
}

// unavailable answers an error of the server's side: 503, logged without
// the request's tokens.
func (h *Handler) unavailable(w http.ResponseWriter, what string, err error) {
	h.cfg.Logger.Error(what, zap.Error(err))
	w.Header().Set("Retry-After", "5")
	writeError(w, http.StatusServiceUnavailable, "sign-in is unavailable; try again later")
}

// writeGone answers a token of no open flow.
func writeGone(w http.ResponseWriter) {
	writeError(w, http.StatusNotFound, "this sign-in link is unknown or has expired: start the sign-in again in the client")
}

func writeMethodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, http.StatusMethodNotAllowed, "method not allowed")
}

// writeError answers status with a JSON {"error": message}, the field
// Nextcloud's desktop client shows (flow2auth.cpp handleResponse).
func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]string{"error": message})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encoding the answer failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
