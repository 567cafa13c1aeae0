// Package davspaces makes `xcaddy build --with github.com/davspaces/davspaces`
// include every davspaces module: it only imports the packages that register
// them.
package davspaces

import (
	_ "github.com/davspaces/davspaces/caddymodule"
)
