// Package vmtest runs a command on a real Linux kernel in a qemu guest whose root filesystem is
// the host's own, read-only: the guest runs the host's binaries (pltlab, test binaries, tc, ping,
// iperf3, Chromium) on a kernel that has the modules the host's kernel may lack (sch_netem, the
// kernel AQMs).
//
// The guest boots Debian's kernel (/boot/vmlinuz-RELEASE, package linux-image-amd64) under
// qemu's TCG (no KVM: a paravirtualized /dev/kvm may not boot a stock kernel) from a small
// initramfs built at run time from the host's files (busybox-static and the kernel's virtio and
// 9p modules; nothing is downloaded). Its /init mounts the host's root over virtio-9p read-only,
// puts tmpfs on /tmp, /run, /var/tmp and /root, mounts a second, writable virtio-9p share (the
// run's directory) at /run/vmtest and runs the command there in a chroot with /bin/sh. The
// command's output and exit status come back through that share; the serial console (kernel
// messages and the command's output) is streamed to the caller. The guest has no network
// device: only what it builds itself (veth pairs, namespaces) carries traffic.
package vmtest

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Options configure one guest run.
type Options struct {
	// Command is the shell command run in the guest (/bin/sh -c semantics, as root), in Dir.
	Command string
	// Dir is the guest's working directory (a host path, read-only in the guest); "" = /.
	Dir string
	// Env are extra KEY=VALUE environment entries for the command (PATH and HOME are set).
	Env []string
	// WorkDir is a host directory shared writable with the guest at /run/vmtest (inputs the
	// command needs may be put there beforehand; outputs written there stay). "" = a temporary
	// directory removed afterwards.
	WorkDir string
	// Kernel is the kernel image; "" = the newest /boot/vmlinuz-* whose modules are installed.
	Kernel string
	// CPUs and MemMB size the guest (defaults 2 and 2048).
	CPUs, MemMB int
	// Timeout bounds the whole run, boot included (default 10 minutes).
	Timeout time.Duration
	// Nice, when not 0, runs qemu at that nice value (negative: ahead of other work, so the
	// guest's timers fire on time on a shared machine; needs root).
	Nice int
	// Console receives the guest's serial console as it runs (nil = discarded).
	Console io.Writer
}

// Result is the outcome of a run whose guest finished the command.
type Result struct {
	// ExitCode is the command's exit status in the guest.
	ExitCode int
	// Output is the command's standard output and standard error, interleaved.
	Output []byte
	// Boot is the time from qemu's start to the command's start; Total to qemu's exit.
	Boot, Total time.Duration
}

// GuestDir is where the writable share is mounted in the guest.
const GuestDir = "/run/vmtest"

// ErrUnavailable wraps every reason the harness cannot run here (no qemu, no kernel, no
// busybox-static); its message names the missing piece and the packages that provide it.
var ErrUnavailable = errors.New("qemu guest not available: install qemu-system-x86 linux-image-amd64 busybox-static (make netem-deps)")

// bootModules are the modules the initramfs loads (with their dependencies from modules.dep,
// in dependency order) to reach the host's root over virtio-9p.
var bootModules = []string{"virtio_pci", "9pnet_virtio", "9p"}

// Available reports why the harness cannot run here, or nil. It looks at files only.
func Available() error {
	_, err := findTools("")
	return err
}

type tools struct {
	qemu, kernel, release, busybox string
}

func findTools(kernel string) (tools, error) {
	var t tools
	var err error
	if t.qemu, err = exec.LookPath("qemu-system-x86_64"); err != nil {
		return t, fmt.Errorf("no qemu-system-x86_64 in PATH: %w", ErrUnavailable)
	}
	if t.kernel, t.release, err = pickKernel(kernel, "/boot", "/lib/modules"); err != nil {
		return t, err
	}
	t.busybox = "/bin/busybox"
	if b, err := os.ReadFile(t.busybox); err != nil || !isStatic(b) {
		return t, fmt.Errorf("/bin/busybox is missing or not statically linked (busybox-static): %w", ErrUnavailable)
	}
	return t, nil
}

