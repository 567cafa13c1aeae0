package caddymodule

import (
	"math"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/caddyauth"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"

	"github.com/davspaces/davspaces/webfinger"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("oidc_auth", parseOIDCAuth)
	httpcaddyfile.RegisterHandlerDirective("webfinger", parseWebFinger)
	// Ordered so that no `order` line is needed: the lookup does its own
	// (optional) authentication, so it runs before any required one;
	// oidc_auth authenticates where basic_auth would.
	httpcaddyfile.RegisterDirectiveOrder("webfinger", httpcaddyfile.Before, "basic_auth")
	httpcaddyfile.RegisterDirectiveOrder("oidc_auth", httpcaddyfile.After, "basic_auth")
}

func parseOIDCAuth(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	a := new(OIDCAuth)
	err := a.UnmarshalCaddyfile(h.Dispenser)
	return a, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	oidc_auth [<matcher>] {
//		issuer       <url>
//		audience     <aud...>
//		algorithms   <alg...>
//		insecure
//		timeout      <duration>
//		leeway       <duration>
//		cache_size   <n>
//		opaque_ttl   <duration>
//		user_claim   <claim>
//		name_claim   <claim>
//		groups_claim <claim>
//		realm        <realm>
//		basic [<hash_algorithm> [<realm>]] {
//			<username> <hashed_password>
//		}
//	}
func (a *OIDCAuth) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		if ok, err := a.unmarshalOption(d); ok {
			if err != nil {
				return err
			}
			continue
		}
		var err error
		switch d.Val() {
		case "user_claim":
			err = oneArg(d, &a.UserClaim)
		case "name_claim":
			err = oneArg(d, &a.NameClaim)
		case "groups_claim":
			err = oneArg(d, &a.GroupsClaim)
		case "realm":
			err = oneArg(d, &a.Realm)
		case "basic":
			var basic caddyauth.HTTPBasicAuth
			basic, err = parseBasic(d)
			a.ProvidersRaw = caddy.ModuleMap{"http_basic": caddyconfig.JSON(basic, nil)}
		default:
			return d.Errf("unrecognized subdirective: %s", d.Val())
		}
		if err != nil {
			return err
		}
	}
	if a.Issuer == "" {
		return d.Err("oidc_auth needs an issuer")
	}
	return nil
}

// parseBasic reads a basic block, written like the basic_auth directive.
func parseBasic(d *caddyfile.Dispenser) (caddyauth.HTTPBasicAuth, error) {
	ba := caddyauth.HTTPBasicAuth{HashCache: new(caddyauth.Cache)}
	hashName := "bcrypt"
	args := d.RemainingArgs()
	switch len(args) {
	case 0:
	case 2:
		ba.Realm = args[1]
		fallthrough
	case 1:
		hashName = args[0]
	default:
		return ba, d.ArgErr()
	}
	var hash caddyauth.Comparer
	switch hashName {
	case "bcrypt":
		hash = caddyauth.BcryptHash{}
	case "argon2id":
		hash = caddyauth.Argon2idHash{}
	default:
		return ba, d.Errf("unrecognized hash algorithm: %s", hashName)
	}
	ba.HashRaw = caddyconfig.JSONModuleObject(hash, "algorithm", hashName, nil)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		user := d.Val()
		var hashed string
		if !d.AllArgs(&hashed) {
			return ba, d.Err("basic: each line needs a username and a hashed password")
		}
		ba.AccountList = append(ba.AccountList, caddyauth.Account{Username: user, Password: hashed})
	}
	if len(ba.AccountList) == 0 {
		return ba, d.Err("basic: no accounts")
	}
	return ba, nil
}

func parseWebFinger(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	wf := new(WebFinger)
	err := wf.UnmarshalCaddyfile(h.Dispenser)
	return wf, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	webfinger [<matcher>] {
//		issuer       <url>
//		platform_url <url>
//		insecure
//		relations    <uri...>
//		instance {
//			claim <claim>
//			regex <regex>
//			href  <template>
//			title <language> <text>
//			break
//		}
//	}
//
// The other oidc_auth settings (audience, algorithms, timeout, leeway,
// cache_size, opaque_ttl) apply too. Rules are checked here, so that
// `caddy adapt` already refuses a bad regex or template.
func (wf *WebFinger) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		if ok, err := wf.unmarshalOption(d); ok {
			if err != nil {
				return err
			}
			continue
		}
		var err error
		switch d.Val() {
		case "platform_url":
			err = oneArg(d, &wf.PlatformURL)
		case "relations":
			err = listArg(d, &wf.Relations)
		case "instance":
			var rule InstanceRule
			rule, err = parseInstance(d)
			wf.Instances = append(wf.Instances, rule)
		default:
			return d.Errf("unrecognized subdirective: %s", d.Val())
		}
		if err != nil {
			return err
		}
	}
	if wf.Issuer == "" && wf.PlatformURL == "" {
		return d.Err("webfinger needs an issuer (or a platform_url, which then names the issuer too)")
	}
	return nil
}

// parseInstance reads one instance block.
func parseInstance(d *caddyfile.Dispenser) (InstanceRule, error) {
	var rule InstanceRule
	if d.NextArg() {
		return rule, d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var err error
		switch d.Val() {
		case "claim":
			err = oneArg(d, &rule.Claim)
		case "regex":
			err = oneArg(d, &rule.Regex)
		case "href":
			err = oneArg(d, &rule.Href)
		case "title":
			var lang, text string
			if !d.AllArgs(&lang, &text) {
				return rule, d.ArgErr()
			}
			if rule.Titles == nil {
				rule.Titles = map[string]string{}
			}
			rule.Titles[lang] = text
		case "break":
			if d.NextArg() {
				return rule, d.ArgErr()
			}
			rule.Break = true
		default:
			return rule, d.Errf("unrecognized instance subdirective: %s", d.Val())
		}
		if err != nil {
			return rule, err
		}
	}
	if err := webfinger.CheckRule(rule.webfingerRule()); err != nil {
		return rule, d.Errf("instance: %v", err)
	}
	return rule, nil
}

func oneArg(disp *caddyfile.Dispenser, dst *string) error {
	if !disp.AllArgs(dst) {
		return disp.ArgErr()
	}
	return nil
}

func listArg(disp *caddyfile.Dispenser, dst *[]string) error {
	users := disp.RemainingArgs()
	if len(users) == 0 {
		return disp.ArgErr()
	}
	*dst = append(*dst, users...)
	return nil
}

func sizeArg(disp *caddyfile.Dispenser) (int64, error) {
	var v string
	if !disp.AllArgs(&v) {
		return 0, disp.ArgErr()
	}
	n, err := humanize.ParseBytes(v)
	if err != nil {
		return 0, disp.Errf("invalid size %q: %v", v, err)
	}
	if n > math.MaxInt64 {
		return 0, disp.Errf("size %q is too large", v)
	}
	return int64(n), nil
}
