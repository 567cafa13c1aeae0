package caddymodule

import (
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Warnings about refused tokens and user ids are written at most
// warnBurst times per warnInterval: each costs a client one request, and a
// flood of them must not become a flood of log lines. A summary line before
// the next one written counts those left out.
const (
	warnBurst    = 5
	warnInterval = 10 * time.Second
)

// warnThrottle counts the warnings of one interval. Handlers that check
// the tokens of one provider share it, so that a flood spread over them is
// bounded all the same. It is safe for concurrent use.
type warnThrottle struct {
	now func() time.Time

	mu         sync.Mutex
	start      time.Time // of the current interval
	written    int       // in the current interval
	suppressed int       // since the last line written
}

func newWarnThrottle(now func() time.Time) *warnThrottle {
	if now == nil {
		now = time.Now
	}
	return &warnThrottle{now: now}
}

// allow reports whether a warning may be written now and, when it may, how
// many were left out before it.
func (t *warnThrottle) allow() (ok bool, suppressed int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if now := t.now(); now.Sub(t.start) >= warnInterval {
		t.start, t.written = now, 0
	}
	if t.written >= warnBurst {
		t.suppressed++
		return false, 0
	}
	t.written++
	suppressed, t.suppressed = t.suppressed, 0
	return true, suppressed
}

// throttled returns logger with its warnings and errors passed through t;
// lower levels are written as they are.
func throttled(logger *zap.Logger, t *warnThrottle) *zap.Logger {
	return logger.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return &throttledCore{Core: c, t: t}
	}))
}

type throttledCore struct {
	zapcore.Core
	t *warnThrottle
}

func (c *throttledCore) With(fields []zapcore.Field) zapcore.Core {
	return &throttledCore{Core: c.Core.With(fields), t: c.t}
}

// Check decides before the wrapped core does, so that the lines it lets
// through still meet the wrapped core's own filters (Caddy's include and
// exclude, sampling).
func (c *throttledCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if ent.Level < zapcore.WarnLevel || !c.Enabled(ent.Level) {
		return c.Core.Check(ent, ce)
	}
	ok, suppressed := c.t.allow()
	if !ok {
		return ce
	}
	if suppressed > 0 {
		c.summarize(ent, suppressed)
	}
	return c.Core.Check(ent, ce)
}

// summarize writes how many warnings were left out before ent.
func (c *throttledCore) summarize(ent zapcore.Entry, suppressed int) {
	summary := zapcore.Entry{
		Level:      zapcore.WarnLevel,
		Time:       ent.Time,
		LoggerName: ent.LoggerName,
		Message:    "warnings left out: too many in a short time",
	}
	if ce := c.Core.Check(summary, nil); ce != nil {
		ce.Write(zap.Int("suppressed_warnings", suppressed))
	}
}
