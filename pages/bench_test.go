package pages

import (
	"io"
	"path/filepath"
	"testing"
)

// BenchmarkWriteObject10MB measures the CPU cost of one 10 MB object (padding generation and
// framing, no hashing or file I/O) on one core.
func BenchmarkWriteObject10MB(b *testing.B) {
	ow := newObjectWriter()
	b.SetBytes(10_000_000)
	for i := 0; b.Loop(); i++ {
		if _, err := ow.write(io.Discard, 10_000_000, objectKey(1, i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGenerate measures whole-page generation (objects hashed and written to files,
// index.html, manifest.json, rename) for 100 MB pages of large and of small objects; the
// throughput (MB/s) tells how long a 1 GB page takes.
func BenchmarkGenerate(b *testing.B) {
	for _, s := range []string{"10x10MB", "1000x100KB", "10000x10KB"} {
		b.Run(s, func(b *testing.B) {
			spec := mustParse(b, s)
			b.SetBytes(spec.TotalBytes())
			for b.Loop() {
				if _, err := Generate(filepath.Join(b.TempDir(), "p"), spec, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
