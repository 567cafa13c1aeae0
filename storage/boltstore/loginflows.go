package boltstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.LoginFlows = (*Store)(nil)

// Login flows (storage.LoginFlows) are kept in four buckets, made at the
// first flow:
//
//	login_flows         login key → encoded flow
//	login_flow_polls    poll key → login key
//	login_flow_expiry   expiry (8 bytes, big-endian Unix nanoseconds) + login key → nothing
//	login_flow_count    "open" → the number of flows (8 bytes, big-endian)
//
// The expiry index lets a creation forget the oldest expired flows
// without reading the others; the count lets it check the cap without
// counting them (bolt's Bucket.Stats reads the committed pages, not what
// the transaction changed).
var (
	bucketLoginFlows      = []byte("login_flows")
	bucketLoginFlowPolls  = []byte("login_flow_polls")
	bucketLoginFlowExpiry = []byte("login_flow_expiry")
	bucketLoginFlowCount  = []byte("login_flow_count")
	loginFlowCountKey     = []byte("open")
)

// loginFlowFormat is the format of the login flow records.
const loginFlowFormat = 1

// encodeLoginFlow encodes f without its login key. Layout: format, poll
// key, client, user, public key, sealed password (strings), created,
// expires (appendTime).
func encodeLoginFlow(f *storage.LoginFlow) []byte {
	b := make([]byte, 0, 64+len(f.PollKey)+len(f.Client)+len(f.User)+len(f.PollPublic)+len(f.Sealed))
	b = append(b, loginFlowFormat)
	for _, s := range []string{f.PollKey, f.Client, f.User, string(f.PollPublic), string(f.Sealed)} {
		b = appendString(b, s)
	}
	b = appendTime(b, f.Created)
	return appendTime(b, f.Expires)
}

func decodeLoginFlow(loginKey string, v []byte) (storage.LoginFlow, error) {
	d := decoder{b: v, s: string(v)}
	if d.byte() != loginFlowFormat {
		return storage.LoginFlow{}, fmt.Errorf("login flow: unknown format: %w", errCorrupt)
	}
	f := storage.LoginFlow{LoginKey: loginKey, PollKey: d.str(), Client: d.str(), User: d.str()}
	f.PollPublic, f.Sealed = []byte(d.str()), []byte(d.str())
	if len(f.Sealed) == 0 {
		f.Sealed = nil
	}
	f.Created, f.Expires = d.time(), d.time()
	if d.err != nil {
		return storage.LoginFlow{}, fmt.Errorf("login flow: %w", errCorrupt)
	}
	return f, nil
}

func loginFlowExpiryKey(expires time.Time, loginKey string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(expires.UnixNano())), loginKey...)
}

// loginFlowBuckets are the buckets of login flows.
type loginFlowBuckets struct {
	flows, polls, expiry, count *bolt.Bucket
}

func openLoginFlowBuckets(tx *bolt.Tx) (loginFlowBuckets, error) {
	var b loginFlowBuckets
	var err error
	for _, x := range []struct {
		dst  **bolt.Bucket
		name []byte
	}{{&b.flows, bucketLoginFlows}, {&b.polls, bucketLoginFlowPolls}, {&b.expiry, bucketLoginFlowExpiry}, {&b.count, bucketLoginFlowCount}} {
		if *x.dst, err = tx.CreateBucketIfNotExists(x.name); err != nil {
			return b, err
		}
	}
	return b, nil
}

// existingLoginFlowBuckets are the buckets of tx; ok is false before the
// first flow.
func existingLoginFlowBuckets(tx *bolt.Tx) (loginFlowBuckets, bool) {
	b := loginFlowBuckets{tx.Bucket(bucketLoginFlows), tx.Bucket(bucketLoginFlowPolls), tx.Bucket(bucketLoginFlowExpiry), tx.Bucket(bucketLoginFlowCount)}
	return b, b.flows != nil
}

func (b loginFlowBuckets) get(loginKey string) (storage.LoginFlow, bool, error) {
	v := b.flows.Get([]byte(loginKey))
	if v == nil {
		return storage.LoginFlow{}, false, nil
	}
	f, err := decodeLoginFlow(loginKey, v)
	return f, err == nil, err
}

// loginFlowOf returns the buckets of tx and the flow of loginKey in them,
// open or expired, or storage.LoginFlowNotFound.
func loginFlowOf(tx *bolt.Tx, loginKey string) (loginFlowBuckets, storage.LoginFlow, error) {
	b, ok := existingLoginFlowBuckets(tx)
	if !ok {
		return b, storage.LoginFlow{}, storage.LoginFlowNotFound()
	}
	f, ok, err := b.get(loginKey)
	if err == nil && !ok {
		err = storage.LoginFlowNotFound()
	}
	return b, f, err
}

func (b loginFlowBuckets) put(f *storage.LoginFlow) error {
	return b.flows.Put([]byte(f.LoginKey), encodeLoginFlow(f))
}

// add keeps the new flow f.
func (b loginFlowBuckets) add(f *storage.LoginFlow) error {
	if err := b.polls.Put([]byte(f.PollKey), []byte(f.LoginKey)); err != nil {
		return err
	}
	if err := b.expiry.Put(loginFlowExpiryKey(f.Expires, f.LoginKey), nil); err != nil {
		return err
	}
	if err := b.put(f); err != nil {
		return err
	}
	return b.setOpen(b.open() + 1)
}

func (b loginFlowBuckets) delete(f *storage.LoginFlow) error {
	if err := b.polls.Delete([]byte(f.PollKey)); err != nil {
		return err
	}
	if err := b.expiry.Delete(loginFlowExpiryKey(f.Expires, f.LoginKey)); err != nil {
		return err
	}
	if err := b.flows.Delete([]byte(f.LoginKey)); err != nil {
		return err
	}
	return b.setOpen(max(b.open()-1, 0))
}

