package pages

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"math/rand/v2"
	"sync"
)

// MinObjectSize is the smallest object the generator makes, in bytes: the 8x8 core JPEG plus one
// empty COM segment (4 bytes). TestMinObjectSize checks it against the encoder.
const MinObjectSize int64 = 398

// Layout of an object: SOI, one or more COM (comment) segments of seeded pseudo-random bytes that
// pad the file to its exact size, then the rest of a small baseline grayscale JPEG (the "core":
// DQT, SOF0, DHT, SOS, scan, EOI) made by image/jpeg. Decoders skip COM segments (ITU-T T.81
// B.2.4.5), so the image decodes in image/jpeg and in browsers whatever its size.
const (
	comHeader     = 4         // FF FE and a 2-byte big-endian length that counts itself
	maxComPayload = 65535 - 2 // the length field is 16 bits and includes its own 2 bytes
	maxComSegment = comHeader + maxComPayload
	coreQuality   = 75             // image/jpeg quality of the core images
	coreMaxShare  = 4              // a core may take at most 1/coreMaxShare of an object
	coreSeed      = 0x706c746c6162 // fixed: cores (and so MinObjectSize) do not depend on the seed
)

// coreSides are the square core image sizes in pixels, smallest first.
var coreSides = []int{8, 16, 32, 64, 128, 256, 512, 1024}

// core is one encoded core image.
type core struct {
	side int
	jpg  []byte
}

// cores returns the encoded core images, smallest first; they are made once per process (~20 ms).
var cores = sync.OnceValue(func() []core {
	out := make([]core, len(coreSides))
	for i, s := range coreSides {
		out[i] = core{side: s, jpg: encodeCore(s)}
	}
	return out
})

// encodeCore encodes a side x side grayscale gradient with fixed pseudo-random noise.
func encodeCore(side int) []byte {
	img := image.NewGray(image.Rect(0, 0, side, side))
	r := rand.New(rand.NewPCG(coreSeed, uint64(side)))
	for y := range side {
		for x := range side {
			img.Pix[y*img.Stride+x] = uint8((x+y)*191/(2*side)) + uint8(r.Uint64()>>58) // PCG-DXSM output is specified
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: coreQuality}); err != nil {
		panic(fmt.Sprintf("encode %dx%d core jpeg: %v", side, side, err)) // in-memory: cannot fail
	}
	return b.Bytes()
}

// coreFor picks the largest core that takes at most 1/coreMaxShare of size bytes (the smallest
// core when none does), so pixel dimensions grow with the object: 8x8 below ~1.8 KB, 32x32 at
// 5 KB, 64x64 at 10 KB, 256x256 at 100 KB, 512x512 at 1 MB, 1024x1024 from ~1.26 MB.
func coreFor(size int64) core {
	cs := cores()
	best := cs[0]
	for _, c := range cs[1:] {
		if int64(len(c.jpg)+comHeader)*coreMaxShare <= size {
			best = c
		}
	}
	return best
}

// objectKey derives the padding generator's key for object index (0-based) of a page with seed.
func objectKey(seed int64, index int) [32]byte {
	var b [32]byte
	copy(b[:16], "pltlab-pages-v1\x00")
	binary.BigEndian.PutUint64(b[16:], uint64(seed))
	binary.BigEndian.PutUint64(b[24:], uint64(index))
	return sha256.Sum256(b[:])
}

// comSegments splits pad bytes (>= comHeader) into COM segment payload lengths as evenly as
// possible: n = ceil(pad / maxComSegment) segments, so no remainder of 1-3 bytes is ever left.
func comSegments(pad int64) []int {
	n := (pad + maxComSegment - 1) / maxComSegment
	total := pad - n*comHeader
	base, extra := total/n, total%n
	out := make([]int, n)
	for i := range out {
		out[i] = int(base)
		if int64(i) < extra {
			out[i]++
		}
	}
	return out
}

// padStream returns the keystream of AES-128 in CTR mode (NIST SP 800-38A) keyed by key[:16]
// with IV key[16:]: fast (hardware AES), standard, so the padding never changes between Go releases.
func padStream(key [32]byte) cipher.Stream {
	block, err := aes.NewCipher(key[:16])
	if err != nil {
		panic(err) // a 16-byte key is always valid
	}
	return cipher.NewCTR(block, key[16:])
}

// objectWriter writes objects; it reuses its buffer and must not be shared between goroutines.
type objectWriter struct {
	buf []byte
}

func newObjectWriter() *objectWriter { return &objectWriter{buf: make([]byte, maxComSegment)} }

// write writes one JPEG object of exactly size bytes to w, its padding drawn from padStream(key),
// and returns the core used. size must be MinObjectSize..MaxObjectSize. Objects of one page differ
// in their padding only, so minimum-size objects (empty COM segment) are all alike.
func (ow *objectWriter) write(w io.Writer, size int64, key [32]byte) (core, error) {
	if size < MinObjectSize || size > MaxObjectSize {
		return core{}, fmt.Errorf("object size %d B out of range %d..%d", size, MinObjectSize, MaxObjectSize)
	}
	c := coreFor(size)
	if _, err := w.Write(c.jpg[:2]); err != nil { // SOI
		return core{}, err
	}
	rng := padStream(key)
	for _, p := range comSegments(size - int64(len(c.jpg))) {
		seg := ow.buf[:comHeader+p]
		seg[0], seg[1] = 0xFF, 0xFE
		binary.BigEndian.PutUint16(seg[2:4], uint16(p+2))
		payload := seg[comHeader:]
		clear(payload)
		rng.XORKeyStream(payload, payload)
		if _, err := w.Write(seg); err != nil {
			return core{}, err
		}
	}
	_, err := w.Write(c.jpg[2:])
	return c, err
}
