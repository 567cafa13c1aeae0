package webfinger

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// Media types of the answer. RFC 7033 §10.2 registers jrd+json, but the
// ownCloud desktop client (discoverwebfingerserviceadapter.cpp) refuses
// any answer whose type does not contain "application/json", and oCIS,
// whose clients these are, sends application/json. So that is the
// default, and jrd+json goes to clients that ask for it.
const (
	typeJSON = "application/json"
	typeJRD  = "application/jrd+json"
)

// jrd is the JSON Resource Descriptor of RFC 7033 §4.4, reduced to the
// members this service fills.
type jrd struct {
	Subject string `json:"subject"`
	// Links is never nil, so the document always carries "links": clients
	// can tell "no links for you" from a truncated answer.
	Links []link `json:"links"`
}

type link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
	// Titles is the rule's titles object, encoded once by encodeTitles:
	// encoding a map per lookup would cost more than the rest of the
	// answer.
	Titles json.RawMessage `json:"titles,omitempty"`
}

// encodeTitles encodes a titles map as writeJRD would have; nil when
// there are none, so that the member is omitted.
func encodeTitles(titles map[string]string) (json.RawMessage, error) {
	if len(titles) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(titles); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeJRD answers 200 with doc. The body is encoded before the header is
// written so that HEAD gets the Content-Length GET would have had.
func writeJRD(w http.ResponseWriter, r *http.Request, doc *jrd, signedIn bool) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// hrefs are URLs full of '&'; escaping them for HTML would only make
	// the document harder to read, it is never embedded in a page.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		// Strings and valid raw JSON always encode; this is unreachable.
		panic("webfinger: encoding JRD: " + err.Error())
	}
	h := w.Header()
	h.Set("Content-Type", mediaType(r.Header.Values("Accept")))
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	// A signed-in answer lists the user's instances: no cache may keep it.
	// The anonymous answer is public but must follow configuration changes.
	if signedIn {
		h.Set("Cache-Control", "no-store")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}

// mediaType returns typeJRD when an Accept header names it (with a
// non-zero quality), else typeJSON.
func mediaType(accept []string) string {
	for _, header := range accept {
		for _, mediaRange := range strings.Split(header, ",") {
			name, params, _ := strings.Cut(mediaRange, ";")
			if strings.EqualFold(strings.TrimSpace(name), typeJRD) && !zeroQuality(params) {
				return typeJRD
			}
		}
	}
	return typeJSON
}

// zeroQuality reports whether a media range's parameters give it q=0
// (RFC 9110 §12.4.2).
func zeroQuality(params string) bool {
	for _, param := range strings.Split(params, ";") {
		key, value, _ := strings.Cut(param, "=")
		if strings.EqualFold(strings.TrimSpace(key), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			return err == nil && q == 0
		}
	}
	return false
}
