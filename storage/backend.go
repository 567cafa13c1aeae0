package storage

// Backend is everything a whole store keeps: spaces, nodes and their
// content, dead properties, WebDAV locks, resumable and chunked uploads,
// and the quota the configuration gives personal spaces. boltstore and
// pgstore implement it; caddymodule serves it and storetest pins it.
type Backend interface {
	Store
	LockStore
	UploadSessions
	ChunkedUploads
	// SetPersonalQuota sets the quota in bytes of every personal space
	// without one of its own; 0 means none.
	SetPersonalQuota(bytes int64)
}