// pickKernel returns the kernel image and its release: kernel itself when given, else the
// newest vmlinuz-RELEASE in boot whose modules directory exists.
func pickKernel(kernel, boot, modules string) (string, string, error) {
	if kernel != "" {
		rel := strings.TrimPrefix(filepath.Base(kernel), "vmlinuz-")
		if _, err := os.Stat(filepath.Join(modules, rel, "modules.dep")); err != nil {
			return "", "", fmt.Errorf("kernel %s: no %s/%s/modules.dep: %w", kernel, modules, rel, ErrUnavailable)
		}
		return kernel, rel, nil
	}
	imgs, _ := filepath.Glob(filepath.Join(boot, "vmlinuz-*"))
	sort.Sort(sort.Reverse(sort.StringSlice(imgs)))
	for _, img := range imgs {
		rel := strings.TrimPrefix(filepath.Base(img), "vmlinuz-")
		if _, err := os.Stat(filepath.Join(modules, rel, "modules.dep")); err == nil {
			return img, rel, nil
		}
	}
	return "", "", fmt.Errorf("no %s/vmlinuz-* with modules in %s (linux-image-amd64): %w", boot, modules, ErrUnavailable)
}

// isStatic reports whether an ELF file has no PT_INTERP program header (no dynamic loader).
func isStatic(b []byte) bool {
	if len(b) < 64 || !bytes.Equal(b[:4], []byte("\x7fELF")) || b[4] != 2 {
		return false
	}
	le := func(o, n int) uint64 {
		var v uint64
		for i := n - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[o+i])
		}
		return v
	}
	phoff, phentsize, phnum := int(le(0x20, 8)), int(le(0x36, 2)), int(le(0x38, 2))
	for i := 0; i < phnum; i++ {
		o := phoff + i*phentsize
		if o+4 > len(b) {
			return false
		}
		if le(o, 4) == 3 { // PT_INTERP
			return false
		}
	}
	return true
}

// moduleOrder resolves names (module names, '-' and '_' alike) to their .ko paths relative to
// modDir with every dependency first, from modDir/modules.dep.
func moduleOrder(modDir string, names []string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(modDir, "modules.dep"))
	if err != nil {
		return nil, err
	}
	deps := map[string][]string{}
	byName := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		mod, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		deps[mod] = strings.Fields(rest)
		byName[modName(mod)] = mod
	}
	var order []string
	seen := map[string]bool{}
	var visit func(string)
	visit = func(m string) {
		if seen[m] {
			return
		}
		seen[m] = true
		for _, d := range deps[m] {
			visit(d)
		}
		order = append(order, m)
	}
	for _, n := range names {
		m, ok := byName[strings.ReplaceAll(n, "-", "_")]
		if !ok {
			return nil, fmt.Errorf("module %s not in %s/modules.dep", n, modDir)
		}
		visit(m)
	}
	return order, nil
}

// modName is the module name of a modules.dep path: kernel/fs/9p/9p.ko.xz -> 9p.
func modName(path string) string {
	base := filepath.Base(path)
	if i := strings.Index(base, ".ko"); i >= 0 {
		base = base[:i]
	}
	return strings.ReplaceAll(base, "-", "_")
}

