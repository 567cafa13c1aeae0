package preview

import (
	"path"
	"strings"
)

// Kind is what a file is, as far as previews go.
type Kind int

// The kinds of file a preview is made of.
const (
	Unsupported Kind = iota
	PNG
	JPEG
	GIF
	BMP
	TIFF
	WebP
	Text
)

// kinds maps content types to kinds; the first type of each kind is the
// one announced.
var kinds = []struct {
	contentType string
	kind        Kind
	extensions  []string
}{
	{"image/png", PNG, []string{".png"}},
	{"image/jpeg", JPEG, []string{".jpg", ".jpeg", ".jpe", ".jfif"}},
	{"image/gif", GIF, []string{".gif"}},
	{"image/bmp", BMP, []string{".bmp"}},
	{"image/tiff", TIFF, []string{".tif", ".tiff"}},
	{"image/webp", WebP, []string{".webp"}},
	{"text/plain", Text, []string{".txt", ".text", ".log", ".md", ".csv"}},
}

// KindOf tells the kind of a file from its name and, when the name says
// nothing, its stored content type.
func KindOf(name, contentType string) Kind {
	ext := strings.ToLower(path.Ext(name))
	for _, k := range kinds {
		for _, e := range k.extensions {
			if ext == e {
				return k.kind
			}
		}
	}
	mediaType, _, _ := strings.Cut(strings.ToLower(contentType), ";")
	mediaType = strings.TrimSpace(mediaType)
	for _, k := range kinds {
		if mediaType == k.contentType || (k.kind == BMP && mediaType == "image/x-ms-bmp") {
			return k.kind
		}
	}
	return Unsupported
}

// SupportedTypes are the content types previews are made of, for the
// capabilities.
func SupportedTypes() []string {
	types := make([]string, 0, len(kinds))
	for _, k := range kinds {
		types = append(types, k.contentType)
	}
	return types
}
