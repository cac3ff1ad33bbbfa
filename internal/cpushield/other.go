//go:build !linux

package cpushield

// Kernel is the machine's side of a shield; only Linux has one (every call fails).
type Kernel struct{}

// errNoShield is the answer of a machine without sched_setaffinity(2).
var errNoShield = ErrDenied

// Tasks fails: no shield here.
func (Kernel) Tasks() ([]TaskKey, error) { return nil, errNoShield }

// Affinity fails: no shield here.
func (Kernel) Affinity(int) ([]int, error) { return nil, errNoShield }

// SetAffinity fails: no shield here.
func (Kernel) SetAffinity(int, []int) error { return errNoShield }

// Alive reports false: no shield is held here.
func (Kernel) Alive(int) bool { return false }

// Descendants fails: no shield here.
func (Kernel) Descendants(int) ([]TaskKey, error) { return nil, errNoShield }

// Placed reports false.
func (Kernel) Placed(int) bool { return false }

// Allowed returns nil: the CPUs cannot be read here.
func Allowed() []int { return nil }

// PinThread does nothing and reports false.
func PinThread() bool { return false }
