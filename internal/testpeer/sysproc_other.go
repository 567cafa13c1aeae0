//go:build !linux

package testpeer

import "os/exec"

// DieWithParent is Linux's alone; elsewhere the tests' cleanups stop
// their children.
func DieWithParent(*exec.Cmd) {}

// setCredential is not needed where the tests do not run as root.
func setCredential(*exec.Cmd, uint32, uint32) {}
