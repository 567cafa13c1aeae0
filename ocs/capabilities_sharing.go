package ocs

import "github.com/davspaces/davspaces/storage"

// filesSharing is capabilities.files_sharing. It must be there even while
// nothing can be shared: ownCloud Web fills a missing api_enabled or
// public.enabled with true (web-pkg piniaStores/capabilities.ts) and would
// offer sharing and links that fail, and the mobile apps read the same
// flags. Config.Sharing turns on what davspaces serves; every flag Web
// defaults to true (can_rename, allow_custom, public.can_contribute) is
// said explicitly.
type filesSharing struct {
	// APIEnabled says users and groups can be given files and folders.
	APIEnabled ocsBool `json:"api_enabled" xml:"api_enabled"`
	// Resharing and GroupSharing: ownCloud's flags for passing a received
	// share on and for sharing with groups.
	Resharing    ocsBool       `json:"resharing" xml:"resharing"`
	GroupSharing ocsBool       `json:"group_sharing" xml:"group_sharing"`
	Public       publicSharing `json:"public" xml:"public"`
	// The rest is said only with sharing on.
	*sharingFeatures
}

// sharingFeatures are the details of sharing clients read once it is on.
type sharingFeatures struct {
	// AutoAcceptShare: a share is accepted at once, there is no pending
	// state to accept or decline.
	AutoAcceptShare ocsBool `json:"auto_accept_share" xml:"auto_accept_share"`
	// SearchMinLength is the shortest search for people (graph's and
	// sharees'); clients do not search with fewer characters.
	SearchMinLength int `json:"search_min_length" xml:"search_min_length"`
	// CanRename: a received share keeps the item's name; it cannot be
	// renamed in the Shares drive.
	CanRename ocsBool `json:"can_rename" xml:"can_rename"`
	// AllowCustom: only roles are given, no custom sets of permissions.
	AllowCustom ocsBool      `json:"allow_custom" xml:"allow_custom"`
	DenyAccess  ocsBool      `json:"deny_access" xml:"deny_access"`
	Federation  sharingOnOff `json:"federation" xml:"federation"`
	User        userSharing  `json:"user" xml:"user"`
}

type sharingOnOff struct {
	Outgoing ocsBool `json:"outgoing" xml:"outgoing"`
	Incoming ocsBool `json:"incoming" xml:"incoming"`
}

type sharingEnabled struct {
	Enabled ocsBool `json:"enabled" xml:"enabled"`
}

type userSharing struct {
	SendMail   ocsBool        `json:"send_mail" xml:"send_mail"`
	ExpireDate sharingEnabled `json:"expire_date" xml:"expire_date"`
}

// publicSharing is files_sharing.public, the public links.
type publicSharing struct {
	Enabled ocsBool `json:"enabled" xml:"enabled"`
	*publicFeatures
}

// publicFeatures are what links can do, said only with sharing on.
type publicFeatures struct {
	// Upload, SupportsUploadOnly and CanContribute: upload ("upload")
	// and file drop ("createOnly") links exist; CanEdit: edit links.
	Upload             ocsBool `json:"upload" xml:"upload"`
	SupportsUploadOnly ocsBool `json:"supports_upload_only" xml:"supports_upload_only"`
	CanContribute      ocsBool `json:"can_contribute" xml:"can_contribute"`
	CanEdit            ocsBool `json:"can_edit" xml:"can_edit"`
	Multiple           ocsBool `json:"multiple" xml:"multiple"`
	// Alias is the "internal" link (for members only), which davspaces
	// does not make.
	Alias      ocsBool        `json:"alias" xml:"alias"`
	SendMail   ocsBool        `json:"send_mail" xml:"send_mail"`
	Password   linkPassword   `json:"password" xml:"password"`
	ExpireDate sharingEnabled `json:"expire_date" xml:"expire_date"`
	// DefaultPermissions is 1, read: a new link is a view link.
	DefaultPermissions int `json:"default_permissions" xml:"default_permissions"`
}

// linkPassword says a link's password is never required.
type linkPassword struct {
	EnforcedFor passwordEnforcedFor `json:"enforced_for" xml:"enforced_for"`
	Enforced    ocsBool             `json:"enforced" xml:"enforced"`
}

type passwordEnforcedFor struct {
	ReadOnly        ocsBool `json:"read_only" xml:"read_only"`
	ReadWrite       ocsBool `json:"read_write" xml:"read_write"`
	ReadWriteDelete ocsBool `json:"read_write_delete" xml:"read_write_delete"`
	UploadOnly      ocsBool `json:"upload_only" xml:"upload_only"`
}

// passwordPolicy is capabilities.password_policy: the link passwords
// davspaces takes (storage.MinSharePassword to MaxSharePassword bytes),
// which ownCloud Web checks and generates passwords by.
type passwordPolicy struct {
	MinCharacters int `json:"min_characters" xml:"min_characters"`
	MaxCharacters int `json:"max_characters" xml:"max_characters"`
}

// sharingOn is files_sharing and password_policy with sharing on: shares
// with users and groups, and every kind of link but the internal one.
func sharingOn() (filesSharing, *passwordPolicy) {
	return filesSharing{
			APIEnabled:   true,
			GroupSharing: true,
			Public: publicSharing{Enabled: true, publicFeatures: &publicFeatures{
				Upload: true, SupportsUploadOnly: true, CanContribute: true, CanEdit: true, Multiple: true,
				DefaultPermissions: 1,
			}},
			sharingFeatures: &sharingFeatures{
				AutoAcceptShare: true,
				SearchMinLength: 3,
				User:            userSharing{ExpireDate: sharingEnabled{Enabled: true}},
			},
		}, &passwordPolicy{
			MinCharacters: storage.MinSharePassword,
			MaxCharacters: storage.MaxSharePassword,
		}
}
