package davhandler

import (
	"context"
	"encoding/xml"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"time"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/resourceid"
	"github.com/davspaces/davspaces/storage"
)

// liveProp appends the XML content of a property computed from the node to
// dst; ok=false when it does not apply to this node (it is then reported in
// the 404 propstat). Values are appended to one buffer that each response
// reuses, so a listing does not allocate per property.
type liveProp func(pc *propContext, v *nodeView, dst []byte) (out []byte, ok bool)

func davName(local string) xml.Name { return xml.Name{Space: nsDAV, Local: local} }
func ocName(local string) xml.Name  { return xml.Name{Space: nsOC, Local: local} }
func ncName(local string) xml.Name  { return xml.Name{Space: nsNextcloud, Local: local} }

var favoriteName = ocName("favorite")

// liveProps are the properties the server computes. Order matters only for
// allpropNames.
var liveProps = map[xml.Name]liveProp{
	ocName("id"):                     propID,
	ocName("fileid"):                 propID,
	ocName("spaceid"):                propSpaceID,
	ocName("file-parent"):            propFileParent,
	ocName("name"):                   propName,
	davName("displayname"):           propName,
	davName("getetag"):               propETag,
	ocName("permissions"):            propPermissions,
	davName("resourcetype"):          propResourceType,
	ocName("size"):                   propSize,
	davName("getcontentlength"):      fileOnly(propSize),
	davName("getcontenttype"):        fileOnly(propContentType),
	davName("getlastmodified"):       propLastModified,
	ocName("checksums"):              propChecksums,
	ocName("tags"):                   propTags,
	favoriteName:                     propFavorite,
	davName("quota-used-bytes"):      folderOnly(propQuotaUsed),
	davName("quota-available-bytes"): folderOnly(propQuotaAvailable),
	ocName("owner-id"):               propOwnerID,
	ocName("owner-display-name"):     propOwnerDisplayName,
	ocName("privatelink"):            propPrivateLink,
	ocName("share-types"):            propShareTypes,
	ocName("downloadURL"):            absent,
	davName("lockdiscovery"):         propLockDiscovery,
	davName("supportedlock"):         propSupportedLock,
	davName("creationdate"):          absent,
	// A public link's own (linkprops.go).
	ocName("public-link-permission"):  propPublicLinkPermission,
	ocName("public-link-item-type"):   propPublicLinkItemType,
	ocName("public-link-share-owner"): propPublicLinkShareOwner,
}

// allpropNames are the live properties an allprop request returns, in order.
var allpropNames = []xml.Name{
	ocName("id"), ocName("fileid"), ocName("spaceid"), ocName("file-parent"),
	ocName("name"), davName("displayname"), davName("getetag"), ocName("permissions"),
	davName("resourcetype"), ocName("size"), davName("getcontentlength"),
	davName("getcontenttype"), davName("getlastmodified"), ocName("checksums"),
	ocName("tags"), favoriteName,
	// RFC 4918 §9.1 has allprop return the live properties it defines.
	davName("lockdiscovery"), davName("supportedlock"),
}

// isProtected reports whether a PROPPATCH may not change the property.
func isProtected(n xml.Name) bool {
	_, live := liveProps[n]
	return live && n != favoriteName
}

// propContext holds what rendering properties needs beyond the node.
type propContext struct {
	ctx       context.Context
	store     storage.Store
	storageID string
	space     storage.Space
	// spaceRef is the id of space, escaped.
	spaceRef []byte
	access   access
	// share tells how a recipient reached the request's target; zero for
	// a member.
	share    shareReach
	user     storage.User
	linkBase string // scheme://host of the request, for private links
	// withDeadProps: the request needs dead properties or favourites, so
	// they are read with the nodes.
	withDeadProps bool
	usage         storage.Usage // of the space, for quota-available-bytes
	usageRead     bool
	// locking: the handler offers locks. locks holds the space's locks
	// when the request asks for d:lockdiscovery; nil otherwise.
	locking bool
	locks   *lockIndex
	// requested are the names of the request, resolved.
	requested []requestedProp
	// missing has room for the indexes in requested of the properties a
	// response lacks.
	missing []int
	// props is reused by every response of the request.
	props propSet
	// digestDeadline ends the request's wait for digests still being
	// computed (awaitDigests); zero until it first waits.
	digestDeadline time.Time
	// shareKindsByNode are the kinds of live shares of the space's items,
	// read once on first need (shareKinds).
	shareKindsByNode map[string][]storage.ShareKind
	shareKindsRead   bool
}

