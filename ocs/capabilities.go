package ocs

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/davspaces/davspaces/storage"
)

// capabilitiesData is the data of cloud/capabilities. Every entry is
// something davspaces serves; clients take an advertised feature as a
// promise (a Nextcloud client that sees dav.chunking uploads its big files
// with chunking NG, the ownCloud desktop client that sees tus_support
// uploads every file with TUS), which is why Config says what is served.
type capabilitiesData struct {
	Capabilities capabilities `json:"capabilities" xml:"capabilities"`
	Version      version      `json:"version" xml:"version"`
}

type capabilities struct {
	Core         core         `json:"core" xml:"core"`
	DAV          dav          `json:"dav" xml:"dav"`
	Files        files        `json:"files" xml:"files"`
	FilesSharing filesSharing `json:"files_sharing" xml:"files_sharing"`
	Checksums    checksums    `json:"checksums" xml:"checksums"`
	Spaces       spaces       `json:"spaces" xml:"spaces"`
	// UserStatus says there is no user status (Nextcloud's "online",
	// "away"): Nextcloud's desktop client and Android app ask for one
	// only when it is enabled.
	UserStatus userStatus `json:"user_status" xml:"user_status"`
	// PasswordPolicy is there with sharing: what a link password must be.
	PasswordPolicy *passwordPolicy `json:"password_policy,omitempty" xml:"password_policy,omitempty"`
}

type userStatus struct {
	Enabled       ocsBool `json:"enabled" xml:"enabled"`
	Restore       ocsBool `json:"restore" xml:"restore"`
	SupportsEmoji ocsBool `json:"supports_emoji" xml:"supports_emoji"`
}

type core struct {
	PollInterval int    `json:"pollinterval" xml:"pollinterval"`
	WebDAVRoot   string `json:"webdav-root" xml:"webdav-root"`
	Status       Status `json:"status" xml:"status"`
}

type dav struct {
	// Chunking is the version of Nextcloud's chunked uploads ("chunking
	// NG") served, absent when none is.
	Chunking string `json:"chunking,omitempty" xml:"chunking,omitempty"`
	// Trashbin is the version of the trash-bin endpoint served
	// (/dav/spaces/trash-bin/…), absent when deletes keep nothing: the
	// ownCloud web UI shows deleted files only when it is "1.0" and
	// files.undelete is true.
	Trashbin string `json:"trashbin,omitempty" xml:"trashbin,omitempty"`
	// BulkUpload is the version of Nextcloud's bulk upload served
	// (/dav/bulk), absent when it is not: Nextcloud's client then sends
	// its small files one by one.
	BulkUpload string `json:"bulkupload,omitempty" xml:"bulkupload,omitempty"`
	// Reports are the REPORTs served on every WebDAV path: ownCloud Web
	// offers its search only when search-files is among them.
	Reports []string `json:"reports" xml:"reports>element"`
}

type files struct {
	// BigFileChunking tells clients that files may be sent in chunks
	// (chunking NG, and ownCloud v1 chunks for older clients).
	BigFileChunking  ocsBool     `json:"bigfilechunking" xml:"bigfilechunking"`
	BlacklistedFiles []string    `json:"blacklisted_files" xml:"blacklisted_files>element"`
	Undelete         ocsBool     `json:"undelete" xml:"undelete"`
	Versioning       ocsBool     `json:"versioning" xml:"versioning"`
	Favorites        ocsBool     `json:"favorites" xml:"favorites"`
	TUSSupport       *tusSupport `json:"tus_support,omitempty" xml:"tus_support,omitempty"`
	// Thumbnail is present when previews are served (GET ?preview=1):
	// ownCloud Web asks for them only then, and only for these types.
	Thumbnail *thumbnail `json:"thumbnail,omitempty" xml:"thumbnail,omitempty"`
}

type thumbnail struct {
	Enabled            ocsBool  `json:"enabled" xml:"enabled"`
	Version            string   `json:"version" xml:"version"`
	SupportedMimeTypes []string `json:"supportedMimeTypes" xml:"supportedMimeTypes>element"`
}

// tusSupport describes the TUS endpoint davhandler serves on every WebDAV
// folder URL.
type tusSupport struct {
	Version            string `json:"version" xml:"version"`
	Resumable          string `json:"resumable" xml:"resumable"`
	Extension          string `json:"extension" xml:"extension"`
	MaxChunkSize       int64  `json:"max_chunk_size" xml:"max_chunk_size"`
	HTTPMethodOverride string `json:"http_method_override" xml:"http_method_override"`
}

