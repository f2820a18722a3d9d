package coordinator

import (
	"context"
	"net/http"
	"time"
)

// Ready reports whether the coordinator can take work: its state was
// loaded (NewServer restored it) and its loop answers within ctx. It
// fails once the server stops.
func (s *Server) Ready(ctx context.Context) error {
	return s.call(ctx, func() {})
}

// HealthHandler serves the probes of a process manager (Kubernetes):
// /healthz answers 200 while the process serves HTTP at all (liveness);
// /readyz answers 200 when ready returns nil and 503 with its error
// otherwise (readiness). ready gets the request's context, bounded to
// 2 s. Both answer a short text body and are cheap enough to poll.
func HealthHandler(ready func(context.Context) error) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := ready(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("not ready: " + err.Error() + "\n"))
			return
		}
		w.Write([]byte("ready\n"))
	})
	return mux
}
