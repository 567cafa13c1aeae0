package boltstore

import (
	"errors"

	"github.com/davspaces/davspaces/storage"
)

// folderFrame is a folder of a tree walk whose subtree is being added up.
type folderFrame struct {
	id, path string
	etag     string // as its record said when the walk came to it
	recorded int64  // the size its record says; -1 for a trash root
	sum      int64  // the sizes found below it so far
	after    string // the name of its last child walked
}

// checkTrees walks the live tree and the trash of every space.
func (c *checkRun) checkTrees() error {
	for _, id := range c.spaces {
		var root rec
		var ok bool
		err := c.s.view(func(t *txn) (err error) {
			root, ok, err = t.node(id)
			return err
		})
		if err != nil {
			return err
		}
		if ok {
			frame := &folderFrame{id: id, etag: root.ETag, recorded: root.Size}
			if err := c.walkTree(id, frame); err != nil {
				return err
			}
		}
		trash := &folderFrame{id: trashSpaceID(id), path: trashPath, recorded: -1}
		if err := c.walkTree(id, trash); err != nil {
			return err
		}
	}
	return nil
}

// walkTree walks the tree below top, depth first, adding up the size of
// every folder from its children's and comparing it with the folder's
// record once its whole subtree is walked (bottom up: a folder whose size
// is wrong is blamed, not its parent). Every step reads one page of a
// folder's children in a snapshot of its own, and the walk holds one
// frame per level.
func (c *checkRun) walkTree(spaceID string, top *folderFrame) error {
	stack := []*folderFrame{top}
	for len(stack) > 0 {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		f := stack[len(stack)-1]
		page, err := c.readPage(spaceID, f)
		if err != nil {
			return err
		}
		if err := c.checkContents(page.contents); err != nil {
			return err
		}
		if err := c.foundAll(page.findings); err != nil {
			return err
		}
		f.sum += page.files
		switch {
		case page.folder != nil:
			f.after = page.folder.Name
			if len(stack) >= maxCheckDepth {
				err := c.found(problem(storage.ProblemDangling, spaceID, f.path, "the tree is deeper than %d levels below here", maxCheckDepth))
				if err != nil {
					return err
				}
				continue
			}
			stack = append(stack, &folderFrame{
				id:       page.folder.ID,
				path:     joinPath(f.path, page.folder.Name),
				etag:     page.folder.ETag,
				recorded: page.folder.Size,
			})
		case page.more:
			f.after = page.last
		default:
			stack = stack[:len(stack)-1]
			if err := c.finishFolder(spaceID, f); err != nil {
				return err
			}
			if len(stack) > 0 {
				stack[len(stack)-1].sum += f.sum
			}
		}
	}
	return nil
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "/" + name
}

// page is what one step of a tree walk read: the files of a page of a
// folder's children up to its first subfolder.
type page struct {
	files    int64 // their sizes
	contents []contentRef
	findings []finding
	folder   *rec   // the subfolder the page stopped at
	more     bool   // the page is full: more children follow
	last     string // the name of its last child
}

var errStopPage = errors.New("stop the page")

// readPage reads the next page of the children of f in a snapshot.
func (c *checkRun) readPage(spaceID string, f *folderFrame) (page, error) {
	var p page
	err := c.s.viewWalk(func(t *txn) error {
		p = page{}
		n := 0
		err := t.scanChildren(f.id, f.after, c.batch, func(r rec) error {
			n++
			p.last = r.Name
			path := joinPath(f.path, r.Name)
			if r.IsFolder() {
				p.folder = &r
				return errStopPage
			}
			p.files += r.Size
			ref, fs := c.fileContent(t, spaceID, path, r, "")
			p.findings = append(p.findings, fs...)
			if ref != nil {
				p.contents = append(p.contents, *ref)
			}
			return nil
		})
		if errors.Is(err, errStopPage) {
			err = nil
		}
		c.sum.Nodes += int64(n)
		c.progress(int64(n))
		p.more = p.folder == nil && n == c.batch
		return err
	})
	return p, err
}

// finishFolder compares the size the record of f says with the size of
// its subtree. A folder whose etag changed meanwhile changed below while
// it was walked: its sum proves nothing.
func (c *checkRun) finishFolder(spaceID string, f *folderFrame) error {
	if f.recorded < 0 || f.sum == f.recorded {
		return nil
	}
	id, etag, recorded, sum := f.id, f.etag, f.recorded, f.sum
	unchanged := func(t *txn) (rec, bool, error) {
		r, ok, err := t.node(id)
		return r, ok && r.ETag == etag && r.Size == recorded, err
	}
	var still bool
	err := c.s.view(func(t *txn) (err error) {
		_, still, err = unchanged(t)
		return err
	})
	if err != nil || !still {
		return err
	}
	fix := func() (bool, error) {
		return c.update(func(t *txn) (bool, error) {
			r, ok, err := unchanged(t)
			if err != nil || !ok {
				return false, err
			}
			// The ancestors keep their etags: their own sizes are
			// judged against the sum, not against this record.
			r.Size, r.ETag = sum, t.etag(r.ID)
			return true, t.putNode(&r)
		})
	}
	return c.found(problem(storage.ProblemFolderSize, spaceID, f.path,
		"folder %s records %d bytes, its children hold %d", id, recorded, sum).withRepair(fix))
}
