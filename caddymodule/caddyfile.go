package caddymodule

import (
	"maps"
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

// An option reads one subdirective, the dispenser on its name.
type option func(*caddyfile.Dispenser) error

// options maps each subdirective a block knows to the option that reads
// it: one table a block, so that a block's syntax reads in one place.
type options map[string]option

// with returns o together with more; a name in more is not expected in o.
func (o options) with(more options) options {
	all := make(options, len(o)+len(more))
	maps.Copy(all, o)
	maps.Copy(all, more)
	return all
}

// parse reads the subdirective the dispenser is on, refusing one o does
// not know as an unrecognized <what>.
func (o options) parse(d *caddyfile.Dispenser, what string) error {
	read, ok := o[d.Val()]
	if !ok {
		return d.Errf("unrecognized %s: %s", what, d.Val())
	}
	return read(d)
}

// set is the option that reads its value with read into dst.
func set[T any](dst *T, read func(*caddyfile.Dispenser) (T, error)) option {
	return func(d *caddyfile.Dispenser) error {
		v, err := read(d)
		if err != nil {
			return err
		}
		*dst = v
		return nil
	}
}

// add is the option that reads one value with read and appends it to
// dst; the subdirective may be written more than once.
func add[T any](dst *[]T, read func(*caddyfile.Dispenser) (T, error)) option {
	return func(d *caddyfile.Dispenser) error {
		v, err := read(d)
		if err != nil {
			return err
		}
		*dst = append(*dst, v)
		return nil
	}
}

// allArgs is the option that appends one or more arguments to dst; the
// subdirective may be written more than once.
func allArgs(dst *[]string) option {
	return func(d *caddyfile.Dispenser) error {
		args := d.RemainingArgs()
		if len(args) == 0 {
			return d.ArgErr()
		}
		*dst = append(*dst, args...)
		return nil
	}
}

// parseDirective reads a directive's name and block, the body of each
// UnmarshalCaddyfile, refusing a subdirective opts does not know as an
// unrecognized <what>; check, if not nil, then refuses a block that lacks
// what the directive needs.
func parseDirective(d *caddyfile.Dispenser, what string, opts options, check func() error) error {
	d.Next() // the directive name
	if err := parseBlock(d, what, opts); err != nil {
		return err
	}
	if check == nil {
		return nil
	}
	if err := check(); err != nil {
		return d.WrapErr(err)
	}
	return nil
}

// parseBlock reads the rest of the current line, which must hold no more
// arguments, and then the block that follows it, handing each
// subdirective to its option in opts. A subdirective opts does not know is
// refused as an unrecognized <what>.
func parseBlock(d *caddyfile.Dispenser, what string, opts options) error {
	if err := noArgs(d); err != nil {
		return err
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		if err := opts.parse(d, what); err != nil {
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

// flagArg reads a subdirective that is written alone, such as insecure or
// tls: it is true.
func flagArg(d *caddyfile.Dispenser) (bool, error) {
	return true, noArgs(d)
}

// oneArg reads exactly one argument.
func oneArg(d *caddyfile.Dispenser) (string, error) {
	var v string
	if !d.AllArgs(&v) {
		return "", d.ArgErr()
	}
	return v, nil
}

// offArg reads the one argument of a setting that is on or off, and
// reports whether it is off; want says in the error what the setting
// takes.
func offArg(d *caddyfile.Dispenser, want string) (bool, error) {
	name := d.Val()
	v, err := oneArg(d)
	if err != nil {
		return false, err
	}
	switch v {
	case "off":
		return true, nil
	case "on":
		return false, nil
	}
	return false, d.Errf("%s: want %s, got %q", name, want, v)
}

// sizeArg reads a size in bytes, written as humanize parses it (10MB,
// 2GiB).
func sizeArg(d *caddyfile.Dispenser) (int64, error) {
	v, err := oneArg(d)
	if err != nil {
		return 0, err
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
	v, err := oneArg(d)
	if err != nil {
		return 0, err
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

// positiveIntArg reads a whole number above zero.
func positiveIntArg(d *caddyfile.Dispenser) (int, error) {
	name := d.Val()
	v, err := oneArg(d)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, d.Errf("%s %q must be a positive number", name, v)
	}
	return n, nil
}

// durationArg reads a duration that is not negative, written as Caddy
// parses it (90s, 1h, 2d).
func durationArg(d *caddyfile.Dispenser) (caddy.Duration, error) {
	v, err := oneArg(d)
	if err != nil {
		return 0, err
	}
	dur, err := caddy.ParseDuration(v)
	if err != nil || dur < 0 {
		return 0, d.Errf("invalid duration %q", v)
	}
	return caddy.Duration(dur), nil
}

// positiveDurationArg reads a duration above zero (lock_timeout_max,
// upload_ttl, sweep_interval), since a zero written in the Caddyfile would
// silently mean the default.
func positiveDurationArg(d *caddyfile.Dispenser) (caddy.Duration, error) {
	name := d.Val()
	dur, err := durationArg(d)
	if err == nil && dur == 0 {
		err = d.Errf("%s must be longer than 0", name)
	}
	return dur, err
}
