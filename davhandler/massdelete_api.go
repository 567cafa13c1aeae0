package davhandler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// The mass-delete events of a space, for the page (docs/undo.md):
//
//	GET  /dav/spaces/mass-deletes/{space}                  the events, JSON
//	POST /dav/spaces/mass-deletes/{space}/{event}/restore  every item back
//	POST /dav/spaces/mass-deletes/{space}/{event}/confirm  the deletions kept
//
// A member who may use the trash sees the events of their own clients; a
// manager sees every event of the space and alone may confirm one.

// massDeletesSegment is the segment after /dav/spaces that names the
// mass-delete events of the space after it.
const massDeletesSegment = "mass-deletes"

// The actions on an event.
const (
	massDeleteRestore = "restore"
	massDeleteConfirm = "confirm"
)

// massDeleteWorkers restore the files of an event side by side, so that
// the store commits their restores in groups.
const massDeleteWorkers = 4

// maxRenamedShown bounds the renamed items a restore answer names.
const maxRenamedShown = 100

// massDeleteJSON is an event as the page reads it.
type massDeleteJSON struct {
	ID         string     `json:"id"`
	Space      string     `json:"space"`
	SpaceName  string     `json:"spaceName"`
	User       string     `json:"user"`
	Client     string     `json:"client"`
	Files      int64      `json:"files"`
	Start      time.Time  `json:"start"`
	End        time.Time  `json:"end"`
	State      string     `json:"state"`
	Resolved   *time.Time `json:"resolved,omitempty"`
	ResolvedBy string     `json:"resolvedBy,omitempty"`
	// Manage tells whether the caller may confirm it.
	Manage bool `json:"manage"`
}

// massDeleteRestored is the answer of a restore.
type massDeleteRestored struct {
	Event massDeleteJSON `json:"event"`
	// Restored items went back to where they were deleted from; Renamed
	// ones next to a file recreated there since, under a new name;
	// Revived ones were back already: a file created since where one
	// was deleted is that file, with its id, and its deleted content the
	// newest version (storage.Versions). Missing ones were no longer in
	// the trash (purged, expired or restored already); Failed ones could
	// not go back (their folder is gone).
	Restored int           `json:"restored"`
	Renamed  []renamedItem `json:"renamed"`
	Revived  int           `json:"revived"`
	Missing  int           `json:"missing"`
	Failed   int           `json:"failed"`
}

// renamedItem is an item restored under a new name.
type renamedItem struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// massDeleteRequest is a request to the events of a space the caller may
// use the trash of.
type massDeleteRequest struct {
	*request
	space  storage.Space
	access access
}

func (h *Handler) serveMassDeletes(w http.ResponseWriter, r *http.Request, req *request) error {
	if h.brake == nil {
		return errNotFound
	}
	space, nodeID, err := h.spaceByRef(r.Context(), req.path.ref)
	if err != nil {
		return err
	}
	// An app password narrowed to a folder or a space is a sync client's:
	// the events of a whole space are not within its reach.
	if !h.visible(r.Context(), space, req.user) || (nodeID != "" && nodeID != space.ID) || !req.user.Scope.IsZero() {
		return errNotFound
	}
	mr := &massDeleteRequest{request: req, space: space, access: memberAccess(space.RoleOf(req.user))}
	if !mr.access.mayUseTrash() {
		return errTrashReadOnly
	}
	segs := req.path.segments
	switch {
	case len(segs) == 0 && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		return h.listMassDeletes(w, r, mr)
	case len(segs) == 0:
		return methodNotAllowed("GET, HEAD", r.Method+" is not allowed on the mass deletes of a space")
	case len(segs) == 2 && r.Method == http.MethodPost && (segs[1] == massDeleteRestore || segs[1] == massDeleteConfirm):
		return h.resolveMassDelete(w, r, mr, segs[0], segs[1])
	case len(segs) == 2 && (segs[1] == massDeleteRestore || segs[1] == massDeleteConfirm):
		return methodNotAllowed("POST", r.Method+" is not allowed here: POST restores or confirms the event")
	}
	return errNotFound
}

// mayManage reports whether the caller may confirm events of the space.
func (mr *massDeleteRequest) mayManage() bool { return mr.access.has(permManage) }

// sees reports whether the caller may see event e: a manager every event,
// a member those of their own clients.
func (mr *massDeleteRequest) sees(e storage.MassDelete) bool {
	return mr.mayManage() || e.User == mr.user.ID
}

