package pages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"html"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// writePage writes index.html, manifest.json and every object into the existing empty dir.
func writePage(ctx context.Context, dir string, spec Spec, seed int64) (*Manifest, error) {
	if err := os.Mkdir(filepath.Join(dir, "img"), 0o755); err != nil {
		return nil, fmt.Errorf("create page directory: %w", err)
	}
	objs, err := writeObjects(ctx, dir, spec.sizes(), seed)
	if err != nil {
		return nil, err
	}
	m := &Manifest{Spec: spec.Label(), Items: spec.String(), Seed: seed, Index: IndexPath,
		TotalBytes: spec.TotalBytes(), Objects: objs}
	if err := os.WriteFile(filepath.Join(dir, IndexPath[1:]), indexHTML(m), 0o644); err != nil {
		return nil, fmt.Errorf("write page html: %w", err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode page manifest: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("write page manifest: %w", err)
	}
	return m, nil
}

// objectPath returns the URL path of object i (0-based) of n: "/img/0001.jpg", numbered from 1
// with at least four digits.
func objectPath(i, n int) string {
	width := max(4, len(strconv.Itoa(n)))
	return fmt.Sprintf("/img/%0*d.jpg", width, i+1)
}

// writeObjects writes the objects of the given sizes under dir, in parallel on GOMAXPROCS
// workers, and returns them in document order. The first error stops the others.
func writeObjects(ctx context.Context, dir string, sizes []int64, seed int64) ([]Object, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	objs := make([]Object, len(sizes))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(sizes)) {
		wg.Go(func() {
			ow, h := newObjectWriter(), sha256.New()
			for i := range jobs {
				o, err := writeObjectFile(ctx, dir, objectPath(i, len(sizes)), sizes[i], objectKey(seed, i), ow, h)
				if err != nil {
					cancel(err)
					continue
				}
				objs[i] = o
			}
		})
	}
feed:
	for i := range sizes {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return objs, nil
}

// writeObjectFile writes one object to dir+path and returns its manifest entry.
func writeObjectFile(ctx context.Context, dir, path string, size int64, key [32]byte, ow *objectWriter, h hash.Hash) (Object, error) {
	if err := ctx.Err(); err != nil {
		return Object{}, err
	}
	name := filepath.Join(dir, filepath.FromSlash(path[1:]))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return Object{}, fmt.Errorf("create page object: %w", err)
	}
	h.Reset()
	c, err := ow.write(ctxWriter{ctx, io.MultiWriter(f, h)}, size, key)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Object{}, fmt.Errorf("write page object %s: %w", name, err)
	}
	return Object{Path: path, Size: size, SHA256: hex.EncodeToString(h.Sum(nil)), Width: c.side, Height: c.side}, nil
}

// ctxWriter fails writes once its context is done, so a large object stops within 64 KiB.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// indexHTML renders the page: minimal HTML5 whose only subresources are the objects, each <img>
// with its width and height; the data: icon stops the browser requesting /favicon.ico.
func indexHTML(m *Manifest) []byte {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	fmt.Fprintf(&b, "<title>pltlab page %s</title>\n", html.EscapeString(m.Spec))
	b.WriteString("<link rel=\"icon\" href=\"data:,\">\n</head>\n<body>\n")
	for _, o := range m.Objects {
		fmt.Fprintf(&b, "<img src=\"%s\" width=\"%d\" height=\"%d\" alt=\"\">\n", o.Path, o.Width, o.Height)
	}
	b.WriteString("</body>\n</html>\n")
	return []byte(b.String())
}
