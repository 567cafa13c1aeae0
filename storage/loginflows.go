package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
	"unicode/utf8"
)

// LoginFlow is one sign-in of a client by Nextcloud's Login Flow v2: the
// client starts it without credentials, its user signs in in a browser
// and grants it, and the client polls until it takes the app password
// the grant made. Every node of a store sees it: the client may start on
// one node, the browser grant on another, the poll reach a third.
//
// The store knows a flow by the hashes of its two tokens (LoginFlowKey),
// never the tokens, and keeps the grant's app password only sealed to the
// poll token (see package loginflow), until the poll takes it.
type LoginFlow struct {
	// LoginKey and PollKey are LoginFlowKey of the login token (the
	// browser's link) and of the poll token (the client's).
	LoginKey string
	PollKey  string
	// Client names the client, as its User-Agent does; at most
	// MaxLoginFlowClient bytes of UTF-8.
	Client string
	// Created is when the flow started; Expires when it ends, granted or
	// not.
	Created time.Time
	Expires time.Time
	// PollPublic is the public key the grant seals the app password to
	// (the poll token holds the private one).
	PollPublic []byte
	// User and Sealed are set by the grant: the user who granted and the
	// app password sealed to PollPublic. Empty while not granted.
	User   string
	Sealed []byte
}

// Granted reports whether the flow's user granted it.
func (f LoginFlow) Granted() bool { return f.User != "" }

// Expired reports whether f has ended at now.
func (f LoginFlow) Expired(now time.Time) bool { return !now.Before(f.Expires) }

// LoginFlows keeps the open Login Flow v2 sign-ins of every node.
type LoginFlows interface {
	// CreateLoginFlow keeps f (checked by ValidLoginFlow). It first
	// forgets up to LoginFlowSweep flows expired at f.Created, then
	// refuses with ErrInsufficientStorage when MaxLoginFlows are open,
	// and with ErrExists when either key is taken.
	CreateLoginFlow(ctx context.Context, f LoginFlow) error
	// LoginFlow returns the flow of loginKey open at now; ErrNotFound
	// when there is none, or it has expired or been taken.
	LoginFlow(ctx context.Context, loginKey string, now time.Time) (LoginFlow, error)
	// GrantLoginFlow sets the user and sealed app password of the flow of
	// loginKey open at now. ErrNotFound when there is none; ErrConflict
	// when it is granted already: a flow hands out one password.
	GrantLoginFlow(ctx context.Context, loginKey, user string, sealed []byte, now time.Time) error
	// DeleteLoginFlow ends the flow of loginKey (its user cancelled it);
	// ErrNotFound when there is none.
	DeleteLoginFlow(ctx context.Context, loginKey string) error
	// TakeLoginFlow returns the granted flow of pollKey open at now and
	// forgets it, atomically: of any number of concurrent takes on any
	// number of nodes exactly one gets it. ErrNotFound when there is
	// none, it is not granted yet, or it has expired.
	TakeLoginFlow(ctx context.Context, pollKey string, now time.Time) (LoginFlow, error)
}

// Limits of login flows.
const (
	// LoginFlowTTL is how long a flow stays open after its start, as
	// Nextcloud keeps its flows.
	LoginFlowTTL = 20 * time.Minute
	// MaxLoginFlows bounds the flows a store keeps open at once, so that
	// anonymous starts cannot grow it: enough for a whole organisation
	// signing in within LoginFlowTTL.
	MaxLoginFlows = 10_000
	// LoginFlowSweep is how many expired flows a creation forgets at
	// most: a creation costs a bounded amount of work.
	LoginFlowSweep = 100
	// MaxLoginFlowClient is the longest client name, in bytes.
	MaxLoginFlowClient = 255
	// maxSealed bounds a sealed app password.
	maxSealed = 1024
)

// LoginFlowKey is what a store knows a flow's token by: the SHA-256 of the
// token in hexadecimal. A token has 128 bits or more of randomness, so one
// round of a fast hash is enough, and a copy of the store gives nobody a
// token to poll or grant with.
func LoginFlowKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// validLoginFlowKey reports whether key can be a LoginFlowKey.
func validLoginFlowKey(key string) bool {
	if len(key) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(key)
	return err == nil
}

// ValidLoginFlow checks f before a store keeps it: ErrInvalid for a
// malformed key, the same key twice, a client name too long or not UTF-8,
// no public key, an expiry not after its creation, or a grant already.
func ValidLoginFlow(f LoginFlow) error {
	switch {
	case !validLoginFlowKey(f.LoginKey) || !validLoginFlowKey(f.PollKey) || f.LoginKey == f.PollKey:
		return fmt.Errorf("login flow keys: %w", ErrInvalid)
	case len(f.Client) > MaxLoginFlowClient || !utf8.ValidString(f.Client):
		return fmt.Errorf("a login flow's client is UTF-8 of at most %d bytes: %w", MaxLoginFlowClient, ErrInvalid)
	case len(f.PollPublic) == 0 || len(f.PollPublic) > maxSealed:
		return fmt.Errorf("login flow without a public key: %w", ErrInvalid)
	case f.Created.IsZero() || !f.Expires.After(f.Created):
		return fmt.Errorf("a login flow expires after its creation: %w", ErrInvalid)
	case f.Granted() || len(f.Sealed) > 0:
		return fmt.Errorf("a login flow starts without a grant: %w", ErrInvalid)
	}
	return nil
}

// ValidLoginFlowGrant checks a grant before a store keeps it.
func ValidLoginFlowGrant(user string, sealed []byte) error {
	if len(sealed) == 0 || len(sealed) > maxSealed {
		return fmt.Errorf("a login flow's grant holds a sealed password: %w", ErrInvalid)
	}
	if err := ValidUserID(user); err != nil {
		return fmt.Errorf("login flow grant: %w", err)
	}
	return nil
}

// LoginFlowNotFound is the answer for a flow that is not open.
func LoginFlowNotFound() error { return fmt.Errorf("login flow: %w", ErrNotFound) }

// LoginFlowGranted refuses a second grant of a flow.
func LoginFlowGranted() error {
	return fmt.Errorf("the login flow is granted already: %w", ErrConflict)
}

// LoginFlowCapReached refuses a flow beyond MaxLoginFlows.
func LoginFlowCapReached() error {
	return fmt.Errorf("a store keeps at most %d open login flows: %w", MaxLoginFlows, ErrInsufficientStorage)
}
