package storage

import "fmt"

// Scheme is the 2D partitioning scheme a shard was cut with. It is part of
// every shard header so that blocks of a hash run and a range run, whose
// local ids mean different things, can never be combined.
type Scheme uint8

const (
	// SchemeHash is TRUST's scheme: group(x) = x mod P, local(x) = x div P.
	SchemeHash Scheme = 1
	// SchemeRange is TriX's scheme: contiguous id ranges per group,
	// local(x) = x - start(group).
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