// initScript is the guest's /init: mount the host root and the share, load tun (so that the
// emulator's TUN links work in the guest as on the host), run the command in a chroot, record
// its status, power off. Its markers on the console let a reader follow the boot.
const initScript = `#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /modules/order); do
	insmod /modules/$m || echo "vmtest: insmod $m failed"
done
r=/newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot $r || { echo "vmtest: cannot mount the host root"; poweroff -f; }
for d in tmp run var/tmp root; do mount -t tmpfs -o mode=1777 tmpfs $r/$d; done
mount -t proc proc $r/proc
mount -t sysfs sys $r/sys
mount -t devtmpfs dev $r/dev
mkdir -p $r/dev/pts $r/dev/shm
mount -t devpts devpts $r/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $r/dev/shm
mount -t cgroup2 cgroup2 $r/sys/fs/cgroup 2>/dev/null
mkdir -p $r/run/vmtest $r/run/netns
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 vmout $r/run/vmtest || { echo "vmtest: cannot mount the share"; poweroff -f; }
ip link set lo up
chroot $r /sbin/modprobe -q tun || echo "vmtest: modprobe tun failed"
echo "vmtest: command start"
chroot $r /bin/sh -c '. /run/vmtest/env; cd "$VMTEST_DIR" && /bin/sh /run/vmtest/cmd.sh' >$r/run/vmtest/output 2>&1 &
pid=$!
tail -f $r/run/vmtest/output 2>/dev/null &
tailpid=$!
wait $pid
echo $? >$r/run/vmtest/rc
sleep 1
kill $tailpid 2>/dev/null
echo "vmtest: command end rc=$(cat $r/run/vmtest/rc)"
sync
umount $r/run/vmtest
poweroff -f
`

// Initramfs writes the guest's initramfs (cpio newc, gzip) for the kernel release to w:
// busybox, /init and the boot modules from /lib/modules/release.
func Initramfs(w io.Writer, release string) error {
	return initramfs(w, "/bin/busybox", filepath.Join("/lib/modules", release))
}

func initramfs(w io.Writer, busybox, modDir string) error {
	mods, err := moduleOrder(modDir, bootModules)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(w)
	c := &cpioWriter{w: zw}
	for _, d := range []string{"bin", "dev", "proc", "sys", "newroot", "modules"} {
		c.dir(d)
	}
	bb, err := os.ReadFile(busybox)
	if err != nil {
		return err
	}
	c.file("bin/busybox", 0o755, bb)
	c.file("init", 0o755, []byte(initScript))
	var order []string
	for _, m := range mods {
		b, err := os.ReadFile(filepath.Join(modDir, m))
		if err != nil {
			return err
		}
		if strings.HasSuffix(m, ".xz") || strings.HasSuffix(m, ".zst") || strings.HasSuffix(m, ".gz") {
			return fmt.Errorf("module %s is compressed: this initramfs loads plain .ko files with busybox insmod", m)
		}
		name := filepath.Base(m)
		c.file("modules/"+name, 0o644, b)
		order = append(order, name)
	}
	c.file("modules/order", 0o644, []byte(strings.Join(order, "\n")+"\n"))
	c.trailer()
	if c.err != nil {
		return c.err
	}
	return zw.Close()
}

// cpioWriter writes the "newc" cpio format (070701 headers, 4-byte alignment) that the kernel
// unpacks as an initramfs (Documentation/driver-api/early-userspace/buffer-format.rst).
type cpioWriter struct {
	w   io.Writer
	n   int64
	ino int
	err error
}

func (c *cpioWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	var k int
	k, c.err = c.w.Write(b)
	c.n += int64(k)
}

func (c *cpioWriter) pad() {
	if r := c.n % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}

