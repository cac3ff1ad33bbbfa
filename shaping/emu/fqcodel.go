package emu

// FQParams are FQ-CoDel's flow parameters (RFC 8290 section 5.2; zero fields take the defaults).
type FQParams struct {
	// Flows is the number of flow queues (default 1024, RFC 8290 section 5.2.3).
	Flows int
	// Quantum is the bytes a flow may send per round (default 1514, RFC 8290 section 5.2.2:
	// the MTU plus the 14-byte Ethernet header).
	Quantum int
}

// Defaults of FQ-CoDel (RFC 8290 section 5.2; the packet limit is Linux's 10240, section 4.1).
const (
	DefaultFQFlows   = 1024
	DefaultFQQuantum = 1514
)

// fqFlow is one flow queue: its packets, its CoDel state and its place in the round robin.
type fqFlow struct {
	fifoQueue
	deficit int
	st      codelState
	list    uint8 // 0 none, 1 new, 2 old
	next    int32 // next flow in its list, -1 at the end
}

// flowList is a singly linked list of flow indices.
type flowList struct{ head, tail int32 }

// fqCodel is FQ-CoDel (RFC 8290 section 4): packets are hashed by 5-tuple into flow queues,
// served by deficit round robin with new flows first, each flow managed by CoDel; when the
// limit is exceeded the head of the flow with the most bytes is dropped (section 4.1).
type fqCodel struct {
	flows    []fqFlow
	newFlows flowList
	oldFlows flowList
	quantum  int
	par      CoDelParams
	seed     uint64
	n        int
	b        int64
}

func newFQCoDel(fq FQParams, par CoDelParams, seed uint64) *fqCodel {
	if fq.Flows <= 0 {
		fq.Flows = DefaultFQFlows
	}
	if fq.Quantum <= 0 {
		fq.Quantum = DefaultFQQuantum
	}
	f := &fqCodel{flows: make([]fqFlow, fq.Flows), quantum: fq.Quantum, par: par, seed: seed,
		newFlows: flowList{-1, -1}, oldFlows: flowList{-1, -1}}
	for i := range f.flows {
		f.flows[i].next = -1
	}
	return f
}

func (f *fqCodel) len() int { return f.n }

func (f *fqCodel) push(l *flowList, i int32, which uint8) {
	f.flows[i].next, f.flows[i].list = -1, which
	if l.tail < 0 {
		l.head = i
	} else {
		f.flows[l.tail].next = i
	}
	l.tail = i
}

func (f *fqCodel) popHead(l *flowList) int32 {
	i := l.head
	l.head = f.flows[i].next
	if l.head < 0 {
		l.tail = -1
	}
	f.flows[i].next, f.flows[i].list = -1, 0
	return i
}

func (f *fqCodel) enqueue(s *server, now int64, e entry) Verdict {
	i := int32(flowHash(e.buf, f.seed) % uint64(len(f.flows)))
	fl := &f.flows[i]
	fl.q.push(e)
	size := int64(len(e.buf))
	fl.b += size
	f.n++
	f.b += size
	if fl.list == 0 {
		fl.deficit = f.quantum
		f.push(&f.newFlows, i, 1)
	}
	verdict := Queued
	for f.n > 0 && s.full(now, f.n-1, f.b-size, size) {
		fat := f.fattest()
		old, _ := f.flows[fat].pop()
		f.n--
		f.b -= int64(len(old.buf))
		if old.seq == e.seq {
			verdict = DroppedFull
		}
		s.dropQueue(old)
		size = 0 // the arriving packet is now in the counts; any excess is dropped like it
	}
	return verdict
}

// fattest is the flow with the most bytes queued (RFC 8290 section 4.1).
func (f *fqCodel) fattest() int32 {
	best, bi := int64(-1), int32(0)
	for i := range f.flows {
		if f.flows[i].b > best {
			best, bi = f.flows[i].b, int32(i)
		}
	}
	return bi
}

func (f *fqCodel) dequeue(s *server, now int64) (entry, bool) {
	for {
		l, which := &f.newFlows, uint8(1)
		if l.head < 0 {
			l, which = &f.oldFlows, 2
			if l.head < 0 {
				return entry{}, false
			}
		}
		i := l.head
		fl := &f.flows[i]
		if fl.deficit <= 0 {
			fl.deficit += f.quantum
			f.popHead(l)
			f.push(&f.oldFlows, i, 2)
			continue
		}
		n0, b0 := fl.q.len(), fl.b
		e, ok := fl.st.dequeue(s, &fl.fifoQueue, &f.par, now)
		f.n -= n0 - fl.q.len()
		f.b -= b0 - fl.b
		if !ok {
			f.popHead(l)
			if which == 1 && f.oldFlows.head >= 0 {
				f.push(&f.oldFlows, i, 2)
			}
			continue
		}
		fl.deficit -= len(e.buf)
		return e, true
	}
}
