package integration

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
)

// xDisplay is a private Xvfb display for a desktop program under test: its
// name for DISPLAY, and the folder where Xvfb keeps its screen as an XWD
// file, which screenshot reads without any X tool.
type xDisplay struct {
	name      string
	fbdir     string
	artifacts string
	shots     int
}

// startXvfb starts Xvfb on the first free display number (-displayfd) and
// stops it when the test ends.
func startXvfb(t *testing.T, xvfb, artifacts string) *xDisplay {
	t.Helper()
	fbdir := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := testpeer.Command(xvfb, "-displayfd", "3", "-screen", "0", "1280x800x24",
		"-fbdir", fbdir, "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		w.Close()
		t.Fatalf("starting Xvfb: %v", err)
	}
	w.Close()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})

	number := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		number <- strings.TrimSpace(line)
	}()
	select {
	case n := <-number:
		if n == "" {
			t.Fatalf("Xvfb did not name its display:\n%s", log.String())
		}
		if err := os.MkdirAll(artifacts, 0o755); err != nil {
			t.Fatal(err)
		}
		return &xDisplay{name: ":" + n, fbdir: fbdir, artifacts: artifacts}
	case <-time.After(15 * time.Second):
		t.Fatalf("Xvfb did not start within 15 s:\n%s", log.String())
		return nil
	}
}

// screenshot writes the screen as NN-name.png in the artifacts folder and
// logs where: the steps of a GUI test can be looked at afterwards.
func (d *xDisplay) screenshot(t *testing.T, name string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(d.fbdir, "Xvfb_screen0"))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	img, err := decodeXWD(raw)
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	d.shots++
	file := filepath.Join(d.artifacts, fmt.Sprintf("%02d-%s.png", d.shots, name))
	f, err := os.Create(file)
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	t.Logf("screenshot: %s", file)
}

// xdotool runs xdotool on the display.
func (d *xDisplay) xdotool(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := testpeer.CommandContext(ctx, "xdotool", args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+d.name)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("xdotool %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// keys gives the keyboard focus to the window named title and runs an
// xdotool keyboard command there ("key Return", "type text"), as a user
// would type. There is no window manager, so the focus is set directly;
// xdotool's keys are real XTEST input, which Qt takes (it ignores events
// sent to a window).
func (d *xDisplay) keys(t *testing.T, title string, command ...string) {
	t.Helper()
	// The client logs a page before its window is shown, and X refuses
	// the focus to a window not shown yet.
	id := d.waitWindow(t, title, 10*time.Second)
	if _, err := d.xdotool("windowfocus", "--sync", id); err != nil {
		t.Fatal(err)
	}
	if _, err := d.xdotool(command...); err != nil {
		t.Fatal(err)
	}
}

// waitWindow waits for a window named title to be shown and returns its
// id.
func (d *xDisplay) waitWindow(t *testing.T, title string, timeout time.Duration) string {
	t.Helper()
	var id string
	pollUntil(t, timeout, "the window "+title, func() bool {
		ids, err := d.xdotool("search", "--onlyvisible", "--name", "^"+title+"$")
		id, _, _ = strings.Cut(ids, "\n")
		return err == nil && id != ""
	})
	return id
}

// clickAboveBottom clicks in window id at x from its left edge and y
// above its bottom edge, where a dialog keeps the widgets under its
// growing text.
func (d *xDisplay) clickAboveBottom(t *testing.T, id string, x, y int) {
	t.Helper()
	geometry, err := d.xdotool("getwindowgeometry", "--shell", id)
	if err != nil {
		t.Fatal(err)
	}
	var height int
	for _, line := range strings.Fields(geometry) {
		if v, ok := strings.CutPrefix(line, "HEIGHT="); ok {
			height, err = strconv.Atoi(v)
		}
	}
	if height == 0 || err != nil {
		t.Fatalf("window %s has no height: %q", id, geometry)
	}
	if _, err := d.xdotool("mousemove", "--window", id, strconv.Itoa(x), strconv.Itoa(height-y), "click", "1"); err != nil {
		t.Fatal(err)
	}
}

// decodeXWD decodes the X Window Dump that Xvfb's -fbdir keeps: a
// big-endian header, a colour map, then the pixels as 32-bit TrueColor
// words in the header's byte order.
func decodeXWD(b []byte) (image.Image, error) {
	const headerWords = 25
	if len(b) < headerWords*4 {
		return nil, errors.New("xwd: short header")
	}
	field := func(i int) int { return int(binary.BigEndian.Uint32(b[i*4:])) }
	headerSize, width, height := field(0), field(4), field(5)
	lsbFirst := field(7) == 0
	bitsPerPixel, bytesPerLine, colours := field(11), field(12), field(19)
	if bitsPerPixel != 32 {
		return nil, fmt.Errorf("xwd: %d bits per pixel, want 32", bitsPerPixel)
	}
	start := headerSize + colours*12
	if width <= 0 || height <= 0 || start+height*bytesPerLine > len(b) {
		return nil, fmt.Errorf("xwd: %dx%d does not fit %d bytes", width, height, len(b))
	}
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	for y := 0; y < height; y++ {
		row := b[start+y*bytesPerLine:]
		for x := 0; x < width; x++ {
			var p uint32
			if lsbFirst {
				p = binary.LittleEndian.Uint32(row[x*4:])
			} else {
				p = binary.BigEndian.Uint32(row[x*4:])
			}
			i := img.PixOffset(x, y)
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(p>>16), uint8(p>>8), uint8(p), 0xff
		}
	}
	return img, nil
}
