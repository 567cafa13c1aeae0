// Package davxml is the pure XML layer of davhandler: it knows XML and
// nothing of WebDAV's handler, stores or requests, so it can be read and
// tested alone, as go-webdav keeps its internal package.
//
// It holds what a WebDAV answer or header is as text, and nothing more:
//
//   - escaping for the three places an answer puts text: character data,
//     attribute values, and text that is already XML (a dead property's
//     value), replacing what XML cannot carry with U+FFFD (escape.go);
//   - element names and their tags (tags.go);
//   - the streaming 207 Multi-Status writer and the href of a response
//     (multistatus.go);
//   - the XML of locks: d:activelock, d:supportedlock, the body of a
//     LOCK reply (lock.go);
//   - the If header's grammar (if.go).
//
// davhandler turns requests, stores and locks into these values; nothing
// here reads a request or a store.
package davxml
