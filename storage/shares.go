package storage

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// ShareKind tells a public link from a share with a user or a group. The
// values are those of oc:share-types.
type ShareKind uint8

// The kinds of shares.
const (
	ShareWithUser  ShareKind = 0
	ShareWithGroup ShareKind = 1
	ShareLink      ShareKind = 3
)

// ShareRole is what a share or a link lets its recipient do with its item
// and, for a folder, everything below it. The wire names (libre-graph's
// unified role ids and link types, OCS permission bits) are the protocol
// layers'; the store keeps only these.
type ShareRole uint8

// The share roles, by what they allow.
const (
	// ShareViewer reads: lists, downloads (link type "view").
	ShareViewer ShareRole = iota + 1
	// ShareUploader reads and adds new files and folders, but changes
	// and deletes nothing (link type "upload"; folders only).
	ShareUploader
	// ShareEditor reads, adds, changes and deletes (link type "edit").
	ShareEditor
	// ShareFileDrop adds new files and nothing else: no listing, no
	// reading back (link type "createOnly"; folders only).
	ShareFileDrop
)

// Limits of what one user may make the server keep in shares.
const (
	// MaxSharesPerCreator is how many shares and links one user may have
	// created and not yet deleted.
	MaxSharesPerCreator = 10_000
	// MaxShareDisplayName is the longest display name of a link, in bytes.
	MaxShareDisplayName = 255
	// MaxSharePassword is the longest link password bcrypt takes, in bytes.
	MaxSharePassword = 72
	// MinSharePassword is the shortest link password accepted, in bytes.
	MinSharePassword = 8
)

// ErrTooManyShares: the user has MaxSharesPerCreator shares already.
var ErrTooManyShares = fmt.Errorf("%w: too many shares", ErrInsufficientStorage)

// Share gives someone access to one file or folder (its item) of a space:
// a user or a group (Grantee), or anybody who has a link's Token.
type Share struct {
	// ID names the share; a store assigns it (NewShareID) and never reuses it.
	ID   string
	Kind ShareKind
	// SpaceID and NodeID name the item. A share follows its item when it
	// moves within the space, and vanishes when the item leaves it.
	SpaceID string
	NodeID  string
	// Creator is the user id of who made it. A share never gives more than
	// its creator may do with the item now (MayShare).
	Creator string
	Role    ShareRole
	// Grantee is the user id (ShareWithUser) or group name
	// (ShareWithGroup) the item is shared with; empty for a link.
	Grantee string
	// Token is a link's secret, the last segment of its URLs
	// (NewLinkToken); empty for other shares.
	Token string
	// PasswordHash is the bcrypt hash of a link's password, nil when it
	// has none (HashLinkPassword, CheckLinkPassword).
	PasswordHash []byte
	// DisplayName is a link's name its creator gave it.
	DisplayName string
	// Expires is when the share stops giving access; zero for never.
	Expires time.Time
	// Created is when the share was made.
	Created time.Time
}

// Expired reports whether the share no longer gives access at now.
func (s Share) Expired(now time.Time) bool {
	return !s.Expires.IsZero() && !now.Before(s.Expires)
}

