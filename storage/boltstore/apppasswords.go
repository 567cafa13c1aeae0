package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.AppPasswords = (*Store)(nil)

// App passwords (storage.AppPasswords) are kept in two buckets, made at
// the first password:
//
//	app_passwords       id → encoded password
//	app_password_users  user id \0 id → nothing
//
// A check reads one record by its id; a user's list (and the cap) walks
// the user's keys of the index. A user id holds no \0 (ValidUserID).
var (
	bucketAppPasswords     = []byte("app_passwords")
	bucketAppPasswordUsers = []byte("app_password_users")
)

// appPasswordFormat is the format of the app password records.
const appPasswordFormat = 1

// encodeAppPassword encodes p without its id. Layout: format, user,
// label, hash, space, path (strings), created, expires, last used
// (appendTime), read-only (one byte).
func encodeAppPassword(p *storage.AppPassword) []byte {
	b := make([]byte, 0, 64+len(p.User)+len(p.Label)+len(p.Hash)+len(p.Space)+len(p.Path))
	b = append(b, appPasswordFormat)
	for _, s := range []string{p.User, p.Label, string(p.Hash), p.Space, p.Path} {
		b = appendString(b, s)
	}
	b = appendTime(b, p.Created)
	b = appendTime(b, p.Expires)
	b = appendTime(b, p.LastUsed)
	readOnly := byte(0)
	if p.ReadOnly {
		readOnly = 1
	}
	return append(b, readOnly)
}

func decodeAppPassword(id string, v []byte) (storage.AppPassword, error) {
	d := decoder{b: v, s: string(v)}
	if d.byte() != appPasswordFormat {
		return storage.AppPassword{}, fmt.Errorf("app password %s: unknown format: %w", id, errCorrupt)
	}
	p := storage.AppPassword{ID: id, User: d.str(), Label: d.str(), Hash: []byte(d.str()), Space: d.str(), Path: d.str()}
	p.Created, p.Expires, p.LastUsed = d.time(), d.time(), d.time()
	p.ReadOnly = d.byte() == 1
	if d.err != nil {
		return storage.AppPassword{}, fmt.Errorf("app password %s: %w", id, errCorrupt)
	}
	return p, nil
}

func appPasswordUserKey(user, id string) []byte {
	return append(append([]byte(user), 0), id...)
}

// CreateAppPassword keeps p (storage.AppPasswords).
func (s *Store) CreateAppPassword(ctx context.Context, p storage.AppPassword) error {
	return s.changeGrouped(ctx, "create app password", storage.ValidAppPassword(p), func(t *txn) error {
		records, users, err := openAppPasswordBuckets(t.tx)
		if err != nil {
			return err
		}
		if records.Get([]byte(p.ID)) != nil {
			return fmt.Errorf("app password id: %w", storage.ErrExists)
		}
		kept, err := forgetExpiredAppPasswords(records, users, p.User, p.Created)
		if err != nil {
			return err
		}
		if kept >= storage.MaxAppPasswordsPerUser {
			return storage.AppPasswordCapReached()
		}
		if err := users.Put(appPasswordUserKey(p.User, p.ID), nil); err != nil {
			return err
		}
		return records.Put([]byte(p.ID), encodeAppPassword(&p))
	})
}

// forgetExpiredAppPasswords deletes user's passwords expired at now and
// returns how many are kept.
func forgetExpiredAppPasswords(records, users *bolt.Bucket, user string, now time.Time) (int, error) {
	var expired []string
	kept := 0
	err := eachAppPasswordOf(records, users, user, func(p storage.AppPassword) error {
		if p.Expired(now) {
			expired = append(expired, p.ID)
		} else {
			kept++
		}
		return nil
	})
	for _, id := range expired {
		if err == nil {
			err = deleteAppPassword(records, users, user, id)
		}
	}
	return kept, err
}

// AppPasswords returns user's passwords (storage.AppPasswords).
func (s *Store) AppPasswords(ctx context.Context, user string) ([]storage.AppPassword, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var list []storage.AppPassword
	err := s.view(func(t *txn) error {
		records, users := t.tx.Bucket(bucketAppPasswords), t.tx.Bucket(bucketAppPasswordUsers)
		if records == nil {
			return nil
		}
		return eachAppPasswordOf(records, users, user, func(p storage.AppPassword) error {
			list = append(list, p)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("app passwords of %.64q: %w", user, err)
	}
	storage.SortAppPasswords(list)
	return list, nil
}

// eachAppPasswordOf calls fn with each password of user.
func eachAppPasswordOf(records, users *bolt.Bucket, user string, fn func(storage.AppPassword) error) error {
	prefix := appPasswordUserKey(user, "")
	c := users.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		id := string(k[len(prefix):])
		v := records.Get([]byte(id))
		if v == nil {
			return fmt.Errorf("app password %s of %s has no record: %w", id, user, errCorrupt)
		}
		p, err := decodeAppPassword(id, v)
		if err != nil {
			return err
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

// AppPassword returns the password of id (storage.AppPasswords).
func (s *Store) AppPassword(ctx context.Context, id string) (storage.AppPassword, error) {
	return inTxn(ctx, s.view, func(t *txn) (storage.AppPassword, error) {
		records := t.tx.Bucket(bucketAppPasswords)
		if records == nil {
			return storage.AppPassword{}, storage.AppPasswordNotFound()
		}
		v := records.Get([]byte(id))
		if v == nil {
			return storage.AppPassword{}, storage.AppPasswordNotFound()
		}
		return decodeAppPassword(id, v)
	})
}

// DeleteAppPassword forgets user's password id (storage.AppPasswords).
func (s *Store) DeleteAppPassword(ctx context.Context, user, id string) error {
	return s.changeGrouped(ctx, "delete app password", nil, func(t *txn) error {
		records, users := t.tx.Bucket(bucketAppPasswords), t.tx.Bucket(bucketAppPasswordUsers)
		if users == nil || users.Get(appPasswordUserKey(user, id)) == nil {
			return storage.AppPasswordNotFound()
		}
		return deleteAppPassword(records, users, user, id)
	})
}

func deleteAppPassword(records, users *bolt.Bucket, user, id string) error {
	if err := users.Delete(appPasswordUserKey(user, id)); err != nil {
		return err
	}
	return records.Delete([]byte(id))
}

// TouchAppPassword sets the LastUsed of id (storage.AppPasswords). A
// password used within the interval is answered from a read
// transaction: a client's requests cost no commit.
func (s *Store) TouchAppPassword(ctx context.Context, id string, at time.Time) error {
	p, err := s.AppPassword(ctx, id)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("touch app password: %w", err)
	case !p.NeedsTouch(at):
		return nil
	}
	err = s.updateGrouped(func(t *txn) error {
		records := t.tx.Bucket(bucketAppPasswords)
		v := records.Get([]byte(id))
		if v == nil {
			return nil
		}
		p, err := decodeAppPassword(id, v)
		if err != nil || !p.NeedsTouch(at) {
			return err
		}
		p.LastUsed = at
		return records.Put([]byte(id), encodeAppPassword(&p))
	})
	if err != nil {
		return fmt.Errorf("touch app password: %w", err)
	}
	return nil
}

func openAppPasswordBuckets(tx *bolt.Tx) (records, users *bolt.Bucket, err error) {
	if records, err = tx.CreateBucketIfNotExists(bucketAppPasswords); err != nil {
		return nil, nil, err
	}
	if users, err = tx.CreateBucketIfNotExists(bucketAppPasswordUsers); err != nil {
		return nil, nil, err
	}
	return records, users, nil
}
