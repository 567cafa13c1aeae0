// Package graph serves the part of the Microsoft Graph flavoured API of
// ownCloud Infinite Scale that newer clients and web UIs use to discover
// spaces and to share: the signed-in user and the groups the token gives
// (/graph/v1.0/me), the user's drives with their members
// (/graph/v1.0/me/drives, /graph/v1beta1/me/drives, with $filter on the
// drive type and $orderby; the Shares drive and the mount points of
// what was shared with the user), the unified roles
// (/graph/v1beta1/roleManagement/permissions/roleDefinitions), links and
// invitations on items and their permissions
// (/graph/v1beta1/drives/{drive}/items/{item}/…), what was shared with
// and by the user (/graph/v1beta1/me/drive/sharedWithMe, sharedByMe), and
// the people to invite (/graph/v1.0/users, /graph/v1.0/groups), as a
// plain net/http handler over a storage.Store and its storage.Shares.
package graph
