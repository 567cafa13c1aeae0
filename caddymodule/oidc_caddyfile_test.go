package caddymodule

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/davspaces/davspaces/identity"
)

func TestUnmarshalOIDCAuth(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string // JSON of the handler
	}{
		{
			name: "issuer only",
			input: `oidc_auth {
	issuer https://idp.example.org
}`,
			want: `{"issuer":"https://idp.example.org"}`,
		},
		{
			name: "every option",
			input: `oidc_auth {
				issuer {env.OIDC_ISSUER}
				audience urn:api other
				algorithms RS256 ES256
				insecure
				timeout 3s
				leeway 1m
				cache_size 500
				opaque_ttl 30s
				user_claim sub
				name_claim given_name
				groups_claim roles
				realm files
				token_rate 0.5 40
				userinfo_concurrency 4
				introspection davspaces {env.OIDC_SECRET} https://idp.example.org/introspect
			}`,
			want: `{"issuer":"{env.OIDC_ISSUER}","audiences":["urn:api","other"],` +
				`"introspection":{"client_id":"davspaces","client_secret":"{env.OIDC_SECRET}","endpoint":"https://idp.example.org/introspect"},` +
				`"algorithms":["RS256","ES256"],` +
				`"insecure":true,"timeout":3000000000,"leeway":60000000000,"cache_size":500,"opaque_ttl":30000000000,` +
				`"userinfo_concurrency":4,"token_rate":0.5,"token_burst":40,` +
				`"user_claim":"sub","name_claim":"given_name","groups_claim":"roles","realm":"files"}`,
		},
		{
			name: "introspection endpoint discovered",
			input: `oidc_auth {
				issuer https://idp.example.org
				introspection davspaces s3cret
			}`,
			want: `{"issuer":"https://idp.example.org","introspection":{"client_id":"davspaces","client_secret":"s3cret"}}`,
		},
		{
			name: "basic fallback",
			input: `oidc_auth {
				issuer https://idp.example.org
				basic {
					einstein $2a$10$hash
				}
			}`,
			want: `{"issuer":"https://idp.example.org","providers":{"http_basic":{"hash":{"algorithm":"bcrypt"},` +
				`"accounts":[{"username":"einstein","password":"$2a$10$hash"}],"hash_cache":{}}}}`,
		},
		{
			name: "basic with hash and realm",
			input: `oidc_auth {
				issuer https://idp.example.org
				basic argon2id dev {
					marie $argon2id$hash
				}
			}`,
			want: `{"issuer":"https://idp.example.org","providers":{"http_basic":{"hash":{"algorithm":"argon2id"},` +
				`"accounts":[{"username":"marie","password":"$argon2id$hash"}],"realm":"dev","hash_cache":{}}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a OIDCAuth
			if err := a.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input)); err != nil {
				t.Fatal(err)
			}
			assertJSON(t, a, tt.want)
		})
	}
}

func TestUnmarshalWebFinger(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{
			name: "issuer only: the default rule",
			input: `webfinger {
	issuer https://idp.example.org
}`,
			want: `{"issuer":"https://idp.example.org"}`,
		},
		{
			name: "the token budget and introspection of oidc_auth",
			input: `webfinger {
	issuer https://idp.example.org
	audience urn:api
	introspection davspaces s3cret
	token_rate 1 10
}`,
			want: `{"issuer":"https://idp.example.org","audiences":["urn:api"],` +
				`"introspection":{"client_id":"davspaces","client_secret":"s3cret"},"token_rate":1,"token_burst":10}`,
		},
		{
			name: "platform url names the issuer too",
			input: `webfinger {
	platform_url https://cloud.example.org
}`,
			want: `{"platform_url":"https://cloud.example.org"}`,
		},
		{
			name: "rules",
			input: `webfinger {
				issuer https://idp.example.org
				platform_url https://cloud.example.org
				insecure
				relations http://openid.net/specs/connect/1.0/issuer
				instance {
					claim email
					regex "@example\.org$"
					href "https://{{.preferred_username}}.example.org"
					title en "Your server"
					title de "Ihr Server"
					break
				}
				instance {
					claim sub
					regex .+
					href {{.OCIS_URL}}
				}
			}`,
			want: `{"issuer":"https://idp.example.org","insecure":true,"platform_url":"https://cloud.example.org",` +
				`"relations":["http://openid.net/specs/connect/1.0/issuer"],"instances":[` +
				`{"claim":"email","regex":"@example\\.org$","href":"https://{{.preferred_username}}.example.org","titles":{"de":"Ihr Server","en":"Your server"},"break":true},` +
				`{"claim":"sub","regex":".+","href":"{{.OCIS_URL}}"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var wf WebFinger
			if err := wf.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input)); err != nil {
				t.Fatal(err)
			}
			assertJSON(t, wf, tt.want)
		})
	}
}

func assertJSON(t *testing.T, v any, want string) {
	t.Helper()
	got := caddyconfig.JSON(v, nil)
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("JSON\n got  %s\n want %s", got, want)
	}
}

