package shaping

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openTUN creates the TUN device name (IFF_TUN|IFF_NO_PI: plain IP packets, no virtio header,
// so no offloads) in the calling thread's namespace and returns its non-blocking descriptor.
// The device is not persistent: it disappears when the descriptor is closed.
func openTUN(name string) (int, error) {
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
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
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
