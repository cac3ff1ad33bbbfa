package interop

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// Version1 is QUIC version 1 (RFC 9000 section 15).
const Version1 uint32 = 0x00000001

// InitialSaltV1 is the salt of QUIC version 1's Initial secrets (RFC 9001 section 5.2).
var InitialSaltV1 = []byte{
	0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
	0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a,
}

// InitialSecrets are the secrets derived from a client's first Destination Connection ID
// (RFC 9001 section 5.2): initial_secret = HKDF-Extract(initial_salt, DCID), and from it
// client_initial_secret = HKDF-Expand-Label(initial_secret, "client in", "", 32) and
// server_initial_secret = HKDF-Expand-Label(initial_secret, "server in", "", 32), with SHA-256.
type InitialSecrets struct {
	Initial, Client, Server []byte
}

// DeriveInitialSecrets returns the version 1 Initial secrets for the client's first DCID
// (RFC 9001 section 5.2; test vectors in its Appendix A.1).
func DeriveInitialSecrets(dcid []byte) InitialSecrets {
	prk, err := hkdf.Extract(sha256.New, dcid, InitialSaltV1)
	if err != nil {
		panic(fmt.Sprintf("hkdf extract: %v", err)) // SHA-256 with any input never fails
	}
	return InitialSecrets{
		Initial: prk,
		Client:  ExpandLabel(prk, "client in", sha256.Size),
		Server:  ExpandLabel(prk, "server in", sha256.Size),
	}
}

// ExpandLabel is TLS 1.3's HKDF-Expand-Label(secret, label, "", length) with SHA-256
// (RFC 8446 section 7.1): the info is uint16 length, the label prefixed with "tls13 " (one
// length byte before it) and an empty context (one zero byte). QUIC uses it with the labels
// "client in", "server in", "quic key", "quic iv", "quic hp" (RFC 9001 section 5.1).
func ExpandLabel(secret []byte, label string, length int) []byte {
	full := "tls13 " + label
	info := make([]byte, 0, 4+len(full))
	info = binary.BigEndian.AppendUint16(info, uint16(length))
	info = append(info, byte(len(full)))
	info = append(info, full...)
	info = append(info, 0)
	out, err := hkdf.Expand(sha256.New, secret, string(info), length)
	if err != nil {
		panic(fmt.Sprintf("hkdf expand %q: %v", label, err)) // only for length > 255*32
	}
	return out
}

// Keys are the packet protection keys of one direction and one packet number space with
// AEAD_AES_128_GCM (RFC 9001 section 5.3) and AES-based header protection (section 5.4.3):
// Key (16 bytes), IV (12 bytes) and HP (16 bytes), each HKDF-Expand-Label of the secret with
// "quic key", "quic iv" and "quic hp" (section 5.1).
type Keys struct {
	Key, IV, HP []byte
	aead        cipher.AEAD
	hp          cipher.Block
}

// NewKeys derives the AES-128-GCM packet protection keys from a secret (RFC 9001 section 5.1),
// as the Initial packets of version 1 use them (section 5.2).
func NewKeys(secret []byte) (*Keys, error) {
	k := &Keys{
		Key: ExpandLabel(secret, "quic key", 16),
		IV:  ExpandLabel(secret, "quic iv", 12),
		HP:  ExpandLabel(secret, "quic hp", 16),
	}
	block, err := aes.NewCipher(k.Key)
	if err != nil {
		return nil, fmt.Errorf("aes key: %w", err)
	}
	if k.aead, err = cipher.NewGCM(block); err != nil {
		return nil, fmt.Errorf("gcm: %w", err)
	}
	if k.hp, err = aes.NewCipher(k.HP); err != nil {
		return nil, fmt.Errorf("aes hp key: %w", err)
	}
	return k, nil
}

// InitialKeys returns the client's and the server's Initial packet protection keys for the
// client's first DCID (RFC 9001 section 5.2).
func InitialKeys(dcid []byte) (client, server *Keys, err error) {
	s := DeriveInitialSecrets(dcid)
	if client, err = NewKeys(s.Client); err != nil {
		return nil, nil, err
	}
	if server, err = NewKeys(s.Server); err != nil {
		return nil, nil, err
	}
	return client, server, nil
}

// nonce is the AEAD nonce of packet number pn: the IV XOR the packet number left-padded to
// the IV's 12 bytes (RFC 9001 section 5.3).
func (k *Keys) nonce(pn uint64) []byte {
	n := make([]byte, len(k.IV))
	copy(n, k.IV)
	for i := 0; i < 8; i++ {
		n[len(n)-1-i] ^= byte(pn >> (8 * i))
	}
	return n
}

