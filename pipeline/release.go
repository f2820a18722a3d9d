package pipeline

import "runtime/debug"

// anyDevice reports whether a GPU counts among cfg's slots.
func anyDevice(cfg *Config) bool {
	for _, s := range cfg.Slots {
		if s.Device.Kind == "gpu" {
			return true
		}
	}
	return false
}

// freeWhileCounting returns the heap's free memory to the operating system
// on a goroutine of its own (the caller has dropped what it no longer
// needs); the function it returns waits for that.
func freeWhileCounting() (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		debug.FreeOSMemory()
	}()
	return func() { <-done }
}
