package pages

// sizes lists every object's size in spec order.
func (s Spec) sizes() []int64 {
	var out []int64
	for _, p := range s.objects() {
		out = append(out, p.Size)
	}
	return out
}

// objectPath returns the URL path of image i (0-based) of n objects: "/img/0001.jpg", numbered
// from 1 with at least four digits.
func objectPath(i, n int) string { return objectPathFor("", i, n) }