// Shares keeps the shares and links of a store's spaces. Shares live
// beside the tree: every Store deletes the shares of an item, and of
// everything below it, in the same transaction that takes it out of its
// space (Remove, the target Move and Copy replace, the purge of a space),
// so that restoring it from the trash revives no share. A share's item is
// found by NodeID; a share whose item is no longer a live node of its space
// answers ErrNotFound everywhere, as a deleted one.
type Shares interface {
	// CreateShare keeps a new share: s with its ID, its Created time and,
	// for a link, its Token filled in, as returned. CheckNewShare's
	// refusals; ErrNotFound when the item is not a live node of the space;
	// ErrTooManyShares when the creator has MaxSharesPerCreator already.
	// An identical share with a user or group (same item, kind, grantee)
	// is ErrExists: a user or group has one share of an item.
	CreateShare(ctx context.Context, s Share) (Share, error)
	// UpdateShare changes the Role, PasswordHash, DisplayName and Expires
	// of share id to those of update (CheckShareUpdate's refusals);
	// everything else stays. ErrNotFound when there is no such share.
	UpdateShare(ctx context.Context, id string, update Share) (Share, error)
	// DeleteShare deletes share id. ErrNotFound when there is none.
	DeleteShare(ctx context.Context, id string) error
	// Share returns share id. ErrNotFound when there is none.
	Share(ctx context.Context, id string) (Share, error)
	// LinkByToken returns the link of a token, expired or not (the caller
	// tells; it answers an expired link as a missing one). ErrNotFound when
	// there is none (ValidLinkToken's refusal for a malformed token).
	LinkByToken(ctx context.Context, token string) (Share, error)
	// ItemShares returns the shares of the item nodeID of space spaceID,
	// or, with nodeID empty, of every item of the space, in SortShares
	// order.
	ItemShares(ctx context.Context, spaceID, nodeID string) ([]Share, error)
	// SharesBy returns the shares user creator made, in SortShares order.
	SharesBy(ctx context.Context, creator string) ([]Share, error)
	// SharesWith returns the shares with user u and with each of u's
	// groups, in SortShares order; links are never among them.
	SharesWith(ctx context.Context, u User) ([]Share, error)
}

// NewShareID returns a fresh random share id.
func NewShareID() string {
	return randomToken(16)
}

// NewLinkToken returns a fresh link token: 32 random bytes, URL-safe, so
// that tokens cannot be guessed or enumerated.
func NewLinkToken() string {
	return randomToken(32)
}

func randomToken(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// ValidLinkToken checks a token from a request before a store looks it
// up: a malformed token is ErrNotFound, as an unknown one, so that a
// caller learns nothing from the difference.
func ValidLinkToken(token string) error {
	if token == "" || len(token) > 128 || strings.ContainsFunc(token, notTokenRune) {
		return LinkNotFound()
	}
	return nil
}

func notTokenRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
}

// LinkNotFound is the refusal of an unknown, malformed, expired or deleted
// link token; it never names the token.
func LinkNotFound() error { return fmt.Errorf("link: %w", ErrNotFound) }

// ShareNotFound is the refusal of an unknown share id.
func ShareNotFound(id string) error { return fmt.Errorf("share %.64q: %w", id, ErrNotFound) }

// HashLinkPassword checks a link password's length and returns its bcrypt
// hash, nil for the empty password (no password).
func HashLinkPassword(password string) ([]byte, error) {
	if password == "" {
		return nil, nil
	}
	if len(password) < MinSharePassword || len(password) > MaxSharePassword {
		return nil, fmt.Errorf("a link password has %d to %d bytes: %w", MinSharePassword, MaxSharePassword, ErrInvalid)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return nil, fmt.Errorf("hashing a link password: %w", err)
	}
	return hash, nil
}

// CheckLinkPassword reports whether password opens link s: any password
// (none sent included) opens a link without one.
func CheckLinkPassword(s Share, password string) bool {
	if s.PasswordHash == nil {
		return true
	}
	return bcrypt.CompareHashAndPassword(s.PasswordHash, []byte(password)) == nil
}

// CheckNewShare applies the rules of CreateShare that need no store: a
// known kind and role; a grantee for a share with a user or group and none
// for a link; folder-only roles on a folder; a display name and expiry
// that fit. item is the node being shared, now is the time of the request.
func CheckNewShare(s Share, item Node, now time.Time) error {
	switch s.Kind {
	case ShareWithUser, ShareWithGroup:
		if s.Grantee == "" || s.Token != "" || s.PasswordHash != nil {
			return fmt.Errorf("a share with a user or group has a grantee and no token or password: %w", ErrInvalid)
		}
		if s.Kind == ShareWithUser && s.Grantee == s.Creator {
			return fmt.Errorf("a user cannot share with themself: %w", ErrInvalid)
		}
		if s.Role == ShareFileDrop {
			return fmt.Errorf("a file drop is a link's role only: %w", ErrInvalid)
		}
	case ShareLink:
		if s.Grantee != "" {
			return fmt.Errorf("a link has no grantee: %w", ErrInvalid)
		}
	default:
		return fmt.Errorf("share kind %d: %w", s.Kind, ErrInvalid)
	}
	if s.Creator == "" {
		return fmt.Errorf("a share has a creator: %w", ErrInvalid)
	}
	return checkShareFields(s, item, now)
}