func TestOIDCCaddyfileErrors(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{"oidc_auth without issuer", `oidc_auth {
	user_claim sub
}`, "needs an issuer"},
		{"oidc_auth argument", `oidc_auth https://idp {
}`, "wrong argument count"},
		{"oidc_auth unknown", `oidc_auth {
	issuer https://idp
			color blue
}`, "unrecognized subdirective: color"},
		{"bad duration", `oidc_auth {
	issuer https://idp
			timeout soon
}`, `invalid duration "soon"`},
		{"negative duration", `oidc_auth {
	issuer https://idp
			leeway -1s
}`, `invalid duration "-1s"`},
		{"bad cache size", `oidc_auth {
	issuer https://idp
			cache_size 0
}`, `cache_size "0" must be a positive number`},
		{"bad userinfo concurrency", `oidc_auth {
	issuer https://idp
			userinfo_concurrency many
}`, `userinfo_concurrency "many" must be a positive number`},
		{"token rate zero", `oidc_auth {
	issuer https://idp
			token_rate 0
}`, `token_rate "0" must be a positive number of tokens per second`},
		{"token rate not a number", `oidc_auth {
	issuer https://idp
			token_rate fast
}`, `token_rate "fast" must be a positive number`},
		{"token burst zero", `oidc_auth {
	issuer https://idp
			token_rate 1 0
}`, `token_rate burst "0" must be a positive number`},
		{"token rate without arguments", `oidc_auth {
	issuer https://idp
			token_rate
}`, "wrong argument count"},
		{"token rate with three arguments", `oidc_auth {
	issuer https://idp
			token_rate 1 2 3
}`, "wrong argument count"},
		{"introspection without secret", `oidc_auth {
	issuer https://idp
			introspection davspaces
}`, "wrong argument count"},
		{"introspection with four arguments", `oidc_auth {
	issuer https://idp
			introspection a b https://idp/introspect more
}`, "wrong argument count"},
		{"insecure with argument", `oidc_auth {
	issuer https://idp
			insecure yes
}`, "wrong argument count"},
		{"basic unknown hash", `oidc_auth {
	issuer https://idp
			basic md5 {
				a b
			}
}`, "unrecognized hash algorithm: md5"},
		{"basic without accounts", `oidc_auth {
	issuer https://idp
			basic {
			}
}`, "no accounts"},
		{"basic account without hash", `oidc_auth {
	issuer https://idp
			basic {
				einstein
			}
}`, "needs a username and a hashed password"},
		{"webfinger without issuer", `webfinger {
	relations x
}`, "needs an issuer"},
		{"webfinger unknown", `webfinger {
	issuer https://idp
			rule
}`, "unrecognized subdirective: rule"},
		{"instance unknown", `webfinger {
	issuer https://idp
			instance {
				color blue
			}
}`, "unrecognized instance subdirective: color"},
		{"instance bad regex", `webfinger {
	issuer https://idp
			instance {
				claim sub
				regex (
				href https://x
			}
}`, "regex"},
		{"instance bad template", `webfinger {
	issuer https://idp
			instance {
				claim sub
				regex .+
				href {{invalid}}ee
			}
}`, "href"},
		{"instance title without text", `webfinger {
	issuer https://idp
			instance {
				title en
			}
}`, "wrong argument count"},
		{"instance break with argument", `webfinger {
	issuer https://idp
			instance {
				break now
			}
}`, "wrong argument count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := caddyfile.NewTestDispenser(tt.input)
			var err error
			if strings.HasPrefix(tt.input, "oidc_auth") {
				err = new(OIDCAuth).UnmarshalCaddyfile(d)
			} else {
				err = new(WebFinger).UnmarshalCaddyfile(d)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestAdaptOrdersAuthAndLookup(t *testing.T) {
	out := adaptCaddyfile(t, `http://localhost:9080 {
	davspaces
	oidc_auth {
		issuer https://idp.example.org
	}
	webfinger {
		issuer https://idp.example.org
	}
	header X-Test yes
}
`)
	handlers := handlerChain(t, out)
	hdr, wf := slices.Index(handlers, "headers"), slices.Index(handlers, "webfinger")
	auth, dav := slices.Index(handlers, "oidc_auth"), slices.Index(handlers, "davspaces")
	if !(hdr < wf && wf < auth && auth < dav) || hdr < 0 {
		t.Fatalf("handler chain %v: want headers, webfinger, oidc_auth, davspaces", handlers)
	}
}

func TestOIDCIdentityConfig(t *testing.T) {
	t.Setenv("TEST_OIDC_ISSUER", "https://idp.example.org/realms/x")
	o := OIDC{Issuer: "{env.TEST_OIDC_ISSUER}", Timeout: caddy.Duration(time.Second), CacheSize: 5}
	cfg := o.identityConfig()
	if cfg.Issuer != "https://idp.example.org/realms/x" || cfg.Timeout != time.Second || cfg.CacheSize != 5 {
		t.Fatalf("config = %+v", cfg)
	}
}

func TestWarnAnyAudience(t *testing.T) {
	tests := []struct {
		name      string
		audiences []string
		warned    bool
	}{
		{"no list", nil, true},
		{"a list", []string{"davspaces"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zap.WarnLevel)
			warnAnyAudience(zap.New(core), identity.Config{Issuer: "https://idp.example", Audiences: tt.audiences})
			warned := logs.FilterMessageSnippet("tokens issued to every client").Len() == 1
			if warned != tt.warned {
				t.Fatalf("warned = %v, want %v (%v)", warned, tt.warned, logs.All())
			}
		})
	}
}

func TestOIDCAudiencesExpanded(t *testing.T) {
	t.Setenv("TEST_OIDC_AUDIENCE", "urn:api, web-app  desktop-app")
	tests := []struct {
		name      string
		audiences []string
		want      []string
	}{
		{"literal", []string{"urn:api"}, []string{"urn:api"}},
		{"from a variable", []string{"{env.TEST_OIDC_AUDIENCE}"}, []string{"urn:api", "web-app", "desktop-app"}},
		{"unset variable", []string{"{env.TEST_OIDC_AUDIENCE_UNSET}"}, nil},
		{"none", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := OIDC{Issuer: "https://idp.example", Audiences: tt.audiences}.identityConfig().Audiences
			if !slices.Equal(got, tt.want) {
				t.Fatalf("audiences = %q, want %q", got, tt.want)
			}
		})
	}
}
