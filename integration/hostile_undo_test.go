package integration

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// The trash and versions of the victim's spaces in TestHostileUserMatrix:
// a deleted file, a deleted folder with a file in it, and a version of
// doc.txt (seedVictimSpace's file, overwritten).
const (
	victimTrashedFile   = "trashed.txt"
	victimTrashedFolder = "trashed folder"
)

// seedVictimUndo fills the trash of space ref and gives doc.txt a version.
func seedVictimUndo(owner *client, ref string) {
	owner.t.Helper()
	u := undoSpace{c: owner, ref: ref}
	u.put(http.StatusCreated, victimTrashedFile, "the victim's deleted file")
	u.c.expect(http.StatusNoContent, http.MethodDelete, u.path(victimTrashedFile), "")
	u.c.expect(http.StatusCreated, "MKCOL", u.path(victimTrashedFolder), "")
	u.put(http.StatusCreated, victimTrashedFolder+"/inner.txt", "the victim's deleted inner file")
	u.c.expect(http.StatusNoContent, http.MethodDelete, u.path(victimTrashedFolder), "")
	u.put(http.StatusNoContent, "doc.txt", "the victim's document, overwritten")
}

// undoTargets names the trash (its root, every item, a file inside the
// deleted folder) and the versions (meta, the versions collection, a
// version) of space ref, each with the attacker's counterpart: the same
// trash paths in a space that does not exist (unknownRef), since a
// foreign space's trash must not be told from no trash at all, and a
// file id of the attacker's own space that does not exist (the meta
// endpoint names files, not spaces). The project space leaves out the
// two targets the personal space already covers with the same code, to
// keep the matrix bounded.
func undoTargets(owner *client, space, ref, ownRef, unknownRef string) []hostileTarget {
	owner.t.Helper()
	u := undoSpace{c: owner, ref: ref}
	fileKey := u.trashItem(victimTrashedFile).key
	folderKey := u.trashItem(victimTrashedFolder).key
	fileID := u.fileID("doc.txt")
	versions := u.versions(fileID)
	if len(versions) == 0 {
		owner.t.Fatalf("the overwritten doc.txt of %s has no version", space)
	}
	ownUnknownID := ownRef + "!" + uuid.NewString()

	inTrash := func(name, p string) hostileTarget {
		return hostileTarget{space + ":" + name, p, strings.Replace(p, ref, unknownRef, 1), idReplacer(ref, unknownRef)}
	}
	inMeta := func(name, p string) hostileTarget {
		return hostileTarget{space + ":" + name, p, strings.Replace(p, fileID, ownUnknownID, 1), idReplacer(fileID, ownUnknownID)}
	}
	trash := "/dav/spaces/trash-bin/" + ref
	targets := []hostileTarget{
		inTrash("trash-root", trash),
		// The /remote.php form with the $ escaped.
		{
			space + ":remote-trash-file", "/remote.php/dav/spaces/trash-bin/" + escapeID(ref) + "/" + fileKey,
			"/remote.php/dav/spaces/trash-bin/" + escapeID(unknownRef) + "/" + fileKey, idReplacer(ref, unknownRef),
		},
		inTrash("trash-folder/inner", escapePath(trash+"/"+folderKey+"/inner.txt")),
		inMeta("meta", "/dav/meta/"+fileID),
		inMeta("version", "/dav/meta/"+fileID+"/v/"+versions[0].key),
	}
	if space == "personal" {
		targets = append(targets,
			inTrash("trash-folder", escapePath(trash+"/"+folderKey)+"/"),
			inMeta("versions", "/dav/meta/"+fileID+"/v"))
	}
	return targets
}

// escapeID is a resource id with its $ and ! percent-encoded, as some
// clients send them.
func escapeID(id string) string {
	return strings.NewReplacer("$", "%24", "!", "%21").Replace(id)
}

// idReplacer replaces victim's id with own in an answer, in every form an
// answer may write it.
func idReplacer(victim, own string) *strings.Replacer {
	return strings.NewReplacer(
		victim, own,
		escapeID(victim), escapeID(own),
		url.PathEscape(victim), url.PathEscape(own),
	)
}

// controlAnswer is the attacker's answer to m on the target's control: it
// must be a refusal, and the target's answer must be the same.
func (tg hostileTarget) controlAnswer(t *testing.T, m hostileMethod, c *client, serverURL string) answer {
	t.Helper()
	resp, body := m.send(c, serverURL, tg.control)
	if resp.StatusCode < 400 || resp.StatusCode == http.StatusInternalServerError {
		t.Fatalf("%s %s, the attacker's own counterpart of %s: %d, want a refusal\n%s", m.name, tg.control, tg.path, resp.StatusCode, body)
	}
	return newAnswer(resp, body)
}

// ownView is an answer to the target with the victim's ids it names
// replaced by the control's.
func (tg hostileTarget) ownView(body []byte) []byte {
	if tg.own == nil {
		return body
	}
	return []byte(tg.own.Replace(string(body)))
}

// snapshotTrash records every item of the space's trash and everything
// inside the deleted folders by href: their properties.
func (u undoSpace) snapshotTrash() map[string]string {
	u.c.t.Helper()
	snap := map[string]string{}
	for queue := []string{u.trashPath("")}; len(queue) > 0; queue = queue[1:] {
		for _, r := range u.c.propfind(queue[0], "1", trashPropsBody) {
			if _, seen := snap[r.href]; seen {
				continue
			}
			snap[r.href] = describe(r.props)
			if strings.Contains(r.props["DAV: resourcetype"], "collection") && u.trashHrefRest(r.href) != "" && r.href != queue[0] {
				queue = append(queue, r.href)
			}
		}
	}
	return snap
}

// snapshotVersions describes the versions of file fileID: each one's
// properties and the SHA1 of its content.
func (c *client) snapshotVersions(fileID string) string {
	c.t.Helper()
	if fileID == "" {
		c.t.Fatal("a file without oc:fileid in allprop")
	}
	var lines []string
	for _, r := range c.propfind(versionPath(fileID, ""), "1", versionPropsBody) {
		line := r.href + "\n" + describe(r.props)
		if !strings.Contains(r.props["DAV: resourcetype"], "collection") {
			_, body := c.expect(http.StatusOK, http.MethodGet, r.href, "")
			line += "\ncontent sha1 " + sha1Hex([]byte(body))
		}
		lines = append(lines, line)
	}
	sort.Strings(lines)
	return "\nversions:\n" + strings.Join(lines, "\n")
}
