package interop

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rfcDCID is the client's first Destination Connection ID of RFC 9001 Appendix A.
const rfcDCID = "8394c8f03e515708"

// TestInitialSecretsRFC9001A1 checks every secret and key of RFC 9001 Appendix A.1.
func TestInitialSecretsRFC9001A1(t *testing.T) {
	s := DeriveInitialSecrets(unhex(t, rfcDCID))
	c, sv, err := InitialKeys(unhex(t, rfcDCID))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		got  []byte
		want string
	}{
		{"initial_secret", s.Initial, "7db5df06e7a69e432496adedb00851923595221596ae2ae9fb8115c1e9ed0a44"},
		{"client_initial_secret", s.Client, "c00cf151ca5be075ed0ebfb5c80323c42d6b7db67881289af4008f1f6c357aea"},
		{"server_initial_secret", s.Server, "3c199828fd139efd216c155ad844cc81fb82fa8d7446fa7d78be803acdda951b"},
		{"client key", c.Key, "1f369613dd76d5467730efcbe3b1a22d"},
		{"client iv", c.IV, "fa044b2f42a3fd3b46fb255c"},
		{"client hp", c.HP, "9f50449e04a0e810283a1e9933adedd2"},
		{"server key", sv.Key, "cf3a5331653c364c88f0f379b6067e37"},
		{"server iv", sv.IV, "0ac1493ca1905853b0bba03e"},
		{"server hp", sv.HP, "c206b8d9b9f0f37644430b490eeaa314"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !bytes.Equal(tc.got, unhex(t, tc.want)) {
				t.Errorf("got %x, want %s", tc.got, tc.want)
			}
		})
	}
}

// rfcClientCrypto is the CRYPTO frame of RFC 9001 Appendix A.2's client Initial.
const rfcClientCrypto = "060040f1010000ed0303ebf8fa56f12939b9584a3896472ec40bb863cfd3e868" +
	"04fe3a47f06a2b69484c000004130113" + "02010000c000000010000e00000b6578616d706c652e636f6dff01000100000a" +
	"00080006001d00170018001000070005" + "04616c706e0005000501000000000033" + "00260024001d00209370b2c9caa47fba" +
	"baf4559fedba753de171fa71f50f1ce1" + "5d43e994ec74d748002b000302030400" + "0d0010000e0403050306030203080408" +
	"050806002d00020101001c0002400100" + "3900320408ffffffffffffffff050480" + "00ffff07048000ffff08011001048000" +
	"75300901100f088394c8f03e51570806" + "048000ffff"

