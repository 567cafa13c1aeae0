package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// Record format versions, the first byte of every encoded value. Node
// records of format 1 are keyed by node id and do not hold it; they exist
// only in databases of layout 1, which Open migrates (migrate.go). Those
// of format 2 hold the node's space, which a node's ancestry now says
// (layout.go): the field is skipped, and the record loses it when it is
// next written, in format 3.
const (
	nodeFormatByID      = 1
	nodeFormatWithSpace = 2
	nodeFormat          = 3
	spaceFormat         = 1
)

var errCorrupt = errors.New("corrupt record")

// rec is a node as stored: the public node plus where its content is, a
// content file (Blob) or, for small files, a value in the inline bucket
// (Inline). Every file has exactly one of the two.
type rec struct {
	storage.Node
	Blob   string // files with a content file only
	Inline uint64 // files kept inline only: the key of their content
}

// inlined reports whether r is a file whose content is kept inline.
func (r *rec) inlined() bool { return r.Inline != 0 }

// encodeNode encodes r, id included: the record is keyed by its place in
// the tree (layout.go), so a listing reads it without knowing the id. Its
// space is not: the root its parents lead to says it. Layout:
//
//	format, kind,
//	id, parent, name (uvarint length + bytes each),
//	size (varint), mtime seconds (varint), mtime nanoseconds (uvarint),
//	etag, content type, sha1, md5, adler32, blob (uvarint length + bytes each),
//	inline key (uvarint, only when the content is inline).
func encodeNode(r *rec) []byte {
	n := 2 + 4*binary.MaxVarintLen64 + 9*binary.MaxVarintLen16 +
		len(r.ID) + len(r.ParentID) + len(r.Name) + len(r.ETag) + len(r.ContentType) +
		len(r.Checksums.SHA1) + len(r.Checksums.MD5) + len(r.Checksums.Adler32) + len(r.Blob)
	b := make([]byte, 0, n)
	b = append(b, nodeFormat, byte(r.Kind))
	b = appendString(b, r.ID)
	b = appendString(b, r.ParentID)
	b = appendString(b, r.Name)
	b = binary.AppendVarint(b, r.Size)
	b = binary.AppendVarint(b, r.ModTime.Unix())
	b = binary.AppendUvarint(b, uint64(r.ModTime.Nanosecond()))
	b = appendString(b, r.ETag)
	b = appendString(b, r.ContentType)
	b = appendString(b, r.Checksums.SHA1)
	b = appendString(b, r.Checksums.MD5)
	b = appendString(b, r.Checksums.Adler32)
	b = appendString(b, r.Blob)
	if r.inlined() {
		b = binary.AppendUvarint(b, r.Inline)
	}
	return b
}

// decodeNode decodes a node record of format 2 or 3, without its space:
// the txn's lookups fill that in from the node's ancestry (layout.go). The
// value is converted to a string once and every string field is a
// substring of it, so decoding costs one allocation.
func decodeNode(v []byte) (rec, error) {
	d := decoder{b: v, s: string(v)}
	format := d.byte()
	if format != nodeFormat && format != nodeFormatWithSpace {
		return rec{}, fmt.Errorf("node record: unknown format: %w", errCorrupt)
	}
	var r rec
	r.Kind = storage.Kind(d.byte())
	r.ID = d.str()
	if format == nodeFormatWithSpace {
		d.str() // the space it was in when written; its ancestry says now
	}
	return decodeNodeFields(r, &d)
}

// decodeNodeByID decodes a record of format 1, which the id keyed, with
// the space it holds: a database of layout 1 is migrated whole, before
// any ancestry is read.
func decodeNodeByID(id string, v []byte) (rec, error) {
	d := decoder{b: v, s: string(v)}
	if d.byte() != nodeFormatByID {
		return rec{}, fmt.Errorf("node %s: unknown format: %w", id, errCorrupt)
	}
	var r rec
	r.Kind = storage.Kind(d.byte())
	r.ID = id
	r.SpaceID = d.str()
	return decodeNodeFields(r, &d)
}

