package davhandler

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/storage"
)

// The reports REPORT answers, as ownCloud Web and the desktop and mobile
// clients send them (oCIS's webdav service, ownCloud 10's files app).
const (
	reportSearchFiles = "search-files" // oc:search with oc:pattern, oc:limit, oc:offset
	reportFilterFiles = "filter-files" // oc:filter-rules with oc:favorite
)

// reportRequest is a parsed REPORT body.
type reportRequest struct {
	kind string // reportSearchFiles or reportFilterFiles
	// props is what each result answers: the d:prop names, or allprop
	// without a d:prop.
	props   propfindRequest
	pattern string
	// limit is the page size asked for, capped at storage.MaxSearchResults;
	// 0 is the cap.
	limit, offset int
	// favorites: filter-files asks for the user's favourites; tags: it
	// asks for system tags, which this server has none of.
	favorites, tags bool
}

// handleReport answers the search reports on a space or folder with a
// multistatus of the matches below it, each with the properties asked for,
// and in Content-Range ("rows first-last/total") how many there are in
// all. A caller who may not read the target learns nothing of it (404, as
// for PROPFIND).
func (h *Handler) handleReport(w http.ResponseWriter, r *http.Request, req *request) error {
	rep, err := h.readReport(w, r)
	if err != nil {
		return err
	}
	t, err := h.resolveExisting(r.Context(), req.user, req.path)
	if err != nil {
		return err
	}
	if !t.isSharesRoot() && !t.access.mayRead() && !t.isBase {
		return errNotFound
	}
	found, err := h.searchTarget(r, req, t, rep)
	if err != nil {
		return err
	}
	pc := h.newPropContext(r, req, t, rep.props)
	if len(found.Nodes) > 0 {
		first := rep.offset
		w.Header().Set("Content-Range", fmt.Sprintf("rows %d-%d/%d", first, first+len(found.Nodes)-1, found.Total))
	}
	ms := davxml.StartMultistatus(w, davxml.ListingBuffer, &h.responseBuffers)
	err = h.writeResults(pc, ms, rep.props, t, found.Nodes)
	if err == nil {
		err = ms.Close()
	}
	if err != nil && r.Context().Err() == nil {
		// The 207 is on its way: all that is left is to log and cut the
		// document short, which clients detect as malformed.
		h.logger.Error("streaming report", zap.String("uri", r.RequestURI), zap.Error(err))
	}
	return nil
}

// searchTarget runs the report's search below the target. Nothing is
// found below a file, in the Shares drive's root (which is no folder of a
// space), where the caller may not list (a file drop), by system tags, or
// in a store without a search.
func (h *Handler) searchTarget(r *http.Request, req *request, t *target, rep reportRequest) (storage.Found, error) {
	searcher, ok := h.store.(storage.Searcher)
	if !ok || t.isSharesRoot() || !t.node.IsFolder() || !t.access.mayList() || rep.tags {
		return storage.Found{}, nil
	}
	scope := storage.SearchScope{SpaceID: t.space.ID, Under: t.node.ID, Limit: rep.limit, Offset: rep.offset}
	if rep.kind == reportFilterFiles {
		return searcher.SearchFavorites(r.Context(), scope, req.user.ID)
	}
	return searcher.SearchNames(r.Context(), scope, rep.pattern)
}

// writeResults writes the response of each node found, its href the
// target's followed by the node's path below it.
func (h *Handler) writeResults(pc *propContext, ms *davxml.Multistatus, pf propfindRequest, t *target, nodes []storage.Node) error {
	paths := h.newFolderPaths(t)
	for i := range nodes {
		if err := paths.writeResult(pc, ms, pf, &nodes[i]); err != nil {
			return err
		}
	}
	return nil
}

// writeResult writes the response of n, found below the folder of fp.
func (fp *folderPaths) writeResult(pc *propContext, ms *davxml.Multistatus, pf propfindRequest, n *storage.Node) error {
	folder, err := fp.of(pc.ctx, n.SpaceID, n.ParentID)
	if errors.Is(err, storage.ErrNotFound) {
		// Deleted since it was found.
		return nil
	}
	if err != nil {
		return err
	}
	href := davxml.Href{Base: fp.base + folder, Segment: escapeSegment(n.Name), Slash: n.IsFolder()}
	return pc.writeNode(ms, pf, &nodeView{node: n}, href)
}

func (h *Handler) newFolderPaths(t *target) *folderPaths {
	return &folderPaths{
		store: h.store, top: t.node.ID, known: map[string]string{t.node.ID: ""},
		base: escapePath(strings.TrimSuffix(t.hrefPath, "/")),
	}
}

// folderPaths finds the escaped paths of folders below the top one
// ("/a/b"; "" for top itself), each folder looked up once however many
// results it holds.
type folderPaths struct {
	store storage.NodeReader
	top   string
	known map[string]string
	// base is the escaped href of the top folder.
	base string
}

func (fp *folderPaths) of(ctx context.Context, spaceID, id string) (string, error) {
	var up []storage.Node // the folders not known yet, from id upwards
	for {
		if p, ok := fp.known[id]; ok {
			for i := len(up) - 1; i >= 0; i-- {
				p += "/" + escapeSegment(up[i].Name)
				fp.known[up[i].ID] = p
			}
			return p, nil
		}
		if len(up) == storage.MaxNodeDepth {
			return "", fmt.Errorf("the path of folder %s: deeper than %d folders", id, storage.MaxNodeDepth)
		}
		n, err := fp.store.Node(ctx, spaceID, id)
		if err != nil {
			return "", fmt.Errorf("the path of folder %s: %w", id, err)
		}
		if n.ParentID == "" {
			return "", fmt.Errorf("folder %s is not below %s: %w", id, fp.top, storage.ErrNotFound)
		}
		up = append(up, n)
		id = n.ParentID
	}
}

