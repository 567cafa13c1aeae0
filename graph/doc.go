// Package graph serves the part of the Microsoft Graph flavoured API of
// ownCloud Infinite Scale that newer clients and web UIs use to discover
// spaces: the signed-in user (/graph/v1.0/me) and the user's drives
// (/graph/v1.0/me/drives), as a plain net/http handler over a storage.Store.
//
// It answers only what davspaces really supports: personal and project
// spaces, no shares, no virtual drives.
package graph