// requestedProp is a property a PROPFIND names, resolved once per request
// rather than once per resource: how it is computed, and its tags.
type requestedProp struct {
	name xml.Name
	live liveProp // nil for a dead property
	tags davxml.Tags
}

func resolveProps(names []xml.Name) []requestedProp {
	out := make([]requestedProp, len(names))
	for i, n := range names {
		tags, live := liveTags[n]
		if !live {
			tags = davxml.TagsOf(n)
		}
		out[i] = requestedProp{name: n, live: liveProps[n], tags: tags}
	}
	return out
}

// liveTags are the tags of the live properties, built once so that a
// request for a few properties of one resource does not build them.
var liveTags = func() map[xml.Name]davxml.Tags {
	tags := make(map[xml.Name]davxml.Tags, len(liveProps))
	for n := range liveProps {
		tags[n] = davxml.TagsOf(n)
	}
	return tags
}()

// propSet holds the properties found for one response: their names, and
// their XML content one after the other in one buffer.
type propSet struct {
	found  []foundProp
	values []byte
}

// foundProp is a property and where its content is in propSet.values.
type foundProp struct {
	name xml.Name
	// tags are the element's tags when known beforehand; written from
	// name otherwise.
	tags       davxml.Tags
	start, end int
}

func (ps *propSet) reset() {
	ps.found = ps.found[:0]
	ps.values = ps.values[:0]
}

// keep records n with the content appended to ps.values since start, when
// ok; otherwise it drops what was appended. It returns ok.
func (ps *propSet) keep(n xml.Name, start int, out []byte, ok bool) bool {
	return ps.keepTagged(n, davxml.Tags{}, start, out, ok)
}

// keepTagged is keep for a property whose tags are known.
func (ps *propSet) keepTagged(n xml.Name, tags davxml.Tags, start int, out []byte, ok bool) bool {
	if !ok {
		ps.values = out[:start]
		return false
	}
	ps.values = out
	ps.found = append(ps.found, foundProp{name: n, tags: tags, start: start, end: len(out)})
	return true
}

// write writes the 200 propstat of the properties found, if any, with
// their names alone when namesOnly.
func (ps *propSet) write(ms *davxml.Multistatus, namesOnly bool) {
	if len(ps.found) == 0 {
		return
	}
	ms.BeginPropstat()
	for _, f := range ps.found {
		if namesOnly {
			ms.EmptyElement(f.name)
			continue
		}
		ms.ElementBytes(f.name, f.tags, ps.values[f.start:f.end])
	}
	ms.EndPropstat(http.StatusOK)
}

// nodeView is a node with its dead properties loaded on first need. The
// node is not copied: a listing's views point into the page the store
// returned.
type nodeView struct {
	node     *storage.Node
	props    []storage.Property
	propsErr error
	loaded   bool
	// locks are the live locks covering the node, set when the request
	// asks for d:lockdiscovery.
	locks []storage.Lock
}

func (pc *propContext) deadProps(v *nodeView) ([]storage.Property, error) {
	if !v.loaded {
		v.props, v.propsErr = pc.store.Props(pc.ctx, v.node.SpaceID, v.node.ID, pc.user.ID)
		v.loaded = true
	}
	return v.props, v.propsErr
}

// lookup appends the content of one property of a node to dst.
func (pc *propContext) lookup(v *nodeView, rp *requestedProp, dst []byte) ([]byte, bool, error) {
	if rp.live != nil {
		out, ok := rp.live(pc, v, dst)
		return out, ok, v.propsErr
	}
	n := rp.name
	props, err := pc.deadProps(v)
	if err != nil {
		return dst, false, err
	}
	for _, p := range props {
		if p.User == "" && p.Name.Space == n.Space && p.Name.Local == n.Local {
			return davxml.AppendMarkup(dst, p.Value), true, nil
		}
	}
	return dst, false, nil
}

func absent(_ *propContext, _ *nodeView, dst []byte) ([]byte, bool) { return dst, false }

func fileOnly(p liveProp) liveProp {
	return func(pc *propContext, v *nodeView, dst []byte) ([]byte, bool) {
		if v.node.IsFolder() {
			return dst, false
		}
		return p(pc, v, dst)
	}
}

func folderOnly(p liveProp) liveProp {
	return func(pc *propContext, v *nodeView, dst []byte) ([]byte, bool) {
		if !v.node.IsFolder() {
			return dst, false
		}
		return p(pc, v, dst)
	}
}

