package storage

// Backend is everything a whole store keeps: spaces, nodes and their
// content, dead properties, WebDAV locks, resumable and chunked uploads,
// the trash and versions of every space, the shares and links of their
// items, the users who signed in, the list of its spaces, a search by name, the budgets of password attempts, users' app passwords, the open Login Flow v2 sign-ins, the mass-delete events of its spaces, and the quota and retention the
// configuration gives. boltstore and pgstore
// implement it; caddymodule serves it and storetest pins it.
type Backend interface {
	Store
	LockStore
	UploadSessions
	ChunkedUploads
	Trash
	TrashBatchRestorer
	Versions
	Shares
	Directory
	Retainer
	SpaceLister
	Searcher
	PreviewCache
	AttemptBudgets
	AppPasswords
	LoginFlows
	MassDeletes
	// SetPreviewCacheSize sets the preview cache's cap in bytes: 0 the
	// store's default, negative none (and the cache emptied).
	SetPreviewCacheSize(bytes int64)
	// SetPersonalQuota sets the quota in bytes of every personal space
	// without one of its own; 0 means none.
	SetPersonalQuota(bytes int64)
	// SetMaxNodes sets the node cap of a space without a quota
	// (NodeCap); n <= 0 restores DefaultMaxNodes.
	SetMaxNodes(n int64)
}
