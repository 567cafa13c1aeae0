package testpeer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"time"
)

// process is a running server with its log file.
type process struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // set when done is closed
}

// startProcess starts cmd with its output appended to log. The server dies
// with the test binary, even when the binary is killed.
func startProcess(cmd *exec.Cmd, log string) (*process, error) {
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the server log: %w", err)
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	DieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	p := &process{cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// waitReady polls ready until it succeeds, the server exits, or 60 s pass.
func (p *process) waitReady(ready func(context.Context) error) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := ready(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited (%v): see %s", filepath.Base(p.cmd.Path), p.err, p.tail())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop(os.Kill)
			return fmt.Errorf("%s not ready after 60 s: %w; log: %s", filepath.Base(p.cmd.Path), err, p.tail())
		}
	}
}

// stop sends sig and waits for the server to exit, killing it after 10 s.
func (p *process) stop(sig os.Signal) {
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// tail is the end of the server's log, for an error message.
func (p *process) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// asServiceUser makes cmd run as the system user name when the tests run as
// root (PostgreSQL refuses to run as root); otherwise as the current user.
func asServiceUser(cmd *exec.Cmd, name string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	uid, gid, err := lookupUser(name)
	if err != nil {
		return err
	}
	setCredential(cmd, uid, gid)
	return nil
}

// chownToServiceUser gives dir to the system user name when running as root.
func chownToServiceUser(dir, name string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	uid, gid, err := lookupUser(name)
	if err != nil {
		return err
	}
	if err := os.Chown(dir, int(uid), int(gid)); err != nil {
		return fmt.Errorf("giving %s to %s: %w", dir, name, err)
	}
	return nil
}

func lookupUser(name string) (uid, gid uint32, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("system user %s (created by its package): %w", name, errors.Join(err, errMissing))
	}
	id, err1 := strconv.ParseUint(u.Uid, 10, 32)
	g, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("system user %s: %w", name, err)
	}
	return uint32(id), uint32(g), nil
}
