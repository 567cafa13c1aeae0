package ocs

import (
	"encoding/xml"
	"net/http"
	"reflect"
	"testing"
)

// TestCapabilitiesSharing: with sharing served, files_sharing says what
// works, and says false for every feature ownCloud Web takes for granted
// when it is missing but davspaces does not have.
func TestCapabilitiesSharing(t *testing.T) {
	c := capabilitiesOf(t, newConfiguredHandler(t, func(cfg *Config) { cfg.Sharing = true }))
	for path, want := range map[string]any{
		"files_sharing.api_enabled":                              true,
		"files_sharing.group_sharing":                            true,
		"files_sharing.resharing":                                false,
		"files_sharing.auto_accept_share":                        true,
		"files_sharing.search_min_length":                        float64(3),
		"files_sharing.can_rename":                               false,
		"files_sharing.allow_custom":                             false,
		"files_sharing.deny_access":                              false,
		"files_sharing.federation.outgoing":                      false,
		"files_sharing.public.enabled":                           true,
		"files_sharing.public.can_edit":                          true,
		"files_sharing.public.can_contribute":                    true,
		"files_sharing.public.supports_upload_only":              true,
		"files_sharing.public.alias":                             false,
		"files_sharing.public.default_permissions":               float64(1),
		"files_sharing.public.password.enforced":                 false,
		"files_sharing.public.password.enforced_for.read_only":   false,
		"files_sharing.public.password.enforced_for.upload_only": false,
		"files_sharing.public.password.enforced_for.read_write":  false,
		"files_sharing.public.expire_date.enabled":               false,
		"password_policy.min_characters":                         float64(8),
		"password_policy.max_characters":                         float64(72),
	} {
		if got := lookup(c, path); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", path, got, want)
		}
	}

	// Without sharing: the two flags, false, and nothing else.
	off := capabilitiesOf(t, newConfiguredHandler(t, func(*Config) {}))
	if got := lookup(off, "files_sharing"); !reflect.DeepEqual(got, map[string]any{
		"api_enabled": false, "resharing": false, "group_sharing": false, "public": map[string]any{"enabled": false},
	}) {
		t.Errorf("files_sharing without sharing: %#v", got)
	}
	if got := lookup(off, "password_policy"); got != nil {
		t.Errorf("password_policy without sharing: %#v", got)
	}
}

func TestCapabilitiesSharingXML(t *testing.T) {
	h := newConfiguredHandler(t, func(cfg *Config) { cfg.Sharing = true })
	w := serve(h, http.MethodGet, "/ocs/v1.php/cloud/capabilities", "X-User", "einstein")
	var env struct {
		Data struct {
			Capabilities struct {
				FilesSharing struct {
					APIEnabled string `xml:"api_enabled"`
					CanRename  string `xml:"can_rename"`
					Public     struct {
						Enabled string `xml:"enabled"`
						CanEdit string `xml:"can_edit"`
					} `xml:"public"`
				} `xml:"files_sharing"`
			} `xml:"capabilities"`
		} `xml:"data"`
	}
	if err := xml.Unmarshal(w.Body.Bytes(), &env); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	fs := env.Data.Capabilities.FilesSharing
	if fs.APIEnabled != "1" || fs.CanRename != "0" || fs.Public.Enabled != "1" || fs.Public.CanEdit != "1" {
		t.Errorf("files_sharing in XML %+v\n%s", fs, w.Body)
	}
}
