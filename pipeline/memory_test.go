package pipeline

import (
	"runtime"
	"testing"
)

// TestMappedFilesBoundResidentFiles: what PartitionFile sets aside for
// mapped files covers the file pages resident now.
func TestMappedFilesBoundResidentFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/self/maps is Linux's")
	}
	_, files := processMemory()
	mapped := mappedFiles()
	if mapped <= 0 {
		t.Fatalf("mappedFiles() = %d, want the binary's segments", mapped)
	}
	if files > mapped {
		t.Errorf("resident file pages %d exceed the mapped files %d", files, mapped)
	}
}
