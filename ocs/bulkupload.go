package ocs

import (
	"fmt"
	"regexp"
	"strconv"
)

// BulkUpload says to which clients the capabilities offer Nextcloud's bulk
// upload (dav.bulkupload), which makes Nextcloud's desktop client send its
// small new files 100 to a request instead of one PUT each.
type BulkUpload uint8

const (
	// BulkUploadOff offers it to no client.
	BulkUploadOff BulkUpload = iota
	// BulkUploadAuto offers it to every client but those that cannot use
	// it (see brokenBulkUploader).
	BulkUploadAuto
	// BulkUploadAll offers it to every client, the broken ones included:
	// for servers whose users never sync empty files.
	BulkUploadAll
)

// ParseBulkUpload reads a BulkUpload by its name: "off", "auto" (or
// empty) and "all".
func ParseBulkUpload(name string) (BulkUpload, error) {
	switch name {
	case "off":
		return BulkUploadOff, nil
	case "", "auto":
		return BulkUploadAuto, nil
	case "all":
		return BulkUploadAll, nil
	}
	return 0, fmt.Errorf("bulk upload %q: want off, auto or all", name)
}

// OfferedTo says whether a client sending userAgent is offered bulk upload.
func (b BulkUpload) OfferedTo(userAgent string) bool {
	switch b {
	case BulkUploadAll:
		return true
	case BulkUploadAuto:
		return !brokenBulkUploader(userAgent)
	}
	return false
}

// desktopClientVersion finds the version in the User-Agent of the desktop
// clients of Nextcloud (and of brands built from it):
// "Mozilla/5.0 (Linux) mirall/3.7.3git (Nextcloud, debian-…)".
var desktopClientVersion = regexp.MustCompile(`\bmirall/(\d+)\.(\d+)\.`)

// brokenBulkUploader says whether userAgent is one of the Nextcloud desktop
// clients 3.4 to 3.8: they read an empty file for a bulk request from a
// device that answers end of file with an error, so Qt drops the request
// and the whole batch fails at every sync (nextcloud/desktop#4157, fixed in
// 3.9 by #5871). Seen with nextcloudcmd 3.7.3 in TestDesktopClients.
func brokenBulkUploader(userAgent string) bool {
	m := desktopClientVersion.FindStringSubmatch(userAgent)
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major == 3 && minor >= 4 && minor <= 8
}