// CheckShareUpdate applies the rules of UpdateShare: what CheckNewShare
// asks of the fields an update may change.
func CheckShareUpdate(old, update Share, item Node, now time.Time) error {
	if old.Kind != ShareLink && (update.PasswordHash != nil || update.DisplayName != "") {
		return fmt.Errorf("only a link has a password or a name: %w", ErrInvalid)
	}
	if old.Kind != ShareLink && update.Role == ShareFileDrop {
		return fmt.Errorf("a file drop is a link's role only: %w", ErrInvalid)
	}
	return checkShareFields(update, item, now)
}

func checkShareFields(s Share, item Node, now time.Time) error {
	switch s.Role {
	case ShareViewer, ShareEditor:
	case ShareUploader, ShareFileDrop:
		if !item.IsFolder() {
			return fmt.Errorf("uploading into a file: %w", ErrInvalid)
		}
	default:
		return fmt.Errorf("share role %d: %w", s.Role, ErrInvalid)
	}
	if len(s.DisplayName) > MaxShareDisplayName || !utf8.ValidString(s.DisplayName) {
		return fmt.Errorf("a link's name has at most %d bytes of UTF-8: %w", MaxShareDisplayName, ErrInvalid)
	}
	if !s.Expires.IsZero() && !s.Expires.After(now) {
		return fmt.Errorf("the expiry %s has passed: %w", s.Expires.Format(time.RFC3339), ErrInvalid)
	}
	if item.ParentID == "" && item.ID == item.SpaceID {
		return fmt.Errorf("a space's root is shared by its membership, not by a share: %w", ErrInvalid)
	}
	return nil
}

// CheckShareCount fails with ErrTooManyShares when a creator with count
// shares may make no more.
func CheckShareCount(count int) error {
	return CheckShareCountWithin(count, MaxSharesPerCreator)
}

// ShareCap is the cap on one creator's shares a store enforces: its own
// cap when set above zero (tests lower it, so as to reach it quickly), else
// MaxSharesPerCreator.
func ShareCap(set int64) int {
	if set > 0 {
		return int(set)
	}
	return MaxSharesPerCreator
}

// CheckShareCountWithin is CheckShareCount with a store's own cap, limit,
// which tests lower so as to reach it quickly.
func CheckShareCountWithin(count, limit int) error {
	if count >= limit {
		return fmt.Errorf("%d shares, at most %d: %w", count, limit, ErrTooManyShares)
	}
	return nil
}

// MayShare reports whether a member with role r in a space may share its
// items and manage their shares: editors and managers (the owner of a
// personal space is its manager). A share gives access only while its
// creator may still share (the creator's role now, not when it was made),
// so that it never gives more than its creator may do, and vanishes when
// the creator loses access.
func MayShare(r Role) bool { return r >= RoleEditor }

// MayManageShare reports whether user u, whose role in the space of share
// s is r, may change or delete s and read a link's token: the share's
// creator while they may still share, or a manager of the space. Another
// member who may share (an editor) sees that s exists but not what would
// let them act as its creator (SeenBy). It is oCIS' rule: a link is
// updated or removed by its creator or by who holds the space's grant
// permissions, which only its manager role has.
func MayManageShare(s Share, u User, r Role) bool {
	return r >= RoleManager || s.Creator == u.ID && MayShare(r)
}

