package browser

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"

	"github.com/pltlab/pltlab/result"
)

// Visual metrics after WebPageTest's visualmetrics.py (also used by browsertime): visual
// completeness of a frame compares colour histograms with the first (blank) and final frames.

// histSlop is how many histogram bins away a pixel still matches (visualmetrics.py: slop = 5).
const histSlop = 5

// whiteMin: pixels whose three channels are all >= whiteMin are left out of the histograms, so
// the white background of a blank page counts as nothing to draw.
const whiteMin = 250

// thumbWidth is the width of filmstrip thumbnails in pixels.
const thumbWidth = 160

// histogram is a colour histogram: 256 bins per channel R, G, B.
type histogram [3][256]int64

// frame is one screencast frame: ms from the navigation start and the JPEG bytes.
type frame struct {
	ms   float64
	jpeg []byte
}

// histogramOf decodes a JPEG and returns its histogram without white pixels.
func histogramOf(b []byte) (histogram, image.Image, error) {
	var h histogram
	img, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		return h, nil, fmt.Errorf("decode frame: %w", err)
	}
	r := img.Bounds()
	add := func(c [3]uint8) {
		if c[0] >= whiteMin && c[1] >= whiteMin && c[2] >= whiteMin {
			return
		}
		for i := range 3 {
			h[i][c[i]]++
		}
	}
	if yc, ok := img.(*image.YCbCr); ok { // what the JPEG decoder gives: no interface call per pixel
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				yi, ci := yc.YOffset(x, y), yc.COffset(x, y)
				cr, cg, cb := color.YCbCrToRGB(yc.Y[yi], yc.Cb[ci], yc.Cr[ci])
				add([3]uint8{cr, cg, cb})
			}
		}
		return h, img, nil
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			add([3]uint8{uint8(cr >> 8), uint8(cg >> 8), uint8(cb >> 8)})
		}
	}
	return h, img, nil
}

// progress is visualmetrics.py's calculate_frame_progress: per channel, the change from start to
// final in each bin is matched against the change from start to this frame within histSlop
// bins; completeness is matched / total, floored to whole percent (100 when nothing changes).
func progress(cur, start, final *histogram) int {
	var total, matched int64
	for ch := range 3 {
		var avail [256]int64
		for i := range 256 {
			avail[i] = abs64(cur[ch][i] - start[ch][i])
		}
		for i := range 256 {
			target := abs64(final[ch][i] - start[ch][i])
			if target == 0 {
				continue
			}
			total += target
			for j := max(0, i-histSlop); j < min(256, i+histSlop) && target > 0; j++ {
				m := min(target, avail[j])
				avail[j] -= m
				matched += m
				target -= m
			}
		}
	}
	if total == 0 {
		return 100
	}
	return int(math.Floor(float64(matched) / float64(total) * 100))
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// visualMetrics computes a load's visual metrics from its frames (ascending ms; frames before
// the navigation start count as the blank start). The start is the blank page (an empty
// histogram), the end the last frame. SpeedIndex integrates (1 - completeness) from 0 to the
// first 100 % frame (visualmetrics.py calculate_speed_index, which starts at the first frame).
func visualMetrics(frames []frame) (*result.Visual, error) {
	v := &result.Visual{Frames: len(frames), Progress: []result.VisualPoint{}}
	if len(frames) == 0 {
		return v, nil
	}
	hists := make([]histogram, len(frames))
	imgs := make([]image.Image, len(frames))
	for i, f := range frames {
		h, img, err := histogramOf(f.jpeg)
		if err != nil {
			return nil, fmt.Errorf("visual metrics: frame %d: %w", i, err)
		}
		hists[i], imgs[i] = h, img
	}
	var start histogram
	final := &hists[len(hists)-1]
	last, lastMs := 0, 0.0
	for i, f := range frames {
		ms := math.Round(math.Max(f.ms, 0)*10) / 10 // 0.1 ms
		p := progress(&hists[i], &start, final)
		if i > 0 && hists[i] != hists[i-1] {
			v.LastVisualChangeMs = ms
		}
		if p == last {
			continue
		}
		if v.VisuallyCompleteMs == 0 {
			v.SpeedIndexMs += (ms - lastMs) * (1 - float64(last)/100)
		}
		if last == 0 && p > 0 {
			v.FirstVisualChangeMs = ms
		}
		if p == 100 && v.VisuallyCompleteMs == 0 {
			v.VisuallyCompleteMs = ms
		}
		v.Progress = append(v.Progress, result.VisualPoint{Ms: ms, Pct: p})
		addThumb(v, imgs[i], ms, p)
		last, lastMs = p, ms
	}
	v.SpeedIndexMs = math.Round(v.SpeedIndexMs*10) / 10
	v.Filmstrip = spread(v.Filmstrip, result.MaxFilmstrip)
	return v, nil
}

// spread keeps n of thumbs evenly spread over the load, the first and the last included.
func spread(thumbs []result.Thumb, n int) []result.Thumb {
	if len(thumbs) <= n {
		return thumbs
	}
	out := make([]result.Thumb, 0, n)
	for i := range n {
		out = append(out, thumbs[i*(len(thumbs)-1)/(n-1)])
	}
	return out
}

// addThumb adds a filmstrip thumbnail of img (visualMetrics later keeps result.MaxFilmstrip).
func addThumb(v *result.Visual, img image.Image, ms float64, pct int) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, scaleDown(img, thumbWidth), &jpeg.Options{Quality: 60}); err != nil {
		return
	}
	v.Filmstrip = append(v.Filmstrip, result.Thumb{Ms: ms, Pct: pct, JPEG: buf.Bytes()})
}

// scaleDown returns img scaled to width w (nearest neighbour), or img when it is narrower.
func scaleDown(img image.Image, w int) image.Image {
	b := img.Bounds()
	if b.Dx() <= w {
		return img
	}
	h := b.Dy() * w / b.Dx()
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			out.Set(x, y, img.At(b.Min.X+x*b.Dx()/w, b.Min.Y+y*b.Dy()/h))
		}
	}
	return out
}
