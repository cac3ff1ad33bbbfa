package vmtest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readCpio parses a newc archive into name -> data (directories map to nil).
func readCpio(t *testing.T, b []byte) (map[string][]byte, []string) {
	t.Helper()
	files := map[string][]byte{}
	var order []string
	off := 0
	align := func(n int) int { return (n + 3) &^ 3 }
	for {
		if off+110 > len(b) || string(b[off:off+6]) != "070701" {
			t.Fatalf("bad header at %d", off)
		}
		field := func(i int) int {
			v, err := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			return int(v)
		}
		mode, size, namesize := field(1), field(6), field(11)
		name := string(b[off+110 : off+110+namesize-1])
		data := align(off + 110 + namesize)
		if name == "TRAILER!!!" {
			return files, order
		}
		if mode&0o170000 == 0o100000 {
			files[name] = b[data : data+size]
		} else {
			files[name] = nil
		}
		order = append(order, name)
		off = align(data + size)
	}
}

// fakeModules writes a modules.dep with a dependency chain and the .ko files it names.
func fakeModules(t *testing.T) string {
	dir := t.TempDir()
	dep := `kernel/fs/9p/9p.ko: kernel/net/9p/9pnet.ko kernel/fs/fscache/fscache.ko kernel/fs/netfs/netfs.ko
kernel/fs/netfs/netfs.ko:
kernel/fs/fscache/fscache.ko: kernel/fs/netfs/netfs.ko
kernel/net/9p/9pnet.ko:
kernel/net/9p/9pnet_virtio.ko: kernel/net/9p/9pnet.ko kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/virtio/virtio_ring.ko:
kernel/drivers/virtio/virtio.ko:
kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_legacy_dev.ko kernel/drivers/virtio/virtio_pci_modern_dev.ko kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/virtio/virtio_pci_legacy_dev.ko:
kernel/drivers/virtio/virtio_pci_modern_dev.ko:
`
	os.WriteFile(filepath.Join(dir, "modules.dep"), []byte(dep), 0o644)
	for _, line := range strings.Split(dep, "\n") {
		if m, _, ok := strings.Cut(line, ":"); ok {
			os.MkdirAll(filepath.Join(dir, filepath.Dir(m)), 0o755)
			os.WriteFile(filepath.Join(dir, m), []byte("ko:"+m), 0o644)
		}
	}
	return dir
}

func TestModuleOrder(t *testing.T) {
	dir := fakeModules(t)
	got, err := moduleOrder(dir, bootModules)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range got {
		names = append(names, modName(m))
	}
	// Every module after its dependencies, each once.
	want := []string{"virtio_pci_legacy_dev", "virtio_pci_modern_dev", "virtio", "virtio_ring", "virtio_pci",
		"9pnet", "9pnet_virtio", "netfs", "fscache", "9p"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("order %v\nwant %v", names, want)
	}
	if _, err := moduleOrder(dir, []string{"sch_netem"}); err == nil || !strings.Contains(err.Error(), "sch_netem") {
		t.Errorf("missing module: %v", err)
	}
}

func TestInitramfs(t *testing.T) {
	dir := fakeModules(t)
	bb := filepath.Join(t.TempDir(), "busybox")
	os.WriteFile(bb, []byte("BUSYBOX"), 0o755)
	var buf bytes.Buffer
	if err := initramfs(&buf, bb, dir); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(zr)
	files, order := readCpio(t, raw)
	if string(files["bin/busybox"]) != "BUSYBOX" || string(files["init"]) != initScript {
		t.Fatalf("busybox or init wrong: %q", order)
	}
	if string(files["modules/9p.ko"]) != "ko:kernel/fs/9p/9p.ko" {
		t.Errorf("9p module: %q", files["modules/9p.ko"])
	}
	if got := strings.Fields(string(files["modules/order"])); got[len(got)-1] != "9p.ko" || len(got) != 10 {
		t.Errorf("modules/order = %v", got)
	}
	for _, d := range []string{"proc", "sys", "dev", "newroot"} {
		if v, ok := files[d]; !ok || v != nil {
			t.Errorf("directory %s missing", d)
		}
	}
	if len(raw)%4 != 0 {
		t.Errorf("archive length %d not 4-aligned", len(raw))
	}
}

func TestIsStatic(t *testing.T) {
	elf := func(interp bool) []byte {
		b := make([]byte, 64+56)
		copy(b, "\x7fELF\x02\x01\x01")
		b[0x20] = 64             // e_phoff
		b[0x36], b[0x38] = 56, 1 // e_phentsize, e_phnum
		b[64] = 1                // PT_LOAD
		if interp {
			b[64] = 3 // PT_INTERP
		}
		return b
	}
	if !isStatic(elf(false)) || isStatic(elf(true)) || isStatic([]byte("#!/bin/sh\n")) {
		t.Fatal("isStatic wrong")
	}
}

func TestPickKernel(t *testing.T) {
	boot, mods := t.TempDir(), t.TempDir()
	if _, _, err := pickKernel("", boot, mods); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("no kernel: %v", err)
	}
	for _, rel := range []string{"6.1.0-57-amd64", "6.1.0-58-amd64"} {
		os.WriteFile(filepath.Join(boot, "vmlinuz-"+rel), nil, 0o644)
	}
	os.MkdirAll(filepath.Join(mods, "6.1.0-57-amd64"), 0o755)
	os.WriteFile(filepath.Join(mods, "6.1.0-57-amd64", "modules.dep"), nil, 0o644)
	img, rel, err := pickKernel("", boot, mods)
	if err != nil || rel != "6.1.0-57-amd64" || img != filepath.Join(boot, "vmlinuz-6.1.0-57-amd64") {
		t.Fatalf("pickKernel = %s %s %v (the newest with modules)", img, rel, err)
	}
}

func TestQemuArgs(t *testing.T) {
	args := QemuArgs("/boot/vmlinuz-x", "/w/initramfs.gz", "/w", 2, 2048)
	s := strings.Join(args, " ")
	for _, want := range []string{"-accel tcg,thread=multi", "-nic none", "-smp 2 -m 2048",
		"local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
		"local,path=/w,mount_tag=vmout,security_model=none,multidevs=remap"} {
		if !strings.Contains(s, want) {
			t.Errorf("qemu args lack %q: %s", want, s)
		}
	}
	if slices.Contains(args, "-enable-kvm") {
		t.Error("KVM must stay off")
	}
}