func (c *cpioWriter) entry(name string, mode uint32, data []byte) {
	c.ino++
	nlink := 1
	if mode&0o170000 == 0o040000 {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	c.write([]byte(hdr))
	c.write(append([]byte(name), 0))
	c.pad()
	c.write(data)
	c.pad()
}

func (c *cpioWriter) dir(name string)                         { c.entry(name, 0o040755, nil) }
func (c *cpioWriter) file(name string, perm uint32, b []byte) { c.entry(name, 0o100000|perm, b) }
func (c *cpioWriter) trailer()                                { c.entry("TRAILER!!!", 0, nil) }

// QemuArgs is qemu's command line (after the program name) for a run: TCG on every vCPU
// thread, no network device, the host root read-only and workDir writable over virtio-9p,
// the serial console on stdio. The guest keeps the clocksource its kernel picks (hpet under
// TCG): with clocksource=tsc tsc=reliable its TSC calibration on a loaded host made guest time
// run about 8 times too fast (measured: 699 guest seconds in 2 minutes).
func QemuArgs(kernel, initrd, workDir string, cpus, memMB int) []string {
	return []string{
		"-accel", "tcg,thread=multi", "-cpu", "max", "-smp", strconv.Itoa(cpus), "-m", strconv.Itoa(memMB),
		"-nographic", "-no-reboot", "-nic", "none", "-monitor", "none", "-serial", "stdio",
		"-kernel", kernel, "-initrd", initrd,
		"-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
		"-virtfs", "local,path=" + workDir + ",mount_tag=vmout,security_model=none,multidevs=remap",
		"-append", "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init",
	}
}

// Run boots a guest, runs o.Command in it and returns its exit code and output. An error means
// the guest could not run the command to its end (qemu missing or failing, timeout, ctx done);
// a command that fails is a Result with a non-zero ExitCode. The qemu process is killed when
// Run returns early.
func Run(ctx context.Context, o Options) (Result, error) {
	t, err := findTools(o.Kernel)
	if err != nil {
		return Result{}, err
	}
	cpus, mem, timeout := cmp.Or(o.CPUs, 2), cmp.Or(o.MemMB, 2048), cmp.Or(o.Timeout, 10*time.Minute)
	work := o.WorkDir
	if work == "" {
		if work, err = os.MkdirTemp("", "vmtest-"); err != nil {
			return Result{}, err
		}
		defer os.RemoveAll(work)
	}
	if work, err = filepath.Abs(work); err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return Result{}, err
	}
	for _, f := range []string{"rc", "output"} {
		os.Remove(filepath.Join(work, f))
	}
	env := []string{"export PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "export HOME=/root",
		"export VMTEST_DIR=" + shellQuote(cmp.Or(o.Dir, "/"))}
	for _, e := range o.Env {
		k, v, _ := strings.Cut(e, "=")
		env = append(env, "export "+k+"="+shellQuote(v))
	}
	if err := os.WriteFile(filepath.Join(work, "env"), []byte(strings.Join(env, "\n")+"\n"), 0o644); err != nil {
		return Result{}, err
	}
	if err := os.WriteFile(filepath.Join(work, "cmd.sh"), []byte(o.Command+"\n"), 0o755); err != nil {
		return Result{}, err
	}
	initrd := filepath.Join(work, "initramfs.gz")
	f, err := os.Create(initrd)
	if err != nil {
		return Result{}, err
	}
	err = Initramfs(f, t.release)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Result{}, fmt.Errorf("initramfs: %w", err)
	}
	defer os.Remove(initrd)

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := append([]string{t.qemu}, QemuArgs(t.kernel, initrd, work, cpus, mem)...)
	if o.Nice != 0 {
		argv = append([]string{"nice", "-n", strconv.Itoa(o.Nice)}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = 5 * time.Second
	cmd.Stdin = nil
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	start := time.Now()
	var boot time.Duration
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if boot == 0 && strings.Contains(line, "vmtest: command start") {
				boot = time.Since(start)
			}
			if o.Console != nil {
				fmt.Fprintln(o.Console, line)
			}
		}
		io.Copy(io.Discard, pr)
	}()
	err = cmd.Run()
	pw.Close()
	<-scanned
	res := Result{Boot: boot, Total: time.Since(start)}
	res.Output, _ = os.ReadFile(filepath.Join(work, "output"))
	rc, rerr := os.ReadFile(filepath.Join(work, "rc"))
	if ctx.Err() != nil {
		return res, fmt.Errorf("qemu guest: %w after %s (the command did not finish)", ctx.Err(), res.Total.Round(time.Second))
	}
	if rerr != nil {
		return res, fmt.Errorf("qemu guest ended (%v) without the command's exit status: see the console", err)
	}
	if res.ExitCode, err = strconv.Atoi(strings.TrimSpace(string(rc))); err != nil {
		return res, fmt.Errorf("qemu guest: bad exit status %q", rc)
	}
	return res, nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
