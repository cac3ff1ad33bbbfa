package browser

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// Instances counts the Chromium browsers of pltlab alive on the machine: the processes whose
// command line has a --user-data-dir in a directory named TempDirPrefix* and no --type= (a
// browser's main process; its renderers, GPU, network and zygote helpers carry --type). A
// record's browsers field; a runner that keeps one browser per protocol on a link has at most
// as many as it forces protocols.
func Instances() int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		ours, helper := false, false
		for arg := range bytes.SplitSeq(b, []byte{0}) {
			if v, ok := bytes.CutPrefix(arg, []byte("--user-data-dir=")); ok && bytes.HasPrefix([]byte(filepath.Base(string(v))), []byte(TempDirPrefix)) {
				ours = true
			}
			helper = helper || bytes.HasPrefix(arg, []byte("--type="))
		}
		if ours && !helper {
			n++
		}
	}
	return n
}
