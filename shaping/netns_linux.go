package shaping

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Names of what a link creates. The owning pid is in every name so that the next Open can delete
// what a dead process left behind: namespaces "pltlab-<pid>-<n>" (decimal) and host-side devices
// "pltlab<pid>-<n>" (hex, to fit IFNAMSIZ).
const (
	nsPrefix   = "pltlab-"
	devPrefix  = "pltlab"
	netnsDir   = "/var/run/netns"
	capNetAdm  = 12      // CAP_NET_ADMIN bit in CapEff
	capSysAdm  = 21      // CAP_SYS_ADMIN bit in CapEff (mount, setns)
	addrBlocks = 1 << 20 // /30 blocks in 100.64.0.0/10
)

var linkSeq atomic.Uint32

// closeOnDone calls closeFn when ctx is done before closed is (the link closed by its owner).
func closeOnDone(ctx context.Context, closed <-chan struct{}, closeFn func() error) {
	go func() {
		select {
		case <-ctx.Done():
			closeFn()
		case <-closed:
		}
	}()
}

// linkNames returns a new namespace name and host device name for this process.
func linkNames() (ns, dev string, n uint32) {
	n = linkSeq.Add(1) & 0xff
	pid := os.Getpid()
	return fmt.Sprintf("%s%d-%d", nsPrefix, pid, n), fmt.Sprintf("%s%x-%x", devPrefix, pid, n), n
}

// checkPrivileges returns ErrNotRoot unless the process has CAP_NET_ADMIN and CAP_SYS_ADMIN.
func checkPrivileges() error {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return fmt.Errorf("read capabilities: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		hex, ok := strings.CutPrefix(line, "CapEff:")
		if !ok {
			continue
		}
		caps, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
		if err == nil && caps&(1<<capNetAdm) != 0 && caps&(1<<capSysAdm) != 0 {
			return nil
		}
	}
	return ErrNotRoot
}

// pidAlive reports whether a process with this pid exists.
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ownerPid extracts the owning pid from a pltlab namespace or device name (0 if none).
func ownerPid(name string, isDev bool) int {
	if isDev {
		rest, ok := strings.CutPrefix(name, devPrefix)
		pidHex, _, ok2 := strings.Cut(rest, "-")
		if p, err := strconv.ParseInt(pidHex, 16, 32); ok && ok2 && err == nil {
			return int(p)
		}
		return 0
	}
	rest, ok := strings.CutPrefix(name, nsPrefix)
	pidDec, _, ok2 := strings.Cut(rest, "-")
	if p, err := strconv.Atoi(pidDec); ok && ok2 && err == nil {
		return p
	}
	return 0
}

// cleanStale deletes pltlab namespaces and host devices whose owning process is gone.
func cleanStale(log *slog.Logger) {
	deleteOwned(func(pid int) bool { return !pidAlive(pid) }, log)
}

// deleteOwned deletes every pltlab namespace and device whose owner pid (encoded in its name)
// satisfies match.
func deleteOwned(match func(pid int) bool, log *slog.Logger) {
	entries, _ := os.ReadDir(netnsDir)
	for _, e := range entries {
		if pid := ownerPid(e.Name(), false); pid > 0 && match(pid) {
			err := deleteNamedNS(e.Name())
			log.Info("deleted namespace", "name", e.Name(), "owner", pid, "err", err)
		}
	}
	links, _ := netlink.LinkList()
	for _, l := range links {
		name := l.Attrs().Name
		if pid := ownerPid(name, true); pid > 0 && match(pid) {
			err := netlink.LinkDel(l)
			log.Info("deleted device", "name", name, "owner", pid, "err", err)
		}
	}
}

// Teardown deletes every network namespace and device this process created, by name (the pid
// is part of each name), without waiting for the links' forwarders: the last resort when the
// process must exit at once (a second interrupt). Links still open stop working.
func Teardown() {
	self := os.Getpid()
	deleteOwned(func(pid int) bool { return pid == self }, slog.New(slog.DiscardHandler))
}

var netnsDirMu sync.Mutex

// prepareNetnsDir makes /var/run/netns a shared mount point of its own, as `ip netns add` does.
// Without it, a later `ip netns` call that bind-mounts the directory onto itself would hide our
// namespace mounts beneath it, and they could no longer be unmounted.
func prepareNetnsDir() error {
	netnsDirMu.Lock()
	defer netnsDirMu.Unlock()
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", netnsDir, err)
	}
	dir, err := filepath.EvalSymlinks(netnsDir)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", netnsDir, err)
	}
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("read mountinfo: %w", err)
	}
	for _, line := range strings.Split(string(info), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == dir {
			return nil
		}
	}
	if err := unix.Mount(dir, dir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind-mount %s: %w", dir, err)
	}
	if err := unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("make %s shared: %w", dir, err)
	}
	return nil
}

// deleteNamedNS unmounts and removes /var/run/netns/name. Unlike netns.DeleteNamed it also
// removes a file that is no longer a mount point, and retries while the kernel still reports
// the mount point busy (a lazily detached mount that another mount namespace still holds).
func deleteNamedNS(name string) error {
	p := filepath.Join(netnsDir, name)
	killProcsIn(p)
	var err error
	for i := 0; i < 50; i++ {
		if uerr := unix.Unmount(p, unix.MNT_DETACH); uerr != nil && !errors.Is(uerr, unix.EINVAL) && !errors.Is(uerr, unix.ENOENT) {
			err = uerr
		}
		rerr := os.Remove(p)
		if rerr == nil || errors.Is(rerr, os.ErrNotExist) {
			return nil
		}
		err = rerr
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("delete namespace %s: %w", name, err)
}

// allocAddrs picks a free /30 in 100.64.0.0/10 (RFC 6598 shared address space): the host gets
// .1, the client .2. It avoids blocks any device in this namespace already uses.
func allocAddrs(n uint32) (host, client netip.Addr) {
	used := map[uint32]bool{}
	addrs, _ := netlink.AddrList(nil, netlink.FAMILY_V4)
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP.To4()); ok {
			used[blockOf(ip)] = true
		}
	}
	start := (uint32(os.Getpid())*256 + n) % addrBlocks
	for i := uint32(0); i < addrBlocks; i++ {
		b := (start + i) % addrBlocks
		if b != 0 && !used[b] {
			return blockAddr(b, 1), blockAddr(b, 2)
		}
	}
	return blockAddr(1, 1), blockAddr(1, 2)
}

