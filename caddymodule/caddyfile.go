package caddymodule

import (
	"math"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("davspaces", parseDAVSpaces)
	// Ordered so that no `order` line is needed: davspaces serves like
	// other terminal handlers.
	httpcaddyfile.RegisterDirectiveOrder("davspaces", httpcaddyfile.Before, "respond")
}

func parseDAVSpaces(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	d := new(DAVSpaces)
	err := d.UnmarshalCaddyfile(h.Dispenser)
	return d, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	davspaces [<matcher>] {
//		root           <directory>
//		storage_id     <id>
//		depth_infinity
//		max_xml_body   <size>
//		space <name> {
//			id      <id>
//			quota   <size>
//			manager <user...>
//			editor  <user...>
//			viewer  <user...>
//		}
//	}
func (d *DAVSpaces) UnmarshalCaddyfile(disp *caddyfile.Dispenser) error {
	disp.Next() // the directive name
	if disp.NextArg() {
		return disp.ArgErr()
	}
	for disp.NextBlock(0) {
		var err error
		switch disp.Val() {
		case "root":
			err = oneArg(disp, &d.Root)
		case "storage_id":
			err = oneArg(disp, &d.StorageID)
		case "depth_infinity":
			if disp.NextArg() {
				return disp.ArgErr()
			}
			d.AllowDepthInfinity = true
		case "max_xml_body":
			d.MaxXMLBytes, err = sizeArg(disp)
		case "space":
			var ps ProjectSpace
			ps, err = parseSpace(disp)
			d.Spaces = append(d.Spaces, ps)
		default:
			return disp.Errf("unrecognized subdirective: %s", disp.Val())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// parseSpace reads one space block.
func parseSpace(disp *caddyfile.Dispenser) (ProjectSpace, error) {
	var ps ProjectSpace
	if !disp.Args(&ps.Name) || disp.NextArg() {
		return ps, disp.ArgErr()
	}
	for nesting := disp.Nesting(); disp.NextBlock(nesting); {
		var err error
		switch disp.Val() {
		case "id":
			err = oneArg(disp, &ps.ID)
		case "quota":
			ps.QuotaBytes, err = sizeArg(disp)
		case "manager":
			err = listArg(disp, &ps.Managers)
		case "editor":
			err = listArg(disp, &ps.Editors)
		case "viewer":
			err = listArg(disp, &ps.Viewers)
		default:
			return ps, disp.Errf("unrecognized space subdirective: %s", disp.Val())
		}
		if err != nil {
			return ps, err
		}
	}
	return ps, nil
}

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
