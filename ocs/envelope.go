package ocs

import (
	"encoding/json"
	"encoding/xml"
	"net/http"
	"strconv"
)

// apiVersion is the OCS API version of an endpoint: v1 and v2 differ in
// their path and in the status codes of the envelope.
type apiVersion int

const (
	v1 apiVersion = 1
	v2 apiVersion = 2
)

func (v apiVersion) prefix() string {
	return "/ocs/v" + strconv.Itoa(int(v)) + ".php"
}

// statusCode is the envelope's statuscode for an HTTP status. OCS v1 has
// codes of its own (100 ok, 997 unauthorised, 998 not found, 999 other)
// but repeats 400 and 403, as ownCloud's sharing API answers them; v2
// repeats the HTTP status.
func (v apiVersion) statusCode(httpStatus int) int {
	if v == v2 {
		return httpStatus
	}
	switch httpStatus {
	case http.StatusOK:
		return 100
	case http.StatusUnauthorized:
		return 997
	case http.StatusNotFound:
		return 998
	case http.StatusBadRequest, http.StatusForbidden:
		return httpStatus
	}
	return 999
}

// meta is the envelope's status part.
type meta struct {
	Status     string `json:"status" xml:"status"`
	StatusCode int    `json:"statuscode" xml:"statuscode"`
	Message    string `json:"message" xml:"message"`
}

// envelope is the OCS answer document.
type envelope struct {
	XMLName xml.Name `json:"-" xml:"ocs"`
	Meta    meta     `json:"meta" xml:"meta"`
	Data    any      `json:"data" xml:"data"`
}

// emptyData is the data of an error: [] in JSON as ownCloud sends it, and
// an empty element in XML.
type emptyData []struct{}

func (emptyData) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	return e.EncodeElement("", start)
}

// writeOK answers data in the envelope.
func writeOK(w http.ResponseWriter, r *http.Request, v apiVersion, data any) {
	write(w, r, v, http.StatusOK, meta{Status: "ok", StatusCode: v.statusCode(http.StatusOK), Message: "OK"}, data)
}

// writeError answers a failure in the envelope. The HTTP status is the
// failure's in v1 too, although ownCloud 10 answers most v1 failures with
// 200: a 401 is what makes the desktop clients ask for credentials again
// (ownCloud and Nextcloud send 401 for statuscode 997 in v1 as well), and a
// 404 tells any client, and the access log, that nothing is there.
func writeError(w http.ResponseWriter, r *http.Request, v apiVersion, httpStatus int, message string) {
	write(w, r, v, httpStatus, meta{Status: "failure", StatusCode: v.statusCode(httpStatus), Message: message}, emptyData{})
}

func write(w http.ResponseWriter, r *http.Request, v apiVersion, httpStatus int, m meta, data any) {
	env := envelope{Meta: m, Data: data}
	var body []byte
	var err error
	contentType := "application/json; charset=utf-8"
	if wantsJSON(r) {
		body, err = json.Marshal(struct {
			OCS envelope `json:"ocs"`
		}{env})
	} else {
		contentType = "application/xml; charset=utf-8"
		body, err = xml.Marshal(env)
		body = append([]byte(xml.Header), body...)
	}
	if err != nil {
		http.Error(w, "encoding the answer failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("OCS-API-Version", strconv.Itoa(int(v)))
	w.WriteHeader(httpStatus)
	w.Write(append(body, '\n'))
}

// wantsJSON reports whether the client asked for JSON with format=json;
// XML is the OCS default.
func wantsJSON(r *http.Request) bool {
	return r.URL.Query().Get("format") == "json"
}

// ocsBool is a boolean that OCS XML writes as 1 or 0 (and JSON as true or
// false), as ownCloud does.
type ocsBool bool

func (b ocsBool) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	s := "0"
	if b {
		s = "1"
	}
	return e.EncodeElement(s, start)
}
