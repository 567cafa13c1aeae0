package ocs

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// OCS permission bits, as ownCloud defines them.
const (
	permRead   = 1
	permUpdate = 2
	permCreate = 4
	permDelete = 8
	permShare  = 16
	permAll    = permRead | permUpdate | permCreate | permDelete | permShare
)

// roleOfPermissions maps OCS permission bits to the role of a share of
// kind on an item, folder or not. The roles are fixed sets, so only the
// sets they give are taken: 1 viewer; 5 uploader (folders); 15 editor of
// a folder, 3 editor of a file; 4 a link's file drop (folders). The share
// bit (16) is ignored, as nobody reshares here: 31 is 15, 19 is 3.
func roleOfPermissions(bits int, kind storage.ShareKind, folder bool) (storage.ShareRole, bool) {
	if bits <= 0 || bits&^permAll != 0 {
		return 0, false
	}
	switch bits &^ permShare {
	case permRead:
		return storage.ShareViewer, true
	case permRead | permCreate:
		return storage.ShareUploader, folder
	case permRead | permUpdate | permCreate | permDelete:
		return storage.ShareEditor, folder
	case permRead | permUpdate:
		return storage.ShareEditor, !folder
	case permCreate:
		return storage.ShareFileDrop, folder && kind == storage.ShareLink
	}
	return 0, false
}

// permissionsOf is the OCS permission bits of role on an item.
func permissionsOf(role storage.ShareRole, folder bool) int {
	switch role {
	case storage.ShareViewer:
		return permRead
	case storage.ShareUploader:
		return permRead | permCreate
	case storage.ShareEditor:
		if !folder {
			return permRead | permUpdate
		}
		return permRead | permUpdate | permCreate | permDelete
	case storage.ShareFileDrop:
		return permCreate
	}
	return 0
}

// errPermissions refuses permission bits that name no role.
var errPermissions = refuse(http.StatusBadRequest,
	"Invalid permissions: 1 (read), 5 (read and upload, folders), 15 (edit a folder), 3 (edit a file), 4 (a link's upload only, folders)")

// requestedRole is the role a form asks for with permissions or, for a
// link, publicUpload (true: editor, as ownCloud gives; false: viewer);
// permissions win. ok is false when the form names neither.
func requestedRole(form map[string][]string, kind storage.ShareKind, folder bool) (role storage.ShareRole, ok bool, err error) {
	if p, given := formValue(form, "permissions"); given && p != "" {
		bits, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return 0, false, errPermissions
		}
		role, valid := roleOfPermissions(bits, kind, folder)
		if !valid {
			return 0, false, errPermissions
		}
		return role, true, nil
	}
	if up, given := formValue(form, "publicUpload"); given && kind == storage.ShareLink {
		switch strings.ToLower(strings.TrimSpace(up)) {
		case "true", "1":
			if !folder {
				return 0, false, refuse(http.StatusBadRequest, "Public upload is only possible for public shared folders")
			}
			return storage.ShareEditor, true, nil
		case "false", "0", "":
			return storage.ShareViewer, true, nil
		}
		return 0, false, refuse(http.StatusBadRequest, "publicUpload is true or false")
	}
	return 0, false, nil
}

// defaultRole is the role of a new share whose form names none: a link
// views, a user or group edits (ownCloud's default permissions, 31).
func defaultRole(kind storage.ShareKind) storage.ShareRole {
	if kind == storage.ShareLink {
		return storage.ShareViewer
	}
	return storage.ShareEditor
}

// formValue returns a form field and whether it was sent at all (an
// empty value clears a field in an update).
func formValue(form map[string][]string, name string) (string, bool) {
	vs, ok := form[name]
	if !ok || len(vs) == 0 {
		return "", false
	}
	return vs[0], true
}

// expiryLayouts are the forms of expireDate taken: the date the apps send
// (the share then ends with that day, UTC), ownCloud's own answer format,
// RFC 3339 (the iOS app against a server with spaces) and the same
// without a zone (UTC).
var expiryLayouts = []string{time.DateOnly, time.DateTime, time.RFC3339, "2006-01-02T15:04:05"}

// parseExpiry reads expireDate: "" is no expiry.
func parseExpiry(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range expiryLayouts {
		t, err := time.Parse(layout, v)
		if err != nil {
			continue
		}
		if layout == time.DateOnly {
			t = t.Add(24*time.Hour - time.Second)
		}
		return t.UTC(), nil
	}
	return time.Time{}, refuse(http.StatusBadRequest, "Invalid date, date format must be YYYY-MM-DD")
}

// expiryText is a share's expiry as ownCloud answers it, nil for none.
func expiryText(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.DateTime)
	return &s
}
