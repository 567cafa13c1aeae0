package ocs

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// Status is the server's status document, as /status.php answers it and
// the capabilities' core.status repeats it. Clients compare version with
// the ownCloud releases they know, so it names the ownCloud 10 API level
// davspaces follows; productversion is davspaces' own.
type Status struct {
	Installed      ocsBool `json:"installed" xml:"installed"`
	Maintenance    ocsBool `json:"maintenance" xml:"maintenance"`
	NeedsDBUpgrade ocsBool `json:"needsDbUpgrade" xml:"needsDbUpgrade"`
	Version        string  `json:"version" xml:"version"`
	VersionString  string  `json:"versionstring" xml:"versionstring"`
	Edition        string  `json:"edition" xml:"edition"`
	ProductName    string  `json:"productname" xml:"productname"`
	Product        string  `json:"product" xml:"product"`
	ProductVersion string  `json:"productversion" xml:"productversion"`
}

// DefaultStatus is the status of a running davspaces of the given version
// ("" when unknown, as in a build without module information).
func DefaultStatus(productVersion string) Status {
	if productVersion == "" {
		productVersion = "devel"
	}
	return Status{
		Installed:      true,
		Version:        "10.11.0.0",
		VersionString:  "10.11.0",
		Edition:        "Community",
		ProductName:    "davspaces",
		Product:        "davspaces",
		ProductVersion: productVersion,
	}
}

// The version Nextcloud's clients see when the server offers Login Flow
// v2. From 16 on they sign in by it, a browser's grant and an app password
// (nextcloud/desktop src/libsync/networkjobs.cpp
// DetermineAuthTypeJob::checkAllDone); below it they ask for a password,
// which a user who signs in with OpenID Connect does not have. Newer
// clients pause every folder below their least supported server (18 or
// 20: VERSION.cmake NEXTCLOUD_SERVER_VERSION_MIN_SUPPORTED_MAJOR; the
// Android app's MINIMUM_SUPPORTED_SERVER_VERSION is 17). 20 stays below
// what switches on features this server lacks: the username prefill and
// checksum recalculation at 24 (src/libsync/account.cpp), secure file
// drop at 26, nc:is-mount-root at 28.0.3.
const (
	nextcloudVersion       = "20.0.0.0"
	nextcloudVersionString = "20.0.0"
)

// NextcloudStatus is s as Nextcloud's clients see it when the server
// offers Login Flow v2.
func NextcloudStatus(s Status) Status {
	s.Version, s.VersionString = nextcloudVersion, nextcloudVersionString
	return s
}

// IsNextcloudClient reports whether userAgent is one of Nextcloud's
// clients: the desktop client ("Mozilla/5.0 (Linux) mirall/3.7.3git
// (Nextcloud, …)", nextcloud/desktop src/common/utility.cpp
// userAgentString), nextcloudcmd ("… (nextcloudcmd, …)", which signs in
// with the password it is given but syncs as the desktop client does),
// the Android app ("…Nextcloud-android/…") and the iOS app
// ("…Nextcloud-iOS/…"). ownCloud's clients ("mirall/… (ownCloud, …)",
// "ownCloudApp/…") are not.
func IsNextcloudClient(userAgent string) bool {
	for _, mark := range []string{"(Nextcloud,", "(nextcloudcmd,", "Nextcloud-"} {
		if strings.Contains(userAgent, mark) {
			return true
		}
	}
	return false
}

// statusFor is the status r's client sees.
func (h *Handler) statusFor(r *http.Request) Status {
	if h.cfg.LoginFlow && IsNextcloudClient(r.UserAgent()) {
		return NextcloudStatus(h.cfg.Status)
	}
	return h.cfg.Status
}

// serveStatus answers /status.php. It needs no authentication: clients read
// it before they know how to sign in.
func (h *Handler) serveStatus(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	status := h.statusFor(r)
	if h.health(r.Context()) != nil {
		// Clients that read it stop syncing and say why, instead of
		// running into errors; the document keeps its shape.
		status.Maintenance = true
	}
	body, err := json.Marshal(status)
	if err != nil {
		http.Error(w, "encoding the status failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(append(body, '\n'))
}

// HealthPath answers a load balancer's health check: 200 "ok" while the
// store's backends answer, 503 with Retry-After while they are stalled or
// down. Like /status.php it needs no authentication and says nothing of
// the cause (the node's log does).
const HealthPath = "/healthz"

// healthRetryAfter is the Retry-After of an unhealthy answer, in seconds.
const healthRetryAfter = "5"

func (h *Handler) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if h.health(r.Context()) != nil {
		w.Header().Set("Retry-After", healthRetryAfter)
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("unavailable\n"))
		return
	}
	w.Write([]byte("ok\n"))
}

// health is the store's health, nil without a Config.Health.
func (h *Handler) health(ctx context.Context) error {
	if h.cfg.Health == nil {
		return nil
	}
	return h.cfg.Health(ctx)
}
