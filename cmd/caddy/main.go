// Command caddy is the local build of Caddy with the standard modules and
// the davspaces modules, the same program `xcaddy build --with` produces.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/davspaces/davspaces"
)

func main() {
	caddycmd.Main()
}
