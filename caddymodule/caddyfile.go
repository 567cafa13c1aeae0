package caddymodule

import (
	"math"
	"strconv"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"
)

// Argument helpers shared by the modules' Caddyfile parsers.

// oneArg reads exactly one argument into dst.
func oneArg(disp *caddyfile.Dispenser, dst *string) error {
	if !disp.AllArgs(dst) {
		return disp.ArgErr()
	}
	return nil
}

func listArg(disp *caddyfile.Dispenser, dst *[]string) error {
	users := disp.RemainingArgs()
	if len(users) == 0 {
		return disp.ArgErr()
	}
	*dst = append(*dst, users...)
	return nil
}

func sizeArg(disp *caddyfile.Dispenser) (int64, error) {
	var v string
	if !disp.AllArgs(&v) {
		return 0, disp.ArgErr()
	}
	n, err := humanize.ParseBytes(v)
	if err != nil {
		return 0, disp.Errf("invalid size %q: %v", v, err)
	}
	if n > math.MaxInt64 {
		return 0, disp.Errf("size %q is too large", v)
	}
	return int64(n), nil
}

// positiveSizeArg is sizeArg for a cap above zero, since a zero written in
// the Caddyfile would silently mean the default.
func positiveSizeArg(disp *caddyfile.Dispenser) (int64, error) {
	name := disp.Val()
	n, err := sizeArg(disp)
	if err == nil && n == 0 {
		err = disp.Errf("%s must be more than 0", name)
	}
	return n, err
}

// countArg reads a count above zero (a cap; zero would silently mean the
// default).
func countArg(disp *caddyfile.Dispenser) (int, error) {
	name := disp.Val()
	var v string
	if !disp.AllArgs(&v) {
		return 0, disp.ArgErr()
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n <= 0 {
		return 0, disp.Errf("%s: %q is not a count above 0", name, v)
	}
	return int(n), nil
}
