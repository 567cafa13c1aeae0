// Package apppass lets signed-in users make, list and revoke app
// passwords (storage.AppPasswords): passwords for the clients that speak
// only Basic (rclone, cadaver, davfs2, scripts) of users who sign in with
// OpenID Connect and so have none. It serves oCIS's auth-app API
// (/auth-app/tokens); package ocs serves Nextcloud's over the Service.
// Checking a password at sign-in is the authentication handler's part
// (Verifier).
package apppass

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/davspaces/davspaces/storage"
)

// Config configures a Service.
type Config struct {
	// Store keeps the passwords. Required.
	Store storage.AppPasswords
	// User returns the request's signed-in user. Required.
	User func(*http.Request) (storage.User, bool)
	// UsedPassword returns the id of the app password the request signed
	// in with; nil or "" when it signed in otherwise.
	UsedPassword func(*http.Request) string
	// Revoked is told the id of each password deleted here, so that the
	// checks cached on this node forget it at once. Optional.
	Revoked func(id string)
	// Tree reads the spaces and folders a scope names; nil refuses every
	// scope with a space.
	Tree Tree
	// Spaces are the spaces served and who sees them: a scope names one
	// its user sees. The zero value serves personal spaces only.
	Spaces storage.SpacePolicy
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service makes, lists and revokes the app passwords of signed-in users.
type Service struct {
	cfg Config
}

// New returns the Service of cfg.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.User == nil {
		return nil, errors.New("apppass: a store and a user reader are required")
	}
	if cfg.UsedPassword == nil {
		cfg.UsedPassword = func(*http.Request) string { return "" }
	}
	if cfg.Revoked == nil {
		cfg.Revoked = func(string) {}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{cfg: cfg}, nil
}

// ErrAppPasswordInUse refuses to make an app password, or to revoke the
// request's own, with one: an app password reaches what its user reaches
// but makes no others (Nextcloud answers 403 too).
var ErrAppPasswordInUse = errors.New("a request signed in with an app password cannot make app passwords")

// User is the request's signed-in user.
func (s *Service) User(r *http.Request) (storage.User, bool) { return s.cfg.User(r) }

// UsedPassword is the id of the app password r signed in with, "" when
// none.
func (s *Service) UsedPassword(r *http.Request) string { return s.cfg.UsedPassword(r) }

// Create makes an app password of the request's user, labelled label
// (cut to storage.MaxAppPasswordLabel bytes), valid for ttl (0: until
// revoked), narrowed to scope (resolveScope's checks: ErrNoSuchScope,
// ErrPathWithoutSpace, storage.ErrInvalid). It returns the record and the
// password, which is shown once.
func (s *Service) Create(r *http.Request, user storage.User, label string, ttl time.Duration, req ScopeRequest) (storage.AppPassword, string, error) {
	if s.UsedPassword(r) != "" {
		return storage.AppPassword{}, "", ErrAppPasswordInUse
	}
	scope, err := s.resolveScope(r.Context(), user, req)
	if err != nil {
		return storage.AppPassword{}, "", err
	}
	now := s.cfg.Now().UTC().Truncate(time.Microsecond)
	var expires time.Time
	if ttl > 0 {
		expires = now.Add(ttl)
	}
	p, password, err := storage.NewAppPassword(user.ID, CutLabel(label), expires, now, scope)
	if err != nil {
		return storage.AppPassword{}, "", err
	}
	if err := s.cfg.Store.CreateAppPassword(r.Context(), p); err != nil {
		return storage.AppPassword{}, "", fmt.Errorf("creating an app password: %w", err)
	}
	return p, password, nil
}

// List returns user's app passwords, oldest first.
func (s *Service) List(ctx context.Context, user storage.User) ([]storage.AppPassword, error) {
	return s.cfg.Store.AppPasswords(ctx, user.ID)
}

// Delete revokes user's app password id; ErrNotFound when user has none
// of that id.
func (s *Service) Delete(ctx context.Context, user storage.User, id string) error {
	if !storage.ValidAppPasswordID(id) {
		return storage.AppPasswordNotFound()
	}
	if err := s.cfg.Store.DeleteAppPassword(ctx, user.ID, id); err != nil {
		return err
	}
	s.cfg.Revoked(id)
	return nil
}

// CutLabel cuts label to storage.MaxAppPasswordLabel bytes at a rune
// boundary, dropping invalid UTF-8: a label is often a User-Agent, which
// the client writes as it likes.
func CutLabel(label string) string {
	label = strings.ToValidUTF8(label, "")
	for len(label) > storage.MaxAppPasswordLabel {
		_, size := utf8.DecodeLastRuneInString(label)
		label = label[:len(label)-size]
	}
	return label
}
