// Package davhandler serves the ownCloud "spaces" WebDAV interface (RFC 4918
// plus the ownCloud properties) over a storage.Store, as a plain
// net/http.Handler.
//
// # How a request flows
//
// route → resolve → method handler → store:
//
//  1. Route (serve.go) parses the path once (route.go: which space or
//     virtual collection it names, and the Nextcloud, bulk and public-link
//     forms of nextcloud.go, bulk.go, publiclink.go) and binds it to the
//     request.
//  2. serve (serve.go) answers OPTIONS before anyone signs in, hands public
//     paths to the link (publiclink.go), refuses a request without a user,
//     then sends uploads, trash, meta and bulk paths to their branch and
//     every other path to the handler of its method.
//  3. The method handler resolves the path to a target (resolve.go: the
//     space, the node and what the caller may do there, through a share
//     in shares.go or a link in linkresolve.go), checks preconditions
//     (conditions.go) and locks (lockcheck.go), and calls the store.
//  4. A failure comes back as an error: fail (refusallog.go) answers it with
//     the XML error body (errors.go) and logs why.
//
// # File map
//
// The top, which alone names every branch and method:
//
//	serve.go          Route, ServeHTTP and the dispatch to the branches and methods
//
// The ground, which every feature uses:
//
//	handler.go        Config, Handler and New: the handler's settings and stores
//	route.go          DAV paths: parsing /dav/{files,spaces,…} into a davPath (refSegments, checkRef)
//	resolve.go        a davPath to a target: space, nodes, access
//	access.go         what a caller may do with a target (roles, share permissions)
//	shares.go         the Shares drive and what recipients reach through shares
//	linkresolve.go    the link a request acts through, and its paths' targets
//	allow.go          the methods each kind of path allows (Allow header, 405)
//	errors.go         davError, storage errors to statuses, the XML error body
//	refusallog.go     fail: answering an error, and the reasons refusals are logged with
//	depth.go          the Depth header
//	conditions.go     If-Match, If-None-Match, If-Unmodified-Since; changeConditions
//	                  checks locks, preconditions and tokens together
//	if.go             reading a request's If header (davxml parses it)
//	quota.go          a space's free quota
//	ocheaders.go      the ownCloud headers of a file (OC-Checksum, X-OC-Mtime, …)
//
// The XML layer: internal/davxml knows no store, request or Handler;
// beside it, the files that feed it:
//
//	internal/davxml   the pure XML of WebDAV, as go-webdav keeps its
//	                  internal package: escaping (davxml.Builder), tags
//	                  and names, the streaming 207 writer (Multistatus,
//	                  Href), the lock XML (ActiveLock, SupportedLock) and
//	                  the If header grammar (ParseIf)
//	xmlrequest.go     parsing request bodies: PROPFIND, PROPPATCH, LOCK, REPORT
//	multistatus.go    endMultistatus: the handler's end of a streamed 207
//	href.go           the href of a child, and escaping a path segment
//	lockxml.go        the locks a listing shows, read once; storage.Lock to davxml
//
// Properties:
//
//	props.go          live properties of nodes (propContext, liveProp, propSet)
//	shares_props.go   the Shares drive's root and mount points as properties
//	linkprops.go      the properties of a public link's items
//	trashprops.go     properties of trash items, versions and the meta resource
//
// Methods:
//
//	options.go        OPTIONS: DAV classes, TUS discovery, limits
//	get.go inline.go  GET and HEAD: content, ranges, inline or attachment
//	zip.go page.go    a folder as a zip; a folder's web page for browsers
//	preview.go        GET …?preview=1: thumbnails
//	put.go write.go   PUT, and the write steps PUT, TUS and chunks share
//	mkcol.go          MKCOL
//	delete.go         DELETE
//	copymove.go       COPY and MOVE
//	propfind.go       PROPFIND: a node and its children, a page at a time
//	proppatch.go      PROPPATCH: dead properties and oc:favorite
//	report.go         REPORT: name search and favorites below a folder
//	report_spaces.go  REPORT of /dav/spaces/ across every space
//	locks.go          LOCK and UNLOCK
//	lockcheck.go      the locks a change must submit, and the If header's state
//
// Branches by path:
//
//	publiclink.go     serving /dav/public-files/{token}: passwords, drops, uploads
//	linkpasswords.go  the cache of link passwords already checked
//	trashbin.go       the trash-bin: list, restore, purge
//	versions.go       the versions of a file: list, get, restore
//	meta.go           /dav/meta/{id}: a node's path and its versions
//	nextcloud.go      Nextcloud's paths for previews, trash and versions
//	tus.go tusheaders.go                 TUS resumable uploads
//	chunking.go chunklisting.go          chunking NG: /dav/uploads/{user}/{id}
//	chunkv1.go                           ownCloud v1 chunks
//	chunkupload.go chunkassembly.go      what NG and v1 chunks share: parts, assembly
//	bulk.go bulkclose.go                 Nextcloud's bulk upload (multipart)
//	massdelete.go      the mass-delete brake: bursts of one client's deletions
//	massdelete_api.go  /dav/spaces/mass-deletes/{space}: list, restore, confirm
//
// Shared steps live in the file of their job, not in the first feature that
// needed them: a helper two features use belongs to the ground or the XML
// layer, so that features point down at it and not at each other.
package davhandler
