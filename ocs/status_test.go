package ocs

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestStatusByUserAgent: with Login Flow v2 offered, Nextcloud's clients
// see version 16, at which they sign in by it; every other client sees
// what it always saw, and the capabilities say the same as status.php to
// each.
func TestStatusByUserAgent(t *testing.T) {
	const (
		ncDesktop    = "Mozilla/5.0 (Linux) mirall/3.7.3git (Nextcloud, debian-6.1.0 ClientArchitecture: x86_64 OsArchitecture: x86_64)"
		nextcloudcmd = "Mozilla/5.0 (Linux) mirall/3.7.3git (nextcloudcmd, debian-6.1.0 ClientArchitecture: x86_64 OsArchitecture: x86_64)"
		ncAndroid    = "Mozilla/5.0 (Android) Nextcloud-android/3.30.1"
		ncIOS        = "Mozilla/5.0 (iOS) Nextcloud-iOS/5.5.0"
		owncloudcmd  = "Mozilla/5.0 (Linux) mirall/5.3.2 (ownCloud, ubuntu-6.8 ClientArchitecture: x86_64 OsArchitecture: x86_64)"
		ocAndroid    = "Mozilla/5.0 (Android) ownCloud-android/4.5.1"
		rclone       = "rclone/v1.68.2"
	)
	for _, tc := range []struct {
		loginFlow bool
		agent     string
		version   string
	}{
		{true, ncDesktop, "20.0.0.0"},
		{true, nextcloudcmd, "20.0.0.0"},
		{true, ncAndroid, "20.0.0.0"},
		{true, ncIOS, "20.0.0.0"},
		{true, owncloudcmd, "10.11.0.0"},
		{true, ocAndroid, "10.11.0.0"},
		{true, rclone, "10.11.0.0"},
		{true, "", "10.11.0.0"},
		{false, nextcloudcmd, "10.11.0.0"},
	} {
		h := newConfiguredHandler(t, func(cfg *Config) { cfg.LoginFlow = tc.loginFlow })
		var status map[string]any
		w := serve(h, http.MethodGet, "/status.php", "User-Agent", tc.agent)
		if err := json.Unmarshal(w.Body.Bytes(), &status); err != nil {
			t.Fatal(err)
		}
		var caps struct {
			OCS struct {
				Data struct {
					Version struct {
						Major          int
						String         string
						ProductVersion string
					}
					Capabilities struct {
						Core struct{ Status map[string]any }
					}
				}
			}
		}
		w = serve(h, http.MethodGet, "/ocs/v2.php/cloud/capabilities?format=json", "User-Agent", tc.agent, "X-User", "alice")
		if err := json.Unmarshal(w.Body.Bytes(), &caps); err != nil {
			t.Fatal(err)
		}
		if status["version"] != tc.version || status["productversion"] != "1.2.3" {
			t.Errorf("login flow %v, %q: status.php %v, want version %s", tc.loginFlow, tc.agent, status, tc.version)
		}
		for k, v := range status {
			if got := caps.OCS.Data.Capabilities.Core.Status[k]; got != v {
				t.Errorf("login flow %v, %q: core.status.%s = %v, status.php says %v", tc.loginFlow, tc.agent, k, got, v)
			}
		}
		if v := caps.OCS.Data.Version; v.String != status["versionstring"] || (v.Major == 20) != (tc.version == "20.0.0.0") {
			t.Errorf("login flow %v, %q: capabilities' version %+v, status.php %v", tc.loginFlow, tc.agent, v, status)
		}
	}
}