// open is the number of flows kept.
func (b loginFlowBuckets) open() int {
	v := b.count.Get(loginFlowCountKey)
	if len(v) != 8 {
		return 0
	}
	return int(binary.BigEndian.Uint64(v))
}

func (b loginFlowBuckets) setOpen(n int) error {
	return b.count.Put(loginFlowCountKey, binary.BigEndian.AppendUint64(nil, uint64(n)))
}

// sweep forgets up to n flows expired at now, oldest first.
func (b loginFlowBuckets) sweep(now time.Time, n int) error {
	var expired []storage.LoginFlow
	c := b.expiry.Cursor()
	for k, _ := c.First(); k != nil && len(expired) < n; k, _ = c.Next() {
		if len(k) < 8 || int64(binary.BigEndian.Uint64(k)) > now.UnixNano() {
			break
		}
		f, ok, err := b.get(string(k[8:]))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("login flow expiry without a flow: %w", errCorrupt)
		}
		expired = append(expired, f)
	}
	for i := range expired {
		if err := b.delete(&expired[i]); err != nil {
			return err
		}
	}
	return nil
}

// CreateLoginFlow keeps f (storage.LoginFlows).
func (s *Store) CreateLoginFlow(ctx context.Context, f storage.LoginFlow) error {
	return s.changeGrouped(ctx, "create login flow", storage.ValidLoginFlow(f), func(t *txn) error {
		b, err := openLoginFlowBuckets(t.tx)
		if err != nil {
			return err
		}
		if err := b.sweep(f.Created, storage.LoginFlowSweep); err != nil {
			return err
		}
		if b.flows.Get([]byte(f.LoginKey)) != nil || b.polls.Get([]byte(f.PollKey)) != nil {
			return fmt.Errorf("login flow key: %w", storage.ErrExists)
		}
		if b.open() >= storage.MaxLoginFlows {
			return storage.LoginFlowCapReached()
		}
		return b.add(&f)
	})
}

// LoginFlow returns the open flow of loginKey (storage.LoginFlows).
func (s *Store) LoginFlow(ctx context.Context, loginKey string, now time.Time) (storage.LoginFlow, error) {
	return inTxn(ctx, s.view, func(t *txn) (storage.LoginFlow, error) {
		_, f, err := loginFlowOf(t.tx, loginKey)
		if err == nil && f.Expired(now) {
			err = storage.LoginFlowNotFound()
		}
		return f, err
	})
}

// GrantLoginFlow grants the open flow of loginKey (storage.LoginFlows).
func (s *Store) GrantLoginFlow(ctx context.Context, loginKey, user string, sealed []byte, now time.Time) error {
	return s.changeGrouped(ctx, "grant login flow", storage.ValidLoginFlowGrant(user, sealed), func(t *txn) error {
		b, f, err := loginFlowOf(t.tx, loginKey)
		switch {
		case err != nil:
			return err
		case f.Expired(now):
			return storage.LoginFlowNotFound()
		case f.Granted():
			return storage.LoginFlowGranted()
		}
		f.User, f.Sealed = user, sealed
		return b.put(&f)
	})
}

// DeleteLoginFlow ends the flow of loginKey (storage.LoginFlows).
func (s *Store) DeleteLoginFlow(ctx context.Context, loginKey string) error {
	return s.changeGrouped(ctx, "delete login flow", nil, func(t *txn) error {
		b, f, err := loginFlowOf(t.tx, loginKey)
		if err != nil {
			return err
		}
		return b.delete(&f)
	})
}

// TakeLoginFlow takes the granted flow of pollKey (storage.LoginFlows):
// one write transaction reads and deletes it, so that one take gets it.
func (s *Store) TakeLoginFlow(ctx context.Context, pollKey string, now time.Time) (storage.LoginFlow, error) {
	if err := ctx.Err(); err != nil {
		return storage.LoginFlow{}, err
	}
	// A poll before the grant, the common case, costs no commit.
	if nothing, err := s.nothingToTake(pollKey, now); err != nil || nothing {
		if err == nil {
			err = storage.LoginFlowNotFound()
		}
		return storage.LoginFlow{}, err
	}
	var taken storage.LoginFlow
	err := s.updateGrouped(func(t *txn) error {
		taken = storage.LoginFlow{}
		b, ok := existingLoginFlowBuckets(t.tx)
		if !ok {
			return storage.LoginFlowNotFound()
		}
		loginKey := b.polls.Get([]byte(pollKey))
		if loginKey == nil {
			return storage.LoginFlowNotFound()
		}
		f, ok, err := b.get(string(loginKey))
		switch {
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf("login flow poll key without a flow: %w", errCorrupt)
		case f.Expired(now) || !f.Granted():
			return storage.LoginFlowNotFound()
		}
		if err := b.delete(&f); err != nil {
			return err
		}
		taken = f
		return nil
	})
	if err != nil {
		return storage.LoginFlow{}, fmt.Errorf("take login flow: %w", err)
	}
	return taken, nil
}

// nothingToTake reports whether there is no granted flow of pollKey open
// at now: most polls come before the grant.
func (s *Store) nothingToTake(pollKey string, now time.Time) (bool, error) {
	waiting := false
	err := s.view(func(t *txn) error {
		b, ok := existingLoginFlowBuckets(t.tx)
		if !ok {
			waiting = true
			return nil
		}
		loginKey := b.polls.Get([]byte(pollKey))
		if loginKey == nil {
			waiting = true
			return nil
		}
		f, ok, err := b.get(string(loginKey))
		waiting = err == nil && (!ok || f.Expired(now) || !f.Granted())
		return err
	})
	return waiting, err
}
