package shaping

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// RootlessCommand returns a command that runs the program at path with args inside new user,
// mount and network namespaces in which the calling (unprivileged) user is root: uid and gid 0
// map to the caller's own ids, so every file written keeps the caller's ownership. Inside, the
// program must call PrepareRootless before it opens a link; it then creates namespaces and TUN
// devices as root does, all of them inside namespaces that die with it (so nothing can be left
// behind, even after a SIGKILL). It needs unprivileged user namespaces
// (user.max_user_namespaces > 0), which this project's machines have.
func RootlessCommand(path string, args []string) *exec.Cmd {
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		// setgroups must be denied before an unprivileged process may write its gid map.
		GidMappingsEnableSetgroups: false,
		Pdeathsig:                  syscall.SIGKILL,
	}
	return cmd
}

// PrepareRootless readies the namespaces RootlessCommand made for links: mounts stop propagating
// to the host, a private tmpfs on /run holds the named network namespaces (/run/netns, where
// `ip netns` keeps them; the host's /run is hidden from this process only), and the loopback
// device of the new network namespace, which plays the host's side of every link, is up.
func PrepareRootless() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("rootless: make mounts private: %w", err)
	}
	if err := unix.Mount("pltlab-run", "/run", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("rootless: mount a private /run: %w", err)
	}
	if err := os.MkdirAll("/run/netns", 0o755); err != nil {
		return fmt.Errorf("rootless: %w", err)
	}
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("rootless: find lo: %w", err)
	}
	if err := netlink.LinkSetUp(lo); err != nil {
		return fmt.Errorf("rootless: set lo up: %w", err)
	}
	return nil
}
