package pages

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"
)

// A font object is a TrueType font (OpenType with glyf outlines, Apple/Microsoft "sfnt"): the
// tables a browser's font sanitizer (Chromium's OTS) requires (OS/2, cmap, glyf, head, hhea, hmtx,
// loca, maxp, name, post) for one glyph, .notdef, a 400 x 700 rectangle, and a private table
// "PLTP" of seeded bytes that pads the file to its size (sanitizers drop unknown tables). Tables
// are 4-byte aligned as the format asks, so a size that is not a multiple of 4 ends with 1 to 3
// zero bytes after the last table.

// fontPadTag is the tag of the padding table.
const fontPadTag = "PLTP"

// fontTable is one table of the font: its tag and data (unpadded).
type fontTable struct {
	tag  string
	data []byte
}

// fontCoreTables are the font's fixed tables, made once.
var fontCoreTables = sync.OnceValue(func() []fontTable {
	return []fontTable{
		{"OS/2", fontOS2()}, {"cmap", fontCmap()}, {"glyf", fontGlyf()}, {"head", fontHead()},
		{"hhea", fontHhea()}, {"hmtx", be16(500, 0)}, {"loca", be16(0, 17)}, {"maxp", fontMaxp()},
		{"name", fontName()}, {"post", fontPost()},
	}
})

// MinFontSize is the smallest font object the generator makes, in bytes: the fixed tables, the
// table directory and a padding table of 4 bytes.
var MinFontSize = fontBase() + 4

// fontBase is the size of the font without the padding table's data: header, directory (with
// the padding table's entry) and the fixed tables, each padded to 4 bytes.
func fontBase() int64 {
	n := int64(12 + 16*(len(fontCoreTables())+1))
	for _, t := range fontCoreTables() {
		n += int64(align4(len(t.data)))
	}
	return n
}

func align4(n int) int { return (n + 3) &^ 3 }

// be16 encodes values as big-endian 16-bit words.
func be16(v ...int) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.BigEndian.PutUint16(b[2*i:], uint16(x))
	}
	return b
}

// be32 encodes values as big-endian 32-bit words.
func be32(v ...uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.BigEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func fontHead() []byte {
	b := be32(0x00010000, 0x00010000, 0, 0x5F0F3CF5)         // version, fontRevision, checkSumAdjustment, magic
	b = append(b, be16(0x000B, 1000)...)                     // flags, unitsPerEm
	b = append(b, make([]byte, 16)...)                       // created, modified (1904 epoch: 0)
	return append(b, be16(0, 0, 400, 700, 0, 8, 2, 0, 0)...) // bbox, macStyle, lowestRecPPEM, direction, short loca, glyphDataFormat
}

func fontHhea() []byte {
	b := be32(0x00010000)
	v := []int{800, -200, 0, 500, 0, 100, 400, 1, 0, 0, 0, 0, 0, 0, 0, 1} // ascender ... numberOfHMetrics
	return append(b, be16(v...)...)
}

func fontMaxp() []byte {
	return append(be32(0x00010000), be16(1, 4, 1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0)...)
}

// fontGlyf is glyph 0: one closed contour of four on-curve points, 34 bytes (loca: 0, 17 words).
func fontGlyf() []byte {
	b := be16(1, 0, 0, 400, 700) // numberOfContours, bbox
	b = append(b, be16(3, 0)...) // endPtsOfContours, instructionLength
	b = append(b, 1, 1, 1, 1)    // flags: on curve, 16-bit deltas
	b = append(b, be16(0, 0, 400, 0)...)
	return append(b, be16(0, 700, 0, -700&0xFFFF)...)
}

// fontCmap is a Windows Unicode BMP (3, 1) format 4 subtable with only the final 0xFFFF segment.
func fontCmap() []byte {
	b := be16(0, 1, 3, 1)
	b = append(b, be32(12)...)
	return append(b, be16(4, 24, 0, 2, 2, 0, 0, 0xFFFF, 0, 0xFFFF, 1, 0)...)
}

// fontName holds the family "pltlab" and subfamily "Regular" (Windows, UTF-16BE, en-US).
func fontName() []byte {
	strs := []string{"pltlab", "Regular"}
	b := be16(0, len(strs), 6+12*len(strs))
	var data []byte
	for i, s := range strs {
		b = append(b, be16(3, 1, 0x409, i+1, 2*len(s), len(data))...)
		for _, r := range s {
			data = append(data, 0, byte(r))
		}
	}
	return append(b, data...)
}

func fontPost() []byte {
	b := be32(0x00030000, 0)
	b = append(b, be16(-100&0xFFFF, 50)...)
	return append(b, make([]byte, 20)...)
}

func fontOS2() []byte {
	b := be16(4, 500, 400, 5, 0, 650, 600, 0, 75, 650, 600, 0, 350, 50, 300, 0) // version .. sFamilyClass
	b = append(b, make([]byte, 10+16)...)                                       // panose, ulUnicodeRange1-4
	b = append(b, "PLTL"...)                                                    // achVendID
	b = append(b, be16(0x0040, 0xFFFF, 0xFFFF, 800, -200&0xFFFF, 0, 800, 200)...)
	b = append(b, make([]byte, 8)...) // ulCodePageRange1-2
	return append(b, be16(500, 700, 0, 32, 0)...)
}

// checksum is the sfnt table checksum: the sum of big-endian uint32 words, zero-padded.
func checksum(b []byte) uint32 {
	var sum uint32
	for i := 0; i < len(b); i += 4 {
		var w [4]byte
		copy(w[:], b[i:])
		sum += binary.BigEndian.Uint32(w[:])
	}
	return sum
}

// writeFont writes a font of exactly size bytes (MinFontSize..MaxObjectSize) to w, its padding
// table's bytes from pad. The font is built in memory (fonts are small; MaxObjectSize at most).
func writeFont(w io.Writer, size int64, pad func([]byte)) error {
	if size < MinFontSize || size > MaxObjectSize {
		return fmt.Errorf("font size %d B out of range %d..%d", size, MinFontSize, MaxObjectSize)
	}
	rest := size - fontBase()
	trailing := rest % 4
	padData := make([]byte, rest-trailing)
	pad(padData)
	tables := append(slices.Clone(fontCoreTables()), fontTable{fontPadTag, padData})
	slices.SortFunc(tables, func(a, b fontTable) int { return cmpTag(a.tag, b.tag) })
	n := len(tables)
	entrySel := 0
	for 1<<(entrySel+1) <= n {
		entrySel++
	}
	searchRange := 16 << entrySel
	out := make([]byte, 0, size)
	out = append(out, be32(0x00010000)...)
	out = append(out, be16(n, searchRange, entrySel, 16*n-searchRange)...)
	offset := 12 + 16*n
	headAt := 0
	for _, t := range tables {
		if t.tag == "head" {
			headAt = offset
		}
		out = append(out, t.tag...)
		out = append(out, be32(checksum(t.data), uint32(offset), uint32(len(t.data)))...)
		offset += align4(len(t.data))
	}
	for _, t := range tables {
		out = append(out, t.data...)
		out = append(out, make([]byte, align4(len(t.data))-len(t.data))...)
	}
	out = append(out, make([]byte, trailing)...)
	binary.BigEndian.PutUint32(out[headAt+8:], 0xB1B0AFBA-checksum(out))
	_, err := w.Write(out)
	return err
}

// cmpTag orders table tags as the directory requires: by their bytes.
func cmpTag(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
