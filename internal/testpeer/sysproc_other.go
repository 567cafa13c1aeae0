//go:build !linux

package testpeer

import "os/exec"

// dieWithParent is Linux's alone; elsewhere Main stops the servers.
func dieWithParent(*exec.Cmd) {}

// setCredential is not needed where the tests do not run as root.
func setCredential(*exec.Cmd, uint32, uint32) {}
