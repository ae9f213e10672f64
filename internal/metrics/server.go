package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the exposition is served.
const Path = "/metrics"

// Server serves m on one listener until Close.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Listen listens on addr (HOST:PORT; port 0 picks a free one) and serves
// the exposition at Path in the background. Scrapes are read-only: the
// metrics carry no target, password or query text.
func Listen(addr string, m *Metrics, log *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+Path, promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: slogPrinter{log}}))
	s := &Server{
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		ln:   ln,
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && log != nil {
			log.Warn("metrics endpoint stopped", "err", err)
		}
	}()
	return s, nil
}

// URL is the exposition's address, e.g. http://127.0.0.1:9464/metrics.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + Path }

// Close stops serving, giving a scrape in flight a moment to finish, and
// waits for the server's goroutine.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}

// slogPrinter is the handler's error log.
type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) {
	if p.log != nil {
		p.log.Warn("metrics endpoint", "err", v)
	}
}
