package clientstub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// statusJSON is davspaces' /status.php.
const statusJSON = `{"installed":true,"maintenance":false,"needsDbUpgrade":false,"version":"10.11.0.0","versionstring":"10.11.0","edition":"Community","productname":"davspaces","product":"davspaces","productversion":"stub"}`

// capabilities are davspaces' capabilities as far as they steer the sync
// clients' choice of jobs: the WebDAV root, chunking NG, TUS with
// creation-with-upload, the checksums.
const capabilities = `{"core":{"pollinterval":60,"webdav-root":"remote.php/webdav","status":` + statusJSON + `},` +
	`"dav":{"chunking":"1.0"},` +
	`"files":{"bigfilechunking":true,"blacklisted_files":[".htaccess"],"undelete":false,"versioning":false,` +
	`"tus_support":{"version":"1.0.0","resumable":"1.0.0","extension":"creation,creation-with-upload,checksum,expiration,termination","max_chunk_size":0,"http_method_override":""}},` +
	`"checksums":{"supportedTypes":["SHA1","MD5","ADLER32"],"preferredUploadType":"SHA1"}}`

const version = `{"major":10,"minor":11,"micro":0,"string":"10.11.0","edition":"Community","product":"davspaces","productversion":"stub"}`

func writeJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	fmt.Fprint(w, body)
}

// serveOCS answers the capabilities and the user, in JSON, in the envelope
// of OCS version 1 (status code 100) or 2 (200).
func (s *Server) serveOCS(w http.ResponseWriter, r *http.Request) {
	u := user(w, r)
	if u == "" {
		return
	}
	code := 100
	if strings.HasPrefix(r.URL.Path, "/ocs/v2.php/") {
		code = 200
	}
	var data string
	switch strings.TrimSuffix(r.URL.Path[len("/ocs/v1.php"):], "/") {
	case "/cloud/capabilities":
		caps := capabilities
		if s.bulk {
			caps = strings.Replace(caps, `"dav":{`, `"dav":{"bulkupload":"1.0",`, 1)
		}
		data = `{"capabilities":` + caps + `,"version":` + version + `}`
	case "/cloud/user":
		name, _ := json.Marshal(u)
		data = fmt.Sprintf(`{"id":%s,"display-name":%s,"email":""}`, name, name)
	default:
		http.NotFound(w, r)
		return
	}
	writeJSON(w, fmt.Sprintf(`{"ocs":{"meta":{"status":"ok","statuscode":%d,"message":"OK"},"data":%s}}`, code, data))
}
