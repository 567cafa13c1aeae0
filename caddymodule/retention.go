package caddymodule

import (
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/davspaces/davspaces/storage"
)

// VersionsRetention is how a handler, or one project space, keeps the
// content a file had before it was replaced. Fields left unset keep what
// applies around them: a handler's, storage.DefaultRetention's; a project
// space's, its handler's.
type VersionsRetention struct {
	// Off keeps no versions: a replacement destroys the old content.
	Off bool `json:"off,omitempty"`
	// Keep is how long a version is kept after it was replaced. Default:
	// 30 days (storage.DefaultVersionsRetention).
	Keep caddy.Duration `json:"keep,omitempty"`
	// Max is how many versions one file keeps at most; the oldest go
	// first. Default: 100 (storage.DefaultVersionsMax).
	Max int `json:"max,omitempty"`
}

// applyRetention returns around with what trash and versions set: the
// retention of a handler (around: storage.DefaultRetention) or of a
// project space (around: its handler's). A versions block that is not
// "off" turns versions on, also where around has them off.
func applyRetention(around storage.Retention, trash *caddy.Duration, versions *VersionsRetention) storage.Retention {
	r := around
	if trash != nil {
		r.Trash = time.Duration(*trash)
	}
	if versions != nil {
		r.VersionsOff = versions.Off
		if versions.Keep > 0 {
			r.VersionsFor = time.Duration(versions.Keep)
		}
		if versions.Max > 0 {
			r.VersionsMax = versions.Max
		}
	}
	return r
}

// checkRetention refuses negative settings, which no store could keep.
func checkRetention(trash *caddy.Duration, versions *VersionsRetention) error {
	if trash != nil && *trash < 0 {
		return fmt.Errorf("trash_retention must not be negative")
	}
	if versions != nil && (versions.Keep < 0 || versions.Max < 0) {
		return fmt.Errorf("versions keep and max must not be negative")
	}
	return nil
}

// retentionPolicy is what this handler asks of its store: its retention
// for every space it does not declare (the personal spaces), and each
// declared project space's own, its overrides on top of the handler's.
// Every declared space is listed, overrides or not, so that a handler's
// default holds for its project spaces even where another handler's
// default wins for the personal spaces (mergeRetention).
func (dav *DAVSpaces) retentionPolicy() storage.RetentionPolicy {
	handler := applyRetention(storage.DefaultRetention, dav.TrashRetention, dav.Versions)
	p := storage.RetentionPolicy{Default: handler, Spaces: make(map[string]storage.Retention, len(dav.Spaces))}
	for _, ps := range dav.Spaces {
		p.Spaces[ps.space().ID] = applyRetention(handler, ps.TrashRetention, ps.Versions)
	}
	return p
}

// keepsAny reports whether keeps holds for the policy's default or for
// any of its spaces: what the capabilities advertise for a handler.
func keepsAny(p storage.RetentionPolicy, keeps func(storage.Retention) bool) bool {
	if keeps(p.Default) {
		return true
	}
	for _, r := range p.Spaces {
		if keeps(r) {
			return true
		}
	}
	return false
}

// mergeRetention folds policy into merged, the policy of a store several
// handlers share: the first handler's default stays, and a space keeps
// the retention of the first handler that declares it. It returns what
// policy wanted otherwise and did not get, for a warning.
func mergeRetention(merged *storage.RetentionPolicy, policy storage.RetentionPolicy) []string {
	if merged.Spaces == nil {
		merged.Default = policy.Default
		merged.Spaces = make(map[string]storage.Retention, len(policy.Spaces))
	}
	var ignored []string
	if policy.Default != merged.Default {
		ignored = append(ignored, "the default (personal spaces)")
	}
	for id, r := range policy.Spaces {
		have, ok := merged.Spaces[id]
		switch {
		case !ok:
			merged.Spaces[id] = r
		case have != r:
			ignored = append(ignored, "space "+id)
		}
	}
	return ignored
}

// grantedRetention is what merged keeps of the spaces policy asks for:
// merged's default, and merged's retention of each of policy's spaces.
// Since the first claim wins, later handlers of the configuration change
// none of it.
func grantedRetention(merged, policy storage.RetentionPolicy) storage.RetentionPolicy {
	granted := storage.RetentionPolicy{Default: merged.Default, Spaces: make(map[string]storage.Retention, len(policy.Spaces))}
	for id := range policy.Spaces {
		granted.Spaces[id] = merged.For(id)
	}
	return granted
}

// parseTrashRetention reads `trash_retention <duration>|off`; 0 and off
// keep no trash.
func parseTrashRetention(d *caddyfile.Dispenser) (*caddy.Duration, error) {
	var v string
	if !d.AllArgs(&v) {
		return nil, d.ArgErr()
	}
	if v == "off" {
		off := caddy.Duration(0)
		return &off, nil
	}
	dur, err := caddy.ParseDuration(v)
	if err != nil || dur < 0 {
		return nil, d.Errf("trash_retention: invalid duration %q (a duration such as 30d, or off)", v)
	}
	keep := caddy.Duration(dur)
	return &keep, nil
}

// parseVersions reads `versions off` or `versions { keep <duration>; max
// <count> }`. A zero keep or max is refused: `versions off` says that.
func parseVersions(d *caddyfile.Dispenser) (*VersionsRetention, error) {
	v := new(VersionsRetention)
	switch args := d.RemainingArgs(); {
	case len(args) == 1 && args[0] == "off":
		v.Off = true
		if d.NextBlock(d.Nesting()) {
			return nil, d.Err("versions off takes no block")
		}
		return v, nil
	case len(args) > 0:
		return nil, d.ArgErr()
	}
	err := parseBlock(d, "versions subdirective", options{
		"keep": set(&v.Keep, positiveDurationArg),
		"max":  set(&v.Max, countArg),
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}
