// Package hugepage asks the operating system to back large arrays with
// huge pages. A fresh array of a gigabyte in 4 KiB pages takes 262,144
// page faults as it is first written, and as many pages to lock when it is
// page-locked for a device; in 2 MiB pages, 512.
package hugepage

// MinBytes is the smallest array Advise advises: below it the faults
// cost little.
const MinBytes = 8 << 20