// text appends s as the character data of a property.
func text(dst []byte, s string) ([]byte, bool) { return davxml.AppendText(dst, s), true }

func propID(pc *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	return pc.appendNodeRef(dst, v.node.SpaceID, v.node.ID), true
}

func propSpaceID(pc *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	return pc.appendNodeRef(dst, v.node.SpaceID, ""), true
}

func propFileParent(pc *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	if v.node.ParentID == "" || v.node.ID == pc.share.root {
		// A recipient sees nothing above the shared item.
		return dst, false
	}
	if link := linkOf(pc.ctx); link != nil && v.node.ID == link.NodeID {
		// Nor does a link's visitor; the parent of a top-level item is
		// the space's root, whose id is the space's.
		return dst, false
	}
	return pc.appendNodeRef(dst, v.node.SpaceID, v.node.ParentID), true
}

// appendNodeRef appends, as XML text, the resource id of a node
// (<storage>$<space>!<node>; see resourceID), or of a space when nodeID is
// empty, without building the id first. The request's
// space, which every node of a listing is in, is escaped once.
func (pc *propContext) appendNodeRef(dst []byte, spaceID, nodeID string) []byte {
	if spaceID == pc.space.ID && pc.spaceRef != nil {
		dst = append(dst, pc.spaceRef...)
	} else {
		dst = appendSpaceRef(dst, pc.storageID, spaceID)
	}
	if nodeID == "" {
		return dst
	}
	return resourceid.AppendNode(dst, nodeID, davxml.AppendText)
}

// appendSpaceRef appends the id of a space as XML text.
func appendSpaceRef(dst []byte, storageID, spaceID string) []byte {
	return resourceid.Space(storageID, spaceID).Append(dst, davxml.AppendText)
}

func propName(pc *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	return text(dst, displayName(pc.space, *v.node))
}

// displayName is a node's name; a space root is called like its space.
func displayName(s storage.Space, n storage.Node) string {
	if n.ParentID == "" {
		return s.Name
	}
	return n.Name
}

func propETag(_ *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	dst = append(dst, '"')
	dst = davxml.AppendText(dst, v.node.ETag)
	return append(dst, '"'), true
}

func quoteETag(etag string) string { return `"` + etag + `"` }

func propPermissions(pc *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	return appendPermissions(dst, pc.access, v.node.IsFolder(), pc.isMountPoint(v)), true
}

func propResourceType(_ *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	if v.node.IsFolder() {
		return append(dst, "<d:collection/>"...), true
	}
	return dst, true
}

func propSize(_ *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	return strconv.AppendInt(dst, v.node.Size, 10), true
}

func propContentType(_ *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	return text(dst, contentType(*v.node))
}

