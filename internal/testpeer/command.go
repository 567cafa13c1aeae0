package testpeer

import (
	"context"
	"os/exec"
)

// Command is exec.Command for a test's child: it dies with the test binary
// (DieWithParent), so that a test that times out or panics leaves nothing
// running. Tests start every program through it or CommandContext.
func Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	DieWithParent(cmd)
	return cmd
}

// CommandContext is exec.CommandContext with DieWithParent, as Command.
func CommandContext(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	DieWithParent(cmd)
	return cmd
}
