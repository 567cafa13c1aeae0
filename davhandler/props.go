package davhandler

import (
	"context"
	"encoding/xml"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"

	"github.com/davspaces/davspaces/storage"
)

// propValue is the content of a property element.
type propValue struct {
	text string
	raw  bool // text is XML, written as is
}

// liveProp computes a property from the node; ok=false when it does not
// apply to this node (it is then reported in the 404 propstat).
type liveProp func(pc *propContext, v *nodeView) (val propValue, ok bool)

func davName(local string) xml.Name { return xml.Name{Space: nsDAV, Local: local} }
func ocName(local string) xml.Name  { return xml.Name{Space: nsOC, Local: local} }

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
	davName("quota-used-bytes"):      folderOnly(propSize),
	davName("quota-available-bytes"): folderOnly(propQuotaAvailable),
	ocName("owner-id"):               propOwnerID,
	ocName("owner-display-name"):     propOwnerDisplayName,
	ocName("privatelink"):            propPrivateLink,
	ocName("share-types"):            absent,
	ocName("downloadURL"):            absent,
	davName("lockdiscovery"):         propLockDiscovery,
	davName("supportedlock"):         propSupportedLock,
	davName("creationdate"):          absent,
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
	role      storage.Role
	user      storage.User
	linkBase  string // scheme://host of the request, for private links
	// withDeadProps: the request needs dead properties or favourites, so
	// they are read with the nodes.
	withDeadProps bool
	rootSize      int64
	rootRead      bool
	// locking: the handler offers locks. locks holds the space's locks
	// when the request asks for d:lockdiscovery; nil otherwise.
	locking bool
	locks   *lockIndex
	found   []foundProp
}

type foundProp struct {
	name xml.Name
	val  propValue
}

