package davhandler

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// The mass-delete brake: the deletions of one client in one space within
// a window are counted as one burst, and a burst that reaches the
// threshold becomes a mass-delete event (storage.MassDeletes), which a
// single request restores (massdelete_api.go). Nothing is refused unless
// the rules say Hold: every deletion stays in the trash anyway, and the
// event is what lets somebody notice and undo it in one go.

// Defaults of the mass-delete rules.
const (
	// DefaultMassDeleteFiles is the files one burst may delete before it
	// is an event.
	DefaultMassDeleteFiles = 1000
	// DefaultMassDeleteShare is the share of a space one burst may delete
	// before it is an event.
	DefaultMassDeleteShare = 0.2
	// DefaultMassDeleteWindow is how long a burst lasts from its first
	// deletion. A desktop client deletes what it found gone in one sync
	// run, a few minutes for tens of thousands of files; ten minutes
	// takes in such a run whole, and a person tidying by hand rarely
	// reaches a thousand files in it.
	DefaultMassDeleteWindow = 10 * time.Minute
	// minMassDeleteShareFiles is the fewest files the share alone makes an
	// event of: deleting 3 of a space's 10 files is tidying, not a client
	// gone wrong.
	minMassDeleteShareFiles = 100
	// maxMassDeleteBursts bounds the bursts counted at once, about a
	// megabyte; beyond it the oldest are forgotten.
	maxMassDeleteBursts = 10_000
	// massDeleteRetryAfter is the Retry-After of a held client's delete, in
	// seconds: a client retries its sync later, by when a manager may have
	// looked.
	massDeleteRetryAfter = 300
)

// MassDeleteRules configure the brake; the zero value is the defaults.
type MassDeleteRules struct {
	// Off turns the brake off: no burst is counted.
	Off bool
	// Files is how many files one burst deletes before it is an event; 0
	// means DefaultMassDeleteFiles.
	Files int64
	// Share is the share of the space's nodes (storage.Usage.Nodes when
	// the burst began) one burst deletes before it is an event, but never
	// fewer than 100 files (or Files when lower); 0 means
	// DefaultMassDeleteShare, negative none.
	Share float64
	// Window is how long a burst lasts from its first deletion; an event
	// goes on while its client keeps deleting within Window of its last
	// deletion. 0 means DefaultMassDeleteWindow.
	Window time.Duration
	// Hold answers the client's further deletes 503 once its burst is an
	// event, until a manager confirms or restores it.
	Hold bool
}

// withDefaults fills the zero fields of r.
func (r MassDeleteRules) withDefaults() MassDeleteRules {
	r.Files = cmp.Or(r.Files, DefaultMassDeleteFiles)
	r.Share = cmp.Or(r.Share, DefaultMassDeleteShare)
	r.Window = cmp.Or(r.Window, DefaultMassDeleteWindow)
	return r
}

// threshold is how many files a burst in a space of nodes nodes deletes
// before it is an event.
func (r MassDeleteRules) threshold(nodes int64) int64 {
	limit := r.Files
	if r.Share <= 0 || nodes <= 0 {
		return limit
	}
	byShare := int64(math.Ceil(r.Share * float64(nodes)))
	return min(limit, max(byShare, min(limit, minMassDeleteShareFiles)))
}

// deleter is who deletes: the client a burst is counted by.
type deleter struct {
	user storage.User
	// key names the client (storage.MassDelete.Client) and label shows it.
	key, label string
}

// deleterOf names the client of r: the app password or token client it
// signed in with, or else its User-Agent, of user.
func (h *Handler) deleterOf(r *http.Request, user storage.User) deleter {
	agent := r.Header.Get("User-Agent")
	credential := ""
	if h.credential != nil {
		credential = h.credential(r)
	}
	sum := sha256.Sum256([]byte(credential + "\x00" + agent))
	return deleter{
		user:  user,
		key:   truncateUTF8(user.ID, storage.MaxMassDeleteLabel-17) + " " + hex.EncodeToString(sum[:8]),
		label: truncateUTF8(possessive(cmp.Or(user.DisplayName, user.ID))+" "+clientName(agent), storage.MaxMassDeleteLabel),
	}
}

// possessive is "Marie's", or "Hans'" for a name ending in s.
func possessive(name string) string {
	if strings.HasSuffix(name, "s") {
		return name + "'"
	}
	return name + "'s"
}

// clientName names the kind of client a User-Agent is, as the page shows
// it: "Nextcloud desktop", "ownCloud desktop", "Android app", …, or else
// the User-Agent's first product.
func clientName(agent string) string {
	lower := strings.ToLower(agent)
	for _, k := range []struct{ has, name string }{
		{"nextcloudcmd", "Nextcloud command-line client"},
		{"owncloudcmd", "ownCloud command-line client"},
		{"android", "Android app"},
		{"ios", "iOS app"},
		{"mirall", "desktop client"},
		{"rclone", "rclone"},
		{"davfs2", "davfs2"},
		{"cadaver", "cadaver"},
		{"mozilla", "browser"},
	} {
		if strings.Contains(lower, k.has) {
			if k.has == "mirall" {
				return desktopBrand(lower) + " desktop client"
			}
			return k.name
		}
	}
	product, _, _ := strings.Cut(agent, "/")
	if product = strings.TrimSpace(product); product == "" {
		return "client"
	}
	return truncateUTF8(product, 64)
}

