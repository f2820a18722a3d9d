package storage

import "fmt"

// Scheme is the 2D partitioning scheme a shard was cut with. It is part of
// every shard header so that blocks of a hash run and a range run, whose
// local ids mean different things, can never be combined.
type Scheme uint8

const (
	// SchemeHash is TRUST's scheme: group(x) = x mod P, local(x) = x div P.
	SchemeHash Scheme = 1
	// SchemeRange is TriX's scheme: groups of id ranges. Ids 0..n-1 are
	// cut into fold*P ranges, dealt to the groups by RangeGroup; local(x)
	// is x's position among its group's ids, so it keeps rank order
	// within a group. fold = 1 is one contiguous range per group.
	SchemeRange Scheme = 2
)

// String returns "hash" or "range".
func (s Scheme) String() string {
	switch s {
	case SchemeHash:
		return "hash"
	case SchemeRange:
		return "range"
	}
	return fmt.Sprintf("scheme(%d)", uint8(s))
}

// Valid reports whether s is a known scheme.
func (s Scheme) Valid() bool { return s == SchemeHash || s == SchemeRange }

// ParseScheme parses "hash" or "range".
func ParseScheme(v string) (Scheme, error) {
	switch v {
	case "hash":
		return SchemeHash, nil
	case "range":
		return SchemeRange, nil
	}
	return 0, fmt.Errorf("storage: unknown partition scheme %q (want hash or range)", v)
}

// MarshalText writes the scheme's name, so JSON and config files say "hash"
// rather than a number whose meaning depends on this package.
func (s Scheme) MarshalText() ([]byte, error) {
	if !s.Valid() {
		return nil, fmt.Errorf("storage: cannot encode invalid %v", s)
	}
	return []byte(s.String()), nil
}

// UnmarshalText accepts the names ParseScheme accepts.
func (s *Scheme) UnmarshalText(b []byte) error {
	v, err := ParseScheme(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// MaxFold bounds the ranges per group of the range scheme.
const MaxFold = 64

// RangeGroup returns the group of range r when the range scheme cuts ids
// into ranges for p groups: boustrophedon order, ranges 0..p-1 to groups
// 0..p-1, ranges p..2p-1 to groups p-1..0, and so on. A forward graph
// (edges from lower to higher ids) fills only blocks (I, J) with I <= J
// when each group is one range; folding gives every group low and high
// ranges, so every block can fill, and under a uniform density the
// reversal on every other pass makes all blocks of fold 2 equal.
func RangeGroup(r, p int) int {
	pass, pos := r/p, r%p
	if pass%2 == 1 {
		return p - 1 - pos
	}
	return pos
}
