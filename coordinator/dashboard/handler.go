package dashboard

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/trigrid/trigrid/api"
)

//go:embed assets
var assets embed.FS

// Source gathers an Input: the jobs, with the subtasks of the unfinished
// ones and of job detail ("" for none), and the workers.
type Source func(ctx context.Context, detail api.JobID) (Input, error)

// Config configures the Handler.
type Config struct {
	// Source answers every request; it is required.
	Source Source
	// Token, when set, is asked of every /api/ request as
	// "Authorization: Bearer TOKEN"; the page asks for it.
	Token string
	// TLS says the listener serves TLS: the page and /api/ are then
	// answered over TLS only, and a plain request is redirected to
	// https.
	TLS bool
	// ClientCert asks /api/ requests for a verified client certificate
	// when there is no Token (a mutual-TLS cluster without a token).
	ClientCert bool
	// Timeout bounds gathering one answer. 0 means 5 s.
	Timeout time.Duration
}

// DefaultConfig returns a configuration without Source, token or TLS.
func DefaultConfig() Config { return Config{Timeout: 5 * time.Second} }

// Handler serves the page at /, its assets under /static/, and the JSON
// at /api/v1/overview and /api/v1/jobs/{id}; every other path is 404 and
// every method but GET and HEAD 405. Mount it at / beside /metrics.
func Handler(cfg Config) (http.Handler, error) {
	if cfg.Source == nil {
		return nil, errors.New("dashboard: no Source")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultConfig().Timeout
	}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	h := &handler{cfg: cfg, token: sha256.Sum256([]byte(cfg.Token))}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, static, "index.html")
	})
	for _, name := range []string{"app.js", "app.css"} {
		mux.HandleFunc("GET /static/"+name, func(w http.ResponseWriter, r *http.Request) {
			http.ServeFileFS(w, r, static, name)
		})
	}
	mux.HandleFunc("GET /api/v1/overview", h.overview)
	mux.HandleFunc("GET /api/v1/jobs/{id}", h.job)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such API path: /api/v1/overview and /api/v1/jobs/{id} are served")
	})
	return h.guard(mux), nil
}

type handler struct {
	cfg   Config
	token [sha256.Size]byte
}

// guard sets the headers every answer carries, keeps the listener's
// data on TLS when it serves TLS, refuses writes, and checks the token
// (or client certificate) of /api/ requests.
func (h *handler) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Frame-Options", "DENY")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			hd.Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "the dashboard is read-only: GET and HEAD only")
			return
		}
		if h.cfg.TLS && r.TLS == nil {
			http.Redirect(w, r, "https://"+r.Host+r.URL.RequestURI(), http.StatusPermanentRedirect)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/api/") {
			hd.Set("Cache-Control", "no-store")
			if status, msg := h.authorize(r); status != 0 {
				if status == http.StatusUnauthorized {
					hd.Set("WWW-Authenticate", `Bearer realm="trigrid"`)
				}
				writeError(w, status, msg)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// authorize returns 0 when r may read the data, else the status and why.
func (h *handler) authorize(r *http.Request) (int, string) {
	if h.cfg.Token != "" {
		auth := r.Header.Get("Authorization")
		got, ok := strings.CutPrefix(auth, "Bearer ")
		sum := sha256.Sum256([]byte(got))
		switch {
		case auth == "":
			return http.StatusUnauthorized, "a token is required: send Authorization: Bearer TOKEN (the cluster's join token, or the coordinator's --http-token)"
		case !ok:
			return http.StatusUnauthorized, "the Authorization header is not of the form Bearer TOKEN (the cluster's join token, or the coordinator's --http-token)"
		case subtle.ConstantTimeCompare(sum[:], h.token[:]) != 1:
			return http.StatusUnauthorized, "the token is wrong: it is neither the cluster's join token nor the coordinator's --http-token"
		}
		return 0, ""
	}
	if h.cfg.ClientCert && (r.TLS == nil || len(r.TLS.VerifiedChains) == 0) {
		return http.StatusUnauthorized, "a client certificate signed by the cluster's CA is required (the coordinator has no token set)"
	}
	return 0, ""
}

func (h *handler) overview(w http.ResponseWriter, r *http.Request) {
	in, ok := h.gather(w, r, "")
	if ok {
		writeJSON(w, http.StatusOK, Snapshot(in))
	}
}

func (h *handler) job(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := api.CheckID("job id", id); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	in, ok := h.gather(w, r, api.JobID(id))
	if !ok {
		return
	}
	d, found := Detail(in, api.JobID(id))
	if !found {
		writeError(w, http.StatusNotFound, "no such job: "+id)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (h *handler) gather(w http.ResponseWriter, r *http.Request, detail api.JobID) (Input, bool) {
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	in, err := h.cfg.Source(ctx, detail)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "coordinator: "+err.Error())
		return Input{}, false
	}
	return in, true
}

// writeJSON writes v as JSON; encoding/json escapes <, > and & in
// strings, so the answer is safe even where it is read as HTML.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding the answer failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, struct {
		Error string `json:"error"`
	}{msg})
}