// SeenBy is s as user u, whose role in its space is r, is shown it: a
// link without its token, which gives the link's access to whoever holds
// it, unless u may manage the link (MayManageShare).
func (s Share) SeenBy(u User, r Role) Share {
	if s.Kind == ShareLink && !MayManageShare(s, u, r) {
		s.Token = ""
	}
	return s
}

// SharedWith reports whether share s is with user u: u itself or one of
// u's groups.
func SharedWith(s Share, u User) bool {
	switch s.Kind {
	case ShareWithUser:
		return s.Grantee == u.ID
	case ShareWithGroup:
		return slices.Contains(u.Groups, s.Grantee)
	}
	return false
}

// SortShares orders shares oldest first, then by id, as the Shares
// listings return them.
func SortShares(shares []Share) {
	slices.SortFunc(shares, func(a, b Share) int {
		return compareTimeThenID(a.Created, a.ID, b.Created, b.ID)
	})
}

// ShareLive reports whether share s gives access at now, its creator's
// role in the item's space being creatorRole now: not expired, and made by
// someone who may still share there (MayShare).
func ShareLive(s Share, creatorRole Role, now time.Time) bool {
	return !s.Expired(now) && MayShare(creatorRole)
}

// ShareReader is what judging a share needs of a store: the item's space
// and the creator's groups.
type ShareReader interface {
	Space(ctx context.Context, id string) (Space, error)
	DirectoryReader
}

// LiveShare reports whether s gives access now, judging its creator with
// the groups of their last sign-in (UserWithGroups) and the space as the
// store has it. A space that no longer exists makes every share of it
// dead, as does an error of the store (returned too).
func LiveShare(ctx context.Context, r ShareReader, s Share, now time.Time) (bool, error) {
	space, err := r.Space(ctx, s.SpaceID)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return false, nil
		}
		return false, fmt.Errorf("the space of share %s: %w", s.ID, err)
	}
	creator, err := UserWithGroups(ctx, r, s.Creator)
	if err != nil {
		return false, err
	}
	return ShareLive(s, space.RoleOf(creator), now), nil
}

// ShareJudge judges the shares of one request with LiveShare, reading each
// space and each creator's directory entry once however many shares name
// them. It is a ShareReader itself; it is not safe for concurrent use.
type ShareJudge struct {
	reader  ShareReader
	now     time.Time
	spaces  readOnce[Space]
	entries readOnce[DirectoryEntry]
}

// readOnce remembers, per id, what one read returned, errors included.
type readOnce[T any] map[string]readResult[T]

type readResult[T any] struct {
	v   T
	err error
}

// get returns what read returns for id, reading it the first time only.
func (m readOnce[T]) get(id string, read func(id string) (T, error)) (T, error) {
	r, ok := m[id]
	if !ok {
		r.v, r.err = read(id)
		m[id] = r
	}
	return r.v, r.err
}

// NewShareJudge returns a judge reading through r, judging at now.
func NewShareJudge(r ShareReader, now time.Time) *ShareJudge {
	return &ShareJudge{reader: r, now: now, spaces: readOnce[Space]{}, entries: readOnce[DirectoryEntry]{}}
}

// Now is the time the judge judges at.
func (j *ShareJudge) Now() time.Time { return j.now }

// Live reports whether s gives access now (LiveShare).
func (j *ShareJudge) Live(ctx context.Context, s Share) (bool, error) {
	return LiveShare(ctx, j, s, j.now)
}

// Space is the reader's, read once per judge.
func (j *ShareJudge) Space(ctx context.Context, id string) (Space, error) {
	return j.spaces.get(id, func(id string) (Space, error) { return j.reader.Space(ctx, id) })
}

// DirectoryUser is the reader's, read once per judge.
func (j *ShareJudge) DirectoryUser(ctx context.Context, id string) (DirectoryEntry, error) {
	return j.entries.get(id, func(id string) (DirectoryEntry, error) { return j.reader.DirectoryUser(ctx, id) })
}
