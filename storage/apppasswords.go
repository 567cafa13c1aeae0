package storage

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// AppPassword is a password a user makes for one client (rclone, a sync
// app, a script) that speaks only Basic: it signs in as the user without
// the user's own credentials, and is revoked alone. The store keeps only
// the bcrypt hash of its secret; ID, the password's first characters, is
// public, so that a check reads one record and compares one hash.
type AppPassword struct {
	// ID is AppPasswordIDLen characters of NewAppPassword's alphabet.
	ID string
	// User is the user id (ValidUserID) the password signs in as.
	User string
	// Label names the client, at most MaxAppPasswordLabel bytes.
	Label string
	// Hash is the bcrypt hash of the secret.
	Hash []byte
	// Created is when the password was made; Expires when it stops
	// being accepted (zero: never); LastUsed when it was last accepted,
	// written at most once per AppPasswordTouchInterval (zero: never).
	Created  time.Time
	Expires  time.Time
	LastUsed time.Time
	// Space, Path and ReadOnly narrow what the password may reach: one
	// space, one folder of it, no changes (Scope); zero values reach
	// everything the user reaches.
	Space    string
	Path     string
	ReadOnly bool
}

// Scope is what p narrows a request signed in with it to.
func (p AppPassword) Scope() Scope {
	return Scope{Space: p.Space, Path: p.Path, ReadOnly: p.ReadOnly}
}

// Expired reports whether p is no longer accepted at now.
func (p AppPassword) Expired(now time.Time) bool {
	return !p.Expires.IsZero() && !now.Before(p.Expires)
}

// AppPasswords keeps users' app passwords, shared by every node of a
// store, so that a password made on one node signs in on all and a
// revocation reaches all.
type AppPasswords interface {
	// CreateAppPassword keeps p (checked by ValidAppPassword). It first
	// forgets p.User's expired passwords, then refuses with
	// ErrInsufficientStorage when the user keeps MaxAppPasswordsPerUser,
	// and with ErrExists when p.ID is taken.
	CreateAppPassword(ctx context.Context, p AppPassword) error
	// AppPasswords returns user's passwords, oldest first.
	AppPasswords(ctx context.Context, user string) ([]AppPassword, error)
	// AppPassword returns the password of id; ErrNotFound when none.
	AppPassword(ctx context.Context, id string) (AppPassword, error)
	// DeleteAppPassword forgets user's password id; ErrNotFound when user
	// has none of that id.
	DeleteAppPassword(ctx context.Context, user, id string) error
	// TouchAppPassword sets the LastUsed of id to at, unless it is
	// already within AppPasswordTouchInterval before at: a client's every
	// request writes nothing. A password gone is no error.
	TouchAppPassword(ctx context.Context, id string, at time.Time) error
}

// Limits of app passwords.
const (
	// MaxAppPasswordsPerUser bounds the passwords one user keeps.
	MaxAppPasswordsPerUser = 100
	// MaxAppPasswordLabel is the longest label, in bytes.
	MaxAppPasswordLabel = 255
	// AppPasswordTouchInterval is how stale LastUsed may grow.
	AppPasswordTouchInterval = time.Minute
	// AppPasswordIDLen and appPasswordSecretLen are the lengths of the
	// two parts of an app password, in base32 characters: 80 bits of
	// id, which only has to be unique, and 160 bits of secret.
	AppPasswordIDLen     = 16
	appPasswordSecretLen = 32
	// AppPasswordLen is the length of a whole app password.
	AppPasswordLen = AppPasswordIDLen + appPasswordSecretLen
)

