package browser

import (
	"bytes"
	"path/filepath"

	"github.com/pltlab/pltlab/internal/hostload"
)

// Instances counts the Chromium browsers of pltlab alive on the machine: the processes whose
// command line has a --user-data-dir in a directory named TempDirPrefix* and no --type= (a
// browser's main process; its renderers, GPU, network and zygote helpers carry --type). A
// record's browsers field; a runner that keeps one browser per protocol on a link has at most
// as many as it forces protocols.
func Instances() int {
	return hostload.CountProcsBy("cmdline", func(b []byte) bool {
		ours, helper := false, false
		for arg := range bytes.SplitSeq(b, []byte{0}) {
			if v, ok := bytes.CutPrefix(arg, []byte("--user-data-dir=")); ok && bytes.HasPrefix([]byte(filepath.Base(string(v))), []byte(TempDirPrefix)) {
				ours = true
			}
			helper = helper || bytes.HasPrefix(arg, []byte("--type="))
		}
		return ours && !helper
	})
}
