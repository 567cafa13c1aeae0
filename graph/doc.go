// Package graph serves the part of the Microsoft Graph flavoured API of
// ownCloud Infinite Scale that newer clients and web UIs use to discover
// spaces: the signed-in user and the groups the token gives
// (/graph/v1.0/me), the user's drives with their members
// (/graph/v1.0/me/drives, /graph/v1beta1/me/drives, with $filter on the
// drive type and $orderby) and the unified roles members have
// (/graph/v1beta1/roleManagement/permissions/roleDefinitions), as a plain
// net/http handler over a storage.Store.
//
// It answers only what davspaces really supports: personal and project
// spaces, no shares, no virtual drives.
package graph
