package browser

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// testFrame returns a JPEG of a white 200x100 page with the left share (0-1) of a dark box drawn.
func testFrame(t testing.TB, share float64) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 200, 100))
	for y := range 100 {
		for x := range 200 {
			c := color.RGBA{255, 255, 255, 255}
			if y >= 20 && y < 80 && x >= 20 && x < 180 && float64(x-20) < share*160 {
				c = color.RGBA{40, 90, 160, 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestVisualMetrics(t *testing.T) {
	frames := []frame{
		{ms: -20, jpeg: testFrame(t, 0)},  // blank page before the navigation
		{ms: 100, jpeg: testFrame(t, 0)},  // still blank
		{ms: 200, jpeg: testFrame(t, .5)}, // half drawn
		{ms: 300, jpeg: testFrame(t, .5)}, // unchanged
		{ms: 400, jpeg: testFrame(t, 1)},  // complete
	}
	v, err := visualMetrics(frames)
	if err != nil {
		t.Fatal(err)
	}
	if v.Frames != 5 || v.FirstVisualChangeMs != 200 || v.VisuallyCompleteMs != 400 || v.LastVisualChangeMs != 400 {
		t.Errorf("frames %d, first %.0f, complete %.0f, last %.0f; want 5, 200, 400, 400", v.Frames, v.FirstVisualChangeMs, v.VisuallyCompleteMs, v.LastVisualChangeMs)
	}
	if len(v.Progress) != 2 || v.Progress[0].Pct < 45 || v.Progress[0].Pct > 55 || v.Progress[1].Pct != 100 {
		t.Fatalf("progress %+v, want ~50 %% at 200 ms then 100 %% at 400 ms", v.Progress)
	}
	// SpeedIndex = 200 ms at 0 % + 200 ms at p % = 200 + 200 x (1 - p/100).
	want := 200 + 200*(1-float64(v.Progress[0].Pct)/100)
	if v.SpeedIndexMs != want {
		t.Errorf("SpeedIndex %.1f, want %.1f", v.SpeedIndexMs, want)
	}
	if len(v.Filmstrip) != 2 || len(v.Filmstrip[0].JPEG) == 0 {
		t.Errorf("filmstrip of %d frames", len(v.Filmstrip))
	}
}

func TestVisualMetricsEdges(t *testing.T) {
	v, err := visualMetrics(nil)
	if err != nil || v.Frames != 0 || len(v.Progress) != 0 {
		t.Errorf("no frames: %+v, %v", v, err)
	}
	if _, err := visualMetrics([]frame{{ms: 1, jpeg: []byte("not a jpeg")}}); err == nil {
		t.Error("a bad frame was accepted")
	}
	// A page that is visible at once: complete at its first frame, SpeedIndex = that time.
	v, err = visualMetrics([]frame{{ms: 50, jpeg: testFrame(t, 1)}})
	if err != nil || v.VisuallyCompleteMs != 50 || v.SpeedIndexMs != 50 {
		t.Errorf("one frame: %+v, %v", v, err)
	}
}

func TestProgressSlop(t *testing.T) {
	var start, final, cur histogram
	final[0][100], final[1][100], final[2][100] = 10, 10, 10
	cur[0][104], cur[1][96], cur[2][110] = 10, 10, 10 // within slop, within slop, outside
	if got := progress(&cur, &start, &final); got != 66 {
		t.Errorf("progress %d, want 66 (two of three channels matched within %d bins)", got, histSlop)
	}
}

// BenchmarkVisualMetrics is the cost per 800x600 frame (decode, histogram, thumbnail).
func BenchmarkVisualMetrics(b *testing.B) {
	img := image.NewRGBA(image.Rect(0, 0, 800, 600))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	var buf bytes.Buffer
	jpeg.Encode(&buf, img, &jpeg.Options{Quality: 70})
	frames := []frame{{ms: 10, jpeg: buf.Bytes()}}
	for b.Loop() {
		if _, err := visualMetrics(frames); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSpread(t *testing.T) {
	var thumbs []result.Thumb
	for i := range 30 {
		thumbs = append(thumbs, result.Thumb{Ms: float64(i)})
	}
	got := spread(thumbs, 12)
	if len(got) != 12 || got[0].Ms != 0 || got[11].Ms != 29 {
		t.Errorf("spread kept %d from %v to %v, want 12 from 0 to 29", len(got), got[0].Ms, got[len(got)-1].Ms)
	}
	if len(spread(thumbs[:5], 12)) != 5 {
		t.Error("spread dropped thumbnails below the limit")
	}
}
