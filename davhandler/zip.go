package davhandler

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// zipQuery is the query parameter that asks for a folder as a zip:
// GET <folder URL>?zip, the "download folder" of the browser page.
const zipQuery = "zip"

// wantsZip reports whether r asks for a folder as a zip. HEAD keeps the
// folder's ordinary answer: the archive's size is not known before it is
// written.
func wantsZip(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Query().Has(zipQuery)
}

// serveZip streams the folder t as a zip archive straight to the response:
// no temporary file, and memory stays flat however big the folder is (one
// page of each open folder level and one copy buffer). Entries are stored,
// not deflated: the bulky files people download (photos, videos, office
// documents, archives) are compressed already, and deflating on the
// request path would make the server's CPU, not the disk or the network,
// set the pace. Every entry carries its file's modification time.
//
// A file or folder removed while the archive is written is left out and
// the archive stays valid. Any other failure after the first byte cannot
// be answered with a status any more: the archive is left without its
// central directory, so that the client sees a broken download rather
// than a complete-looking one.
func (h *Handler) serveZip(w http.ResponseWriter, r *http.Request, t *target) {
	folderName := t.node.Name
	if t.node.ParentID == "" {
		folderName = t.space.Name
	}
	folderName = zipSafeName(folderName, "folder")
	hdr := w.Header()
	hdr.Set("Content-Type", "application/zip")
	hdr.Set("Content-Disposition", contentDisposition(folderName+".zip"))
	// The archive is made for whoever asks, from the folder as it is now.
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)

	zw := zip.NewWriter(w)
	zs := zipStream{h: h, r: r, zw: zw, space: t.space.ID}
	if err := zs.addFolder(t.node, folderName+"/"); err != nil {
		h.logger.Warn("abandoning a folder zip", zap.String("uri", r.RequestURI),
			zap.String("folder", t.node.ID), zap.Error(err))
		return
	}
	if err := zw.Close(); err != nil {
		h.logger.Debug("finishing a folder zip", zap.String("uri", r.RequestURI), zap.Error(err))
	}
}

// zipStream writes the entries of one folder zip.
type zipStream struct {
	h     *Handler
	r     *http.Request
	zw    *zip.Writer
	space string
}

// addFolder writes the entry of folder (its name in the archive is prefix,
// ending in "/", so that empty folders survive) and then its children,
// page by page, depth first.
func (zs *zipStream) addFolder(folder storage.Node, prefix string) error {
	if _, err := zs.zw.CreateHeader(&zip.FileHeader{
		Name: prefix, Method: zip.Store, Modified: folder.ModTime,
	}); err != nil {
		return fmt.Errorf("writing folder entry %q: %w", prefix, err)
	}
	read := func(after string, limit int) ([]storage.Node, error) {
		children, err := zs.h.store.ReadDir(zs.r.Context(), zs.space, folder.ID, after, limit)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			err = fmt.Errorf("listing folder %s: %w", folder.ID, err)
		}
		return children, err
	}
	return readPages(read, nodeName, func(children []storage.Node) error {
		for _, child := range children {
			name := prefix + zipSafeName(child.Name, child.ID)
			var err error
			if child.IsFolder() {
				err = zs.addFolder(child, name+"/")
			} else {
				err = zs.addFile(child, name)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// addFile writes the entry of one file. The file is opened before its
// entry is begun, so that a file removed meanwhile leaves no trace.
func (zs *zipStream) addFile(file storage.Node, name string) error {
	node, content, err := zs.h.store.Open(zs.r.Context(), zs.space, file.ID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening file %s: %w", file.ID, err)
	}
	defer content.Close()
	entry, err := zs.zw.CreateHeader(&zip.FileHeader{
		Name: name, Method: zip.Store, Modified: node.ModTime,
	})
	if err != nil {
		return fmt.Errorf("writing file entry %q: %w", name, err)
	}
	if _, err := io.Copy(entry, content); err != nil {
		return fmt.Errorf("copying file %s into the zip: %w", file.ID, err)
	}
	return nil
}

// zipSafeName is name as one segment of an archive path: never a path
// of its own ("..", or a slash or backslash that unzip tools read as a
// separator). A name that cannot be kept becomes fallback.
func zipSafeName(name, fallback string) string {
	if name == "" || name == "." || name == ".." {
		return fallback
	}
	if path.Base(name) != name || strings.ContainsRune(name, '\\') {
		return fallback
	}
	return name
}
