// Package hostenv describes this machine and this build for the records (the env of a record):
// the one place outside the measuring packages that probes the host, so package result stays
// the standard library only.
package hostenv

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/pltlab/pltlab/result"
)

// Local describes this machine and this build for the records of one experiment: version
// (the pltlab version), seed, the kernel release (uname -r), hostname, logical CPUs, whether the
// process runs in a user namespace (rootless) and the QUIC stack ("quic-go VERSION" from the
// build information). The UDP buffer sizes are the server's and are filled in by its caller.
func Local(version string, seed int64) *result.Env {
	env := &result.Env{Pltlab: version, CPUs: runtime.NumCPU(), Seed: seed}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		env.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	env.Host, _ = os.Hostname()
	env.UserNS = inUserNamespace()
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/quic-go/quic-go" {
				env.QUIC = "quic-go " + m.Version
			}
		}
	}
	return env
}

// inUserNamespace reports whether this process runs in a user namespace other than the initial
// one, whose uid map is the identity over all 2^32-1 ids (user_namespaces(7)).
func inUserNamespace() bool {
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return !(len(f) == 3 && f[0] == "0" && f[1] == "0" && f[2] == "4294967295")
}
