package matrix

import (
	"fmt"
	"slices"

	"github.com/pltlab/pltlab/interop"
)

// Fields of wireFields that pathTrack reads.
const (
	fieldIPSrc = 20 + iota
	fieldIPDst
	fieldUDPSrc
	fieldUDPDst
	fieldChallenge
	fieldResponse
)

// pathTrack follows the client's paths through the capture, as the Interop Runner reads them
// for rebind-port, rebind-addr and connectionmigration: every server datagram's destination
// (a change must open with a PATH_CHALLENGE), the challenges and the client's responses, and
// every client datagram's source (an active migration must change the destination connection
// ID). Only delivered datagrams are read: the capture keeps dropped ones undissected
// (package shaping/capture's drop interfaces), so a server datagram the link's queue or NAT
// dropped is not seen.
type pathTrack struct {
	lastDst, lastSrc string
	p                interop.Paths
	responses        []string
	dcid             string // the destination connection ID of the client's last 1-RTT datagram
	srcChanged       string // a source change whose first 1-RTT datagram is still to come
}

// datagram reads one captured datagram of direction dir at capture time t (s).
func (pt *pathTrack) datagram(dir string, t float64, v fieldValues) {
	if len(v(fieldIPDst)) == 0 {
		return
	}
	src := first(v(fieldIPSrc)) + ":" + first(v(fieldUDPSrc))
	dst := first(v(fieldIPDst)) + ":" + first(v(fieldUDPDst))
	switch dir {
	case "down":
		challenges := v(fieldChallenge)
		if dst != pt.lastDst {
			if !slices.Contains(pt.p.Destinations, dst) {
				pt.p.Destinations = append(pt.p.Destinations, dst)
			}
			if pt.lastDst != "" {
				pt.p.Migrations++
				if len(challenges) == 0 {
					pt.p.Unchallenged = append(pt.p.Unchallenged, fmt.Sprintf("%s at %.3f s", dst, t))
				}
			}
			pt.lastDst = dst
		}
		for _, c := range challenges {
			if !slices.Contains(pt.p.Challenges, c) {
				pt.p.Challenges = append(pt.p.Challenges, c)
			}
		}
	case "up":
		pt.responses = append(pt.responses, v(fieldResponse)...)
		if src != pt.lastSrc {
			if !slices.Contains(pt.p.Sources, src) {
				pt.p.Sources = append(pt.p.Sources, src)
			}
			if pt.lastSrc != "" {
				pt.p.SourceChanges++
				pt.srcChanged = fmt.Sprintf("%s at %.3f s", src, t)
			}
			pt.lastSrc = src
		}
		pt.shortHeader(v)
	}
}

// shortHeader follows the destination connection ID of the client's 1-RTT packets (the
// datagram's last short header packet), noting a source change whose first 1-RTT datagram kept
// the previous one.
func (pt *pathTrack) shortHeader(v fieldValues) {
	forms, dcids := v(1), v(6)
	if len(forms) == 0 || forms[len(forms)-1] != "0" || len(dcids) == 0 {
		return
	}
	id := dcids[len(dcids)-1]
	if pt.srcChanged != "" && pt.dcid != "" && id == pt.dcid {
		pt.p.ReusedDCID = append(pt.p.ReusedDCID, pt.srcChanged)
	}
	pt.srcChanged, pt.dcid = "", id
}

// finish returns the paths seen, nil when there was one each way and no challenge.
func (pt *pathTrack) finish() *interop.Paths {
	for _, c := range pt.p.Challenges {
		if !slices.Contains(pt.responses, c) {
			pt.p.Unanswered = append(pt.p.Unanswered, c)
		}
	}
	if pt.p.Migrations == 0 && pt.p.SourceChanges == 0 && len(pt.p.Challenges) == 0 {
		return nil
	}
	p := pt.p
	return &p
}