// rfcClientPacket is RFC 9001 Appendix A.2's protected client Initial (1200 bytes).
const rfcClientPacket = "c000000001088394c8f03e5157080000449e7b9aec34d1b1c98dd7689fb8ec11" +
	"d242b123dc9bd8bab936b47d92ec356c0bab7df5976d27cd449f63300099f399" +
	"1c260ec4c60d17b31f8429157bb35a1282a643a8d2262cad67500cadb8e7378c" +
	"8eb7539ec4d4905fed1bee1fc8aafba17c750e2c7ace01e6005f80fcb7df6212" +
	"30c83711b39343fa028cea7f7fb5ff89eac2308249a02252155e2347b63d58c5" +
	"457afd84d05dfffdb20392844ae812154682e9cf012f9021a6f0be17ddd0c208" +
	"4dce25ff9b06cde535d0f920a2db1bf362c23e596d11a4f5a6cf3948838a3aec" +
	"4e15daf8500a6ef69ec4e3feb6b1d98e610ac8b7ec3faf6ad760b7bad1db4ba3" +
	"485e8a94dc250ae3fdb41ed15fb6a8e5eba0fc3dd60bc8e30c5c4287e53805db" +
	"059ae0648db2f64264ed5e39be2e20d82df566da8dd5998ccabdae053060ae6c" +
	"7b4378e846d29f37ed7b4ea9ec5d82e7961b7f25a9323851f681d582363aa5f8" +
	"9937f5a67258bf63ad6f1a0b1d96dbd4faddfcefc5266ba6611722395c906556" +
	"be52afe3f565636ad1b17d508b73d8743eeb524be22b3dcbc2c7468d54119c74" +
	"68449a13d8e3b95811a198f3491de3e7fe942b330407abf82a4ed7c1b311663a" +
	"c69890f4157015853d91e923037c227a33cdd5ec281ca3f79c44546b9d90ca00" +
	"f064c99e3dd97911d39fe9c5d0b23a229a234cb36186c4819e8b9c5927726632" +
	"291d6a418211cc2962e20fe47feb3edf330f2c603a9d48c0fcb5699dbfe58964" +
	"25c5bac4aee82e57a85aaf4e2513e4f05796b07ba2ee47d80506f8d2c25e50fd" +
	"14de71e6c418559302f939b0e1abd576f279c4b2e0feb85c1f28ff18f58891ff" +
	"ef132eef2fa09346aee33c28eb130ff28f5b766953334113211996d20011a198" +
	"e3fc433f9f2541010ae17c1bf202580f6047472fb36857fe843b19f5984009dd" +
	"c324044e847a4f4a0ab34f719595de37252d6235365e9b84392b061085349d73" +
	"203a4a13e96f5432ec0fd4a1ee65accdd5e3904df54c1da510b0ff20dcc0c77f" +
	"cb2c0e0eb605cb0504db87632cf3d8b4dae6e705769d1de354270123cb11450e" +
	"fc60ac47683d7b8d0f811365565fd98c4c8eb936bcab8d069fc33bd801b03ade" +
	"a2e1fbc5aa463d08ca19896d2bf59a071b851e6c239052172f296bfb5e724047" +
	"90a2181014f3b94a4e97d117b438130368cc39dbb2d198065ae3986547926cd2" +
	"162f40a29f0c3c8745c0f50fba3852e566d44575c29d39a03f0cda721984b6f4" +
	"40591f355e12d439ff150aab7613499dbd49adabc8676eef023b15b65bfc5ca0" +
	"6948109f23f350db82123535eb8a7433bdabcb909271a6ecbcb58b936a88cd4e" +
	"8f2e6ff5800175f113253d8fa9ca8885c2f552e657dc603f252e1a8e308f76f0" +
	"be79e2fb8f5d5fbbe2e30ecadd220723c8c0aea8078cdfcb3868263ff8f09400" +
	"54da48781893a7e49ad5aff4af300cd804a6b6279ab3ff3afb64491c85194aab" +
	"760d58a606654f9f4400e8b38591356fbf6425aca26dc85244259ff2b19c41b9" +
	"f96f3ca9ec1dde434da7d2d392b905ddf3d1f9af93d1af5950bd493f5aa731b4" +
	"056df31bd267b6b90a079831aaf579be0a39013137aac6d404f518cfd4684064" +
	"7e78bfe706ca4cf5e9c5453e9f7cfd2b8b4c8d169a44e55c88d4a9a7f9474241" +
	"e221af44860018ab0856972e194cd934"

// rfcServerPayload and rfcServerPacket are RFC 9001 Appendix A.3's server Initial: an ACK and
// a CRYPTO frame with the ServerHello, packet number 1 in 2 bytes.
const (
	rfcServerPayload = "02000000000600405a020000560303eefce7f7b37ba1d1632e96677825ddf739" +
		"88cfc79825df566dc5430b9a045a1200130100002e00330024001d00209d3c94" +
		"0d89690b84d08a60993c144eca684d1081287c834d5311bcf32bb9da1a002b00" +
		"020304"
	rfcServerPacket = "cf000000010008f067a5502a4262b5004075c0d95a482cd0991cd25b0aac406a" +
		"5816b6394100f37a1c69797554780bb38cc5a99f5ede4cf73c3ec2493a1839b3" +
		"dbcba3f6ea46c5b7684df3548e7ddeb9c3bf9c73cc3f3bded74b562bfb19fb84" +
		"022f8ef4cdd93795d77d06edbb7aaf2f58891850abbdca3d20398c276456cbc4" +
		"2158407dd074ee"
)

