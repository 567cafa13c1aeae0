// Package imagebombs makes the images the tests of previews send to a
// server: small files that declare, or decode to, far more pixels than
// they weigh. Only tests import it.
package imagebombs

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
)

// SolidWebP is a lossless WebP (VP8L) of w×h pixels of colour c in a few
// dozen bytes: five prefix codes of one symbol each, so that the pixels
// themselves take no bits at all.
func SolidWebP(w, h int, c color.NRGBA) []byte {
	var bits bitWriter
	bits.write(uint32(w-1), 14)
	bits.write(uint32(h-1), 14)
	bits.write(1, 1) // alpha is used
	bits.write(0, 3) // version
	bits.write(0, 1) // no transform
	bits.write(0, 1) // no colour cache
	bits.write(0, 1) // no meta prefix codes
	for _, symbol := range []uint8{c.G, c.R, c.B, c.A} {
		bits.write(1, 1) // a simple code
		bits.write(0, 1) // of one symbol
		bits.write(1, 1) // of eight bits
		bits.write(uint32(symbol), 8)
	}
	bits.write(1, 1) // the distance code: simple, one symbol of one bit, 0
	bits.write(0, 1)
	bits.write(0, 1)
	bits.write(0, 1)
	data := append([]byte{0x2f}, bits.buf...)
	if len(data)%2 == 1 {
		data = append(data, 0)
	}
	chunk := append([]byte("VP8L"), binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...)
	chunk = append(chunk, data...)
	out := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(4+len(chunk)))...)
	out = append(out, "WEBP"...)
	return append(out, chunk...)
}

// bitWriter writes bits least significant first, as VP8L reads them.
type bitWriter struct {
	buf   []byte
	nbits uint
}

func (b *bitWriter) write(v uint32, n uint) {
	for i := range n {
		if b.nbits%8 == 0 {
			b.buf = append(b.buf, 0)
		}
		b.buf[len(b.buf)-1] |= byte((v>>i)&1) << (b.nbits % 8)
		b.nbits++
	}
}

// DeepPNG is a 16-bit RGBA PNG of w×h zero pixels, which deflate packs a
// thousandfold and Go decodes to 8 bytes a pixel.
func DeepPNG(w, h int) []byte {
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ihdr = append(ihdr, 16, 6, 0, 0, 0) // 16 bits, RGBA, deflate, no filter, not interlaced
	Chunk(&out, "IHDR", ihdr)
	Chunk(&out, "IDAT", zeroRows(1+8*w, h))
	Chunk(&out, "IEND", nil)
	return out.Bytes()
}

// zeroRows is the zlib stream of n (at least 1) rows of rowLen zero bytes
// (each row's filter byte, 0, and its pixels), made without compressing
// them all: compressing hundreds of megabytes took minutes under the race
// detector. A row compressed after a sync flush decodes to the same zeros
// wherever it stands after as many rows as stood before it when it was
// compressed (its matches reach back no further, into zeros), so the
// third row's bytes stand for every row after the second.
func zeroRows(rowLen, n int) []byte {
	var stream bytes.Buffer
	zw, _ := flate.NewWriter(&stream, flate.BestCompression) // the level is valid
	row := make([]byte, rowLen)
	var ends [3]int
	for i := range ends {
		zw.Write(row)
		zw.Flush()
		ends[i] = stream.Len()
	}
	compressed := stream.Bytes()
	repeated := compressed[ends[1]:ends[2]]

	out := []byte{0x78, 0xda} // zlib: deflate, 32 KiB window, best compression
	out = append(out, compressed[:ends[min(n, 2)-1]]...)
	for range n - 2 {
		out = append(out, repeated...)
	}
	out = append(out, 0x01, 0x00, 0x00, 0xff, 0xff) // a last, empty stored block
	// Adler-32 of zeros: its sum of bytes stays 1, its sum of sums is the
	// length.
	total := uint64(rowLen) * uint64(n)
	return binary.BigEndian.AppendUint32(out, uint32(total%65521)<<16|1)
}

// Chunk appends a PNG chunk of kind and data to w, with its CRC.
func Chunk(w *bytes.Buffer, kind string, data []byte) {
	w.Write(binary.BigEndian.AppendUint32(nil, uint32(len(data))))
	crc := crc32.NewIEEE()
	crc.Write([]byte(kind))
	crc.Write(data)
	w.WriteString(kind)
	w.Write(data)
	w.Write(binary.BigEndian.AppendUint32(nil, crc.Sum32()))
}

// FlatGIF is a GIF of w×h pixels of one colour: some tens of kilobytes
// for 7000×7000.
func FlatGIF(w, h int) ([]byte, error) {
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Black, color.White})
	var b bytes.Buffer
	if err := gif.Encode(&b, img, nil); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
