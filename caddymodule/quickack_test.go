package caddymodule

import (
	"os"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
)

// TestCaddyfileExampleAcksQuickly keeps quick_ack in the example's
// listener wrappers, before tls, where it wraps the TCP connection.
func TestCaddyfileExampleAcksQuickly(t *testing.T) {
	body, err := os.ReadFile("../Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	out := string(adaptCaddyfile(t, string(body)))
	want := `"listener_wrappers":[{"wrapper":"quick_ack"},{"wrapper":"tls"}]`
	if !strings.Contains(out, want) {
		t.Errorf("adapted example has no %s:\n%s", want, out)
	}
}

func TestQuickACKTakesNoArguments(t *testing.T) {
	cfg := "{\n\tservers {\n\t\tlistener_wrappers {\n\t\t\tquick_ack now\n\t\t}\n\t}\n}\n:8080\n"
	_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cfg), map[string]any{"filename": "Caddyfile"})
	if err == nil || !strings.Contains(err.Error(), "wrong argument count") {
		t.Errorf("quick_ack with an argument: err %v, want a wrong argument count", err)
	}
}
