package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// `caddy davspaces apppasswords list|revoke <user> [id]`: the
// administrator's way to take a user's app passwords away at once, say
// when the user is removed at the provider (oidc_auth's
// app_password_idle takes them only after a while). A store a running
// server holds (the embedded one) is asked through the server's admin
// endpoint, which also forgets the passwords it has verified, so that
// they are refused at the next request; any other store directly, where
// every node reads a revocation within apppass.DefaultRecheck.

func init() {
	addSubcommand(newAppPasswordsCommand)
}

func newAppPasswordsCommand() *cobra.Command {
	cmd := newSubcommand("apppasswords", "Lists or revokes a user's app passwords",
		`
apppasswords list <user> lists the app passwords of <user> (the user id
as the provider names it): id, label, creation, last use, expiry and scope.
apppasswords revoke <user> [<id>] revokes the one of that id, or, without
one, every app password of the user. A running server that holds the
store revokes them through its admin endpoint, at once.`, nil)
	cmd.AddCommand(
		newSubcommand("list <user>", "Lists a user's app passwords", "", runAppPasswordsList),
		newSubcommand("revoke <user> [<id>]", "Revokes one or all of a user's app passwords", "", runAppPasswordsRevoke),
	)
	cmd.RunE = runCommand(func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageError("unknown command %q for %q", args[0], cmd.CommandPath())
		}
		return cmd.Help()
	})
	return cmd
}

// appPasswordKeeper lists and revokes the app passwords of a store.
type appPasswordKeeper interface {
	list(ctx context.Context, user string) ([]appPasswordInfo, error)
	// revoke revokes user's password id, or all of user's when id is "",
	// and returns how many it revoked.
	revoke(ctx context.Context, user, id string) (int, error)
}

// appPasswordInfo is what the administrator sees of an app password: no
// hash.
type appPasswordInfo struct {
	ID       string    `json:"id"`
	Label    string    `json:"label"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used,omitzero"`
	Expires  time.Time `json:"expires,omitzero"`
	Space    string    `json:"space,omitempty"`
	Path     string    `json:"path,omitempty"`
	ReadOnly bool      `json:"read_only,omitempty"`
}

func infoOf(p storage.AppPassword) appPasswordInfo {
	return appPasswordInfo{ID: p.ID, Label: p.Label, Created: p.Created, LastUsed: p.LastUsed, Expires: p.Expires,
		Space: p.Space, Path: p.Path, ReadOnly: p.ReadOnly}
}

func runAppPasswordsList(cmd *cobra.Command, args []string) error {
	if err := exactArgs(cmd, args, 1); err != nil {
		return err
	}
	if err := storage.ValidUserID(args[0]); err != nil {
		return usageError("%v", err)
	}
	keeper, closeStore, err := openAppPasswordKeeper(cmd)
	if err != nil {
		return err
	}
	defer closeStore()
	list, err := keeper.list(cmd.Context(), args[0])
	if err != nil {
		return err
	}
	return writeAppPasswords(cmd.OutOrStdout(), list)
}

func runAppPasswordsRevoke(cmd *cobra.Command, args []string) error {
	if len(args) != 1 && len(args) != 2 {
		return usageError("%s takes a user and optionally an id: %s", cmd.CommandPath(), cmd.UseLine())
	}
	if err := storage.ValidUserID(args[0]); err != nil {
		return usageError("%v", err)
	}
	id := ""
	if len(args) == 2 {
		if id = args[1]; !storage.ValidAppPasswordID(id) {
			return usageError("%q is no app password id: the list shows them", id)
		}
	}
	keeper, closeStore, err := openAppPasswordKeeper(cmd)
	if err != nil {
		return err
	}
	defer closeStore()
	n, err := keeper.revoke(cmd.Context(), args[0], id)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "revoked %d app password(s) of %s\n", n, args[0])
	return nil
}

// writeAppPasswords writes list as aligned columns under a header.
func writeAppPasswords(out io.Writer, list []appPasswordInfo) error {
	when := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tLABEL\tCREATED\tLAST USED\tEXPIRES\tSCOPE")
	for _, p := range list {
		fmt.Fprintf(w, "%s\t%q\t%s\t%s\t%s\t%s\n", p.ID, p.Label, when(p.Created), when(p.LastUsed), when(p.Expires), scopeText(p))
	}
	return w.Flush()
}

// scopeText is a password's scope in a word or two.
func scopeText(p appPasswordInfo) string {
	s := "all"
	if p.Space != "" {
		s = p.Space + ":" + p.Path
		if p.Path == "" {
			s += "/"
		}
	}
	if p.ReadOnly {
		s += " read-only"
	}
	return s
}

