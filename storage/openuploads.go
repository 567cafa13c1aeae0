package storage

import "context"

// OpenUploads is what a store holds of unfinished uploads.
type OpenUploads struct {
	// Sessions is the resumable (TUS) upload sessions.
	Sessions int
	// Chunked counts the chunked uploads by the kind the caller's kindOf
	// gave their ids.
	Chunked map[string]int
}

// OpenUploadCounter is a store that counts its unfinished uploads, for
// metrics. Expired ones count until the sweep ends them.
type OpenUploadCounter interface {
	// CountOpenUploads counts the upload sessions and the chunked uploads,
	// the latter by kindOf(id): the store does not know which protocol
	// chose an id, its caller does. It reads one snapshot and holds no
	// lock or connection afterwards.
	CountOpenUploads(ctx context.Context, kindOf func(chunkedID string) string) (OpenUploads, error)
}
