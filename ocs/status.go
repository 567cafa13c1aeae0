package ocs

import (
	"encoding/json"
	"net/http"
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

// serveStatus answers /status.php. It needs no authentication: clients read
// it before they know how to sign in.
func (h *Handler) serveStatus(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := json.Marshal(h.cfg.Status)
	if err != nil {
		http.Error(w, "encoding the status failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(append(body, '\n'))
}
