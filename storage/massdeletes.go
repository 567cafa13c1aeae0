package storage

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MassDelete is one burst of deletions by one client in one space that
// crossed the mass-delete threshold: the deletions a single request
// restores. davhandler decides what a burst is and when it becomes one;
// the store keeps the events so that every node, and the next start,
// sees them.
type MassDelete struct {
	// ID names the event in its space (ValidMassDeleteID): the start in
	// Unix nanoseconds and a random part, so that ids sort by start.
	ID      string
	SpaceID string
	// User is the id of the user whose client deleted; Client names the
	// client (user, credential, device) the burst was counted by, and
	// Label is how the page shows it ("Marie's laptop").
	User   string
	Client string
	Label  string
	// Files is how many files the burst deleted (a folder counts the
	// files below it, up to the threshold when it was counted).
	Files int64
	// Items are the node ids of the trash items the event covers (a trash
	// item's key ends in its node id: TrashKey). MassDeletes leaves them
	// out; MassDelete returns them.
	Items []string
	// Start and End are the first and the last deletion of the burst.
	Start, End time.Time
	// State is open until a manager confirms the deletions or restores
	// them; Resolved is when, and ResolvedBy who.
	State      MassDeleteState
	Resolved   time.Time
	ResolvedBy string
}

// MassDeleteState is where an event stands.
type MassDeleteState uint8

const (
	// MassDeleteOpen: nobody has looked at it yet; a client held by it
	// (mass_delete hold) stays held.
	MassDeleteOpen MassDeleteState = iota
	// MassDeleteConfirmed: a manager kept the deletions.
	MassDeleteConfirmed
	// MassDeleteRestored: its items went back into the space.
	MassDeleteRestored
)

// String names a state as the page and the API show it.
func (s MassDeleteState) String() string {
	switch s {
	case MassDeleteOpen:
		return "open"
	case MassDeleteConfirmed:
		return "confirmed"
	case MassDeleteRestored:
		return "restored"
	}
	return "state" + strconv.Itoa(int(s))
}

// MassDeletes keeps the mass-delete events of every space.
type MassDeletes interface {
	// OpenMassDelete keeps the new event e (ValidMassDelete), forgetting
	// the oldest events of its space beyond MaxMassDeletesPerSpace.
	// ErrExists when its id is taken.
	OpenMassDelete(ctx context.Context, e MassDelete) error
	// ExtendMassDelete adds items and files to open event id and moves
	// its End to end (never back). ErrNotFound when there is no such
	// event; ErrConflict when it is no longer open. Items beyond
	// MaxMassDeleteItems are counted in Files but not kept.
	ExtendMassDelete(ctx context.Context, spaceID, id string, items []string, files int64, end time.Time) (MassDelete, error)
	// MassDeletes returns the events of space spaceID, newest first,
	// without their items.
	MassDeletes(ctx context.Context, spaceID string) ([]MassDelete, error)
	// MassDelete returns event id with its items; ErrNotFound when there
	// is none.
	MassDelete(ctx context.Context, spaceID, id string) (MassDelete, error)
	// ResolveMassDelete moves open event id to state (confirmed or
	// restored) at at, by user by. ErrNotFound when there is no such
	// event; ErrConflict when it is not open: of two resolutions one wins.
	ResolveMassDelete(ctx context.Context, spaceID, id string, state MassDeleteState, by string, at time.Time) (MassDelete, error)
}

// Bounds of mass-delete events.
const (
	// MaxMassDeletesPerSpace is how many events a space keeps: the newest.
	// A client that empties a space makes one event, so a handful is
	// enough to look back over the bursts the trash still holds.
	MaxMassDeletesPerSpace = 20
	// MaxMassDeleteItems bounds the trash items one event records: a
	// burst beyond it is still counted and shown, and its further items
	// stay in the trash to be restored one by one.
	MaxMassDeleteItems = 1_000_000
	// MaxMassDeleteLabel bounds a client's name and label, in bytes.
	MaxMassDeleteLabel = 255
)

// MassDeleteID returns the id of an event starting at start with the
// random part nonce (hexadecimal).
func MassDeleteID(start time.Time, nonce string) string {
	return strconv.FormatInt(start.UnixNano(), 10) + "." + nonce
}

// ValidMassDeleteID checks an id from a request before a store looks it
// up: as MassDeleteID makes them. A malformed id is ErrNotFound, as an
// unknown one.
func ValidMassDeleteID(id string) error {
	nanos, nonce, ok := strings.Cut(id, ".")
	if !ok || nonce == "" || len(nonce) > 64 || strings.Trim(nonce, "0123456789abcdef") != "" {
		return MassDeleteNotFound(id)
	}
	if _, err := strconv.ParseInt(nanos, 10, 64); err != nil {
		return MassDeleteNotFound(id)
	}
	return nil
}

// ValidMassDelete checks a new event before a store keeps it.
func ValidMassDelete(e MassDelete) error {
	switch {
	case ValidMassDeleteID(e.ID) != nil:
		return fmt.Errorf("mass delete id %q: %w", e.ID, ErrInvalid)
	case e.SpaceID == "" || e.User == "" || e.Client == "":
		return fmt.Errorf("a mass delete names its space, user and client: %w", ErrInvalid)
	case len(e.Client) > MaxMassDeleteLabel || len(e.Label) > MaxMassDeleteLabel ||
		!utf8.ValidString(e.Client) || !utf8.ValidString(e.Label):
		return fmt.Errorf("a mass delete's client and label are UTF-8 of at most %d bytes: %w", MaxMassDeleteLabel, ErrInvalid)
	case e.Start.IsZero() || e.End.Before(e.Start) || e.Files < 0:
		return fmt.Errorf("a mass delete ends after it starts: %w", ErrInvalid)
	case e.State != MassDeleteOpen:
		return fmt.Errorf("a mass delete starts open: %w", ErrInvalid)
	}
	return nil
}

// ValidMassDeleteResolution checks the state an event is resolved to.
func ValidMassDeleteResolution(state MassDeleteState, by string) error {
	if state != MassDeleteConfirmed && state != MassDeleteRestored {
		return fmt.Errorf("a mass delete is resolved as confirmed or restored, not %s: %w", state, ErrInvalid)
	}
	if by == "" {
		return fmt.Errorf("a mass delete is resolved by someone: %w", ErrInvalid)
	}
	return nil
}

// MassDeleteNotFound is the answer for an unknown event.
func MassDeleteNotFound(id string) error {
	return fmt.Errorf("mass delete %q: %w", id, ErrNotFound)
}

// MassDeleteResolved refuses a change of an event no longer open.
func MassDeleteResolved(e MassDelete) error {
	return fmt.Errorf("mass delete %s is %s already: %w", e.ID, e.State, ErrConflict)
}

// NewMassDeleteItems returns those of items not in have, each once, in
// order, with at most room of them: what ExtendMassDelete adds to an
// event.
func NewMassDeleteItems(items []string, have func(string) bool, room int) []string {
	var out []string
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		if len(out) >= room {
			break
		}
		if it == "" || seen[it] || have(it) {
			continue
		}
		seen[it] = true
		out = append(out, it)
	}
	return out
}

// SortMassDeletes orders events newest first, as MassDeletes returns
// them.
func SortMassDeletes(events []MassDelete) {
	slices.SortFunc(events, func(a, b MassDelete) int {
		return compareTimeThenID(b.Start, b.ID, a.Start, a.ID)
	})
}
