package main

import "fmt"

// nouns writes n with thousands separators and the noun in the number n
// takes: "1 self-loop", "2 self-loops". plural is the noun's plural when
// it is not singular+"s".
func nouns(n uint64, singular string, plural ...string) string {
	if n == 1 {
		return "1 " + singular
	}
	p := singular + "s"
	if len(plural) > 0 {
		p = plural[0]
	}
	return commas(n) + " " + p
}

// removedText is the report's "removed" row: what cleaning took out.
// badLines < 0 leaves bad lines out (a source that does not read lines).
func removedText(selfLoops, duplicates, isolated uint64, badLines int64) string {
	s := fmt.Sprintf("%s, %s, %s", nouns(selfLoops, "self-loop"), nouns(duplicates, "duplicate"), nouns(isolated, "isolated id"))
	if badLines >= 0 {
		s += ", " + nouns(uint64(badLines), "bad line")
	}
	return s
}
