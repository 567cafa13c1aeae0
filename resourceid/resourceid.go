// Package resourceid forms and reads the ids ownCloud clients name spaces,
// files and folders by, as oCIS forms them: <storage>$<space>!<node> for a
// node, and <storage>$<space>, the space reference, for a space. Every
// front-end (WebDAV, OCS, Graph, app passwords) reads and writes them here,
// so that an id one hands out is one the others take back.
//
// The three parts never hold "$", "!" or "/": the stores' ids are UUIDs,
// and the configuration refuses a project space id with one of them.
package resourceid

import (
	"errors"
	"fmt"
	"strings"
)

// The separators: after the storage id, and before the node id.
const (
	storageSep = "$"
	nodeSep    = "!"
	// forbidden are what no part may hold: the separators, and the slash
	// that would end the id inside a path.
	forbidden = storageSep + nodeSep + "/"
)

// ErrMalformed is the answer of Parse to what cannot be a resource id.
// Each front-end turns it into its own refusal: WebDAV a 400, OCS and
// Graph the 404 of an id that names nothing.
var ErrMalformed = errors.New("malformed resource id")

// ID is a resource id taken apart.
type ID struct {
	// Storage is the id of the store; empty in a bare space id
	// (<space>[!<node>]), which /dav/spaces/ takes too.
	Storage string
	// Space is the id of the space; never empty in a parsed id.
	Space string
	// Node is the id of the node; empty when the id names a space.
	Node string
}

// New is the id of node nodeID of space spaceID in store storageID.
func New(storageID, spaceID, nodeID string) ID {
	return ID{Storage: storageID, Space: spaceID, Node: nodeID}
}

// Space is the id of space spaceID in store storageID: its reference.
func Space(storageID, spaceID string) ID {
	return ID{Storage: storageID, Space: spaceID}
}

// SpaceRef is the id of the space id names (itself when it names one).
func (id ID) SpaceRef() ID { return Space(id.Storage, id.Space) }

// At is the id of node nodeID of the space id names.
func (id ID) At(nodeID string) ID { return New(id.Storage, id.Space, nodeID) }

// Of reports whether id names a space or a node of store storageID; a
// bare space id names none.
func (id ID) Of(storageID string) bool { return id.Storage != "" && id.Storage == storageID }

// IsSpace reports whether id names a space rather than a node.
func (id ID) IsSpace() bool { return id.Node == "" }

// String formats id: [<storage>$]<space>[!<node>].
func (id ID) String() string {
	return string(id.Append(make([]byte, 0, len(id.Storage)+len(id.Space)+len(id.Node)+2), appendString))
}

// Append appends id to dst as String formats it, with each part passed
// through esc (the separators are ASCII that no escaping changes), so
// that an id is written into XML text without being built first.
func (id ID) Append(dst []byte, esc func(dst []byte, s string) []byte) []byte {
	if id.Storage != "" {
		dst = esc(dst, id.Storage)
		dst = append(dst, storageSep...)
	}
	dst = esc(dst, id.Space)
	if id.Node == "" {
		return dst
	}
	return AppendNode(dst, id.Node, esc)
}

// AppendNode appends, to a space reference already in dst, what makes it
// the id of node nodeID of that space: a listing writes its space's
// reference once and appends this for each node.
func AppendNode(dst []byte, nodeID string, esc func(dst []byte, s string) []byte) []byte {
	dst = append(dst, nodeSep...)
	return esc(dst, nodeID)
}

func appendString(dst []byte, s string) []byte { return append(dst, s...) }

// Parse reads s, [<storage>$]<space>[!<node>]: a part that is present is
// not empty and holds no "$", "!" or "/". Anything else is ErrMalformed,
// but for an empty node after "!", which names the space, as oCIS reads
// it: clients form a space's root that way.
func Parse(s string) (ID, error) {
	var id ID
	rest := s
	if storageID, after, ok := strings.Cut(s, storageSep); ok {
		id.Storage, rest = storageID, after
		if !validPart(id.Storage) {
			return ID{}, malformed(s)
		}
	}
	space, node, hasNode := strings.Cut(rest, nodeSep)
	id.Space = space
	if !validPart(id.Space) {
		return ID{}, malformed(s)
	}
	if hasNode && node != "" {
		id.Node = node
		if !validPart(id.Node) {
			return ID{}, malformed(s)
		}
	}
	return id, nil
}

// Separable reports whether p, an id of a store, a space or a node, can
// be a part of a resource id: it holds no "$", "!" or "/", which Parse
// would take for the end of the part. The configuration refuses a storage
// or space id that is not.
func Separable(p string) bool { return !strings.ContainsAny(p, forbidden) }

func validPart(p string) bool {
	return p != "" && Separable(p)
}

func malformed(s string) error {
	return fmt.Errorf("%q: %w", s, ErrMalformed)
}
