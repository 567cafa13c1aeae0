package caddymodule

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	"github.com/davspaces/davspaces/storage"
)

// `caddy davspaces check` of an embedded store that a running server
// holds goes through the server's admin endpoint, as backup does: bbolt
// locks its file for the one process that has it open. The server checks
// its open store, which reads in bounded snapshots and serves meanwhile,
// and streams what it finds.

// checkAdminPath is the admin API path of checks (AdminAPI). The answer
// is one JSON object per line: {"problem": …} for each problem as it is
// found, then {"summary": …} with "error" when the check stopped.
const checkAdminPath = "/davspaces/check"

// checkEvent is a line of the check endpoint's answer.
type checkEvent struct {
	Problem *storage.Problem      `json:"problem,omitempty"`
	Summary *storage.CheckSummary `json:"summary,omitempty"`
	Error   string                `json:"error,omitempty"`
}

// serveCheck checks the open store the query names. A problem is written
// and flushed as the check reports it, which it does between its
// snapshots: a slow client holds up the check, never the store. A client
// that goes away ends the check.
func serveCheck(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		return methodNotAllowed(r)
	}
	q := r.URL.Query()
	checker, err := openChecker(r, q.Get("store"))
	if err != nil {
		return err
	}
	deep, _ := strconv.ParseBool(q.Get("deep"))
	repair, _ := strconv.ParseBool(q.Get("repair"))
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	flush := http.NewResponseController(w).Flush
	sum, err := checker.Check(r.Context(), storage.CheckOptions{Deep: deep, Repair: repair}, func(p storage.Problem) {
		if enc.Encode(checkEvent{Problem: &p}) == nil {
			_ = flush() // a client gone shows in r.Context()
		}
	})
	end := checkEvent{Summary: &sum}
	if err != nil {
		end.Error = err.Error()
	}
	_ = enc.Encode(end) // the client went away: nothing to answer
	return nil
}

// openChecker returns the open store whose key is key, if it can check
// itself and r may have what it finds (adminStore): a check reports what
// it finds of every space.
func openChecker(r *http.Request, key string) (storage.Checker, error) {
	p, err := adminStore(r, key)
	if err != nil {
		return nil, err
	}
	checker, ok := p.Store.(storage.Checker)
	if !ok {
		return nil, caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: errors.New("the store cannot check itself")}
	}
	return checker, nil
}

// adminChecker checks a store through the admin endpoint of the server
// that has it open.
type adminChecker struct {
	addr, key string
}

// Check asks the server to check the store and reports what it streams.
// The progress of a check through the server is not known.
func (a adminChecker) Check(ctx context.Context, opts storage.CheckOptions, report func(storage.Problem)) (storage.CheckSummary, error) {
	q := url.Values{"store": {a.key}, "deep": {strconv.FormatBool(opts.Deep)}, "repair": {strconv.FormatBool(opts.Repair)}}
	resp, err := caddycmd.AdminAPIRequest(a.addr, http.MethodPost, checkAdminPath+"?"+q.Encode(), nil, nil)
	if err != nil {
		return storage.CheckSummary{}, fmt.Errorf("asking the running server at %s to check the store: %w", a.addr, err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	for lines.Scan() {
		if err := ctx.Err(); err != nil {
			return storage.CheckSummary{}, err
		}
		var ev checkEvent
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			return storage.CheckSummary{}, fmt.Errorf("reading the check from %s: %w", a.addr, err)
		}
		switch {
		case ev.Problem != nil:
			report(*ev.Problem)
		case ev.Summary != nil && ev.Error != "":
			return *ev.Summary, fmt.Errorf("the running server's check: %s", ev.Error)
		case ev.Summary != nil:
			return *ev.Summary, nil
		}
	}
	if err := lines.Err(); err != nil {
		return storage.CheckSummary{}, fmt.Errorf("reading the check from %s: %w", a.addr, err)
	}
	return storage.CheckSummary{}, fmt.Errorf("the running server at %s ended the check without its summary", a.addr)
}

// Interface guards
var _ storage.Checker = adminChecker{}