// TestClientInitialRFC9001A2 builds RFC 9001 Appendix A.2's client Initial (packet number 2
// in 4 bytes, padded to 1200 bytes) and compares every byte, then opens the RFC's packet.
func TestClientInitialRFC9001A2(t *testing.T) {
	c, _, err := InitialKeys(unhex(t, rfcDCID))
	if err != nil {
		t.Fatal(err)
	}
	lh := LongHeader{Type: TypeInitial, Version: Version1, DCID: unhex(t, rfcDCID), PN: 2, PNLen: 4}
	got, err := BuildLong(c, lh, unhex(t, rfcClientCrypto), 1200)
	if err != nil {
		t.Fatal(err)
	}
	want := unhex(t, rfcClientPacket)
	if !bytes.Equal(got, want) {
		t.Fatalf("client Initial differs from RFC 9001 A.2:\ngot  %x\nwant %x", got[:64], want[:64])
	}
	h, err := ParseHeader(want)
	if err != nil || h.Type != TypeInitial || h.Size != 1200 || !bytes.Equal(h.DCID, lh.DCID) {
		t.Fatalf("parse: %+v, %v", h, err)
	}
	hdr, pn, payload, err := c.Open(want, h.PNOffset, -1)
	if err != nil {
		t.Fatal(err)
	}
	if pn != 2 || !bytes.Equal(hdr, unhex(t, "c300000001088394c8f03e5157080000449e00000002")) {
		t.Errorf("header %x pn %d", hdr, pn)
	}
	fs, err := ParseFrames(payload)
	if err != nil || len(fs) != 2 || fs[0].Type != FrameCrypto || len(fs[0].Data) != 241 || fs[1].Type != FramePadding || fs[1].Length != 1162-245 {
		t.Errorf("frames %v, %v", fs, err)
	}
}

// TestServerInitialRFC9001A3 opens RFC 9001 Appendix A.3's server Initial with the server's
// keys, and builds it again byte for byte.
func TestServerInitialRFC9001A3(t *testing.T) {
	_, s, err := InitialKeys(unhex(t, rfcDCID))
	if err != nil {
		t.Fatal(err)
	}
	pkt := unhex(t, rfcServerPacket)
	hs, err := SplitDatagram(pkt)
	if err != nil || len(hs) != 1 || hs[0].Type != TypeInitial || len(hs[0].DCID) != 0 || hex.EncodeToString(hs[0].SCID) != "f067a5502a4262b5" {
		t.Fatalf("split: %+v, %v", hs, err)
	}
	hdr, pn, payload, err := s.Open(pkt, hs[0].PNOffset, -1)
	if err != nil {
		t.Fatal(err)
	}
	if pn != 1 || hex.EncodeToString(hdr) != "c1000000010008f067a5502a4262b50040750001" || hex.EncodeToString(payload) != rfcServerPayload {
		t.Errorf("opened: header %x pn %d payload %x", hdr, pn, payload)
	}
	fs, err := ParseFrames(payload)
	if err != nil || len(fs) != 2 || fs[0].String() != "ACK largest=0 ranges=[[0 0]]" || fs[1].String() != "CRYPTO off=0 len=90" {
		t.Errorf("frames %v, %v", fs, err)
	}
	again, err := BuildLong(s, LongHeader{Type: TypeInitial, Version: Version1, SCID: hs[0].SCID, PN: 1, PNLen: 2}, payload, 0)
	if err != nil || !bytes.Equal(again, pkt) {
		t.Errorf("rebuilt %x, %v", again, err)
	}
	// A flipped bit in the ciphertext, or in the header (authenticated as associated data),
	// must fail authentication; the client's keys must not open it.
	for _, i := range []int{len(pkt) - 40, 7} {
		bad := bytes.Clone(pkt)
		bad[i] ^= 1
		if _, _, _, err := s.Open(bad, hs[0].PNOffset, -1); !errors.Is(err, ErrDecrypt) {
			t.Errorf("bit %d flipped: %v, want ErrDecrypt", i, err)
		}
	}
	c, _, _ := InitialKeys(unhex(t, rfcDCID))
	if _, _, _, err := c.Open(pkt, hs[0].PNOffset, -1); !errors.Is(err, ErrDecrypt) {
		t.Errorf("client keys opened the server's packet: %v", err)
	}
}

// TestDecodePacketNumber checks RFC 9000 Appendix A.3's example and the wrap-arounds.
func TestDecodePacketNumber(t *testing.T) {
	for _, tc := range []struct {
		name      string
		largest   int64
		truncated uint64
		bits      int
		want      uint64
	}{
		{"RFC 9000 A.3 example", 0xa82f30ea, 0x9b32, 16, 0xa82f9b32},
		{"first packet", -1, 0, 8, 0},
		{"RFC 9001 A.2 pn", -1, 2, 32, 2},
		{"wrap up", 0xff, 0x01, 8, 0x101},
		{"wrap down", 0x101, 0xff, 8, 0xff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DecodePacketNumber(tc.largest, tc.truncated, tc.bits); got != tc.want {
				t.Errorf("got %#x, want %#x", got, tc.want)
			}
		})
	}
}