func (mr *massDeleteRequest) jsonOf(e storage.MassDelete) massDeleteJSON {
	j := massDeleteJSON{ID: e.ID, Space: e.SpaceID, SpaceName: mr.space.Name, User: e.User, Client: e.Label,
		Files: e.Files, Start: e.Start, End: e.End, State: e.State.String(), ResolvedBy: e.ResolvedBy, Manage: mr.mayManage()}
	if !e.Resolved.IsZero() {
		j.Resolved = &e.Resolved
	}
	return j
}

func (h *Handler) listMassDeletes(w http.ResponseWriter, r *http.Request, mr *massDeleteRequest) error {
	events, err := h.brake.events.MassDeletes(r.Context(), mr.space.ID)
	if err != nil {
		return err
	}
	out := struct {
		Events []massDeleteJSON `json:"events"`
		Hold   bool             `json:"hold"`
	}{Events: []massDeleteJSON{}, Hold: h.brake.rules.Hold}
	for _, e := range events {
		if mr.sees(e) {
			out.Events = append(out.Events, mr.jsonOf(e))
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// resolveMassDelete restores or confirms event id. The event is resolved
// first, so that of two requests one does it.
func (h *Handler) resolveMassDelete(w http.ResponseWriter, r *http.Request, mr *massDeleteRequest, id, action string) error {
	if err := storage.ValidMassDeleteID(id); err != nil {
		return err
	}
	e, err := h.brake.events.MassDelete(r.Context(), mr.space.ID, id)
	if err != nil {
		return err
	}
	if !mr.sees(e) {
		return errNotFound
	}
	state := storage.MassDeleteRestored
	if action == massDeleteConfirm {
		if !mr.mayManage() {
			return errorf(http.StatusForbidden, "Only a manager of the space may keep the deletions of a mass delete")
		}
		state = storage.MassDeleteConfirmed
	}
	resolved, err := h.brake.events.ResolveMassDelete(r.Context(), mr.space.ID, id, state, mr.user.ID, h.brake.now())
	if errors.Is(err, storage.ErrConflict) {
		return &davError{status: http.StatusConflict, message: "This mass delete is resolved already", cause: err}
	}
	if err != nil {
		return err
	}
	if state == storage.MassDeleteConfirmed {
		return writeJSON(w, http.StatusOK, struct {
			Event massDeleteJSON `json:"event"`
		}{mr.jsonOf(resolved)})
	}
	start := time.Now()
	out, err := h.restoreItems(context.WithoutCancel(r.Context()), mr, e.Items)
	if err != nil {
		return err
	}
	h.logger.Info("mass delete restored", zap.String("space", mr.space.ID), zap.String("event", e.ID),
		zap.String("by", mr.user.ID), zap.Int("restored", out.Restored), zap.Int("revived", out.Revived),
		zap.Int("renamed", len(out.Renamed)), zap.Int("missing", out.Missing), zap.Int("failed", out.Failed),
		zap.Duration("took", time.Since(start)))
	out.Event = mr.jsonOf(resolved)
	return writeJSON(w, http.StatusOK, out)
}

// restoreItems puts the trash items of nodes back where they were deleted
// from: folders first, newest first (a folder deleted after its files
// holds them again before they come back), then the files side by side.
func (h *Handler) restoreItems(ctx context.Context, mr *massDeleteRequest, nodes []string) (massDeleteRestored, error) {
	trash := storage.ScopedTrash(h.trash, mr.user.Scope)
	wanted := make(map[string]bool, len(nodes))
	for _, id := range nodes {
		wanted[id] = true
	}
	var folders, files []storage.TrashItem
	err := storage.EachTrashItem(ctx, trash, mr.space.ID, storage.TrashPageSize, func(it storage.TrashItem) error {
		if !wanted[it.Node.ID] {
			return nil
		}
		delete(wanted, it.Node.ID) // items are newest first: the newest counts
		if it.Node.IsFolder() {
			folders = append(folders, it)
		} else {
			files = append(files, it)
		}
		return nil
	})
	if err != nil {
		return massDeleteRestored{}, err
	}
	var res restoreTally
	for id := range wanted {
		if _, err := h.store.Node(ctx, mr.space.ID, id); err == nil {
			res.out.Revived++
		} else {
			res.out.Missing++
		}
	}
	if br, ok := h.trash.(storage.TrashBatchRestorer); ok && mr.user.Scope.Path == "" {
		// The folders first, every name they may take, then the files.
		restoreBatched(ctx, br, mr.space.ID, folders, &res)
		restoreBatched(ctx, br, mr.space.ID, files, &res)
		return res.out, nil
	}
	for _, it := range folders {
		res.add(h.restoreItem(ctx, trash, mr.space.ID, it))
	}
	jobs := make(chan storage.TrashItem)
	var wg sync.WaitGroup
	for range massDeleteWorkers {
		wg.Go(func() {
			for it := range jobs {
				res.add(h.restoreItem(ctx, trash, mr.space.ID, it))
			}
		})
	}
	for _, it := range files {
		jobs <- it
	}
	close(jobs)
	wg.Wait()
	return res.out, nil
}

// restoreTally adds up the restores of an event.
type restoreTally struct {
	mu  sync.Mutex
	out massDeleteRestored
}

// itemRestore is how one item came back.
type itemRestore struct {
	renamed *renamedItem
	err     error
}

func (t *restoreTally) add(r itemRestore) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case errors.Is(r.err, storage.ErrNotFound):
		t.out.Missing++
	case r.err != nil:
		t.out.Failed++
	case r.renamed != nil:
		t.out.Restored++
		if len(t.out.Renamed) < maxRenamedShown {
			t.out.Renamed = append(t.out.Renamed, *r.renamed)
		}
	default:
		t.out.Restored++
	}
}

// maxRestoreNames bounds the names tried for an item whose place is taken.
const maxRestoreNames = 10

// restoreItem restores it where it was deleted from; where a file was
// created since, it comes back beside it as "name (restored).ext", the
// new file staying as it is.
func (h *Handler) restoreItem(ctx context.Context, trash storage.Trash, spaceID string, it storage.TrashItem) itemRestore {
	name := it.Node.Name
	for i := range maxRestoreNames {
		if i > 0 {
			name = restoredName(it.Node.Name, i)
		}
		t := storage.Transfer{NodeID: it.Node.ID, NewParentID: it.Node.ParentID, NewName: name}
		_, _, err := trash.RestoreTrash(ctx, spaceID, it.Key, t)
		if errors.Is(err, storage.ErrExists) {
			continue
		}
		return restoredAs(it, i, name, err)
	}
	return everyNameTaken(it)
}

// restoredAs is how item it came back, or not (err), at the i-th name
// tried, name.
func restoredAs(it storage.TrashItem, i int, name string, err error) itemRestore {
	if err != nil {
		return itemRestore{err: err}
	}
	if i == 0 {
		return itemRestore{}
	}
	return itemRestore{renamed: &renamedItem{From: it.Location, To: path.Join(path.Dir(it.Location), name)}}
}

// everyNameTaken is the restore of an item none of whose names was free.
func everyNameTaken(it storage.TrashItem) itemRestore {
	return itemRestore{err: fmt.Errorf("restoring %s: every name is taken: %w", it.Location, storage.ErrExists)}
}

// restoreNameFor is the i-th name tried for item it.
func restoreNameFor(it storage.TrashItem, i int) string {
	if i == 0 {
		return it.Node.Name
	}
	return restoredName(it.Node.Name, i)
}

// restoreBatched restores items as restoreItem does each, in batches of
// the store's (storage.TrashBatchRestorer), a transaction for many
// items: those whose place is taken try their next name in the next
// round, all together.
func restoreBatched(ctx context.Context, br storage.TrashBatchRestorer, spaceID string, items []storage.TrashItem, res *restoreTally) {
	pending := items
	for i := 0; len(pending) > 0 && i < maxRestoreNames; i++ {
		restores := make([]storage.TrashRestore, len(pending))
		for j, it := range pending {
			restores[j] = storage.TrashRestore{Key: it.Key, NodeID: it.Node.ID, ParentID: it.Node.ParentID, Name: restoreNameFor(it, i)}
		}
		outcomes, done, err := br.RestoreTrashBatch(ctx, spaceID, restores)
		var taken []storage.TrashItem
		for j, it := range pending {
			switch {
			case j >= done:
				res.add(itemRestore{err: err})
			case errors.Is(outcomes[j], storage.ErrExists) && err == nil:
				taken = append(taken, it)
			default:
				res.add(restoredAs(it, i, restores[j].Name, outcomes[j]))
			}
		}
		pending = taken
	}
	for _, it := range pending {
		res.add(everyNameTaken(it))
	}
}

// restoredName is the name of the n-th try to put back a node called name
// beside one that took its place: "a (restored).txt", "a (restored 2).txt".
func restoredName(name string, n int) string {
	ext := path.Ext(name)
	if ext == name {
		ext = ""
	}
	stem := strings.TrimSuffix(name, ext)
	tag := " (restored)"
	if n > 1 {
		tag = fmt.Sprintf(" (restored %d)", n)
	}
	return truncateUTF8(stem, maxNameBytes-len(tag)-len(ext)) + tag + ext
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}
