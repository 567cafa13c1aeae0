// Package avatar answers the avatar requests of Nextcloud's and ownCloud's
// clients with a generated picture: the user's initials on a colour of
// their id, as a PNG. davspaces keeps no uploaded pictures.
//
// The desktop client asks /remote.php/dav/avatars/{user}/{size}.png
// (nextcloud/desktop src/libsync/networkjobs.cpp AvatarJob), older
// clients and the Android app /index.php/avatar/{user}/{size}.
//
// Whom it answers for: the caller, and the users the directory knows
// (those who signed in), whom any signed-in user finds already by their
// id in the sharees search; any other id is 404, the same answer whether
// or not such a user exists, so that the avatars tell nobody more about
// who has an account than the sharees search does.
package avatar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/davspaces/davspaces/storage"
)

// The sizes served: a request outside them gets the nearest.
const (
	minSize = 16
	maxSize = 512
)

// Config configures a Handler.
type Config struct {
	// User identifies the caller. Required.
	User func(*http.Request) (storage.User, bool)
	// Directory knows the users who signed in. Required.
	Directory storage.DirectoryReader
}

// Handler answers the avatar paths. It is safe for concurrent use.
type Handler struct {
	user      func(*http.Request) (storage.User, bool)
	directory storage.DirectoryReader
}

// New returns a Handler for cfg.
func New(cfg Config) (*Handler, error) {
	if cfg.User == nil || cfg.Directory == nil {
		return nil, errors.New("avatar: a user function and a directory are required")
	}
	return &Handler{user: cfg.User, directory: cfg.Directory}, nil
}

// request is what an avatar path names.
type request struct {
	user string
	size int
}

// parsePath reads /remote.php/dav/avatars/{user}/{size}.png and
// /index.php/avatar/{user}/{size}[/dark]; ok is false for any other path.
func parsePath(p string) (request, bool) {
	if rest, ok := strings.CutPrefix(p, "/remote.php/dav/avatars/"); ok {
		user, file, found := strings.Cut(rest, "/")
		size, isPNG := strings.CutSuffix(file, ".png")
		if !found || !isPNG {
			return request{}, false
		}
		return newRequest(user, size)
	}
	if rest, ok := strings.CutPrefix(p, "/index.php/avatar/"); ok {
		user, size, found := strings.Cut(rest, "/")
		// Nextcloud's clients ask for …/dark in a dark theme; the
		// picture is the same.
		size = strings.TrimSuffix(size, "/dark")
		if !found {
			return request{}, false
		}
		return newRequest(user, size)
	}
	return request{}, false
}

// newRequest checks the parts of an avatar path.
func newRequest(user, size string) (request, bool) {
	n, err := strconv.Atoi(size)
	if user == "" || err != nil || n <= 0 {
		return request{}, false
	}
	return request{user: user, size: min(max(n, minSize), maxSize)}, true
}

// Route returns the handler of an avatar request; ok=false leaves the
// request to the next handler.
func (h *Handler) Route(r *http.Request) (http.Handler, bool) {
	if !strings.HasPrefix(r.URL.Path, "/remote.php/dav/avatars/") && !strings.HasPrefix(r.URL.Path, "/index.php/avatar/") {
		return nil, false
	}
	return h, true
}

// ServeHTTP answers one avatar request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Authorization")
	req, ok := parsePath(r.URL.Path)
	if !ok {
		http.Error(w, "no such avatar", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "only GET is answered", http.StatusMethodNotAllowed)
		return
	}
	caller, ok := h.user(r)
	if !ok || caller.ID == "" {
		http.Error(w, "authentication is required", http.StatusUnauthorized)
		return
	}
	name, err := h.displayName(r.Context(), caller, req.user)
	if errors.Is(err, storage.ErrNotFound) {
		http.Error(w, "no such avatar", http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(w, "the directory cannot be read", http.StatusServiceUnavailable)
		return
	}
	var body bytes.Buffer
	if err := png.Encode(&body, Render(req.user, name, req.size)); err != nil {
		http.Error(w, "the picture cannot be made", http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "image/png")
	hdr.Set("Content-Length", strconv.Itoa(body.Len()))
	// A name changes seldom; an hour keeps the clients' repeated asks
	// cheap without keeping an old name long.
	hdr.Set("Cache-Control", "private, max-age=3600")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body.Bytes())
	}
}

// displayName is the name the avatar of id shows, for caller: the
// caller's own, or a known user's; storage.ErrNotFound for anybody else.
func (h *Handler) displayName(ctx context.Context, caller storage.User, id string) (string, error) {
	if id == caller.ID {
		return caller.DisplayName, nil
	}
	e, err := h.directory.DirectoryUser(ctx, id)
	if err != nil {
		return "", fmt.Errorf("directory entry of %s: %w", id, err)
	}
	return e.DisplayName, nil
}

// Render draws the avatar of user id named name (id when empty): up to
// two initials, white on a colour the id picks, size pixels square.
func Render(id, name string, size int) image.Image {
	face := basicfont.Face7x13
	text := Initials(name, id)
	// Drawn small in the face's own pixels, then scaled up: the face
	// has one size.
	w := face.Advance*utf8.RuneCountInString(text) + 4
	h := face.Metrics().Height.Ceil() + 4
	side := max(w, h)
	small := image.NewRGBA(image.Rect(0, 0, side, side))
	draw.Draw(small, small.Bounds(), image.NewUniform(colourOf(id)), image.Point{}, draw.Src)
	d := font.Drawer{Dst: small, Src: image.White, Face: face}
	d.Dot = fixed.P((side-w)/2+2, (side-h)/2+2+face.Ascent)
	d.DrawString(text)
	out := image.NewRGBA(image.Rect(0, 0, size, size))
	xdraw.NearestNeighbor.Scale(out, out.Bounds(), small, small.Bounds(), draw.Src, nil)
	return out
}

// Initials are the first letters of name's first two words, upper case,
// or of id when name has none; "?" when neither has a letter. The face
// draws ASCII only: other letters show as "?".
func Initials(name, id string) string {
	var out []rune
	for _, word := range strings.Fields(name) {
		if r, _ := utf8.DecodeRuneInString(word); unicode.IsLetter(r) || unicode.IsDigit(r) {
			out = append(out, asciiOr(unicode.ToUpper(r)))
		}
		if len(out) == 2 {
			break
		}
	}
	if len(out) == 0 {
		if r, _ := utf8.DecodeRuneInString(id); unicode.IsLetter(r) || unicode.IsDigit(r) {
			out = append(out, asciiOr(unicode.ToUpper(r)))
		}
	}
	if len(out) == 0 {
		return "?"
	}
	return string(out)
}

// asciiOr is r when the face can draw it, "?" otherwise.
func asciiOr(r rune) rune {
	if r < 0x20 || r > 0x7e {
		return '?'
	}
	return r
}

// colourOf picks a background for id: the same id always gets the same
// one, dark enough for white letters.
func colourOf(id string) color.RGBA {
	sum := fnv.New32a()
	_, _ = sum.Write([]byte(id))
	palette := []color.RGBA{
		{0x1f, 0x6f, 0xb2, 0xff}, {0x2e, 0x7d, 0x32, 0xff}, {0xb2, 0x3c, 0x17, 0xff}, {0x6a, 0x1b, 0x9a, 0xff},
		{0x00, 0x69, 0x5c, 0xff}, {0xad, 0x14, 0x57, 0xff}, {0x45, 0x5a, 0x64, 0xff}, {0x8d, 0x6e, 0x00, 0xff},
	}
	return palette[sum.Sum32()%uint32(len(palette))]
}