// decodeNodeFields decodes the fields every format has, which follow the
// kind, the id and the space where a format holds them.
func decodeNodeFields(r rec, d *decoder) (rec, error) {
	r.ParentID = d.str()
	r.Name = d.str()
	r.Size = d.varint()
	sec := d.varint()
	nsec := d.uvarint()
	if nsec >= 1e9 {
		d.fail()
	}
	r.ModTime = time.Unix(sec, int64(nsec)).UTC()
	r.ETag = d.str()
	r.ContentType = d.str()
	r.Checksums = checksum.Sums{SHA1: d.str(), MD5: d.str(), Adler32: d.str()}
	r.Blob = d.str()
	if d.more() {
		r.Inline = d.uvarint()
	}
	if d.err != nil || r.ID == "" || !validContent(&r) {
		return rec{}, fmt.Errorf("node %s: %w", r.ID, errCorrupt)
	}
	return r, nil
}

// validContent reports whether a decoded record has a known kind and, if a
// file, exactly one place for its content.
func validContent(r *rec) bool {
	switch r.Kind {
	case storage.KindFolder:
		return true
	case storage.KindFile:
		return (len(r.Blob) >= 2) != r.inlined()
	}
	return false
}

// encodeSpace encodes s without its id (the id is the key). Layout: format,
// type, name, owner, owner display name (strings), quota (varint), member
// count (uvarint), then per member the user id (string) and role (byte).
func encodeSpace(s *storage.Space) []byte {
	b := make([]byte, 0, 64+len(s.Name)+len(s.Owner)+len(s.OwnerDisplayName)+len(s.Members)*40)
	b = append(b, spaceFormat)
	b = appendString(b, string(s.Type))
	b = appendString(b, s.Name)
	b = appendString(b, s.Owner)
	b = appendString(b, s.OwnerDisplayName)
	b = binary.AppendVarint(b, s.Quota)
	b = binary.AppendUvarint(b, uint64(len(s.Members)))
	for user, role := range s.Members {
		b = appendString(b, user)
		b = append(b, byte(role))
	}
	return b
}