// openAppPasswordKeeper opens the store the command line names, or, when
// a running server holds it, reaches it through that server's admin
// endpoint.
func openAppPasswordKeeper(cmd *cobra.Command) (appPasswordKeeper, func() error, error) {
	h, err := loadConfiguredHandler(cmd)
	if err != nil {
		return nil, nil, err
	}
	store, err := h.Open(cmd.Context())
	if errors.Is(err, boltstore.ErrLocked) {
		defer h.Close()
		addr, aerr := adminAddress(h.Config)
		if aerr != nil {
			return nil, nil, fmt.Errorf("the store %s is open in a running server, and its configuration turns the admin endpoint off: stop the server, or turn the endpoint on", h.Key())
		}
		return adminAppPasswords{addr: addr, key: h.Key()}, func() error { return nil }, nil
	}
	if err != nil {
		h.Close()
		return nil, nil, err
	}
	closeStore := h.closer(store)
	return storeAppPasswords{store: store}, closeStore, nil
}

// storeAppPasswords keeps the app passwords of an open store; forget,
// when set, drops a revoked one from the sign-in cache.
type storeAppPasswords struct {
	store  storage.AppPasswords
	forget func(id string)
}

func (s storeAppPasswords) list(ctx context.Context, user string) ([]appPasswordInfo, error) {
	list, err := s.store.AppPasswords(ctx, user)
	if err != nil {
		return nil, fmt.Errorf("the app passwords of %s: %w", user, err)
	}
	out := make([]appPasswordInfo, 0, len(list))
	for _, p := range list {
		out = append(out, infoOf(p))
	}
	return out, nil
}

func (s storeAppPasswords) revoke(ctx context.Context, user, id string) (int, error) {
	ids := []string{id}
	if id == "" {
		list, err := s.list(ctx, user)
		if err != nil {
			return 0, err
		}
		ids = ids[:0]
		for _, p := range list {
			ids = append(ids, p.ID)
		}
	}
	n := 0
	for _, id := range ids {
		err := s.store.DeleteAppPassword(ctx, user, id)
		if errors.Is(err, storage.ErrNotFound) && len(ids) > 1 {
			continue // revoked meanwhile
		}
		if err != nil {
			return n, fmt.Errorf("revoking app password %s of %s: %w", id, user, err)
		}
		if s.forget != nil {
			s.forget(id)
		}
		n++
	}
	return n, nil
}

// appPasswordsAdminPath is the admin API path of app passwords
// (AdminAPI).
const appPasswordsAdminPath = "/davspaces/apppasswords"

func serveAppPasswordsAdmin(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	user, id := q.Get("user"), q.Get("id")
	if storage.ValidUserID(user) != nil || id != "" && !storage.ValidAppPasswordID(id) {
		return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: errors.New("user is a user id, id an app password id")}
	}
	p, err := adminStore(r, q.Get("store"))
	if err != nil {
		return err
	}
	keeper := storeAppPasswords{store: p.Store, forget: p.appPasswords.Forget}
	var answer any
	switch r.Method {
	case http.MethodGet:
		answer, err = keeper.list(r.Context(), user)
	case http.MethodDelete:
		var n int
		n, err = keeper.revoke(r.Context(), user, id)
		answer = map[string]int{"revoked": n}
	default:
		return methodNotAllowed(r)
	}
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return caddy.APIError{HTTPStatus: http.StatusNotFound, Err: errors.New("no such app password")}
	case err != nil:
		return caddy.APIError{HTTPStatus: http.StatusInternalServerError, Err: err}
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(answer)
}

// adminAppPasswords keeps the app passwords of a store through the admin
// endpoint of the server that has it open.
type adminAppPasswords struct {
	addr, key string
}

func (a adminAppPasswords) list(_ context.Context, user string) ([]appPasswordInfo, error) {
	var list []appPasswordInfo
	err := a.ask(http.MethodGet, user, "", &list)
	return list, err
}

func (a adminAppPasswords) revoke(_ context.Context, user, id string) (int, error) {
	var answer struct{ Revoked int }
	err := a.ask(http.MethodDelete, user, id, &answer)
	return answer.Revoked, err
}

func (a adminAppPasswords) ask(method, user, id string, answer any) error {
	q := url.Values{"store": {a.key}, "user": {user}}
	if id != "" {
		q.Set("id", id)
	}
	resp, err := caddycmd.AdminAPIRequest(a.addr, method, appPasswordsAdminPath+"?"+q.Encode(), nil, nil)
	if err != nil {
		return fmt.Errorf("asking the running server at %s: %w", a.addr, err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(answer); err != nil {
		return fmt.Errorf("the running server's answer: %w", err)
	}
	return nil
}
