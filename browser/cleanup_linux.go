package browser

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// killLeftovers kills the processes started with --user-data-dir=dir (Chromium's children, such
// as the zygote and the network service, can outlive a killed main process). dir is unique to
// one of our launches, so only our own processes match. It looks again until a few passes in a
// row find nothing, for at most 2 s (after chromedp's killLeftovers).
func killLeftovers(dir string) {
	deadline := time.Now().Add(2 * time.Second)
	for quiet := 0; quiet < 3 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if len(processesUsing(dir, true)) == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
}

// processesUsing returns the pids whose command line has --user-data-dir=dir; with kill it also
// sends them SIGKILL.
func processesUsing(dir string, kill bool) []int {
	want := []byte("--user-data-dir=" + dir)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for arg := range bytes.SplitSeq(cmdline, []byte{0}) {
			if bytes.Equal(arg, want) {
				pids = append(pids, pid)
				if kill {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
				break
			}
		}
	}
	return pids
}

// dieWithParent makes the kernel kill the command when this process dies (Pdeathsig).
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
