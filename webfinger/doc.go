// Package webfinger will serve the RFC 7033 lookup at /.well-known/webfinger
// that tells ownCloud clients which OpenID Connect issuer to sign in with and
// which server instances a signed-in user may use. It is a skeleton until the
// sign-in issue adds the handler.
package webfinger
