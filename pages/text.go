package pages

import (
	"crypto/cipher"
	"fmt"
	"io"
	"strings"
)

// Text objects (stylesheets, scripts, iframe documents, fetched JSON) are a fixed prefix that
// does what the type does, then padding of seeded letters and digits inside a construct that
// the type's language ignores (a CSS or JS comment, an HTML comment, a JSON string), then a fixed
// suffix that closes it: valid for its type and exactly its size. Padding holds only [A-Za-z0-9],
// so it can never close the comment or the string early.

// PendingVar is the global (on self) the page's fetch loader counts its fetches in flight in: a
// browser that reads a load's timings waits while it is above 0, because fetch() does not delay
// the load event.
const PendingVar = "pltlabPending"

// padAlphabet is what text padding is drawn from.
const padAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// FrameResourcesVar is the global (on self) where the page collects the Resource Timing entries
// its iframes post (the objects they hold), in the shape and on the time origin of the page's
// own; a browser that reads a load's timings adds them to the page's.
const FrameResourcesVar = "pltlabFrameResources"

// textParts returns the prefix and suffix of text object o; the padding goes between them. aux
// is, for a fetch chain's link, the URL of the next object ("" when none), for an iframe that
// holds objects their markup (frameMarkup: head part, NUL, body part and script).
func textParts(o Object, aux string) (prefix, suffix string) {
	switch o.Type {
	case TypeCSS:
		return fmt.Sprintf("/* pltlab stylesheet %s */\n:root{--pltlab-%s:1}\n/*", o.Path, objectNumber(o.Path)), "*/\n"
	case TypeJS, TypeJSBody, TypeJSAsync, TypeJSDefer:
		return fmt.Sprintf("/* pltlab script %s */\n(self.pltlabRan = self.pltlabRan || []).push(%q);\n/*", o.Path, o.Path), "*/\n"
	case TypeIframe:
		head, body, _ := strings.Cut(aux, "\x00")
		return fmt.Sprintf("<!DOCTYPE html>\n<html lang=\"en\">\n<meta charset=\"utf-8\">\n<title>pltlab iframe</title>\n%s<p>pltlab iframe %s</p>\n%s<!--", head, o.Path, body), "-->\n"
	case TypeFetch, TypeFetchChain:
		return fmt.Sprintf("{\"path\":%q,\"next\":%q,\"pad\":\"", o.Path, aux), "\"}\n"
	}
	return "", ""
}

// objectNumber is the number of an object's file, "0003" of "/css/0003.css".
func objectNumber(path string) string {
	name := path[strings.LastIndex(path, "/")+1:]
	return name[:strings.IndexByte(name, '.')]
}

// writeText writes text object o of exactly o.Size bytes to w (aux: as textParts takes it), its
// padding from rng; buf is reused for the padding.
func writeText(w io.Writer, o Object, aux string, rng cipher.Stream, buf []byte) error {
	prefix, suffix := textParts(o, aux)
	pad := o.Size - int64(len(prefix)+len(suffix))
	if pad < 0 {
		return fmt.Errorf("%s object %s: %d bytes is too small for its %d fixed bytes", o.Type, o.Path, o.Size, len(prefix)+len(suffix))
	}
	if _, err := io.WriteString(w, prefix); err != nil {
		return err
	}
	for pad > 0 {
		chunk := buf[:min(int64(len(buf)), pad)]
		clear(chunk)
		rng.XORKeyStream(chunk, chunk)
		for i, c := range chunk {
			chunk[i] = padAlphabet[int(c)%len(padAlphabet)]
		}
		if _, err := w.Write(chunk); err != nil {
			return err
		}
		pad -= int64(len(chunk))
	}
	_, err := io.WriteString(w, suffix)
	return err
}
