package shaping

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
	wgtun "golang.zx2c4.com/wireguard/tun"
)

// tunBatch is the most packets one fast-path read splits a super-packet into, and the most due
// packets coalesced together (wireguard-go's conn.IdealBatchSize); a 64 KiB TSO super-packet of 1448-byte
// segments is 46 packets, a UDP GSO one of 1200-byte datagrams 55.
const tunBatch = 128

// tunOffloads are the offloads every fast-path device has: checksums left to the other side
// and TCP segmentation over IPv4 and IPv6 (TUNSETOFFLOAD, include/uapi/linux/if_tun.h).
const tunOffloads = unix.TUN_F_CSUM | unix.TUN_F_TSO4 | unix.TUN_F_TSO6

// vnetHdrLen is the size of the virtio-net header in front of every packet on a device opened
// with IFF_VNET_HDR (struct virtio_net_hdr, include/uapi/linux/virtio_net.h).
const vnetHdrLen = 10

// tunDev is one TUN device: its descriptor and, on the fast path, the wireguard-go device
// that reads it with the virtio-net header (TSO/USO super-packets split into MTU-sized
// packets); the forwarder writes GRO groups to fd itself (gro.go, forward_linux.go).
type tunDev struct {
	fd  int
	nt  wgtun.Device // nil on the plain path (IFF_NO_PI, one packet per read and write)
	uso bool         // fast path: the kernel took the UDP segmentation offloads (Linux >= 6.2)
}

// offload reports whether the device runs the fast path (virtio-net header and offloads).
func (d *tunDev) offload() bool { return d.nt != nil }

// close closes the device (it disappears with its descriptor).
func (d *tunDev) close() error {
	if d.nt != nil {
		return d.nt.Close()
	}
	return unix.Close(d.fd)
}

// openTUNDev creates the TUN device name in the calling thread's namespace. With fast it asks
// for the virtio-net header and the TCP and UDP segmentation offloads (TUNSETOFFLOAD
// TUN_F_CSUM|TSO4|TSO6, and USO4|USO6 where the kernel has them, 6.2 and later): the kernel
// then hands the device super-packets of up to 64 KiB and accepts coalesced ones. If the
// kernel refuses the header or the offloads, the device is opened on the plain path instead
// and fellBack is true (the caller logs it).
func openTUNDev(name string, fast bool) (d *tunDev, fellBack bool, err error) {
	if fast {
		fd, err := openTUN(name, true)
		if err != nil {
			return nil, false, err
		}
		// Probe the offloads first: once wireguard-go wraps fd in an os.File, that file owns
		// it, and closing fd here after a failure there would let its finalizer close a reused
		// descriptor number later.
		if unix.IoctlSetInt(fd, unix.TUNSETOFFLOAD, tunOffloads) == nil {
			nt, _, err := wgtun.CreateUnmonitoredTUNFromFD(fd)
			if err != nil {
				return nil, false, fmt.Errorf("tun %s with offloads: %w", name, err)
			}
			// wireguard-go asked for USO4|USO6 too where the kernel has them; asking again
			// (the same flags) is how to learn whether it got them.
			uso := unix.IoctlSetInt(fd, unix.TUNSETOFFLOAD, tunOffloads|unix.TUN_F_USO4|unix.TUN_F_USO6) == nil
			if !uso {
				unix.IoctlSetInt(fd, unix.TUNSETOFFLOAD, tunOffloads)
			}
			return &tunDev{fd: fd, nt: nt, uso: uso}, false, nil
		}
		unix.Close(fd)
		fellBack = true
	}
	fd, err := openTUN(name, false)
	if err != nil {
		return nil, fellBack, err
	}
	return &tunDev{fd: fd}, fellBack, nil
}

// openTUN creates the TUN device name (IFF_TUN|IFF_NO_PI, plus IFF_VNET_HDR when vnet) in the
// calling thread's namespace and returns its non-blocking descriptor. The device is not
// persistent: it disappears when the descriptor is closed.
func openTUN(name string, vnet bool) (int, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENXIO) {
			return -1, fmt.Errorf("open tun %s: %w (%v)", name, ErrNoTUN, err)
		}
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return -1, fmt.Errorf("open tun %s: %w (%v)", name, ErrNotRoot, err)
		}
		return -1, fmt.Errorf("open tun %s: %w", name, err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("open tun %s: %w", name, err)
	}
	flags := uint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if vnet {
		flags |= unix.IFF_VNET_HDR
	}
	ifr.SetUint16(flags)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.EPERM) {
			err = fmt.Errorf("%w (%v)", ErrNotRoot, err)
		}
		return -1, fmt.Errorf("create tun %s: %w", name, err)
	}
	return fd, nil
}

// checkTUN returns ErrNoTUN when /dev/net/tun is missing.
func checkTUN() error {
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return fmt.Errorf("%w (%v)", ErrNoTUN, err)
	}
	return nil
}
