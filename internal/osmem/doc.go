// Package osmem gives large arrays of plain values their own fresh pages
// from the operating system, outside the Go heap. A large make that reuses
// the heap's memory clears it on one core first (a quarter of a gigabyte
// costs tens of milliseconds); fresh pages are zero as they are first
// touched, by whichever cores touch them, the collector never scans them,
// and Free hands them back at once. Available says how much memory such
// arrays may take now.
package osmem

// MinBytes is the smallest array Alloc maps: below it a make costs little.
const MinBytes = 1 << 20