// desktopBrand tells a Nextcloud desktop client (mirall) from ownCloud's.
func desktopBrand(lowerAgent string) string {
	if strings.Contains(lowerAgent, "nextcloud") {
		return "Nextcloud"
	}
	return "ownCloud"
}

// truncateUTF8 cuts s to at most n bytes on a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// burstKey names the burst of one client in one space.
type burstKey struct{ space, client string }

// burst is the deletions of one client in one space since start.
type burst struct {
	// mu serializes the burst's store writes, so that one event is opened
	// and extended in order.
	mu sync.Mutex
	// start and last are the first and latest deletions; threshold is the
	// files that make it an event.
	start, last time.Time
	threshold   int64
	files       int64
	// items are the node ids deleted before the burst was an event.
	items []string
	// event is the event's id once it is one.
	event string
}

// restart makes bu a burst starting at now, with its threshold; bu.mu is
// held.
func (bu *burst) restart(now time.Time) {
	bu.start, bu.last, bu.files, bu.items, bu.event = now, now, 0, nil, ""
}

// brake counts bursts and opens and extends their events.
type brake struct {
	rules  MassDeleteRules
	events storage.MassDeletes
	usage  storage.UsageReader
	logger *zap.Logger
	// opened is told of every event opened (metrics); nil for none.
	opened func(storage.MassDelete)
	now    func() time.Time

	mu     sync.Mutex
	bursts map[burstKey]*burst
}

func newBrake(rules MassDeleteRules, events storage.MassDeletes, usage storage.UsageReader, logger *zap.Logger, opened func(storage.MassDelete)) *brake {
	if rules.Off || events == nil {
		return nil
	}
	return &brake{rules: rules.withDefaults(), events: events, usage: usage, logger: logger,
		opened: opened, now: time.Now, bursts: make(map[burstKey]*burst)}
}

// errHeld refuses a held client's delete.
var errHeld = &davError{status: http.StatusServiceUnavailable, retryAfter: massDeleteRetryAfter, reason: "mass delete held",
	message: "This client deleted many files in this space a moment ago: its further deletions wait until a manager of the space confirms or restores them in the web page"}

// admit refuses, with Hold, a delete of a client whose burst in space is an
// open event. The store is asked, not the bursts of this process, so that
// a hold lasts across nodes and restarts.
func (b *brake) admit(ctx context.Context, spaceID string, d deleter) error {
	if b == nil || !b.rules.Hold {
		return nil
	}
	events, err := b.events.MassDeletes(ctx, spaceID)
	if err != nil {
		return fmt.Errorf("mass deletes of the space: %w", err)
	}
	for _, e := range events {
		if e.State == storage.MassDeleteOpen && e.Client == d.key {
			return withCause(errHeld, fmt.Errorf("held by mass delete %s", e.ID))
		}
	}
	return nil
}

// burstOf returns the burst of k at now, a new one when the last has
// ended: a burst that is no event ends Window after its start, an event
// Window after its last deletion.
func (b *brake) burstOf(k burstKey, now time.Time) *burst {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bu, ok := b.bursts[k]; ok {
		bu.mu.Lock()
		ended := b.ended(bu, now)
		bu.mu.Unlock()
		if !ended {
			return bu
		}
	}
	if len(b.bursts) >= maxMassDeleteBursts {
		b.forgetEnded(now)
	}
	bu := &burst{start: now, last: now}
	b.bursts[k] = bu
	return bu
}

// take returns the burst of d in space spaceID at now, locked, with its
// threshold: the first to take a new burst reads what the space keeps.
func (b *brake) take(ctx context.Context, spaceID string, d deleter, now time.Time) *burst {
	bu := b.burstOf(burstKey{spaceID, d.key}, now)
	bu.mu.Lock()
	if bu.threshold == 0 {
		bu.threshold = b.rules.threshold(b.spaceNodes(ctx, spaceID))
	}
	return bu
}

// ended reports whether bu has ended at now; bu.mu is held.
func (b *brake) ended(bu *burst, now time.Time) bool {
	since := bu.start
	if bu.event != "" {
		since = bu.last
	}
	return now.Sub(since) > b.rules.Window
}

// forgetEnded forgets the ended bursts, or else the oldest one; b.mu is
// held.
func (b *brake) forgetEnded(now time.Time) {
	var oldest burstKey
	var oldestStart time.Time
	for k, bu := range b.bursts {
		bu.mu.Lock()
		ended, start := b.ended(bu, now), bu.start
		bu.mu.Unlock()
		if ended {
			delete(b.bursts, k)
			continue
		}
		if oldestStart.IsZero() || start.Before(oldestStart) {
			oldest, oldestStart = k, start
		}
	}
	if len(b.bursts) >= maxMassDeleteBursts {
		delete(b.bursts, oldest)
	}
}

