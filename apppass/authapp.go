package apppass

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/davspaces/davspaces/davhandler"
	"github.com/davspaces/davspaces/resourceid"
	"github.com/davspaces/davspaces/storage"
)

// TokensPath is oCIS's auth-app API: POST makes an app password (an "app
// token"), GET lists them, DELETE ?token= revokes one.
const TokensPath = "/auth-app/tokens"

// defaultLabel is oCIS's label of a token made without one.
const defaultLabel = "Generated via API"

// authAppToken is an app password as oCIS's auth-app answers it. Token is
// the password itself once, when it is made; in a list it is the
// password's public id, which DELETE takes. LastUsedDate is this
// server's addition.
type authAppToken struct {
	Token          string     `json:"token"`
	ExpirationDate time.Time  `json:"expiration_date"`
	CreatedDate    time.Time  `json:"created_date"`
	Label          string     `json:"label"`
	LastUsedDate   *time.Time `json:"last_used_date,omitempty"`
	// Space, Path and ReadOnly are the token's scope (this server's
	// addition), named as the query parameters that make it: space as
	// <storage>$<space>, "" for every space.
	Space    string `json:"space,omitempty"`
	Path     string `json:"path,omitempty"`
	ReadOnly bool   `json:"read_only"`
}

func (s *Service) tokenOf(p storage.AppPassword, token string) authAppToken {
	t := authAppToken{Token: token, ExpirationDate: p.Expires, CreatedDate: p.Created, Label: p.Label,
		Path: p.Path, ReadOnly: p.ReadOnly}
	if p.Space != "" {
		t.Space = p.Space
		if s.cfg.Tree != nil {
			t.Space = resourceid.Space(s.cfg.Tree.StorageID(), p.Space).String()
		}
	}
	if !p.LastUsed.IsZero() {
		t.LastUsedDate = &p.LastUsed
	}
	return t
}

// Route returns the handler of the auth-app API for r, or false for any
// other path.
func (s *Service) Route(r *http.Request) (http.Handler, bool) {
	if r.URL.Path != TokensPath && r.URL.Path != TokensPath+"/" {
		return nil, false
	}
	return http.HandlerFunc(s.serveTokens), true
}

func (s *Service) serveTokens(w http.ResponseWriter, r *http.Request) {
	user, ok := s.User(r)
	if !ok {
		davhandler.WriteError(w, r, http.StatusUnauthorized, "sign in to manage app passwords")
		return
	}
	if !user.Scope.IsZero() && !storage.SafeMethod(r.Method) {
		// Neither a new password nor a revocation may reach past a scope.
		davhandler.WriteError(w, r, http.StatusForbidden, "a scoped app password makes and revokes no app passwords")
		return
	}
	switch r.Method {
	case http.MethodPost:
		s.serveCreate(w, r, user)
	case http.MethodGet, http.MethodHead:
		s.serveList(w, r, user)
	case http.MethodDelete:
		s.serveDelete(w, r, user)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST, DELETE")
		davhandler.WriteError(w, r, http.StatusMethodNotAllowed, "app passwords are made with POST, listed with GET and revoked with DELETE")
	}
}

// serveCreate makes a token: expiry is a Go duration (72h, 30m), none
// or 0 for a token kept until revoked; label names it.
func (s *Service) serveCreate(w http.ResponseWriter, r *http.Request, user storage.User) {
	q := r.URL.Query()
	var ttl time.Duration
	if e := q.Get("expiry"); e != "" {
		var err error
		if ttl, err = time.ParseDuration(e); err != nil || ttl < 0 {
			davhandler.WriteError(w, r, http.StatusBadRequest, "expiry is a duration such as 30m or 72h")
			return
		}
	}
	label := q.Get("label")
	if label == "" {
		label = defaultLabel
	}
	if len(label) > storage.MaxAppPasswordLabel {
		davhandler.WriteError(w, r, http.StatusBadRequest, fmt.Sprintf("a label has at most %d bytes", storage.MaxAppPasswordLabel))
		return
	}
	readOnly, err := parseBool(q.Get("readonly"))
	if err != nil {
		davhandler.WriteError(w, r, http.StatusBadRequest, "readonly is true or false")
		return
	}
	scope := ScopeRequest{Space: q.Get("space"), Path: q.Get("path"), ReadOnly: readOnly}
	p, password, err := s.Create(r, user, label, ttl, scope)
	if err != nil {
		writeFailure(w, r, err)
		return
	}
	writeJSON(w, s.tokenOf(p, password))
}

func (s *Service) serveList(w http.ResponseWriter, r *http.Request, user storage.User) {
	list, err := s.List(r.Context(), user)
	if err != nil {
		writeFailure(w, r, err)
		return
	}
	tokens := make([]authAppToken, 0, len(list))
	for _, p := range list {
		tokens = append(tokens, s.tokenOf(p, p.ID))
	}
	writeJSON(w, tokens)
}

// serveDelete revokes the token named by token: its id, as the list
// gives it, or the whole password.
func (s *Service) serveDelete(w http.ResponseWriter, r *http.Request, user storage.User) {
	token := r.URL.Query().Get("token")
	if token == "" {
		davhandler.WriteError(w, r, http.StatusBadRequest, "name the app password to revoke: ?token=")
		return
	}
	id := token
	if pid, _, ok := storage.SplitAppPassword(token); ok {
		id = pid
	}
	if err := s.Delete(r.Context(), user, id); err != nil {
		writeFailure(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// writeFailure answers err: the refusals a client can act on with their
// 4xx, anything else 500.
func writeFailure(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, ErrAppPasswordInUse):
		davhandler.WriteError(w, r, http.StatusForbidden, err.Error())
	case errors.Is(err, ErrNoSuchScope):
		davhandler.WriteError(w, r, http.StatusNotFound, "the scope names no space or folder you reach")
	case errors.Is(err, ErrPathWithoutSpace):
		davhandler.WriteError(w, r, http.StatusBadRequest, "path needs space: name the space the folder is in")
	case errors.Is(err, storage.ErrNotFound):
		davhandler.WriteError(w, r, http.StatusNotFound, "no such app password")
	case errors.Is(err, storage.ErrInsufficientStorage):
		davhandler.WriteError(w, r, http.StatusInsufficientStorage,
			fmt.Sprintf("a user keeps at most %d app passwords: revoke one first", storage.MaxAppPasswordsPerUser))
	case errors.Is(err, storage.ErrInvalid):
		davhandler.WriteError(w, r, http.StatusBadRequest, "invalid app password request")
	default:
		davhandler.WriteError(w, r, http.StatusInternalServerError, "app passwords are unavailable")
	}
}

// parseBool reads the readonly parameter: absent is false.
func parseBool(v string) (bool, error) {
	switch v {
	case "", "false", "0":
		return false, nil
	case "true", "1":
		return true, nil
	}
	return false, errors.New("not a boolean")
}

func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encoding the answer failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(append(body, '\n'))
}