// nodeView is a node with its dead properties loaded on first need.
type nodeView struct {
	node     storage.Node
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

// lookup finds one property of a node.
func (pc *propContext) lookup(v *nodeView, n xml.Name) (propValue, bool, error) {
	if live, ok := liveProps[n]; ok {
		val, ok := live(pc, v)
		return val, ok, v.propsErr
	}
	props, err := pc.deadProps(v)
	if err != nil {
		return propValue{}, false, err
	}
	for _, p := range props {
		if p.User == "" && p.Name.Space == n.Space && p.Name.Local == n.Local {
			return propValue{text: p.Value, raw: true}, true, nil
		}
	}
	return propValue{}, false, nil
}

func absent(*propContext, *nodeView) (propValue, bool) { return propValue{}, false }

func fileOnly(p liveProp) liveProp {
	return func(pc *propContext, v *nodeView) (propValue, bool) {
		if v.node.IsFolder() {
			return propValue{}, false
		}
		return p(pc, v)
	}
}

func folderOnly(p liveProp) liveProp {
	return func(pc *propContext, v *nodeView) (propValue, bool) {
		if !v.node.IsFolder() {
			return propValue{}, false
		}
		return p(pc, v)
	}
}

func text(s string) (propValue, bool) { return propValue{text: s}, true }

func propID(pc *propContext, v *nodeView) (propValue, bool) {
	return text(resourceID(pc.storageID, v.node))
}

func propSpaceID(pc *propContext, v *nodeView) (propValue, bool) {
	return text(spaceRef(pc.storageID, v.node.SpaceID))
}

func propFileParent(pc *propContext, v *nodeView) (propValue, bool) {
	if v.node.ParentID == "" {
		return propValue{}, false
	}
	return text(pc.storageID + "$" + v.node.SpaceID + "!" + v.node.ParentID)
}

func propName(pc *propContext, v *nodeView) (propValue, bool) {
	return text(displayName(pc.space, v.node))
}

// displayName is a node's name; a space root is called like its space.
func displayName(s storage.Space, n storage.Node) string {
	if n.ParentID == "" {
		return s.Name
	}
	return n.Name
}

func propETag(_ *propContext, v *nodeView) (propValue, bool) {
	return text(quoteETag(v.node.ETag))
}

func quoteETag(etag string) string { return `"` + etag + `"` }

func propPermissions(pc *propContext, v *nodeView) (propValue, bool) {
	return text(permissions(pc.role, v.node.IsFolder()))
}

// permissions are the oc:permissions letters of a role.
func permissions(r storage.Role, folder bool) string {
	switch {
	case r >= storage.RoleManager && folder:
		return "RDNVCKZP"
	case r >= storage.RoleManager:
		return "RDNVWZP"
	case r >= storage.RoleEditor && folder:
		return "DNVCK"
	case r >= storage.RoleEditor:
		return "DNVW"
	}
	return ""
}

func propResourceType(_ *propContext, v *nodeView) (propValue, bool) {
	if v.node.IsFolder() {
		return propValue{text: "<d:collection/>", raw: true}, true
	}
	return text("")
}

func propSize(_ *propContext, v *nodeView) (propValue, bool) {
	return text(itoa(v.node.Size))
}

func propContentType(_ *propContext, v *nodeView) (propValue, bool) {
	return text(contentType(v.node))
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

func propLastModified(_ *propContext, v *nodeView) (propValue, bool) {
	return text(v.node.ModTime.UTC().Format(http.TimeFormat))
}

func propChecksums(_ *propContext, v *nodeView) (propValue, bool) {
	sums := v.node.Checksums.String()
	if v.node.IsFolder() || sums == "" {
		return propValue{}, false
	}
	var b xmlBuilder
	b.WriteString("<oc:checksum>")
	b.text(sums)
	b.WriteString("</oc:checksum>")
	return propValue{text: b.String(), raw: true}, true
}

func propTags(*propContext, *nodeView) (propValue, bool) { return text("") }

func propFavorite(pc *propContext, v *nodeView) (propValue, bool) {
	props, err := pc.deadProps(v)
	if err != nil {
		return propValue{}, false
	}
	for _, p := range props {
		if p.User == pc.user.ID && p.Name == (storage.PropName{Space: nsOC, Local: "favorite"}) {
			return text("1")
		}
	}
	return text("0")
}

// quotaUnlimited is what ownCloud clients read as "no quota".
const quotaUnlimited = "-3"

func propQuotaAvailable(pc *propContext, _ *nodeView) (propValue, bool) {
	if pc.space.Quota < 0 {
		return text(quotaUnlimited)
	}
	if !pc.rootRead {
		root, err := pc.store.Node(pc.ctx, pc.space.ID, pc.space.ID)
		if err != nil {
			return propValue{}, false
		}
		pc.rootSize, pc.rootRead = root.Size, true
	}
	return text(itoa(max(pc.space.Quota-pc.rootSize, 0)))
}

func propOwnerID(pc *propContext, _ *nodeView) (propValue, bool) {
	if pc.space.Owner == "" {
		return propValue{}, false
	}
	return text(pc.space.Owner)
}

func propOwnerDisplayName(pc *propContext, _ *nodeView) (propValue, bool) {
	if pc.space.Owner == "" {
		return propValue{}, false
	}
	name := pc.space.OwnerDisplayName
	if name == "" {
		name = pc.space.Owner
	}
	return text(name)
}

func propLockDiscovery(pc *propContext, v *nodeView) (propValue, bool) {
	if pc.locks == nil {
		return propValue{}, false
	}
	return propValue{text: lockDiscoveryXML(v.locks, pc.locks.now), raw: true}, true
}

func propSupportedLock(pc *propContext, _ *nodeView) (propValue, bool) {
	if !pc.locking {
		return propValue{}, false
	}
	return propValue{text: supportedLockXML, raw: true}, true
}

func propPrivateLink(pc *propContext, v *nodeView) (propValue, bool) {
	u := url.URL{Path: "/f/" + resourceID(pc.storageID, v.node)}
	return text(pc.linkBase + u.EscapedPath())
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// writeNode writes the d:response of one node.
func (pc *propContext) writeNode(ms *multistatus, pf propfindRequest, v *nodeView, href string) error {
	ms.beginResponse(href)
	found := pc.found[:0]
	var err error
	switch pf.kind {
	case findProp:
		found, err = pc.collect(ms, v, pf.names, found)
	case findAllprop:
		found, err = pc.collectAll(ms, v, pf.names, found)
	case findPropname:
		found, err = pc.collectNames(v, found)
	}
	if err != nil {
		return err
	}
	if len(found) > 0 {
		ms.beginPropstat()
		for _, f := range found {
			switch {
			case pf.kind == findPropname:
				ms.emptyElement(f.name)
			case f.val.raw:
				ms.rawElement(f.name, f.val.text)
			default:
				ms.element(f.name, f.val.text)
			}
		}
		ms.endPropstat(http.StatusOK)
	}
	ms.endResponse()
	pc.found = found
	return nil
}

// collect looks up the requested names; missing ones go to the 404 propstat.
func (pc *propContext) collect(ms *multistatus, v *nodeView, names []xml.Name, found []foundProp) ([]foundProp, error) {
	for _, n := range names {
		val, ok, err := pc.lookup(v, n)
		if err != nil {
			return nil, err
		}
		if ok {
			found = append(found, foundProp{n, val})
		} else {
			ms.notFound(n)
		}
	}
	return found, nil
}

// collectAll gathers the allprop set: live properties that apply, all shared
// dead properties, and the names of a d:include.
func (pc *propContext) collectAll(ms *multistatus, v *nodeView, include []xml.Name, found []foundProp) ([]foundProp, error) {
	for _, n := range allpropNames {
		if val, ok := liveProps[n](pc, v); ok {
			found = append(found, foundProp{n, val})
		}
	}
	props, err := pc.deadProps(v)
	if err != nil {
		return nil, err
	}
	for _, p := range props {
		if p.User == "" {
			found = append(found, foundProp{xml.Name{Space: p.Name.Space, Local: p.Name.Local}, propValue{text: p.Value, raw: true}})
		}
	}
	var extra []xml.Name
	for _, n := range include {
		if !containsName(found, n) {
			extra = append(extra, n)
		}
	}
	return pc.collect(ms, v, extra, found)
}

// collectNames gathers the names of every property the node has.
func (pc *propContext) collectNames(v *nodeView, found []foundProp) ([]foundProp, error) {
	found, err := pc.collectAll(nil, v, nil, found)
	return found, err
}

func containsName(found []foundProp, n xml.Name) bool {
	for _, f := range found {
		if f.name == n {
			return true
		}
	}
	return false
}