// record counts the deletion of node (files files) from space by d in
// bu, which is taken: it opens the burst's event when it reaches the
// threshold, and extends it after. A failure is logged, never answered:
// the deletion is done.
func (b *brake) record(ctx context.Context, space storage.Space, d deleter, bu *burst, nodeID string, files int64) {
	now := b.now()
	err := b.count(ctx, space, d, bu, nodeID, files, now)
	if errors.Is(err, storage.ErrConflict) {
		// A manager resolved the event meanwhile: this deletion starts a
		// burst of its own.
		bu.restart(now)
		err = b.count(ctx, space, d, bu, nodeID, files, now)
	}
	if err != nil {
		b.logger.Error("counting a deletion towards a mass delete", zap.String("space", space.ID), zap.String("client", d.label), zap.Error(err))
	}
}

// count adds one deletion to bu; bu.mu is held.
func (b *brake) count(ctx context.Context, space storage.Space, d deleter, bu *burst, nodeID string, files int64, now time.Time) error {
	bu.files += files
	bu.last = now
	if bu.event != "" {
		_, err := b.events.ExtendMassDelete(ctx, space.ID, bu.event, []string{nodeID}, files, now)
		return err
	}
	bu.items = append(bu.items, nodeID)
	if bu.files < bu.threshold {
		return nil
	}
	e := storage.MassDelete{
		ID: storage.MassDeleteID(bu.start, nonce()), SpaceID: space.ID,
		User: d.user.ID, Client: d.key, Label: d.label,
		Files: bu.files, Items: bu.items, Start: bu.start, End: now,
	}
	if err := b.events.OpenMassDelete(ctx, e); err != nil {
		return err
	}
	bu.event, bu.items = e.ID, nil
	b.logger.Warn("mass delete: one client deleted many files of a space; one request restores them all (docs/undo.md)",
		zap.String("space", space.ID), zap.String("space_name", space.Name), zap.String("user", d.user.ID),
		zap.String("client", d.label), zap.Int64("files", e.Files), zap.String("event", e.ID),
		zap.Time("since", e.Start), zap.Bool("hold", b.rules.Hold))
	if b.opened != nil {
		b.opened(e)
	}
	return nil
}

// spaceNodes is what the space keeps (storage.Usage.Nodes), 0 when it
// cannot be read: the share then does not count.
func (b *brake) spaceNodes(ctx context.Context, spaceID string) int64 {
	if b.usage == nil {
		return 0
	}
	u, err := b.usage.Usage(ctx, spaceID)
	if err != nil {
		return 0
	}
	return u.Nodes
}

// nonce is the random part of an event's id.
func nonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// filesToCount is how many files deleting n counts: 1 for a file; for a
// folder the files below it, but no more than the brake's Files, so that
// deleting a folder of a million files reads no more of it than a
// thousand.
func (h *Handler) filesToCount(ctx context.Context, n storage.Node) int64 {
	if !n.IsFolder() {
		return 1
	}
	if h.brake == nil {
		return 0
	}
	return h.countFiles(ctx, n.SpaceID, n.ID, h.brake.rules.Files)
}

// countFiles counts the files below folder id up to limit, reading at
// most limit nodes.
func (h *Handler) countFiles(ctx context.Context, spaceID, id string, limit int64) int64 {
	const page = 1000
	var files, read int64
	folders := []string{id}
	for len(folders) > 0 && read < limit {
		folder := folders[0]
		folders = folders[1:]
		after := ""
		for read < limit {
			children, err := h.store.ReadDir(ctx, spaceID, folder, after, int(min(page, limit-read)))
			if err != nil || len(children) == 0 {
				break
			}
			for _, c := range children {
				read++
				if c.IsFolder() {
					folders = append(folders, c.ID)
				} else {
					files++
				}
			}
			after = children[len(children)-1].Name
		}
	}
	return files
}

// brakeDelete admits the deletion of node n of space by the client of r
// (refused while the client is held), and returns what the caller calls
// once the store has answered, with whether it deleted.
//
// With Hold, one client's deletions in one space go one at a time, the
// burst taken from the admission to the count, so that the deletion which
// opens the event is the last one admitted. Without, they go side by
// side, and each is counted once done.
func (h *Handler) brakeDelete(r *http.Request, user storage.User, space storage.Space, n storage.Node) (counted func(deleted bool), err error) {
	b := h.brake
	if b == nil {
		return func(bool) {}, nil
	}
	ctx := context.WithoutCancel(r.Context())
	d := h.deleterOf(r, user)
	files := h.filesToCount(ctx, n)
	if !b.rules.Hold {
		return func(deleted bool) {
			if deleted {
				bu := b.take(ctx, space.ID, d, b.now())
				defer bu.mu.Unlock()
				b.record(ctx, space, d, bu, n.ID, files)
			}
		}, nil
	}
	bu := b.take(ctx, space.ID, d, b.now())
	if err := b.admit(ctx, space.ID, d); err != nil {
		bu.mu.Unlock()
		return nil, err
	}
	return func(deleted bool) {
		defer bu.mu.Unlock()
		if deleted {
			b.record(ctx, space, d, bu, n.ID, files)
		}
	}, nil
}