func decodeSpace(id string, v []byte) (storage.Space, error) {
	d := decoder{b: v, s: string(v)}
	if d.byte() != spaceFormat {
		return storage.Space{}, fmt.Errorf("space %s: unknown format: %w", id, errCorrupt)
	}
	s := storage.Space{ID: id}
	s.Type = storage.SpaceType(d.str())
	s.Name = d.str()
	s.Owner = d.str()
	s.OwnerDisplayName = d.str()
	s.Quota = d.varint()
	n := d.uvarint()
	if n > uint64(len(v)) { // every member takes at least two bytes
		d.fail()
		n = 0
	}
	s.Members = make(map[string]storage.Role, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		user := d.str()
		s.Members[user] = storage.Role(d.byte())
	}
	if d.err != nil {
		return storage.Space{}, fmt.Errorf("space %s: %w", id, errCorrupt)
	}
	return s, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decoder reads fields from b; s is string(b), which string fields are cut
// from. After the first error every read returns a zero value.
type decoder struct {
	b   []byte
	s   string
	off int
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
}

// more reports whether bytes are left to read.
func (d *decoder) more() bool { return d.err == nil && d.off < len(d.b) }

func (d *decoder) byte() byte {
	if d.err != nil || d.off >= len(d.b) {
		d.fail()
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

func (d *decoder) uvarint() uint64 { return readVarint(d, binary.Uvarint) }

func (d *decoder) varint() int64 { return readVarint(d, binary.Varint) }

// readVarint reads one varint with read (binary.Uvarint or binary.Varint),
// so that both kinds fail the decoder the same way on a short record.
func readVarint[T uint64 | int64](d *decoder, read func([]byte) (T, int)) T {
	if d.err != nil {
		return 0
	}
	v, n := read(d.b[d.off:])
	if n <= 0 {
		d.fail()
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)-d.off) {
		d.fail()
		return ""
	}
	start := d.off
	d.off += int(n)
	return d.s[start:d.off]
}

// Formats of the trash and version records.
const (
	trashFormat   = 1
	versionFormat = 1
)

// trashRec is a trash item as stored under its space and key: the id of
// its node, whose record moved below the space's trash root (trash.go), and
// what the node's record no longer says, where it was deleted from.
type trashRec struct {
	Key      string
	NodeID   string
	ParentID string // the folder it was deleted from
	Name     string // its name there
	Location string
	Deleted  time.Time
	// hidden is set on an item read from bucketPurging (purging.go); it
	// is where the record is, not part of it.
	hidden bool
}

// encodeTrash encodes r without its key. Layout: format, node id, parent,
// name, location (strings), deleted Unix nanoseconds (varint).
func encodeTrash(r *trashRec) []byte {
	b := make([]byte, 0, 1+4*binary.MaxVarintLen16+binary.MaxVarintLen64+
		len(r.NodeID)+len(r.ParentID)+len(r.Name)+len(r.Location))
	b = append(b, trashFormat)
	b = appendString(b, r.NodeID)
	b = appendString(b, r.ParentID)
	b = appendString(b, r.Name)
	b = appendString(b, r.Location)
	return binary.AppendVarint(b, r.Deleted.UnixNano())
}

func decodeTrash(key string, v []byte) (trashRec, error) {
	d := decoder{b: v, s: string(v)}
	if d.byte() != trashFormat {
		return trashRec{}, fmt.Errorf("trash item %s: unknown format: %w", key, errCorrupt)
	}
	r := trashRec{Key: key, NodeID: d.str(), ParentID: d.str(), Name: d.str(), Location: d.str()}
	r.Deleted = time.Unix(0, d.varint()).UTC()
	if d.err != nil || r.NodeID == "" {
		return trashRec{}, fmt.Errorf("trash item %s: %w", key, errCorrupt)
	}
	return r, nil
}

// versionRec is a version as stored: the file's record as it was, with
// where its content is (kept, not deleted, when it was replaced).
type versionRec struct {
	Key      string
	File     rec
	Replaced time.Time
}

// encodeVersion encodes r without its key. Layout: format, replaced Unix
// nanoseconds (varint), then the file's record as encodeNode writes it.
func encodeVersion(r *versionRec) []byte {
	b := make([]byte, 0, 1+binary.MaxVarintLen64+128)
	b = append(b, versionFormat)
	b = binary.AppendVarint(b, r.Replaced.UnixNano())
	return append(b, encodeNode(&r.File)...)
}

func decodeVersion(key string, v []byte) (versionRec, error) {
	d := decoder{b: v, s: string(v)}
	if d.byte() != versionFormat {
		return versionRec{}, fmt.Errorf("version %s: unknown format: %w", key, errCorrupt)
	}
	replaced := d.varint()
	if d.err != nil {
		return versionRec{}, fmt.Errorf("version %s: %w", key, errCorrupt)
	}
	file, err := decodeNode(v[d.off:])
	if err != nil || file.Kind != storage.KindFile {
		return versionRec{}, fmt.Errorf("version %s: %w", key, errCorrupt)
	}
	return versionRec{Key: key, File: file, Replaced: time.Unix(0, replaced).UTC()}, nil
}

// shareFormat is the format of the share records.
const shareFormat = 1

// encodeShare encodes sh without its id. Layout: format, kind, role,
// space, node, creator, grantee, token, password hash, display name
// (strings), expires and created (appendTime, locks.go).
func encodeShare(sh *storage.Share) []byte {
	b := make([]byte, 0, 3+7*binary.MaxVarintLen16+2*(1+binary.MaxVarintLen64)+
		len(sh.SpaceID)+len(sh.NodeID)+len(sh.Creator)+len(sh.Grantee)+len(sh.Token)+len(sh.PasswordHash)+len(sh.DisplayName))
	b = append(b, shareFormat, byte(sh.Kind), byte(sh.Role))
	b = appendString(b, sh.SpaceID)
	b = appendString(b, sh.NodeID)
	b = appendString(b, sh.Creator)
	b = appendString(b, sh.Grantee)
	b = appendString(b, sh.Token)
	b = appendString(b, string(sh.PasswordHash))
	b = appendString(b, sh.DisplayName)
	b = appendTime(b, sh.Expires)
	return appendTime(b, sh.Created)
}

func decodeShare(id string, v []byte) (storage.Share, error) {
	d := decoder{b: v, s: string(v)}
	if d.byte() != shareFormat {
		return storage.Share{}, fmt.Errorf("share %s: unknown format: %w", id, errCorrupt)
	}
	sh := storage.Share{ID: id, Kind: storage.ShareKind(d.byte()), Role: storage.ShareRole(d.byte())}
	sh.SpaceID, sh.NodeID, sh.Creator, sh.Grantee, sh.Token = d.str(), d.str(), d.str(), d.str(), d.str()
	if hash := d.str(); hash != "" {
		sh.PasswordHash = []byte(hash)
	}
	sh.DisplayName = d.str()
	sh.Expires, sh.Created = d.time(), d.time()
	if d.err != nil || sh.SpaceID == "" || sh.NodeID == "" {
		return storage.Share{}, fmt.Errorf("share %s: %w", id, errCorrupt)
	}
	return sh, nil
}
