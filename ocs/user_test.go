package ocs

import (
	"encoding/json"
	"encoding/xml"
	"net/http"
	"testing"
)

func TestUser(t *testing.T) {
	h := newTestHandler(t, true)
	for _, tc := range []struct {
		name string
		hdr  []string
		want cloudUser
	}{
		{"full", []string{"X-User", "einstein", "X-Name", "Albert Einstein", "X-Email", "einstein@example.org"},
			cloudUser{ID: "einstein", DisplayName: "Albert Einstein", Email: "einstein@example.org"}},
		{"no name falls back to the id", []string{"X-User", "marie"}, cloudUser{ID: "marie", DisplayName: "marie"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []string{"v1", "v2"} {
				w := serve(h, http.MethodGet, "/ocs/"+v+".php/cloud/user?format=json", tc.hdr...)
				var env struct {
					OCS struct {
						Data cloudUser `json:"data"`
					} `json:"ocs"`
				}
				if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || env.OCS.Data != tc.want {
					t.Errorf("%s JSON: %+v (%v), want %+v", v, env.OCS.Data, err, tc.want)
				}
				w = serve(h, http.MethodGet, "/ocs/"+v+".php/cloud/user", tc.hdr...)
				var x struct {
					Data cloudUser `xml:"data"`
				}
				if err := xml.Unmarshal(w.Body.Bytes(), &x); err != nil || x.Data != tc.want {
					t.Errorf("%s XML: %+v (%v), want %+v", v, x.Data, err, tc.want)
				}
			}
		})
	}
}