// sampleSize is the header protection sample's size in bytes (RFC 9001 section 5.4.2).
const sampleSize = 16

// mask returns the 5-byte header protection mask of AES-ECB(hp_key, sample) (RFC 9001
// section 5.4.3).
func (k *Keys) mask(sample []byte) []byte {
	out := make([]byte, aes.BlockSize)
	k.hp.Encrypt(out, sample)
	return out[:5]
}

// ErrDecrypt is returned when a packet fails header protection removal or AEAD
// authentication (RFC 9001 section 5.3: such a packet is discarded).
var ErrDecrypt = errors.New("packet does not decrypt")

// Seal protects one packet (RFC 9001 sections 5.3 and 5.4): hdr is the plaintext header
// ending with the packet number field, whose length pnLen (1..4 bytes) the first byte's two
// low bits already state; payload is the plaintext frames. The AEAD's associated data is the
// plaintext header; the header protection sample is the 16 bytes that start 4 bytes after the
// packet number field's start (section 5.4.2), so payload must hold at least 4-pnLen bytes
// (the 16-byte tag completes the sample). Seal returns header || ciphertext || tag with the
// first byte's low bits (4 for a long header, 5 for a short one) and the packet number masked.
func (k *Keys) Seal(hdr []byte, pnLen int, pn uint64, payload []byte) ([]byte, error) {
	if pnLen < 1 || pnLen > 4 || len(hdr) < pnLen+1 {
		return nil, fmt.Errorf("seal: packet number length %d in a %d-byte header", pnLen, len(hdr))
	}
	pnOff := len(hdr) - pnLen
	out := make([]byte, len(hdr), len(hdr)+len(payload)+k.aead.Overhead())
	copy(out, hdr)
	out = k.aead.Seal(out, k.nonce(pn), payload, hdr)
	if pnOff+4+sampleSize > len(out) {
		return nil, fmt.Errorf("seal: packet of %d bytes too short for a header protection sample", len(out))
	}
	m := k.mask(out[pnOff+4 : pnOff+4+sampleSize])
	if out[0]&0x80 != 0 {
		out[0] ^= m[0] & 0x0f
	} else {
		out[0] ^= m[0] & 0x1f
	}
	for i := 0; i < pnLen; i++ {
		out[pnOff+i] ^= m[1+i]
	}
	return out, nil
}

// Open removes header protection from the packet pkt (one packet, not the whole datagram),
// whose packet number field starts at pnOff, and decrypts it (RFC 9001 sections 5.3 and 5.4).
// largest is the largest packet number received so far in the space (-1 for none), from which
// the full packet number is recovered (RFC 9000 Appendix A.3). pkt is not modified. Open
// returns the unprotected header, the packet number and the plaintext payload, or an error
// wrapping ErrDecrypt.
func (k *Keys) Open(pkt []byte, pnOff int, largest int64) (hdr []byte, pn uint64, payload []byte, err error) {
	if pnOff+4+sampleSize > len(pkt) {
		return nil, 0, nil, fmt.Errorf("%w: %d bytes, too short for a sample at %d", ErrDecrypt, len(pkt), pnOff+4)
	}
	m := k.mask(pkt[pnOff+4 : pnOff+4+sampleSize])
	first := pkt[0]
	if first&0x80 != 0 {
		first ^= m[0] & 0x0f
	} else {
		first ^= m[0] & 0x1f
	}
	pnLen := int(first&0x03) + 1
	hdr = make([]byte, pnOff+pnLen)
	copy(hdr, pkt[:pnOff+pnLen])
	hdr[0] = first
	var truncated uint64
	for i := 0; i < pnLen; i++ {
		hdr[pnOff+i] ^= m[1+i]
		truncated = truncated<<8 | uint64(hdr[pnOff+i])
	}
	pn = DecodePacketNumber(largest, truncated, pnLen*8)
	payload, err = k.aead.Open(nil, k.nonce(pn), pkt[pnOff+pnLen:], hdr)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("%w: packet number %d: %v", ErrDecrypt, pn, err)
	}
	return hdr, pn, payload, nil
}

// DecodePacketNumber recovers a full packet number from its truncated encoding of bits bits,
// given the largest packet number received in the space (-1 when none): the candidate closest
// to largest+1 (RFC 9000 Appendix A.3).
func DecodePacketNumber(largest int64, truncated uint64, bits int) uint64 {
	expected := uint64(largest + 1)
	win := uint64(1) << bits
	hwin := win / 2
	mask := win - 1
	candidate := (expected &^ mask) | truncated
	switch {
	case candidate+hwin <= expected && candidate < (1<<62)-win:
		return candidate + win
	case candidate > expected+hwin && candidate >= win:
		return candidate - win
	}
	return candidate
}
