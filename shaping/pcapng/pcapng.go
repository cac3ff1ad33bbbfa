// Package pcapng writes capture files in the pcapng format (draft-ietf-opsawg-pcapng-03), with
// per-packet comments and flags and a Decryption Secrets Block for TLS and QUIC key logs.
//
// gopacket's pcapgo writes neither Decryption Secrets Blocks nor packet options, hence this small
// writer. It imports nothing of ours. All multi-byte fields are little-endian (the byte-order
// magic 0x1A2B3C4D tells readers so).
package pcapng

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// Block types (draft-ietf-opsawg-pcapng section 11.1).
const (
	BlockSHB uint32 = 0x0A0D0D0A // Section Header Block
	BlockIDB uint32 = 0x00000001 // Interface Description Block
	BlockEPB uint32 = 0x00000006 // Enhanced Packet Block
	BlockDSB uint32 = 0x0000000A // Decryption Secrets Block
)

// SecretsTLSKeyLog is the DSB secrets type of an NSS key log (SSLKEYLOGFILE format), which covers
// TLS over TCP and QUIC alike (draft-ietf-opsawg-pcapng section 4.7, "TLS Key Log").
const SecretsTLSKeyLog uint32 = 0x544c534b

// LinkTypeRaw is LINKTYPE_RAW (101): each packet is a raw IPv4 or IPv6 packet, as read from a TUN
// device without packet information (tcpdump.org link-layer header types).
const LinkTypeRaw uint16 = 101

// LinkTypeUser0 is LINKTYPE_USER0 (147), reserved for private use: Wireshark shows such packets
// as raw bytes (dissect them with Decode As: DLT User 0 -> ip) and leaves them out of its TCP and
// QUIC analysis.
const LinkTypeUser0 uint16 = 147

// EPB flag words (epb_flags, draft-ietf-opsawg-pcapng section 4.3.1): bits 0-1 give the direction.
const (
	FlagInbound  uint32 = 1
	FlagOutbound uint32 = 2
)

// Option codes used here.
const (
	optEnd      = 0
	optComment  = 1 // opt_comment, UTF-8
	optIfName   = 2 // if_name
	optIfDesc   = 3 // if_description
	optTSResol  = 9 // if_tsresol
	optEPBFlags = 2 // epb_flags
	optShbApp   = 4 // shb_userappl
)

// byteOrderMagic marks a little-endian section.
const byteOrderMagic = 0x1A2B3C4D

// Interface describes one capture interface (one IDB). Timestamps are always written with
// nanosecond resolution (if_tsresol = 9).
type Interface struct {
	// Name is if_name, e.g. "down-in".
	Name string
	// Description is if_description, a sentence for people.
	Description string
	// LinkType is the LINKTYPE_ value; 0 means LinkTypeRaw.
	LinkType uint16
	// SnapLen is the largest packet kept, in bytes; 0 means no limit.
	SnapLen uint32
}

// Writer writes one pcapng section: a Section Header Block, the Interface Description Blocks
// given to NewWriter, then any mix of Decryption Secrets and Enhanced Packet Blocks. It buffers:
// call Flush at the end. A Writer is not safe for concurrent use.
type Writer struct {
	w      *bufio.Writer
	ifaces int
	buf    []byte
}

// NewWriter writes the section header (naming app as shb_userappl, may be "") and one IDB per
// interface to w.
func NewWriter(w io.Writer, app string, ifaces []Interface) (*Writer, error) {
	pw := &Writer{w: bufio.NewWriterSize(w, 1<<16), ifaces: len(ifaces)}
	body := binary.LittleEndian.AppendUint32(nil, byteOrderMagic)
	body = binary.LittleEndian.AppendUint16(body, 1) // major
	body = binary.LittleEndian.AppendUint16(body, 0) // minor
	body = binary.LittleEndian.AppendUint64(body, ^uint64(0))
	if app != "" {
		body = appendOption(body, optShbApp, []byte(app))
		body = appendOption(body, optEnd, nil)
	}
	if err := pw.block(BlockSHB, body); err != nil {
		return nil, fmt.Errorf("pcapng: section header: %w", err)
	}
	for i, ifc := range ifaces {
		lt := ifc.LinkType
		lt = cmp.Or(lt, LinkTypeRaw)
		b := binary.LittleEndian.AppendUint16(nil, lt)
		b = binary.LittleEndian.AppendUint16(b, 0)
		b = binary.LittleEndian.AppendUint32(b, ifc.SnapLen)
		if ifc.Name != "" {
			b = appendOption(b, optIfName, []byte(ifc.Name))
		}
		if ifc.Description != "" {
			b = appendOption(b, optIfDesc, []byte(ifc.Description))
		}
		b = appendOption(b, optTSResol, []byte{9})
		b = appendOption(b, optEnd, nil)
		if err := pw.block(BlockIDB, b); err != nil {
			return nil, fmt.Errorf("pcapng: interface %d: %w", i, err)
		}
	}
	return pw, nil
}