// parseReport parses a REPORT body: oc:search-files or oc:filter-files.
func parseReport(body []byte) (reportRequest, error) {
	if body == nil {
		return reportRequest{}, badXML("REPORT needs a body: oc:search-files or oc:filter-files")
	}
	dec, root, err := openReport(body)
	if err != nil {
		return reportRequest{}, err
	}
	rep := reportRequest{kind: root.Name.Local, props: propfindRequest{kind: findAllprop}}
	var searched bool
	err = eachChild(dec, root, func(el xml.StartElement) error {
		switch {
		case el.Name == (xml.Name{Space: nsDAV, Local: "prop"}):
			rep.props.kind = findProp
			return collectNames(dec, el, &rep.props.names)
		case el.Name == (xml.Name{Space: nsOC, Local: "search"}) && rep.kind == reportSearchFiles:
			searched = true
			return parseSearch(dec, el, &rep)
		case el.Name == (xml.Name{Space: nsOC, Local: "filter-rules"}) && rep.kind == reportFilterFiles:
			return parseFilterRules(dec, el, &rep)
		}
		return dec.Skip()
	})
	if err != nil {
		return reportRequest{}, err
	}
	switch {
	case rep.kind == reportSearchFiles && !searched:
		return reportRequest{}, badXML("search-files needs an oc:search")
	case rep.kind == reportSearchFiles && strings.TrimSpace(rep.pattern) == "":
		return reportRequest{}, badXML("oc:pattern is empty")
	case rep.kind == reportFilterFiles && !rep.favorites && !rep.tags:
		return reportRequest{}, badXML("filter-files needs a rule: oc:favorite or oc:systemtag")
	}
	return rep, nil
}

// openReport checks a REPORT body and reads up to its root element, which
// must be one of the reports answered.
func openReport(body []byte) (*xml.Decoder, xml.StartElement, error) {
	body = []byte(strings.TrimPrefix(string(body), byteOrderMark))
	if err := checkDocument(body); err != nil {
		return nil, xml.StartElement{}, err
	}
	dec := xml.NewDecoder(strings.NewReader(string(body)))
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, xml.StartElement{}, badXML("%v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if el.Name.Space != nsOC || (el.Name.Local != reportSearchFiles && el.Name.Local != reportFilterFiles) {
			return nil, xml.StartElement{}, &davError{status: http.StatusForbidden,
				message:   fmt.Sprintf("report %s:%s is not supported: oc:search-files and oc:filter-files are", el.Name.Space, el.Name.Local),
				condition: "<d:supported-report/>"}
		}
		return dec, el, nil
	}
}

// readReport reads and parses a REPORT's body.
func (h *Handler) readReport(w http.ResponseWriter, r *http.Request) (reportRequest, error) {
	body, err := h.readXMLBody(w, r)
	if err != nil {
		return reportRequest{}, err
	}
	return parseReport(body)
}

// parseSearch reads oc:search: oc:pattern, oc:limit, oc:offset.
func parseSearch(dec *xml.Decoder, search xml.StartElement, rep *reportRequest) error {
	return eachOCText(dec, search, func(name, text string) error {
		var err error
		switch name {
		case "pattern":
			rep.pattern = searchTerm(text)
		case "limit":
			var n int
			n, err = searchNumber("limit", text)
			rep.limit = min(n, storage.MaxSearchResults)
		case "offset":
			rep.offset, err = searchNumber("offset", text)
		}
		return err
	})
}

// eachOCText calls fn with the local name and the text of each oc: child
// of parent; other children are skipped.
func eachOCText(dec *xml.Decoder, parent xml.StartElement, fn func(name, text string) error) error {
	return eachChild(dec, parent, func(el xml.StartElement) error {
		if el.Name.Space != nsOC {
			return dec.Skip()
		}
		var text string
		if err := dec.DecodeElement(&text, &el); err != nil {
			return badXML("oc:%s: %v", el.Name.Local, err)
		}
		return fn(el.Name.Local, text)
	})
}

// searchNumber parses oc:limit or oc:offset, a count: empty is 0.
func searchNumber(name, text string) (int, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 0 {
		return 0, badXML("oc:%s must be a number of results, not %q", name, text)
	}
	return n, nil
}

// parseFilterRules reads oc:filter-rules: oc:favorite 1 asks for the
// user's favourites, oc:systemtag for files with a tag.
func parseFilterRules(dec *xml.Decoder, rules xml.StartElement, rep *reportRequest) error {
	return eachOCText(dec, rules, func(name, text string) error {
		switch name {
		case "favorite":
			rep.favorites = rep.favorites || storage.IsFavorite(text)
		case "systemtag":
			rep.tags = true
		}
		return nil
	})
}

// searchTerm is the substring a pattern asks for. oCIS takes KQL, and
// ownCloud Web sends its search as name:"*term*" (with other conditions,
// such as mediatype:, which are not served and ignored): the term of a
// name: condition, else the whole pattern, without the wildcards around
// it.
func searchTerm(pattern string) string {
	term := strings.TrimSpace(pattern)
	if i := strings.Index(" "+term, " name:"); i >= 0 {
		term = term[i+len("name:"):]
		if rest, ok := strings.CutPrefix(term, `"`); ok {
			term, _, _ = strings.Cut(rest, `"`)
		} else {
			term, _, _ = strings.Cut(term, " ")
		}
	}
	return strings.Trim(term, "*")
}
