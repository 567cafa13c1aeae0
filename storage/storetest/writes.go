package storetest

// WriteCounter is implemented by a store that can tell how many records
// (keys or rows: puts, updates and deletes) its committed changes have
// written so far. The constant-work cases use it to show that a change
// writes the same number of records whatever the size of the subtree it
// moves.
type WriteCounter interface {
	RecordsWritten() int64
}
