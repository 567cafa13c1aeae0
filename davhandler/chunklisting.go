package davhandler

import (
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/storage"
)

// PROPFIND of chunking NG uploads: what a client that resumes needs to
// know of the parts it has sent.

// handleNGPropfind lists an upload (Depth 1: with its parts) or one part,
// with what a client resuming needs: which parts exist and their sizes.
// Depth infinity is Depth 1: an upload holds no folders.
func (h *Handler) handleNGPropfind(w http.ResponseWriter, r *http.Request, req *request, id, part string) error {
	depth, err := parseDepth(r, depthInfinity)
	if err != nil {
		return err
	}
	pf, err := h.readPropfind(w, r)
	if err != nil {
		return err
	}
	u, err := h.ownChunkedUpload(r.Context(), req, id)
	if err != nil {
		return err
	}
	parts, err := h.listParts(r.Context(), id)
	if err != nil {
		return err
	}
	sortParts(parts)
	base := escapePath(req.path.base)
	if part != "" {
		i := slices.IndexFunc(parts, func(c storage.Chunk) bool { return c.Name == part })
		if i < 0 {
			return errNotFound
		}
		ms := davxml.StartMultistatus(w, davxml.MultistatusBuffer, &h.responseBuffers)
		writeUploadEntry(ms, pf, partNode(u, parts[i]), base+escapePath("/"+part))
		h.closeUploadListing(r, ms)
		return nil
	}
	ms := davxml.StartMultistatus(w, davxml.MultistatusBuffer, &h.responseBuffers)
	writeUploadEntry(ms, pf, uploadNode(u, parts), base+"/")
	if depth != 0 {
		for _, p := range parts {
			writeUploadEntry(ms, pf, partNode(u, p), base+escapePath("/"+p.Name))
		}
	}
	h.closeUploadListing(r, ms)
	return nil
}

// closeUploadListing ends a 207 on its way: a failure to send it can only
// be logged.
func (h *Handler) closeUploadListing(r *http.Request, ms *davxml.Multistatus) {
	if err := ms.Close(); err != nil {
		h.logger.Debug("sending an upload's listing", zap.String("uri", r.RequestURI), zap.Error(err))
	}
}

// uploadProperty is a property of an upload or a part, computed from a
// node standing for it; none needs the propContext.
type uploadProperty struct {
	name xml.Name
	prop liveProp
}

// uploadProps are the properties of uploads and parts, in allprop order.
var uploadProps = []uploadProperty{
	{davName("resourcetype"), propResourceType},
	{davName("getcontentlength"), fileOnly(propSize)},
	{ocName("size"), propSize},
	{davName("getetag"), propETag},
	{davName("getlastmodified"), folderOnly(propLastModified)},
}

// lookupUploadProp appends property n of v to dst; ok=false when v has none.
func lookupUploadProp(v *nodeView, n xml.Name, dst []byte) (out []byte, ok bool) {
	i := slices.IndexFunc(uploadProps, func(p uploadProperty) bool { return p.name == n })
	if i < 0 {
		return dst, false
	}
	return uploadProps[i].prop(nil, v, dst)
}

// writeUploadEntry writes the d:response of an upload or a part.
func writeUploadEntry(ms *davxml.Multistatus, pf propfindRequest, n storage.Node, href string) {
	v := &nodeView{node: &n, loaded: true}
	ms.BeginResponse(href)
	var props propSet
	names := pf.names
	if pf.kind != findProp {
		names = nil
		for _, p := range uploadProps {
			names = append(names, p.name)
		}
	}
	for _, name := range names {
		start := len(props.values)
		out, ok := lookupUploadProp(v, name, props.values)
		if !props.keep(name, start, out, ok) && pf.kind == findProp {
			ms.NotFound(name)
		}
	}
	props.write(ms, pf.kind == findPropname)
	ms.EndResponse()
}

// uploadNode stands for an upload in a listing: a folder whose size is its
// parts' and whose etag changes with any of them.
func uploadNode(u storage.ChunkedUpload, parts []storage.Chunk) storage.Node {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d", u.ID, u.Created.UnixNano())
	for _, p := range parts {
		fmt.Fprintf(h, "\x00%s\x00%d", p.Name, p.Size)
	}
	return storage.Node{Kind: storage.KindFolder, Size: partsSize(parts), ModTime: u.Created,
		ETag: strconv.FormatUint(h.Sum64(), 36)}
}

// partNode stands for a part in a listing. Its etag tells parts of
// different names or sizes apart; the store keeps no more about a part.
func partNode(u storage.ChunkedUpload, p storage.Chunk) storage.Node {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00%d", u.ID, u.Created.UnixNano(), p.Name, p.Size)
	return storage.Node{Kind: storage.KindFile, Name: p.Name, Size: p.Size,
		ETag: strconv.FormatUint(h.Sum64(), 36)}
}