// appPasswordEncoding writes app passwords in lower-case letters and
// digits: nothing a shell, a URL or a config file quotes.
var appPasswordEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewAppPassword makes an app password of user, labelled label, expiring
// at expires (zero: never), created at now, narrowed to scope: the record
// to keep and the password, which only its user is ever shown.
func NewAppPassword(user, label string, expires, now time.Time, scope Scope) (AppPassword, string, error) {
	raw := make([]byte, (AppPasswordIDLen+appPasswordSecretLen)*5/8)
	rand.Read(raw)
	password := appPasswordEncoding.EncodeToString(raw)
	id, secret := password[:AppPasswordIDLen], password[AppPasswordIDLen:]
	hash, err := bcrypt.GenerateFromPassword([]byte(secret), bcrypt.DefaultCost)
	if err != nil {
		return AppPassword{}, "", fmt.Errorf("hashing an app password: %w", err)
	}
	p := AppPassword{ID: id, User: user, Label: label, Hash: hash, Created: now, Expires: expires,
		Space: scope.Space, Path: scope.Path, ReadOnly: scope.ReadOnly}
	if err := ValidAppPassword(p); err != nil {
		return AppPassword{}, "", err
	}
	return p, password, nil
}

// SplitAppPassword returns the id and secret of password; ok is false
// when password cannot be an app password, which then needs no lookup.
func SplitAppPassword(password string) (id, secret string, ok bool) {
	if len(password) != AppPasswordLen || !isAppPasswordText(password) {
		return "", "", false
	}
	return password[:AppPasswordIDLen], password[AppPasswordIDLen:], true
}

// ValidAppPasswordID reports whether id can name an app password.
func ValidAppPasswordID(id string) bool {
	return len(id) == AppPasswordIDLen && isAppPasswordText(id)
}

func isAppPasswordText(s string) bool {
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyz234567") == ""
}

// CheckAppPassword reports whether secret is p's.
func CheckAppPassword(p AppPassword, secret string) bool {
	return bcrypt.CompareHashAndPassword(p.Hash, []byte(secret)) == nil
}

// ValidAppPassword checks p before a store keeps it: ErrInvalid for a
// malformed id or user, a label too long or not UTF-8, no hash, or an
// expiry not after its creation.
func ValidAppPassword(p AppPassword) error {
	switch {
	case !ValidAppPasswordID(p.ID):
		return fmt.Errorf("app password id: %w", ErrInvalid)
	case len(p.Label) > MaxAppPasswordLabel || !utf8.ValidString(p.Label):
		return fmt.Errorf("an app password's label is UTF-8 of at most %d bytes: %w", MaxAppPasswordLabel, ErrInvalid)
	case len(p.Hash) == 0:
		return fmt.Errorf("app password without a hash: %w", ErrInvalid)
	case p.Created.IsZero():
		return fmt.Errorf("app password without a creation time: %w", ErrInvalid)
	case !p.Expires.IsZero() && !p.Expires.After(p.Created):
		return fmt.Errorf("an app password expires after its creation: %w", ErrInvalid)
	}
	if err := ValidUserID(p.User); err != nil {
		return fmt.Errorf("app password: %w", err)
	}
	if err := p.Scope().Valid(); err != nil {
		return fmt.Errorf("app password: %w", err)
	}
	return nil
}

// AppPasswordCapReached is the refusal of a user's password beyond
// MaxAppPasswordsPerUser.
func AppPasswordCapReached() error {
	return fmt.Errorf("a user keeps at most %d app passwords: %w", MaxAppPasswordsPerUser, ErrInsufficientStorage)
}

// AppPasswordNotFound is the refusal of an unknown app password.
func AppPasswordNotFound() error { return fmt.Errorf("app password: %w", ErrNotFound) }

// NeedsTouch reports whether p's LastUsed is to be written at at.
func (p AppPassword) NeedsTouch(at time.Time) bool {
	return p.LastUsed.IsZero() || at.Sub(p.LastUsed) >= AppPasswordTouchInterval
}

// SortAppPasswords orders list as AppPasswords returns it: oldest first,
// then by id.
func SortAppPasswords(list []AppPassword) {
	slices.SortFunc(list, func(a, b AppPassword) int {
		return compareTimeThenID(a.Created, a.ID, b.Created, b.ID)
	})
}
