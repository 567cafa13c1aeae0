package caddymodule

import "runtime/debug"

// modulePath is this module's import path, as builds list it.
const modulePath = "github.com/davspaces/davspaces"

// moduleVersion is the version of davspaces compiled into the running
// binary ("" when the build does not record it), which status.php and the
// capabilities report as productversion.
func moduleVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if info.Main.Path == modulePath {
		return cleanVersion(info.Main.Version)
	}
	for _, dep := range info.Deps {
		if dep.Path == modulePath {
			return cleanVersion(dep.Version)
		}
	}
	return ""
}

// cleanVersion drops Go's "(devel)" placeholder.
func cleanVersion(v string) string {
	if v == "(devel)" {
		return ""
	}
	return v
}
