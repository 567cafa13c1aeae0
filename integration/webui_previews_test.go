package integration

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/davspaces/davspaces/internal/testidp"
)

// previewsOptions are the options of testdata/webui/previews.mjs.
type previewsOptions struct {
	browserSession
	// Folder holds Images (with previews), Others (without: not a type
	// previews are made of, or not what its name says) and the folders
	// Many and Album.
	Folder string   `json:"folder"`
	Images []string `json:"images"`
	Others []string `json:"others"`
	// Photo is one of Images, PhotoWidth pixels wide: the viewer shows it
	// at that width (it fits 1024 and is not enlarged).
	Photo      string `json:"photo"`
	PhotoWidth int    `json:"photoWidth"`
	// Many is a folder of ManyCount images tile-000.png …, more than a
	// screen shows and than a page of search results.
	Many      string `json:"many"`
	ManyCount int    `json:"manyCount"`
	// Search is the server's oc:search-files; Hidden is a name deep in
	// Album, at HiddenPath, which the search box finds.
	Search     bool   `json:"search"`
	Hidden     string `json:"hidden"`
	HiddenPath string `json:"hiddenPath"`
	// Link is the public link page of Album/deep; FileLink the one of
	// Photo alone.
	Link     string `json:"link"`
	FileLink string `json:"fileLink"`
	// Issuer, when set, is the OpenID Connect provider the page signs in
	// with (User and Password at its form).
	Issuer string `json:"issuer"`
}

// TestWebUIPreviews drives the page's previews and search with Debian's
// chromium against the real Caddy, signed in with Basic: images get a
// thumbnail in the listing (decoded: naturalWidth > 0) and other files
// keep their icon, a file that is not what its name says included (415);
// in a folder of many images only the rows on screen ask for theirs, the
// others once scrolled to; the viewer shows the large preview at the
// picture's own width; a public link's page has thumbnails too, and a
// link to a picture shows it large. The
// search box finds a file deep in the space, shows its folder and opens
// it, pages through more than 100 results, says when nothing is found,
// and Escape brings the folder back; on a
// server without oc:search-files the box is hidden. Screenshots: the
// folder with thumbnails and the search results at desktop and phone
// width, the viewer, the public link's folder.
func TestWebUIPreviews(t *testing.T) {
	t.Parallel()
	chromium, dir := requireBrowser(t)
	s := startServer(t, serverOptions{})
	einstein := newClient(t, s.URL, "einstein")
	folder := "/dav/spaces/" + personalSpaceRef(t, s, "einstein") + "/"

	const photoWidth = 800
	files := map[string][]byte{
		"photo.png":            gradientPNG(t, photoWidth, 500, 0),
		"sunrise.jpg":          gradientJPEG(t, 640, 480),
		"archive.zip":          []byte("PK\x03\x04 not really a zip, but no preview either"),
		"not-a-picture.png":    []byte("plain words, not a PNG"),
		"Album/deep/comet.png": gradientPNG(t, 300, 300, 90),
	}
	for _, dirName := range []string{"Album/", "Album/deep/", "Many/"} {
		einstein.expect(http.StatusCreated, "MKCOL", folder+dirName, "")
	}
	for name, body := range files {
		einstein.expect(http.StatusCreated, http.MethodPut, folder+escapeSegments(name), string(body))
	}
	// More than a page of search results (100).
	const manyCount = 120
	for i := range manyCount {
		einstein.expect(http.StatusCreated, http.MethodPut, fmt.Sprintf("%sMany/tile-%03d.png", folder, i), string(gradientPNG(t, 48, 48, uint8(i*2))))
	}
	link := ocsCall[ocsShare](einstein, http.StatusOK, "POST", "/shares", url.Values{
		"path": {"/Album/deep"}, "shareType": {"3"}, "name": {"Comets"}})
	fileLink := ocsCall[ocsShare](einstein, http.StatusOK, "POST", "/shares", url.Values{
		"path": {"/photo.png"}, "shareType": {"3"}, "name": {"Photo"}})

	opts := previewsOptions{
		browserSession: newBrowserSession(t, chromium, s.URL, "einstein", users["einstein"]),
		Folder:         folder,
		Images:         []string{"photo.png", "sunrise.jpg"},
		Others:         []string{"archive.zip", "not-a-picture.png"},
		Photo:          "photo.png",
		PhotoWidth:     photoWidth,
		Many:           "Many",
		ManyCount:      manyCount,
		Search:         serverSearches(t, einstein),
		Hidden:         "comet.png",
		HiddenPath:     "/Album/deep",
		Link:           "/s/" + link.Token,
		FileLink:       "/s/" + fileLink.Token,
	}
	events := runDrive(t, dir, "previews.mjs", opts)
	for _, ev := range events {
		t.Logf("%v", ev)
	}
	if !opts.Search {
		t.Log("the server does not announce search-files: the search box was checked hidden, not used")
	}
}

