package preview

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// The page a text preview is drawn on: a fixed-width face, as many lines
// and columns as fill a square page.
const (
	textColumns = 60
	textLines   = 40
	textMargin  = 8
)

// renderText draws the first lines of r, UTF-8 text, on a white page.
// Content with a NUL byte in its start is no text.
func renderText(r io.Reader) (image.Image, error) {
	start, err := io.ReadAll(io.LimitReader(r, textLimit))
	if err != nil {
		return nil, fmt.Errorf("reading the text: %w", err)
	}
	if bytes.IndexByte(start, 0) >= 0 {
		return nil, fmt.Errorf("%w: binary content", ErrNotAsNamed)
	}
	face := basicfont.Face7x13
	lineHeight := face.Metrics().Height.Ceil()
	page := image.NewGray(textPage())
	draw.Draw(page, page.Bounds(), image.White, image.Point{}, draw.Src)
	d := font.Drawer{Dst: page, Src: image.NewUniform(color.Gray{Y: 0x30}), Face: face}
	lines := bufio.NewScanner(bytes.NewReader(start))
	lines.Buffer(make([]byte, 4096), textLimit)
	for n := 0; n < textLines && lines.Scan(); n++ {
		d.Dot = fixed.P(textMargin, textMargin+n*lineHeight+face.Ascent)
		d.DrawString(printable(lines.Text(), textColumns))
	}
	if err := lines.Err(); err != nil && err != bufio.ErrTooLong {
		return nil, fmt.Errorf("reading the text: %w", err)
	}
	return page, nil
}

// textPage is the page text is drawn on.
func textPage() image.Rectangle {
	face := basicfont.Face7x13
	width := textColumns*face.Advance + 2*textMargin
	height := textLines*face.Metrics().Height.Ceil() + 2*textMargin
	return image.Rect(0, 0, width, height)
}

// textCost is the memory a text preview into boxSize takes: the text
// read, the page (gray), and its scaling.
func textCost(boxSize image.Point, req Request) int64 {
	page := textPage()
	return textLimit + int64(page.Dx())*int64(page.Dy()) + scaleBytes(page.Size(), boxSize, req)
}

// printable is the first columns of line with tabs as spaces and what is
// not valid UTF-8 as the replacement character.
func printable(line string, columns int) string {
	line = strings.ToValidUTF8(strings.ReplaceAll(line, "\t", "    "), "\uFFFD")
	if utf8.RuneCountInString(line) <= columns {
		return line
	}
	return string([]rune(line)[:columns])
}