type checksums struct {
	SupportedTypes      []string `json:"supportedTypes" xml:"supportedTypes>element"`
	PreferredUploadType string   `json:"preferredUploadType" xml:"preferredUploadType"`
}

type spaces struct {
	Enabled  ocsBool `json:"enabled" xml:"enabled"`
	Version  string  `json:"version" xml:"version"`
	Projects ocsBool `json:"projects" xml:"projects"`
}

// version is the server version in the parts ownCloud's capabilities give.
type version struct {
	Major          int    `json:"major" xml:"major"`
	Minor          int    `json:"minor" xml:"minor"`
	Micro          int    `json:"micro" xml:"micro"`
	String         string `json:"string" xml:"string"`
	Edition        string `json:"edition" xml:"edition"`
	Product        string `json:"product" xml:"product"`
	ProductVersion string `json:"productversion" xml:"productversion"`
}

// newCapabilities builds the capabilities once; they change only with the
// configuration.
func newCapabilities(cfg Config) capabilitiesData {
	c := capabilities{
		Core: core{PollInterval: cfg.PollInterval, WebDAVRoot: "remote.php/webdav", Status: cfg.Status},
		Files: files{
			// .htaccess is refused by ownCloud servers; clients skip it
			// rather than fail on it.
			BlacklistedFiles: []string{".htaccess"},
		},
		Checksums: checksums{SupportedTypes: []string{"SHA1", "MD5", "ADLER32"}, PreferredUploadType: "SHA1"},
		Spaces:    spaces{Enabled: true, Version: "1.0.0", Projects: true},
		DAV:       dav{Reports: []string{"search-files"}},
	}
	if cfg.ChunkedUploads {
		c.DAV.Chunking = "1.0"
		c.Files.BigFileChunking = true
	}
	if cfg.BulkUpload != BulkUploadOff {
		c.DAV.BulkUpload = "1.0"
	}
	if cfg.Trash {
		c.DAV.Trashbin = "1.0"
		c.Files.Undelete = true
	}
	c.Files.Versioning = ocsBool(cfg.Versions)
	c.Files.Favorites = ocsBool(cfg.Favorites)
	if len(cfg.PreviewTypes) > 0 {
		c.Files.Thumbnail = &thumbnail{Enabled: true, Version: "v0.1", SupportedMimeTypes: cfg.PreviewTypes}
	}
	if cfg.Sharing {
		c.FilesSharing, c.PasswordPolicy = sharingOn()
	}
	if cfg.TUS {
		c.Files.TUSSupport = &tusSupport{
			Version:      "1.0.0",
			Resumable:    "1.0.0",
			Extension:    "creation,creation-with-upload,checksum,expiration,termination",
			MaxChunkSize: cfg.TUSMaxChunkSize,
		}
	}
	return capabilitiesData{Capabilities: c, Version: versionOf(cfg.Status)}
}

// versionOf splits the status' version ("10.11.0.0") into its parts; parts
// that are missing or not numbers are 0.
func versionOf(s Status) version {
	v := version{String: s.VersionString, Edition: s.Edition, Product: s.Product, ProductVersion: s.ProductVersion}
	parts := strings.Split(s.Version, ".")
	for i, dst := range []*int{&v.Major, &v.Minor, &v.Micro} {
		if i < len(parts) {
			*dst, _ = strconv.Atoi(parts[i])
		}
	}
	return v
}

// serveCapabilities answers cloud/capabilities, with bulk upload for the
// clients it is offered to and the status r's client sees. The answer is
// the same with or without a user: nothing in it depends on one (oCIS
// answers user-dependent capabilities at cloud/user instead,
// cs3org/reva#4400).
func (h *Handler) serveCapabilities(w http.ResponseWriter, r *http.Request, v apiVersion, _ storage.User) {
	c := h.capabilities
	if !h.cfg.BulkUpload.OfferedTo(r.UserAgent()) {
		c = h.capabilitiesWithoutBulk
	}
	// core.status and the version say what status.php says to r's client.
	if status := h.statusFor(r); status != c.Capabilities.Core.Status {
		c.Capabilities.Core.Status, c.Version = status, versionOf(status)
	}
	writeOK(w, r, v, c)
}
