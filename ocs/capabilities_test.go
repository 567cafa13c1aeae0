package ocs

import (
	"encoding/json"
	"encoding/xml"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// capabilitiesOf fetches the JSON capabilities as generic values.
func capabilitiesOf(t *testing.T, h *Handler, hdr ...string) map[string]any {
	t.Helper()
	w := serve(h, http.MethodGet, "/ocs/v2.php/cloud/capabilities?format=json", append([]string{"X-User", "einstein"}, hdr...)...)
	var env struct {
		OCS struct {
			Data struct {
				Capabilities map[string]any `json:"capabilities"`
				Version      map[string]any `json:"version"`
			} `json:"data"`
		} `json:"ocs"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	if env.OCS.Data.Version["major"] != float64(10) || env.OCS.Data.Version["minor"] != float64(11) {
		t.Errorf("version %v", env.OCS.Data.Version)
	}
	return env.OCS.Data.Capabilities
}

// lookup follows a dotted path through decoded JSON.
func lookup(m map[string]any, path string) any {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[k]
	}
	return v
}

// tusSupportJSON is files.tus_support when TUS is served.
var tusSupportJSON = map[string]any{
	"version": "1.0.0", "resumable": "1.0.0",
	"extension":      "creation,creation-with-upload,checksum,expiration,termination",
	"max_chunk_size": float64(0), "http_method_override": "",
}

func TestCapabilities(t *testing.T) {
	// Clients take what is advertised as a promise: a Nextcloud client
	// that sees dav.chunking uploads with chunking NG, the ownCloud client
	// that sees tus_support with TUS. Each appears only when served.
	tests := []struct {
		tus, chunked bool
		dav          map[string]any
		bigFile      bool
		tusSupport   any
	}{
		{tus: false, chunked: false, dav: map[string]any{"reports": searchReports}},
		{tus: true, chunked: false, dav: map[string]any{"reports": searchReports}, tusSupport: tusSupportJSON},
		{tus: false, chunked: true, dav: map[string]any{"chunking": "1.0", "reports": searchReports}, bigFile: true},
		{tus: true, chunked: true, dav: map[string]any{"chunking": "1.0", "reports": searchReports}, bigFile: true, tusSupport: tusSupportJSON},
	}
	for _, tt := range tests {
		c := capabilitiesOf(t, newUploadsHandler(t, tt.tus, tt.chunked))
		for path, want := range map[string]any{
			"core.webdav-root":              "remote.php/webdav",
			"core.pollinterval":             float64(60),
			"core.status.installed":         true,
			"core.status.productname":       "davspaces",
			"files.bigfilechunking":         tt.bigFile,
			"files.undelete":                false,
			"files.versioning":              false,
			"files.blacklisted_files":       []any{".htaccess"},
			"files.tus_support":             tt.tusSupport,
			"checksums.supportedTypes":      []any{"SHA1", "MD5", "ADLER32"},
			"checksums.preferredUploadType": "SHA1",
			"spaces.enabled":                true,
			"spaces.version":                "1.0.0",
			"spaces.projects":               true,
			"dav":                           tt.dav,
			// Nothing can be shared yet; ownCloud Web would take missing
			// flags for true.
			"files_sharing.api_enabled":    false,
			"files_sharing.public.enabled": false,
			// Nextcloud's apps ask for a user status only when enabled.
			"user_status.enabled": false,
		} {
			if got := lookup(c, path); !reflect.DeepEqual(got, want) {
				t.Errorf("tus %v, chunked %v: %s = %#v, want %#v", tt.tus, tt.chunked, path, got, want)
			}
		}
	}
}

func TestCapabilitiesBulkUpload(t *testing.T) {
	// Nextcloud's client sends its small files in batches to /dav/bulk
	// only when dav.bulkupload is advertised; the clients that fail a
	// batch with an empty file in it are left out unless all are asked for.
	const (
		broken  = "Mozilla/5.0 (Linux) mirall/3.7.3git (Nextcloud, debian-6.1.0 ClientArchitecture: x86_64 OsArchitecture: x86_64)"
		branded = "Mozilla/5.0 (Windows) mirall/3.4.0 (MyCloud, windows-10.0.19045 ClientArchitecture: x86_64 OsArchitecture: x86_64)"
		fixed   = "Mozilla/5.0 (Windows) mirall/3.9.50git (Nextcloud, windows-10.0.22621 ClientArchitecture: x86_64 OsArchitecture: x86_64)"
		later   = "Mozilla/5.0 (Macintosh) mirall/31.0.2 (Nextcloud, macos-24.5.0 ClientArchitecture: arm64 OsArchitecture: arm64)"
		older   = "Mozilla/5.0 (Linux) mirall/3.3.6 (Nextcloud, ubuntu-5.15 ClientArchitecture: x86_64 OsArchitecture: x86_64)"
		curl    = "curl/8.14.1"
	)
	for _, tt := range []struct {
		offer     BulkUpload
		userAgent string
		offered   bool
	}{
		{BulkUploadOff, fixed, false},
		{BulkUploadOff, curl, false},
		{BulkUploadAuto, fixed, true},
		{BulkUploadAuto, later, true},
		{BulkUploadAuto, older, true},
		{BulkUploadAuto, curl, true},
		{BulkUploadAuto, "", true},
		{BulkUploadAuto, broken, false},
		{BulkUploadAuto, branded, false},
		{BulkUploadAll, broken, true},
		{BulkUploadAll, fixed, true},
	} {
		h := newConfiguredHandler(t, func(cfg *Config) { cfg.BulkUpload = tt.offer })
		c := capabilitiesOf(t, h, "User-Agent", tt.userAgent)
		var want any
		if tt.offered {
			want = "1.0"
		}
		if got := lookup(c, "dav.bulkupload"); got != want {
			t.Errorf("offer %v to %q: dav.bulkupload = %#v, want %#v", tt.offer, tt.userAgent, got, want)
		}
	}
}

func TestParseBulkUpload(t *testing.T) {
	for name, want := range map[string]BulkUpload{"": BulkUploadAuto, "auto": BulkUploadAuto, "off": BulkUploadOff, "all": BulkUploadAll} {
		if got, err := ParseBulkUpload(name); err != nil || got != want {
			t.Errorf("ParseBulkUpload(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	if _, err := ParseBulkUpload("on"); err == nil {
		t.Error(`ParseBulkUpload("on"): no error`)
	}
}

func TestCapabilitiesXML(t *testing.T) {
	w := serve(newUploadsHandler(t, true, true), http.MethodGet, "/ocs/v1.php/cloud/capabilities", "X-User", "einstein")
	var env struct {
		Data struct {
			Capabilities struct {
				Core struct {
					WebDAVRoot string `xml:"webdav-root"`
					Status     struct {
						Installed string `xml:"installed"`
					} `xml:"status"`
				} `xml:"core"`
				DAV struct {
					Chunking string `xml:"chunking"`
				} `xml:"dav"`
				Files struct {
					Blacklisted []string `xml:"blacklisted_files>element"`
					Chunking    string   `xml:"bigfilechunking"`
					TUS         struct {
						Resumable string `xml:"resumable"`
					} `xml:"tus_support"`
				} `xml:"files"`
				Checksums struct {
					Types []string `xml:"supportedTypes>element"`
				} `xml:"checksums"`
				Spaces struct {
					Enabled string `xml:"enabled"`
				} `xml:"spaces"`
			} `xml:"capabilities"`
		} `xml:"data"`
	}
	if err := xml.Unmarshal(w.Body.Bytes(), &env); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	c := env.Data.Capabilities
	if c.Core.WebDAVRoot != "remote.php/webdav" || c.Core.Status.Installed != "1" ||
		!reflect.DeepEqual(c.Files.Blacklisted, []string{".htaccess"}) || c.Files.Chunking != "1" || c.DAV.Chunking != "1.0" ||
		c.Files.TUS.Resumable != "1.0.0" || !reflect.DeepEqual(c.Checksums.Types, []string{"SHA1", "MD5", "ADLER32"}) ||
		c.Spaces.Enabled != "1" {
		t.Errorf("capabilities %+v from %s", c, w.Body)
	}
}

func TestCapabilitiesUndo(t *testing.T) {
	// The ownCloud web UI shows deleted files when dav.trashbin is "1.0"
	// and files.undelete is true; the mobile apps read files.undelete and
	// files.versioning as JSON booleans. Each is advertised only when the
	// handler keeps what it names.
	for _, tt := range []struct {
		trash, versions bool
		dav             map[string]any
	}{
		{trash: false, versions: false, dav: map[string]any{"reports": searchReports}},
		{trash: true, versions: false, dav: map[string]any{"trashbin": "1.0", "reports": searchReports}},
		{trash: false, versions: true, dav: map[string]any{"reports": searchReports}},
		{trash: true, versions: true, dav: map[string]any{"trashbin": "1.0", "reports": searchReports}},
	} {
		h := newConfiguredHandler(t, func(cfg *Config) { cfg.Trash, cfg.Versions = tt.trash, tt.versions })
		c := capabilitiesOf(t, h)
		for path, want := range map[string]any{
			"dav":              tt.dav,
			"files.undelete":   tt.trash,
			"files.versioning": tt.versions,
		} {
			if got := lookup(c, path); !reflect.DeepEqual(got, want) {
				t.Errorf("trash %v, versions %v: %s = %#v, want %#v", tt.trash, tt.versions, path, got, want)
			}
		}
	}

	// XML carries the booleans as 1 and 0, as everywhere in OCS.
	h := newConfiguredHandler(t, func(cfg *Config) { cfg.Trash, cfg.Versions = true, true })
	w := serve(h, http.MethodGet, "/ocs/v1.php/cloud/capabilities", "X-User", "einstein")
	var env struct {
		Data struct {
			Capabilities struct {
				DAV struct {
					Trashbin string `xml:"trashbin"`
				} `xml:"dav"`
				Files struct {
					Undelete   string `xml:"undelete"`
					Versioning string `xml:"versioning"`
				} `xml:"files"`
			} `xml:"capabilities"`
		} `xml:"data"`
	}
	if err := xml.Unmarshal(w.Body.Bytes(), &env); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	if c := env.Data.Capabilities; c.DAV.Trashbin != "1.0" || c.Files.Undelete != "1" || c.Files.Versioning != "1" {
		t.Errorf("XML capabilities %+v from %s", c, w.Body)
	}
}

func TestVersionOf(t *testing.T) {
	for _, tc := range []struct {
		in                  string
		major, minor, micro int
	}{
		{"10.11.0.0", 10, 11, 0},
		{"10.0.11.5", 10, 0, 11},
		{"11", 11, 0, 0},
		{"", 0, 0, 0},
		{"x.2", 0, 2, 0},
	} {
		v := versionOf(Status{Version: tc.in})
		if v.Major != tc.major || v.Minor != tc.minor || v.Micro != tc.micro {
			t.Errorf("versionOf(%q) = %d.%d.%d", tc.in, v.Major, v.Minor, v.Micro)
		}
	}
}

func TestCapabilitiesThumbnail(t *testing.T) {
	// ownCloud Web asks for previews only when files.thumbnail is enabled,
	// and only for its supportedMimeTypes.
	c := capabilitiesOf(t, newConfiguredHandler(t, func(cfg *Config) {}))
	if got := lookup(c, "files.thumbnail"); got != nil {
		t.Errorf("without previews: files.thumbnail = %#v, want none", got)
	}
	c = capabilitiesOf(t, newConfiguredHandler(t, func(cfg *Config) { cfg.PreviewTypes = []string{"image/png", "text/plain"} }))
	for path, want := range map[string]any{
		"files.thumbnail.enabled":            true,
		"files.thumbnail.version":            "v0.1",
		"files.thumbnail.supportedMimeTypes": []any{"image/png", "text/plain"},
	} {
		if got := lookup(c, path); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", path, got, want)
		}
	}
}

// TestCapabilitiesForWeb: ownCloud Web offers favourites only with
// files.favorites (web-pkg/src/composables/piniaStores/capabilities.ts),
// and uploads with TUS only when max_chunk_size is above 0
// (web-pkg/src/services/uppy/uppyService.ts); it reads the capabilities
// before a public link's visitor has signed in, as oCIS allows.
func TestCapabilitiesForWeb(t *testing.T) {
	tests := []struct {
		name      string
		favorites bool
		chunk     int64
		user      []string
	}{
		{"defaults", false, 0, []string{"X-User", "einstein"}},
		{"favourites and a chunk size", true, 10_000_000, []string{"X-User", "einstein"}},
		{"anonymous", true, 10_000_000, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newConfiguredHandler(t, func(cfg *Config) {
				cfg.TUS, cfg.Favorites, cfg.TUSMaxChunkSize = true, tt.favorites, tt.chunk
			})
			w := serve(h, http.MethodGet, "/ocs/v2.php/cloud/capabilities?format=json", tt.user...)
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			var env struct {
				OCS struct {
					Data struct {
						Capabilities map[string]any `json:"capabilities"`
					} `json:"data"`
				} `json:"ocs"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
				t.Fatal(err)
			}
			c := env.OCS.Data.Capabilities
			if got := lookup(c, "files.favorites"); got != tt.favorites {
				t.Errorf("files.favorites = %v, want %v", got, tt.favorites)
			}
			if got := lookup(c, "files.tus_support.max_chunk_size"); got != float64(tt.chunk) {
				t.Errorf("max_chunk_size = %v, want %d", got, tt.chunk)
			}
		})
	}
}
