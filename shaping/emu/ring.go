package emu

// ring is a growable FIFO; its backing array is reused, so steady state allocates nothing.
type ring[T any] struct {
	buf        []T
	head, size int
}

func (r *ring[T]) len() int { return r.size }

func (r *ring[T]) push(v T) {
	if r.size == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.size)&(len(r.buf)-1)] = v
	r.size++
}

// front returns the oldest element; the ring must not be empty.
func (r *ring[T]) front() *T { return &r.buf[r.head] }

// pop removes and returns the oldest element; the ring must not be empty. The slot is not
// cleared: a packet buffer it still points to is the pipe's anyway (recycled, never freed), and
// clearing costs a store per packet.
func (r *ring[T]) pop() T {
	v := r.buf[r.head]
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.size--
	return v
}

// grow doubles the backing array (a power of two), keeping the order.
func (r *ring[T]) grow() {
	n := max(16, 2*len(r.buf))
	nb := make([]T, n)
	for i := 0; i < r.size; i++ {
		nb[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = nb, 0
}

// pending is a packet on the delay line.
type pending struct {
	buf     []byte
	deliver int64 // ns on the pipe's clock
	seq     uint64
}

// delayHeap orders pending packets by delivery time, then arrival (used when reordering).
type delayHeap []pending

func (h delayHeap) less(i, j int) bool {
	return h[i].deliver < h[j].deliver || (h[i].deliver == h[j].deliver && h[i].seq < h[j].seq)
}

func (h *delayHeap) push(p pending) {
	*h = append(*h, p)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !s.less(i, parent) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *delayHeap) pop() pending {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s[last] = pending{}
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s.less(l, m) {
			m = l
		}
		if r < len(s) && s.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
