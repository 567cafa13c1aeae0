package caddymodule

import (
	"math"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"
)

// The Caddyfile helpers every module's parser shares: how a block is
// walked and how each kind of argument is read, so that one kind of
// setting is written, and refused, the same way in every directive.

// caddyfileHandler is a handler that reads its own directive.
type caddyfileHandler interface {
	caddyhttp.MiddlewareHandler
	caddyfile.Unmarshaler
}

// parseHandler reads a handler directive into handler: the httpcaddyfile
// side of each handler's UnmarshalCaddyfile.
func parseHandler(h httpcaddyfile.Helper, handler caddyfileHandler) (caddyhttp.MiddlewareHandler, error) {
	err := handler.UnmarshalCaddyfile(h.Dispenser)
	return handler, err
}

// parseBlock reads the rest of the current line, which must hold no more
// arguments, and then the block that follows it, handing each
// subdirective to option. option reports false for a subdirective it does
// not know, which is refused as an unrecognized <what>.
func parseBlock(d *caddyfile.Dispenser, what string, option func(*caddyfile.Dispenser) (bool, error)) error {
	if err := noArgs(d); err != nil {
		return err
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		known, err := option(d)
		if !known {
			return d.Errf("unrecognized %s: %s", what, d.Val())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// noArgs refuses arguments where the line must end.
func noArgs(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

// flagArg sets dst for a subdirective that is written alone, such as
// insecure or tls.
func flagArg(d *caddyfile.Dispenser, dst *bool) error {
	if err := noArgs(d); err != nil {
		return err
	}
	*dst = true
	return nil
}

// oneArg reads exactly one argument into dst.
func oneArg(d *caddyfile.Dispenser, dst *string) error {
	if !d.AllArgs(dst) {
		return d.ArgErr()
	}
	return nil
}

// listArg appends one or more arguments to dst; the subdirective may be
// written more than once.
func listArg(d *caddyfile.Dispenser, dst *[]string) error {
	args := d.RemainingArgs()
	if len(args) == 0 {
		return d.ArgErr()
	}
	*dst = append(*dst, args...)
	return nil
}

// sizeArg reads a size in bytes, written as humanize parses it (10MB,
// 2GiB).
func sizeArg(d *caddyfile.Dispenser) (int64, error) {
	var v string
	if !d.AllArgs(&v) {
		return 0, d.ArgErr()
	}
	n, err := humanize.ParseBytes(v)
	if err != nil {
		return 0, d.Errf("invalid size %q: %v", v, err)
	}
	if n > math.MaxInt64 {
		return 0, d.Errf("size %q is too large", v)
	}
	return int64(n), nil
}

// positiveSizeArg is sizeArg for a cap above zero, since a zero written in
// the Caddyfile would silently mean the default.
func positiveSizeArg(d *caddyfile.Dispenser) (int64, error) {
	name := d.Val()
	n, err := sizeArg(d)
	if err == nil && n == 0 {
		err = d.Errf("%s must be more than 0", name)
	}
	return n, err
}

// countArg reads a count above zero (a cap; zero would silently mean the
// default).
func countArg(d *caddyfile.Dispenser) (int, error) {
	name := d.Val()
	var v string
	if !d.AllArgs(&v) {
		return 0, d.ArgErr()
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n <= 0 {
		return 0, d.Errf("%s: %q is not a count above 0", name, v)
	}
	return int(n), nil
}

// count64Arg is countArg for a setting held as an int64.
func count64Arg(d *caddyfile.Dispenser) (int64, error) {
	n, err := countArg(d)
	return int64(n), err
}

// positiveIntArg reads a whole number above zero into dst.
func positiveIntArg(d *caddyfile.Dispenser, dst *int) error {
	option := d.Val()
	var v string
	if !d.AllArgs(&v) {
		return d.ArgErr()
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return d.Errf("%s %q must be a positive number", option, v)
	}
	*dst = n
	return nil
}

// durationArg reads a duration that is not negative, written as Caddy
// parses it (90s, 1h, 2d).
func durationArg(d *caddyfile.Dispenser, dst *caddy.Duration) error {
	var v string
	if !d.AllArgs(&v) {
		return d.ArgErr()
	}
	dur, err := caddy.ParseDuration(v)
	if err != nil || dur < 0 {
		return d.Errf("invalid duration %q", v)
	}
	*dst = caddy.Duration(dur)
	return nil
}

// positiveDurationArg reads a duration above zero (lock_timeout_max,
// upload_ttl, sweep_interval), since a zero written in the Caddyfile would
// silently mean the default.
func positiveDurationArg(d *caddyfile.Dispenser, dst *caddy.Duration) error {
	name := d.Val()
	if err := durationArg(d, dst); err != nil {
		return err
	}
	if *dst == 0 {
		return d.Errf("%s must be longer than 0", name)
	}
	return nil
}