// TestWebUIPreviewsOIDC signs the page in with OpenID Connect, where no
// cookie or Basic credentials go with an <img>: the thumbnails and the
// viewer's preview still appear (fetched with the token, shown from blob:
// URLs, which the page's Content-Security-Policy allows), and a file of
// another type keeps its icon.
func TestWebUIPreviewsOIDC(t *testing.T) {
	t.Parallel()
	chromium, dir := requireBrowser(t)
	port := freePort(t)
	origin := fmt.Sprintf("http://127.0.0.1:%d", port)
	idp := testidp.Start(t, testidp.Options{WebClient: testidp.WebClient{
		ID: webClientID, RedirectURIs: []string{origin + "/"}, PostLogoutRedirectURIs: []string{origin + "/"},
	}})
	s := startServer(t, serverOptions{issuer: idp.Issuer, port: port, davspaces: labSpace, env: []string{"OIDC_WEB_CLIENT_ID=" + webClientID}})
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}
	folder := "/dav/spaces/lab/pictures/"
	const photoWidth = 640
	alice.expect(http.StatusCreated, "MKCOL", folder, "")
	alice.expect(http.StatusCreated, http.MethodPut, folder+"plate.png", string(gradientPNG(t, photoWidth, 400, 30)))
	alice.expect(http.StatusCreated, http.MethodPut, folder+"data.bin", "\x00\x01 raw counts")

	opts := previewsOptions{
		browserSession: newBrowserSession(t, chromium, s.URL, "alice", "alice-password"),
		Issuer:         idp.Issuer,
		Folder:         folder,
		Images:         []string{"plate.png"},
		Others:         []string{"data.bin"},
		Photo:          "plate.png",
		PhotoWidth:     photoWidth,
	}
	for _, ev := range runDrive(t, dir, "previews.mjs", opts) {
		t.Logf("%v", ev)
	}
}

// serverSearches tells whether the capabilities list the search-files report.
func serverSearches(t *testing.T, c *client) bool {
	t.Helper()
	var caps struct {
		DAV struct {
			Reports []string `json:"reports"`
		} `json:"dav"`
	}
	readCapabilities(t, c, &caps)
	return slices.Contains(caps.DAV.Reports, "search-files")
}

// gradientJPEG makes a w×h JPEG of a gradient.
func gradientJPEG(t *testing.T, w, h int) []byte {
	t.Helper()
	return encodeJPEG(t, gradient(w, h, 160))
}

// gradientPNG makes a w×h PNG of a gradient, its hue shifted by shade.
func gradientPNG(t *testing.T, w, h int, shade uint8) []byte {
	t.Helper()
	return encodePNG(t, gradient(w, h, shade), png.DefaultCompression)
}

func gradient(w, h int, shade uint8) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{R: uint8(x * 255 / w), G: uint8(y * 255 / h), B: shade + uint8((x+y)*64/(w+h)), A: 255})
		}
	}
	return img
}
