package pcapng

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// File is a pcapng section read back by Read: its interfaces, decryption secrets and packets.
type File struct {
	// Application is the section header's shb_userappl.
	Application string
	// Interfaces are the IDBs in order (LinkType, Name, Description, SnapLen).
	Interfaces []Interface
	// Secrets are the DSBs' contents, keyed by secrets type, in order.
	Secrets []Secrets
	// Packets are the EPBs in order (Flags and Comment from their options).
	Packets []Packet
}

// Secrets is one Decryption Secrets Block.
type Secrets struct {
	// Type is the secrets type, e.g. SecretsTLSKeyLog.
	Type uint32
	// Data is the secrets' bytes.
	Data []byte
}

// Read reads one little-endian pcapng section as NewWriter writes it (SHB, IDB, DSB, EPB blocks;
// other block types are skipped). Interface timestamp resolution must be nanoseconds.
func Read(r io.Reader) (*File, error) {
	f := &File{}
	for i := 0; ; i++ {
		typ, body, err := readBlock(r)
		if err == io.EOF {
			return f, nil
		}
		if err != nil {
			return nil, fmt.Errorf("pcapng: block %d: %w", i, err)
		}
		if err := f.add(typ, body); err != nil {
			return nil, fmt.Errorf("pcapng: block %d: %w", i, err)
		}
	}
}

// readBlock reads one block and returns its type and body (without the lengths).
func readBlock(r io.Reader) (uint32, []byte, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	typ, n := binary.LittleEndian.Uint32(hdr[:4]), binary.LittleEndian.Uint32(hdr[4:])
	if n < 12 || n%4 != 0 || n > 1<<26 {
		return 0, nil, fmt.Errorf("bad block length %d", n)
	}
	rest := make([]byte, n-8)
	if _, err := io.ReadFull(r, rest); err != nil {
		return 0, nil, err
	}
	if binary.LittleEndian.Uint32(rest[len(rest)-4:]) != n {
		return 0, nil, fmt.Errorf("trailing length differs from %d", n)
	}
	return typ, rest[:len(rest)-4], nil
}

func (f *File) add(typ uint32, b []byte) error {
	switch typ {
	case BlockSHB:
		if len(b) < 16 || binary.LittleEndian.Uint32(b) != byteOrderMagic {
			return fmt.Errorf("not a little-endian section header")
		}
		for _, o := range options(b[16:]) {
			if o.code == optShbApp {
				f.Application = string(o.value)
			}
		}
	case BlockIDB:
		if len(b) < 8 {
			return fmt.Errorf("short interface block")
		}
		ifc := Interface{LinkType: binary.LittleEndian.Uint16(b), SnapLen: binary.LittleEndian.Uint32(b[4:])}
		for _, o := range options(b[8:]) {
			switch o.code {
			case optIfName:
				ifc.Name = string(o.value)
			case optIfDesc:
				ifc.Description = string(o.value)
			case optTSResol:
				if len(o.value) != 1 || o.value[0] != 9 {
					return fmt.Errorf("interface %d: timestamp resolution %v, want ns (9)", len(f.Interfaces), o.value)
				}
			}
		}
		f.Interfaces = append(f.Interfaces, ifc)
	case BlockDSB:
		if len(b) < 8 || int(binary.LittleEndian.Uint32(b[4:])) > len(b)-8 {
			return fmt.Errorf("short decryption secrets block")
		}
		n := binary.LittleEndian.Uint32(b[4:])
		f.Secrets = append(f.Secrets, Secrets{Type: binary.LittleEndian.Uint32(b), Data: b[8 : 8+n]})
	case BlockEPB:
		return f.addPacket(b)
	}
	return nil
}

func (f *File) addPacket(b []byte) error {
	if len(b) < 20 {
		return fmt.Errorf("short packet block")
	}
	le := binary.LittleEndian
	p := Packet{Interface: int(le.Uint32(b))}
	if p.Interface >= len(f.Interfaces) {
		return fmt.Errorf("packet on undeclared interface %d", p.Interface)
	}
	ts := uint64(le.Uint32(b[4:]))<<32 | uint64(le.Uint32(b[8:]))
	p.Time = time.Unix(0, int64(ts))
	capLen := int(le.Uint32(b[12:]))
	p.OrigLen = int(le.Uint32(b[16:]))
	if 20+capLen > len(b) {
		return fmt.Errorf("captured length %d beyond the block", capLen)
	}
	p.Data = b[20 : 20+capLen]
	for _, o := range options(b[20+(capLen+3)/4*4:]) {
		switch o.code {
		case optComment:
			p.Comment = string(o.value)
		case optEPBFlags:
			if len(o.value) == 4 {
				p.Flags = le.Uint32(o.value)
			}
		}
	}
	f.Packets = append(f.Packets, p)
	return nil
}

type option struct {
	code  uint16
	value []byte
}

// options parses an option list up to opt_endofopt or the end of b.
func options(b []byte) []option {
	var out []option
	for len(b) >= 4 {
		code, n := binary.LittleEndian.Uint16(b), int(binary.LittleEndian.Uint16(b[2:]))
		if code == optEnd || 4+n > len(b) {
			break
		}
		out = append(out, option{code: code, value: b[4 : 4+n]})
		b = b[min(4+(n+3)/4*4, len(b)):]
	}
	return out
}
