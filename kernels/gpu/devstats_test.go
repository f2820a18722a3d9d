package gpu

import (
	"testing"

	"github.com/trigrid/trigrid/kernels"
)

// DeviceStats says what a counter holds on the device now: the blocks it
// keeps after a count, never more than its peak, and nothing once closed.
func TestDeviceStatsUsedBytes(t *testing.T) {
	g := forward(t, randomEdges(300, 3000, 5))
	want, err := kernels.Reference(kernels.Whole(g))
	if err != nil {
		t.Fatal(err)
	}
	lib := openRef(t, Options{})
	c, err := lib.NewCounter("auto")
	if err != nil {
		t.Fatal(err)
	}
	if st := c.DeviceStats(); st.UsedBytes > st.PeakBytes {
		t.Fatalf("before counting: %d bytes in use, peak %d", st.UsedBytes, st.PeakBytes)
	}
	res, err := c.Count(t.Context(), kernels.Whole(g))
	if err != nil || res.Triangles != want {
		t.Fatalf("count %d, %v; want %d", res.Triangles, err, want)
	}
	st := c.DeviceStats()
	if st.UsedBytes == 0 || st.UsedBytes > st.PeakBytes {
		t.Errorf("after counting: %d bytes in use, peak %d", st.UsedBytes, st.PeakBytes)
	}
	c.Close()
	if after := c.DeviceStats(); after.UsedBytes != 0 || after.PeakBytes != st.PeakBytes {
		t.Errorf("closed: %d bytes in use, peak %d (was %d)", after.UsedBytes, after.PeakBytes, st.PeakBytes)
	}
}
