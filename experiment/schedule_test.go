package experiment

import (
	"reflect"
	"testing"

	"github.com/pltlab/pltlab/result"
)

func TestScheduleBlocks(t *testing.T) {
	c := Config{
		Pages:  []string{"10x30KB", "1x1MB"},
		Links:  []string{"none", "carlucci2015"},
		Arms:   CrossArms([]string{"h1", "h2", "h3"}, []result.Mode{result.Cold}),
		Runs:   5,
		Warmup: 1,
		Seed:   42,
	}
	jobs := Order(c)
	cells := 2 * 3
	if want := 2 * (5 + 1) * cells; len(jobs) != want || c.Loads() != want {
		t.Fatalf("len = %d, Loads = %d, want %d", len(jobs), c.Loads(), want)
	}
	if d := (Config{Pages: c.Pages, Links: c.Links[:1], Arms: c.Arms}); d.Loads() != len(Order(d)) {
		t.Errorf("default runs: Loads = %d, len(Order) = %d", d.Loads(), len(Order(d)))
	}
	perLink := (5 + 1) * cells
	for l := range 2 {
		linkJobs := jobs[l*perLink : (l+1)*perLink]
		for b := 0; b < 6; b++ {
			blk := linkJobs[b*cells : (b+1)*cells]
			seen := map[Job]bool{}
			for _, j := range blk {
				if j.Link != l {
					t.Fatalf("job %+v in link %d's part", j, l)
				}
				if j.Warmup != (b == 0) {
					t.Fatalf("block %d: warmup = %v", b, j.Warmup)
				}
				key := Job{Page: j.Page, Arm: j.Arm}
				if seen[key] {
					t.Fatalf("block %d repeats cell %+v", b, key)
				}
				seen[key] = true
			}
			if len(seen) != cells {
				t.Fatalf("block %d has %d cells, want %d", b, len(seen), cells)
			}
		}
	}
	if !reflect.DeepEqual(jobs, Order(c)) {
		t.Fatal("same config gave a different order")
	}
	c.Seed = 43
	if reflect.DeepEqual(jobs, Order(c)) {
		t.Fatal("another seed gave the same order")
	}
}

func TestScheduleInterleaves(t *testing.T) {
	c := Config{Pages: []string{"p"}, Links: []string{"l"}, Arms: CrossArms([]string{"h1", "h2", "h3"}, []result.Mode{result.Cold}), Runs: 20, Seed: 7}
	jobs := Order(c)
	// Blocked order would be h1 x20, h2 x20, h3 x20; interleaving means many protocol changes.
	changes := 0
	for i := 1; i < len(jobs); i++ {
		if jobs[i].Arm != jobs[i-1].Arm {
			changes++
		}
	}
	if changes < 30 {
		t.Fatalf("only %d protocol changes in %d loads: not interleaved", changes, len(jobs))
	}
	// Not the same permutation in every block.
	first := jobs[:3]
	same := 0
	for b := 1; b < 20; b++ {
		if reflect.DeepEqual(first, jobs[b*3:b*3+3]) {
			same++
		}
	}
	if same == 19 {
		t.Fatal("every block has the same order")
	}
}

func TestParseProtocols(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "h1,h2,h3", want: []string{"h1", "h2", "h3"}},
		{in: "h3, h1", want: []string{"h3", "h1"}},
		{in: "h4", wantErr: `bad protocol "h4" in "h4": accepted a comma-separated list of h1, h2, h3`},
		{in: "h1,h1", wantErr: `protocol "h1" given twice in "h1,h1"`},
		{in: "", wantErr: `bad protocol "" in "": accepted a comma-separated list of h1, h2, h3`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseProtocols(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	ok := Config{Pages: []string{"p"}, Links: []string{"l"}, Arms: []Arm{{"h2", result.Cold}}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := ok
	bad.Arms = []Arm{{"h4", "hot"}}
	bad.TCPCC = "vegas"
	err := bad.Validate()
	want := "bad protocol \"h4\": accepted h1, h2, h3\nbad mode \"hot\": accepted cold, warm\nbad tcp-cc \"vegas\": accepted cubic, bbr, reno"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v", err)
	}
}