// contentType is the stored type of a file, or one guessed from its name.
func contentType(n storage.Node) string {
	if n.ContentType != "" {
		return n.ContentType
	}
	if t := mime.TypeByExtension(path.Ext(n.Name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

func propLastModified(_ *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	// The date format has nothing to escape.
	return appendHTTPDate(dst, v.node.ModTime), true
}

// appendHTTPDate appends t as http.TimeFormat does, field by field: a
// listing writes a date per resource, and time.Time.AppendFormat, which
// reads its layout each time, showed in a large listing's profile.
func appendHTTPDate(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 1000 || year > 9999 {
		// Years the layout does not pad to four digits.
		return t.AppendFormat(dst, http.TimeFormat)
	}
	hour, minute, second := t.Clock()
	dst = append(dst, t.Weekday().String()[:3]...)
	dst = append(dst, ", "...)
	dst = appendTwoDigits(dst, day)
	dst = append(dst, ' ')
	dst = append(dst, month.String()[:3]...)
	dst = append(dst, ' ')
	dst = appendTwoDigits(dst, year/100)
	dst = appendTwoDigits(dst, year%100)
	dst = append(dst, ' ')
	dst = appendTwoDigits(dst, hour)
	dst = append(dst, ':')
	dst = appendTwoDigits(dst, minute)
	dst = append(dst, ':')
	dst = appendTwoDigits(dst, second)
	return append(dst, " GMT"...)
}

// appendTwoDigits appends n, from 0 to 99, as two digits.
func appendTwoDigits(dst []byte, n int) []byte {
	return append(dst, byte('0'+n/10), byte('0'+n%10))
}

func propChecksums(pc *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	if v.node.IsFolder() {
		return dst, false
	}
	if pc != nil {
		pc.awaitDigests(v.node)
	}
	if v.node.Checksums.IsZero() {
		return dst, false
	}
	// As checksum.Sums.String writes them, without building the string:
	// the digests known so far, all three once a store has computed those
	// it left for after the commit (storage.LaterDigests).
	dst = append(dst, "<oc:checksum>"...)
	sep := false
	for _, d := range [...]struct {
		label  string
		digest string
	}{{"SHA1:", v.node.Checksums.SHA1}, {"MD5:", v.node.Checksums.MD5}, {"ADLER32:", v.node.Checksums.Adler32}} {
		if d.digest == "" {
			continue
		}
		if sep {
			dst = append(dst, ' ')
		}
		dst = append(dst, d.label...)
		dst = davxml.AppendText(dst, d.digest)
		sep = true
	}
	return append(dst, "</oc:checksum>"...), true
}

// maxDigestWait bounds how long one request waits, in all, for the
// digests a store computes after a commit (storage.LaterDigests): a
// client listing a file just uploaded gets all three, the time it takes
// to read the file once more; one listing a file too big for that gets
// those known so far, and the others on its next listing.
const maxDigestWait = 5 * time.Second

// awaitDigests completes n's digests with those its store is still
// computing, within what is left of the request's maxDigestWait.
func (pc *propContext) awaitDigests(n *storage.Node) {
	if n.Checksums.Complete() {
		return
	}
	if pc.digestDeadline.IsZero() {
		pc.digestDeadline = time.Now().Add(maxDigestWait)
	}
	ctx, cancel := context.WithDeadline(pc.ctx, pc.digestDeadline)
	defer cancel()
	storage.AwaitDigests(ctx, pc.store, n)
}

func propTags(_ *propContext, _ *nodeView, dst []byte) ([]byte, bool) { return dst, true }

func propFavorite(pc *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	props, err := pc.deadProps(v)
	if err != nil {
		return dst, false
	}
	for _, p := range props {
		if p.User == pc.user.ID && p.Name == (storage.PropName{Space: nsOC, Local: "favorite"}) {
			return append(dst, '1'), true
		}
	}
	return append(dst, '0'), true
}

// quotaUnlimited is what ownCloud clients read as "no quota".
const quotaUnlimited = "-3"

// propQuotaAvailable is the room an upload has: the trash and versions
// count as room, since the store gives them up for an upload that needs
// it, and a client that checks this before it uploads (the desktop
// client does) must not refuse what the server takes.
func propQuotaAvailable(pc *propContext, _ *nodeView, dst []byte) ([]byte, bool) {
	if pc.space.Quota < 0 {
		return append(dst, quotaUnlimited...), true
	}
	u, ok := pc.spaceUsage()
	if !ok {
		return dst, false
	}
	free, _ := u.Room(pc.space.Quota)
	return strconv.AppendInt(dst, free, 10), true
}

// propQuotaUsed is a folder's size, and for the space root what the space
// holds against its quota (files, dead properties, trash and versions),
// from the read that quota-available-bytes uses: used, reserved and
// available add up to the quota plus the trash and versions, which are
// both used and available to uploads.
func propQuotaUsed(pc *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	if v.node.ParentID != "" {
		return propSize(pc, v, dst)
	}
	u, ok := pc.spaceUsage()
	if !ok {
		return dst, false
	}
	return strconv.AppendInt(dst, u.Used(), 10), true
}

// spaceUsage reads the usage of the request's space once per request.
func (pc *propContext) spaceUsage() (storage.Usage, bool) {
	if !pc.usageRead {
		u, err := pc.store.Usage(pc.ctx, pc.space.ID)
		if err != nil {
			return storage.Usage{}, false
		}
		pc.usage, pc.usageRead = u, true
	}
	return pc.usage, true
}

func propOwnerID(pc *propContext, _ *nodeView, dst []byte) ([]byte, bool) {
	if pc.space.Owner == "" {
		return dst, false
	}
	return text(dst, pc.space.Owner)
}

func propOwnerDisplayName(pc *propContext, _ *nodeView, dst []byte) ([]byte, bool) {
	if pc.space.Owner == "" {
		return dst, false
	}
	name := pc.space.OwnerDisplayName
	if name == "" {
		name = pc.space.Owner
	}
	return text(dst, name)
}

func propLockDiscovery(pc *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	if pc.locks == nil {
		return dst, false
	}
	return appendLockDiscovery(dst, v.locks, pc.locks.now), true
}

func propSupportedLock(pc *propContext, _ *nodeView, dst []byte) ([]byte, bool) {
	if !pc.locking {
		return dst, false
	}
	return append(dst, davxml.SupportedLock...), true
}

func propPrivateLink(pc *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	if linkOf(pc.ctx) != nil {
		// A private link opens for members only, and names the space.
		return dst, false
	}
	u := url.URL{Path: "/f/" + resourceID(pc.storageID, *v.node)}
	return text(dst, pc.linkBase+u.EscapedPath())
}

// writeNode writes the d:response of one node.
func (pc *propContext) writeNode(ms *davxml.Multistatus, pf propfindRequest, v *nodeView, href davxml.Href) error {
	if pf.kind == findProp {
		return pc.writeRequested(ms, v, href)
	}
	ms.BeginResponseAt(href)
	pc.props.reset()
	var err error
	switch pf.kind {
	case findAllprop:
		err = pc.collectAll(ms, v, pc.requested)
	case findPropname:
		err = pc.collectAll(nil, v, nil)
	}
	if err != nil {
		return err
	}
	pc.props.write(ms, pf.kind == findPropname)
	ms.EndResponse()
	return nil
}

// writeRequested writes the d:response of a node for the requested
// properties: the 200 propstat of those it has, each appended straight into
// the response's buffer, then the 404 propstat of the others. The propstat
// opens with the first property found: one that is not found is cut off the
// buffer again. The response is built in a local slice and the missing
// properties kept as indexes, so that storing them costs the garbage
// collector nothing (write barriers on the heap's pointers showed in a
// listing's profile while it ran).
func (pc *propContext) writeRequested(ms *davxml.Multistatus, v *nodeView, href davxml.Href) error {
	buf := davxml.AppendResponseStart(ms.Buf(), href)
	missing := pc.missing[:0]
	opened := false
	for i := range pc.requested {
		rp := &pc.requested[i]
		start := len(buf)
		if !opened {
			buf = append(buf, davxml.PropstatOpen...)
		}
		buf = append(buf, rp.tags.Open...)
		out, ok, err := pc.lookup(v, rp, buf)
		if err != nil {
			ms.SetBuf(out[:start])
			return err
		}
		if !ok {
			buf = out[:start]
			missing = append(missing, i)
			continue
		}
		buf = append(out, rp.tags.Close...)
		opened = true
	}
	if opened {
		buf = append(buf, davxml.PropstatOK...)
	}
	if len(missing) > 0 {
		buf = append(buf, davxml.PropstatOpen...)
		for _, i := range missing {
			buf = append(buf, pc.requested[i].tags.Empty...)
		}
		buf = append(buf, davxml.PropstatNotFound...)
	}
	if !opened && len(missing) == 0 {
		buf = append(buf, davxml.EmptyPropstat...)
	}
	ms.SetBuf(append(buf, "</d:response>"...))
	ms.FlushIfFull()
	return nil
}

func (pc *propContext) collectOne(ms *davxml.Multistatus, v *nodeView, rp *requestedProp) error {
	ps := &pc.props
	start := len(ps.values)
	out, ok, err := pc.lookup(v, rp, ps.values)
	if err != nil {
		return err
	}
	if !ps.keepTagged(rp.name, rp.tags, start, out, ok) {
		ms.NotFound(rp.name)
	}
	return nil
}

// collectAll gathers the allprop set: live properties that apply, all shared
// dead properties, and the names of a d:include.
func (pc *propContext) collectAll(ms *davxml.Multistatus, v *nodeView, include []requestedProp) error {
	ps := &pc.props
	for _, n := range allpropNames {
		start := len(ps.values)
		out, ok := liveProps[n](pc, v, ps.values)
		ps.keep(n, start, out, ok)
	}
	props, err := pc.deadProps(v)
	if err != nil {
		return err
	}
	for _, p := range props {
		if p.User == "" {
			start := len(ps.values)
			ps.keep(xml.Name{Space: p.Name.Space, Local: p.Name.Local}, start, davxml.AppendMarkup(ps.values, p.Value), true)
		}
	}
	shown := len(ps.found)
	for i := range include {
		if slices.ContainsFunc(ps.found[:shown], func(f foundProp) bool { return f.name == include[i].name }) {
			continue
		}
		if err := pc.collectOne(ms, v, &include[i]); err != nil {
			return err
		}
	}
	return nil
}
