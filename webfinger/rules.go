package webfinger

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"github.com/davspaces/davspaces/identity"
)

// Rule is one server-instance rule.
type Rule struct {
	// Claim is the userinfo claim to test.
	Claim string
	// Regex is an RE2 expression matched unanchored against the claim, as
	// oCIS does (regexp.MatchString); anchor it with ^ and $ when needed.
	Regex string
	// Href is a text/template expanding to the instance URL. It sees the
	// claims as {{.<claim>}} and the platform URL as {{.PLATFORM_URL}} and,
	// so that oCIS rule sets work unchanged, {{.OCIS_URL}}.
	Href string
	// Titles maps language tags to the instance's title.
	Titles map[string]string
	// Break stops the evaluation after this rule when it matched.
	Break bool
}

// DefaultRules returns the rules used when Config.Rules is nil: every
// signed-in user (any non-empty sub) gets one link to the platform URL.
func DefaultRules() []Rule {
	return []Rule{{
		Claim:  "sub",
		Regex:  ".+",
		Href:   "{{.PLATFORM_URL}}",
		Titles: map[string]string{"en": "davspaces Instance"},
	}}
}

// Template variables holding the platform URL.
const (
	varPlatformURL = "PLATFORM_URL"
	varOCISURL     = "OCIS_URL"
)

// rule is a compiled Rule.
type rule struct {
	claim  string
	re     *regexp.Regexp
	href   *template.Template
	titles json.RawMessage
	brk    bool
	simple *simpleHref // nil unless href is only text and {{.name}}
	fields []string    // claims the href references
}

func compileRules(rules []Rule) ([]rule, error) {
	out := make([]rule, 0, len(rules))
	for i, r := range rules {
		c, err := compileRule(r)
		if err != nil {
			return nil, fmt.Errorf("instance rule %d: %w", i, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// CheckRule reports whether r would compile, with the error New would give
// for it minus the rule's index, so that a configuration parser can point
// at the offending rule as it reads it.
func CheckRule(r Rule) error {
	_, err := compileRule(r)
	return err
}

func compileRule(r Rule) (rule, error) {
	if r.Claim == "" {
		return rule{}, errors.New("claim is empty")
	}
	re, err := regexp.Compile(r.Regex)
	if err != nil {
		return rule{}, fmt.Errorf("regex %q: %w", r.Regex, err)
	}
	if strings.TrimSpace(r.Href) == "" {
		return rule{}, errors.New("href is empty")
	}
	// missingkey=error turns a reference to a claim the user lacks into an
	// error instead of the text "<no value>".
	t, err := template.New("href").Option("missingkey=error").Parse(r.Href)
	if err != nil {
		return rule{}, fmt.Errorf("href %q: %w", r.Href, err)
	}
	titles, err := encodeTitles(r.Titles)
	if err != nil {
		return rule{}, fmt.Errorf("titles: %w", err)
	}
	return rule{
		claim:  r.Claim,
		re:     re,
		href:   t,
		titles: titles,
		brk:    r.Break,
		simple: newSimpleHref(t),
		fields: templateFields(t),
	}, nil
}

// wantedClaims lists, once, the claims a lookup needs: the tested claims
// and those the hrefs reference, so the verifier can complete a token that
// lacks them in one userinfo call.
func wantedClaims(rules []rule) []string {
	var want []string
	seen := map[string]bool{varPlatformURL: true, varOCISURL: true}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			want = append(want, name)
		}
	}
	for _, r := range rules {
		add(r.claim)
		for _, f := range r.fields {
			add(f)
		}
	}
	return want
}

// matches reports whether the claim value satisfies the rule's regex.
func (r *rule) matches(claims map[string]any) bool {
	v, ok := claims[r.claim]
	if !ok {
		return false
	}
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok && r.re.MatchString(s) {
				return true
			}
		}
		return false
	case []string:
		for _, s := range v {
			if r.re.MatchString(s) {
				return true
			}
		}
		return false
	}
	s, ok := identity.ClaimString(v)
	return ok && r.re.MatchString(s)
}
