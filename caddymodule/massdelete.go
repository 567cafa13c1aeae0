package caddymodule

import (
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/davspaces/davspaces/davhandler"
)

// MassDeleteSettings configure the mass-delete brake (docs/undo.md): one
// client deleting many files of a space within a window is recorded as
// one event, which one request restores. Unset fields keep davhandler's
// defaults (1000 files, 20%, 10 minutes, nothing held).
type MassDeleteSettings struct {
	// Off turns the brake off.
	Off bool `json:"off,omitempty"`
	// Files is how many files one burst deletes before it is an event.
	Files int64 `json:"files,omitempty"`
	// SharePercent is the share of a space, in percent, one burst deletes
	// before it is an event; negative for none.
	SharePercent float64 `json:"share_percent,omitempty"`
	// Window is how long a burst lasts from its first deletion.
	Window caddy.Duration `json:"window,omitempty"`
	// Hold answers the client's further deletes 503 once its burst is an
	// event, until a manager confirms or restores it in the page.
	Hold bool `json:"hold,omitempty"`
}

// rules are the settings as davhandler takes them; nil settings are the
// defaults.
func (s *MassDeleteSettings) rules() davhandler.MassDeleteRules {
	if s == nil {
		return davhandler.MassDeleteRules{}
	}
	return davhandler.MassDeleteRules{Off: s.Off, Files: s.Files, Share: s.SharePercent / 100,
		Window: time.Duration(s.Window), Hold: s.Hold}
}

// parseMassDelete reads `mass_delete off` or
//
//	mass_delete {
//		files  <count>
//		share  <percent>%|off
//		window <duration>
//		hold
//	}
func parseMassDelete(d *caddyfile.Dispenser) (*MassDeleteSettings, error) {
	s := &MassDeleteSettings{}
	if d.NextArg() {
		if d.Val() != "off" {
			return nil, d.Errf("mass_delete takes off or a block, not %q", d.Val())
		}
		s.Off = true
		return s, noArgs(d)
	}
	err := parseBlock(d, "mass_delete option", options{
		"files":  set(&s.Files, count64Arg),
		"share":  set(&s.SharePercent, shareArg),
		"window": set(&s.Window, positiveDurationArg),
		"hold":   set(&s.Hold, flagArg),
	})
	return s, err
}

// shareArg reads a percentage above 0 and at most 100 ("20%"), or off
// (negative).
func shareArg(d *caddyfile.Dispenser) (float64, error) {
	var v string
	if !d.AllArgs(&v) {
		return 0, d.ArgErr()
	}
	if v == "off" {
		return -1, nil
	}
	p, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil || !strings.HasSuffix(v, "%") || p <= 0 || p > 100 {
		return 0, d.Errf("share %q: a percentage above 0%% and at most 100%%, or off", v)
	}
	return p, nil
}
