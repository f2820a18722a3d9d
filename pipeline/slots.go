package pipeline

import (
	"fmt"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/worker"
)

// SlotsOf turns a device selection into worker slots, one per selected
// GPU or the CPU. A slot counts with the selection's kernel, and with
// another when an assignment names one (gpu.Slot.NewKernel).
func SlotsOf(sel *gpu.Selection) []worker.Slot {
	slots := make([]worker.Slot, 0, len(sel.Slots))
	for _, s := range sel.Slots {
		dev := api.Device{Kind: "cpu", Name: s.Device}
		if s.GPU != nil {
			dev = api.Device{Kind: "gpu", Name: s.GPU.Name, Memory: int64(s.GPU.TotalMem)}
		}
		slots = append(slots, worker.Slot{Device: dev, NewCounter: func(kernel string) (kernels.Counter, error) {
			if kernel == "" || kernel == sel.Kernel {
				return s.New()
			}
			if s.NewKernel == nil {
				return nil, fmt.Errorf("kernel %s: this worker counts with %s only", kernel, sel.Kernel)
			}
			return s.NewKernel(kernel)
		}})
	}
	return slots
}
