// Package davxml is the pure XML layer of davhandler: it knows XML and
// nothing of WebDAV's handler, stores or requests, so it can be read and
// tested alone, as go-webdav keeps its internal package.
//
// It escapes text for the three places a WebDAV answer puts it: character
// data, attribute values, and text that is already XML (a dead property's
// value), replacing what XML cannot carry with U+FFFD.
package davxml
