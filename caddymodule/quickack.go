package caddymodule

import (
	"net"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/davspaces/davspaces/internal/quickack"
)

func init() {
	caddy.RegisterModule(QuickACK{})
}

// QuickACK is a listener wrapper whose connections acknowledge every read
// at once (TCP_QUICKACK, Linux only): desktop clients that write a small
// upload's headers and body apart otherwise wait for the kernel's 40 ms
// delayed ACK on every file. In a Caddyfile, before tls:
//
//	servers {
//		listener_wrappers {
//			quick_ack
//			tls
//		}
//	}
type QuickACK struct{}

// CaddyModule returns the Caddy module information.
func (QuickACK) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "caddy.listeners.quick_ack",
		New: func() caddy.Module { return new(QuickACK) },
	}
}

// WrapListener wraps l.
func (QuickACK) WrapListener(l net.Listener) net.Listener {
	return quickack.Wrap(l)
}

// UnmarshalCaddyfile sets up the wrapper from Caddyfile tokens; it takes
// no arguments.
func (*QuickACK) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the wrapper's name
	if d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

var (
	_ caddy.ListenerWrapper = QuickACK{}
	_ caddyfile.Unmarshaler = (*QuickACK)(nil)
)