// WriteSecrets writes a Decryption Secrets Block of type typ (e.g. SecretsTLSKeyLog with the
// lines of an NSS key log). Readers such as Wireshark apply it to the packets that follow.
func (pw *Writer) WriteSecrets(typ uint32, secrets []byte) error {
	b := binary.LittleEndian.AppendUint32(nil, typ)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(secrets)))
	b = append(b, secrets...)
	b = pad(b)
	if err := pw.block(BlockDSB, b); err != nil {
		return fmt.Errorf("pcapng: decryption secrets: %w", err)
	}
	return nil
}

// Packet is one Enhanced Packet Block.
type Packet struct {
	// Interface is the index of the interface (in NewWriter's order).
	Interface int
	// Time is when the packet was seen (written in ns since the Unix epoch).
	Time time.Time
	// Data is the captured bytes.
	Data []byte
	// OrigLen is the packet's length on the wire in bytes; 0 means len(Data).
	OrigLen int
	// Flags is the epb_flags word (FlagInbound, FlagOutbound); 0 writes no flags option.
	Flags uint32
	// Comment is an opt_comment; "" writes none.
	Comment string
}

// WritePacket writes one Enhanced Packet Block.
func (pw *Writer) WritePacket(p Packet) error {
	if p.Interface < 0 || p.Interface >= pw.ifaces {
		return fmt.Errorf("pcapng: packet on interface %d of %d", p.Interface, pw.ifaces)
	}
	orig := p.OrigLen
	orig = cmp.Or(orig, len(p.Data))
	ts := uint64(p.Time.UnixNano())
	b := pw.buf[:0]
	b = binary.LittleEndian.AppendUint32(b, uint32(p.Interface))
	b = binary.LittleEndian.AppendUint32(b, uint32(ts>>32))
	b = binary.LittleEndian.AppendUint32(b, uint32(ts))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p.Data)))
	b = binary.LittleEndian.AppendUint32(b, uint32(orig))
	b = pad(append(b, p.Data...))
	if p.Flags != 0 || p.Comment != "" {
		if p.Comment != "" {
			b = appendOption(b, optComment, []byte(p.Comment))
		}
		if p.Flags != 0 {
			b = appendOption(b, optEPBFlags, binary.LittleEndian.AppendUint32(nil, p.Flags))
		}
		b = appendOption(b, optEnd, nil)
	}
	pw.buf = b
	if err := pw.block(BlockEPB, b); err != nil {
		return fmt.Errorf("pcapng: packet: %w", err)
	}
	return nil
}

// WriteRaw copies already encoded blocks (e.g. Enhanced Packet Blocks written earlier by another
// Writer with the same interfaces) into the section.
func (pw *Writer) WriteRaw(r io.Reader) error {
	if _, err := io.Copy(pw.w, r); err != nil {
		return fmt.Errorf("pcapng: copy blocks: %w", err)
	}
	return nil
}

// Flush writes any buffered data to the underlying writer.
func (pw *Writer) Flush() error { return pw.w.Flush() }

// block writes a block: type, total length, body (already padded), total length.
func (pw *Writer) block(typ uint32, body []byte) error {
	if len(body)%4 != 0 {
		return errors.New("unpadded block body")
	}
	n := uint32(len(body) + 12)
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[:4], typ)
	binary.LittleEndian.PutUint32(hdr[4:], n)
	pw.w.Write(hdr[:])
	pw.w.Write(body)
	_, err := pw.w.Write(hdr[4:])
	return err
}

// appendOption appends one option (code, length, value padded to 32 bits).
func appendOption(b []byte, code uint16, v []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, code)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(v)))
	return pad(append(b, v...))
}

// pad appends zero bytes up to a multiple of 4.
func pad(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// Continue returns a Writer that appends blocks to w for a section whose header and ifaces
// interfaces are (or will be) written elsewhere: used to spool packets to a file that is later
// copied behind a header with WriteRaw.
func Continue(w io.Writer, ifaces int) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 1<<16), ifaces: ifaces}
}
