package storage

import "strconv"

// ValidCommit checks the name a commit creates, as ValidName does; a NodeID
// is only looked up.
func ValidCommit(c Commit, storable func(string) bool) error {
	if c.NodeID != "" {
		return nil
	}
	return ValidName(c.Name, storable)
}

// Target names the target of c in errors: the node it replaces, or else the
// name it creates.
func (c Commit) Target() string {
	if c.NodeID != "" {
		return "node " + c.NodeID
	}
	return strconv.Quote(c.Name)
}