func blockOf(ip netip.Addr) uint32 {
	a := ip.As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	if v>>22 != (100<<24|64<<16)>>22 {
		return 0
	}
	return (v & (1<<22 - 1)) >> 2
}

func blockAddr(b, host uint32) netip.Addr {
	v := uint32(100)<<24 | uint32(64)<<16 | b<<2 | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// newNamedNS creates the named network namespace and runs setup inside it on a locked OS
// thread; the thread returns to this process's namespace afterwards (or is discarded).
func newNamedNS(name string, setup func() error) error {
	if err := prepareNetnsDir(); err != nil {
		return err
	}
	return onThread(func(orig netns.NsHandle) error {
		ns, err := netns.NewNamed(name)
		if err != nil {
			return fmt.Errorf("create namespace %s: %w", name, err)
		}
		defer ns.Close()
		return setup()
	})
}

// inNamespace runs fn with the calling thread inside the named namespace. Sockets fn creates
// stay in that namespace and may be used from any goroutine afterwards.
func inNamespace(name string, fn func() error) error {
	return onThread(func(orig netns.NsHandle) error {
		ns, err := netns.GetFromName(name)
		if err != nil {
			return fmt.Errorf("open namespace %s: %w", name, err)
		}
		defer ns.Close()
		if err := netns.Set(ns); err != nil {
			return fmt.Errorf("enter namespace %s: %w", name, err)
		}
		return fn()
	})
}

// onThread runs fn on a fresh locked OS thread and restores the thread's namespace afterwards;
// if that fails the thread is left locked so the runtime discards it.
func onThread(fn func(orig netns.NsHandle) error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- fmt.Errorf("get current namespace: %w", err)
			return
		}
		defer orig.Close()
		err = fn(orig)
		if rerr := netns.Set(orig); rerr != nil {
			errc <- errors.Join(err, fmt.Errorf("return to namespace: %w", rerr))
			return // thread stays locked and dies with this goroutine
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// writeSysctl writes value to /proc/sys/<key> (key with slashes) in the calling thread's namespace.
func writeSysctl(key, value string) error {
	if err := os.WriteFile("/proc/sys/"+key, []byte(value), 0o644); err != nil {
		return fmt.Errorf("sysctl %s=%s: %w", strings.ReplaceAll(key, "/", "."), value, err)
	}
	return nil
}

// setupClientNS configures the current thread's (new) namespace: loopback up, IPv6 off (no
// router solicitations on the link), TCP buffer maxima raised.
func setupClientNS(tcpBufMax int) error {
	var errs []error
	for _, kv := range [][2]string{
		{"net/ipv6/conf/all/disable_ipv6", "1"},
		{"net/ipv6/conf/default/disable_ipv6", "1"},
		{"net/ipv4/tcp_rmem", fmt.Sprintf("4096 131072 %d", tcpBufMax)},
		{"net/ipv4/tcp_wmem", fmt.Sprintf("4096 16384 %d", tcpBufMax)},
	} {
		errs = append(errs, writeSysctl(kv[0], kv[1]))
	}
	lo, err := netlink.LinkByName("lo")
	if err == nil {
		err = netlink.LinkSetUp(lo)
	}
	errs = append(errs, err)
	return errors.Join(errs...)
}

// configureDev sets MTU, a deep transmit queue and a point-to-point address on dev, then brings
// it up. No default route is added: the client namespace reaches only the host address, so no
// packet of a client (say, a browser's background request) can be forwarded beyond the link.
func configureDev(name string, mtu int, local, peer netip.Addr) error {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return fmt.Errorf("find device %s: %w", name, err)
	}
	addr := &netlink.Addr{IPNet: prefixNet(local), Peer: prefixNet(peer)}
	steps := []func() error{
		func() error { return netlink.LinkSetMTU(l, mtu) },
		func() error { return netlink.LinkSetTxQLen(l, 10000) },
		func() error { return netlink.AddrAdd(l, addr) },
		func() error { return netlink.LinkSetUp(l) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("configure %s: %w", name, err)
		}
	}
	return nil
}

// prefixNet is a as a /32 network.
func prefixNet(a netip.Addr) *net.IPNet {
	return &net.IPNet{IP: net.IP(a.AsSlice()), Mask: net.CIDRMask(32, 32)}
}

// killProcsIn sends SIGKILL to every process (but this one) whose network namespace is the one
// bound at nsPath, so that nothing a link ran (a shell command's children, a browser) outlives
// it. It matches /proc/PID/ns/net by device and inode.
func killProcsIn(nsPath string) {
	var ns unix.Stat_t
	if unix.Stat(nsPath, &ns) != nil {
		return
	}
	entries, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		var st unix.Stat_t
		if unix.Stat("/proc/"+e.Name()+"/ns/net", &st) == nil && st.Ino == ns.Ino && st.Dev == ns.Dev {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
}
