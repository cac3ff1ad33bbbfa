package protocol_test

import (
	"fmt"

	"github.com/pltlab/pltlab/protocol"
)

// h2tls13 is the worked example of docs/extending.md ("A protocol variant"): HTTP/2 over TLS 1.3
// only, on a TCP port of its own. Adding it to protocol.Table is the whole change.
var h2tls13 = protocol.Protocol{
	Name: "h2-tls13", Label: "HTTP/2 over TLS 1.3", Version: protocol.HTTP2, Transport: protocol.TCP,
	ALPN: "h2", NextHop: "h2", Chromium: []string{"--disable-quic"}, TLSVersion: "1.3",
}

func ExampleProtocol_Validate() {
	fmt.Println(h2tls13.Validate(), h2tls13.ChromiumFlagsFor([]string{"plt.test"}, 8445))
	// Output: <nil> [--disable-quic]
}
