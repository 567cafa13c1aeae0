package graph

import (
	"net/http"

	"github.com/davspaces/davspaces/storage"
)

// The unified role ids of oCIS, which ownCloud Web and the apps know roles
// by: space members are listed with them, and sharing takes them.
const (
	RoleViewerID      = "b1e2218d-eef8-4d4c-b82d-0f1a1b48f3b5"
	RoleSpaceViewerID = "a8d5fe5e-96e3-418d-825b-534dbdf22b99"
	RoleEditorID      = "fb6c3e19-e378-47e5-b277-9732f9de6e21"
	RoleSpaceEditorID = "58c63c02-1d89-4572-916a-870abc5a1b7d"
	RoleFileEditorID  = "2d00ce52-1fc2-4dbc-8b95-a73b73395f5a"
	RoleUploaderID    = "1c996275-f1c9-4e71-abdf-a42f6495e960"
	RoleManagerID     = "312c0871-5ef7-4b3a-85b6-0e4074c64049"
)

// The conditions a role permission applies under, in oCIS' words: on a
// space's root, on a folder, on a file.
const (
	conditionDrive  = "exists @Resource.Root"
	conditionFolder = "exists @Resource.Folder"
	conditionFile   = "exists @Resource.File"
)

// The libre-graph actions a role allows.
const (
	actionPermissionsCreate = "libre.graph/driveItem/permissions/create"
	actionChildrenCreate    = "libre.graph/driveItem/children/create"
	actionStandardDelete    = "libre.graph/driveItem/standard/delete"
	actionPathRead          = "libre.graph/driveItem/path/read"
	actionQuotaRead         = "libre.graph/driveItem/quota/read"
	actionContentRead       = "libre.graph/driveItem/content/read"
	actionUploadCreate      = "libre.graph/driveItem/upload/create"
	actionPermissionsRead   = "libre.graph/driveItem/permissions/read"
	actionChildrenRead      = "libre.graph/driveItem/children/read"
	actionVersionsRead      = "libre.graph/driveItem/versions/read"
	actionDeletedRead       = "libre.graph/driveItem/deleted/read"
	actionPathUpdate        = "libre.graph/driveItem/path/update"
	actionPermissionsDelete = "libre.graph/driveItem/permissions/delete"
	actionDeletedDelete     = "libre.graph/driveItem/deleted/delete"
	actionVersionsUpdate    = "libre.graph/driveItem/versions/update"
	actionDeletedUpdate     = "libre.graph/driveItem/deleted/update"
	actionBasicRead         = "libre.graph/driveItem/basic/read"
	actionPermissionsUpdate = "libre.graph/driveItem/permissions/update"
	actionPermissionsDeny   = "libre.graph/driveItem/permissions/deny"
)

// roleDefinition is a libre-graph unifiedRoleDefinition.
type roleDefinition struct {
	ID              string           `json:"id"`
	DisplayName     string           `json:"displayName"`
	Description     string           `json:"description"`
	RolePermissions []rolePermission `json:"rolePermissions"`
	Weight          int              `json:"@libre.graph.weight"`
}

// rolePermission is what a role allows under one condition.
type rolePermission struct {
	AllowedResourceActions []string `json:"allowedResourceActions"`
	Condition              string   `json:"condition"`
}

// The actions of each role, as oCIS derives them from its CS3 roles (in
// the same order): a viewer reads; an uploader adds and moves but does not
// delete; an editor also deletes and restores from the trash; a file
// editor changes a file's content; the space roles add seeing the members
// (and, for editors, versions); a manager also manages the members.
var (
	viewerActions = []string{actionPathRead, actionQuotaRead, actionContentRead,
		actionChildrenRead, actionDeletedRead, actionBasicRead}
	uploaderActions = []string{actionChildrenCreate, actionPathRead, actionContentRead,
		actionUploadCreate, actionChildrenRead, actionPathUpdate, actionBasicRead}
	editorActions = []string{actionChildrenCreate, actionStandardDelete, actionPathRead,
		actionQuotaRead, actionContentRead, actionUploadCreate, actionChildrenRead,
		actionDeletedRead, actionPathUpdate, actionDeletedUpdate, actionBasicRead}
	fileEditorActions = []string{actionPathRead, actionQuotaRead, actionContentRead,
		actionUploadCreate, actionChildrenRead, actionDeletedRead, actionDeletedUpdate, actionBasicRead}
	spaceViewerActions = []string{actionPathRead, actionQuotaRead, actionContentRead,
		actionPermissionsRead, actionChildrenRead, actionDeletedRead, actionBasicRead}
	spaceEditorActions = []string{actionChildrenCreate, actionStandardDelete, actionPathRead,
		actionQuotaRead, actionContentRead, actionUploadCreate, actionPermissionsRead,
		actionChildrenRead, actionVersionsRead, actionDeletedRead, actionPathUpdate,
		actionVersionsUpdate, actionDeletedUpdate, actionBasicRead}
	managerActions = []string{actionPermissionsCreate, actionChildrenCreate, actionStandardDelete,
		actionPathRead, actionQuotaRead, actionContentRead, actionUploadCreate,
		actionPermissionsRead, actionChildrenRead, actionVersionsRead, actionDeletedRead,
		actionPathUpdate, actionPermissionsDelete, actionDeletedDelete, actionVersionsUpdate,
		actionDeletedUpdate, actionBasicRead, actionPermissionsUpdate, actionPermissionsDeny}
)

// roleDefinitions are the roles oCIS enables by default, with its ids,
// names and descriptions; the weight ranks a role among those for the
// same kind of resource, fewest rights first. oCIS' conditions for
// federated users are left out: davspaces has none.
var roleDefinitions = []roleDefinition{
	{RoleViewerID, "Can view", "View and download.",
		permissionsOn(viewerActions, conditionFile, conditionFolder), 1},
	{RoleSpaceViewerID, "Can view", "View and download.",
		permissionsOn(spaceViewerActions, conditionDrive), 1},
	{RoleEditorID, "Can edit", "View, download, upload, edit, add and delete.",
		permissionsOn(editorActions, conditionFolder), 3},
	{RoleSpaceEditorID, "Can edit", "View, download, upload, edit, add and delete.",
		permissionsOn(spaceEditorActions, conditionDrive), 2},
	{RoleFileEditorID, "Can edit", "View, download and edit.",
		permissionsOn(fileEditorActions, conditionFile), 2},
	{RoleUploaderID, "Can upload", "View, download and upload.",
		permissionsOn(uploaderActions, conditionFolder), 2},
	{RoleManagerID, "Can manage", "View, download, upload, edit, add, delete and manage members.",
		permissionsOn(managerActions, conditionDrive), 3},
}

// permissionsOn allows actions under each condition.
func permissionsOn(actions []string, conditions ...string) []rolePermission {
	out := make([]rolePermission, len(conditions))
	for i, c := range conditions {
		out[i] = rolePermission{AllowedResourceActions: actions, Condition: c}
	}
	return out
}

// spaceRoleID is the unified role of a space member's role.
func spaceRoleID(r storage.Role) string {
	switch r {
	case storage.RoleManager:
		return RoleManagerID
	case storage.RoleEditor:
		return RoleSpaceEditorID
	default:
		return RoleSpaceViewerID
	}
}

// roleDefinitionsList answers the roles, a bare JSON array as oCIS answers
// it (ownCloud Web reads the body as the array).
func (h *Handler) roleDefinitionsList(w http.ResponseWriter, r *http.Request, _ storage.User) error {
	h.writeJSON(w, r, http.StatusOK, roleDefinitions)
	return nil
}
