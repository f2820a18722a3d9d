package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/partition"
)

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The README's kernel list and docs/kernels.md name every kernel that
// --kernel accepts.
func TestDocsListEveryKernel(t *testing.T) {
	readme := readDoc(t, "README.md")
	i := strings.Index(readme, "Kernels: on the CPU")
	if i < 0 {
		t.Fatal("README.md has no kernel list")
	}
	list := readme[i:]
	list = list[:strings.Index(list, "\n\n")]
	cpu, gpuList, ok := strings.Cut(list, "on a GPU")
	if !ok {
		t.Fatalf("README.md kernel list %q has no GPU part", list)
	}
	kernelsDoc := readDoc(t, filepath.Join("docs", "kernels.md"))
	for _, k := range kernels.CPUKernelNames() {
		if !strings.Contains(cpu, "`"+k+"`") {
			t.Errorf("README.md's CPU kernel list lacks %s", k)
		}
		if !strings.Contains(kernelsDoc, "| `"+k+"` |") {
			t.Errorf("docs/kernels.md's table lacks %s", k)
		}
	}
	for _, k := range gpu.Kernels() {
		if !strings.Contains(gpuList, "`"+k+"`") {
			t.Errorf("README.md's GPU kernel list lacks %s", k)
		}
		if !strings.Contains(kernelsDoc, "| `"+k+"` |") {
			t.Errorf("docs/kernels.md's table lacks %s", k)
		}
	}
}

// docs/shards.md names the id map file that partition writes.
func TestShardsDocIDMapName(t *testing.T) {
	doc := readDoc(t, filepath.Join("docs", "shards.md"))
	names := regexp.MustCompile(`idmap\.[a-z]+`).FindAllString(doc, -1)
	if len(names) == 0 {
		t.Fatal("docs/shards.md does not name the id map file")
	}
	for _, n := range names {
		if n != partition.IDMapName {
			t.Errorf("docs/shards.md names %s; partition writes %s", n, partition.IDMapName)
		}
	}
}
