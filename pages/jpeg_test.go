package pages

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"image/jpeg"
	"io"
	"testing"
)

func TestMinObjectSize(t *testing.T) {
	if got := int64(len(cores()[0].jpg) + comHeader); got != MinObjectSize {
		t.Fatalf("smallest object the encoder allows is %d B, MinObjectSize says %d", got, MinObjectSize)
	}
	if _, err := newObjectWriter().write(io.Discard, MinObjectSize-1, objectKey(1, 0)); err == nil {
		t.Fatal("writing an object below MinObjectSize succeeded")
	}
}

func TestComSegments(t *testing.T) {
	for pad := int64(comHeader); pad < 4*maxComSegment+10; pad += 1 + pad/97 {
		segs := comSegments(pad)
		var sum int64
		for _, p := range segs {
			if p < 0 || p > maxComPayload {
				t.Fatalf("pad %d: payload %d out of 0..%d", pad, p, maxComPayload)
			}
			sum += int64(comHeader + p)
		}
		if sum != pad {
			t.Fatalf("pad %d: segments %v sum to %d", pad, segs, sum)
		}
	}
}

// boundarySizes returns sizes at the edges of the generator: the minimum and just above it, and
// paddings of k full COM segments -1..+4 bytes for every core.
func boundarySizes() []int64 {
	sizes := []int64{MinObjectSize, MinObjectSize + 1, MinObjectSize + 2, MinObjectSize + 3, MinObjectSize + 4, 65535, 65536, 65537}
	for _, c := range cores() {
		for k := int64(1); k <= 2; k++ {
			for d := int64(-1); d <= 4; d++ {
				size := int64(len(c.jpg)) + k*maxComSegment + d
				if coreFor(size).side == c.side {
					sizes = append(sizes, size)
				}
			}
		}
	}
	return sizes
}

func TestObjectBoundarySizes(t *testing.T) {
	ow := newObjectWriter()
	for i, size := range boundarySizes() {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			var b bytes.Buffer
			c, err := ow.write(&b, size, objectKey(3, i))
			if err != nil {
				t.Fatal(err)
			}
			checkJPEG(t, b.Bytes(), size, c.side)
		})
	}
}

// TestIntegrationObjectMaxSize writes and decodes one object of MaxObjectSize (50 MB). Named
// Integration so that `make test` runs it (its unit target runs with -short, which skips it);
// before, nothing in `make test` did. About 1 s.
func TestIntegrationObjectMaxSize(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB object: skipped with -short (run by the integration target)")
	}
	var b bytes.Buffer
	c, err := newObjectWriter().write(&b, MaxObjectSize, objectKey(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	checkJPEG(t, b.Bytes(), MaxObjectSize, c.side)
}

func TestObjectDeterministic(t *testing.T) {
	sum := func(seed int64, i int) [32]byte {
		h := sha256.New()
		if _, err := newObjectWriter().write(h, 100_000, objectKey(seed, i)); err != nil {
			t.Fatal(err)
		}
		return [32]byte(h.Sum(nil))
	}
	if first, again := sum(1, 0), sum(1, 0); first != again {
		t.Error("same seed and index gave different bytes")
	}
	if sum(1, 0) == sum(2, 0) || sum(1, 0) == sum(1, 1) {
		t.Error("different seeds or indexes gave the same bytes")
	}
}

// checkJPEG checks that b is a baseline (SOF0) JPEG of exactly size bytes and side x side pixels
// that image/jpeg decodes.
func checkJPEG(t *testing.T, b []byte, size int64, side int) {
	t.Helper()
	if int64(len(b)) != size {
		t.Fatalf("object is %d bytes, want %d", len(b), size)
	}
	ms, err := markers(b)
	if err != nil {
		t.Fatal(err)
	}
	sof0 := 0
	for _, m := range ms {
		switch {
		case m == 0xC0:
			sof0++
		case m >= 0xC1 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC: // other SOFn
			t.Fatalf("frame marker FF%X: want baseline SOF0 only", m)
		}
	}
	if sof0 != 1 {
		t.Fatalf("%d SOF0 markers before the scan, want 1", sof0)
	}
	img, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode %d-byte object: %v", size, err)
	}
	if r := img.Bounds(); r.Dx() != side || r.Dy() != side {
		t.Fatalf("decoded %v, want %dx%d", r, side, side)
	}
}

// markers lists the marker codes of b from SOI up to and including SOS, checking segment lengths.
func markers(b []byte) ([]byte, error) {
	if len(b) < 4 || b[0] != 0xFF || b[1] != 0xD8 {
		return nil, fmt.Errorf("no SOI at the start: % X", b[:min(4, len(b))])
	}
	var ms []byte
	for i := 2; ; {
		if i+4 > len(b) || b[i] != 0xFF {
			return ms, fmt.Errorf("no marker at offset %d", i)
		}
		m := b[i+1]
		ms = append(ms, m)
		if m == 0xDA {
			return ms, nil
		}
		i += 2 + int(binary.BigEndian.Uint16(b[i+2:]))
	}
}
