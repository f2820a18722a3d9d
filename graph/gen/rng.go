package gen

// splitmix64 is the SplitMix64 generator (Steele, Lea, Flood 2014): one add
// and a strong 64-bit finaliser per output. It passes BigCrush, needs one
// word of state, and seeding it from a hash of (seed, chunk) gives
// independent-looking streams per chunk, which is all the generators need.
type splitmix64 struct{ s uint64 }

const golden = 0x9e3779b97f4a7c15

func (r *splitmix64) next() uint64 {
	r.s += golden
	return mix64(r.s)
}

// mix64 is the SplitMix64 finaliser, a bijection on uint64.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// chunkStream returns the stream of chunk c for seed. Hashing both words
// (rather than adding c to the state) keeps streams of nearby chunks from
// being shifted copies of one another.
func chunkStream(seed uint64, purpose uint64, c int) splitmix64 {
	return splitmix64{s: mix64(mix64(seed^purpose*golden) + uint64(c)*0xd1b54a32d192ed03)}
}
