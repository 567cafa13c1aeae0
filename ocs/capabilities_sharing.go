package ocs

// filesSharing is capabilities.files_sharing. It must be there even while
// nothing can be shared: ownCloud Web fills a missing api_enabled or
// public.enabled with true (web-pkg piniaStores/capabilities.ts) and would
// offer sharing and links that fail, and the mobile apps read the same
// flags. Sharing, when it comes, sets them (and the link features it
// serves) from Config.
type filesSharing struct {
	// APIEnabled says users and groups can be given files and folders.
	APIEnabled ocsBool `json:"api_enabled" xml:"api_enabled"`
	// Resharing and GroupSharing: ownCloud's flags for passing a received
	// share on and for sharing with groups.
	Resharing    ocsBool       `json:"resharing" xml:"resharing"`
	GroupSharing ocsBool       `json:"group_sharing" xml:"group_sharing"`
	Public       publicSharing `json:"public" xml:"public"`
}

// publicSharing is files_sharing.public, the public links.
type publicSharing struct {
	Enabled ocsBool `json:"enabled" xml:"enabled"`
}
