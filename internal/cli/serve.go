package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/experiment"
	"github.com/oltplab/oltplab/internal/site"
)

const serveSynopsis = "serve [--listen ADDR] [--token FILE] [--results PATH]"

// minTokenBytes is the shortest token serve accepts: guessing one of 16
// random characters is out of reach.
const minTokenBytes = 16

// runServe serves the results browser until interrupted.
func runServe(ctx context.Context, a *app, args []string) error {
	var (
		sf        storeFlags
		listen    string
		tokenFile string
	)
	fs := newFlagSet("serve")
	sf.register(fs, a.env)
	fs.StringVar(&listen, "listen", "127.0.0.1:8080", "`ADDR` (HOST:PORT) to serve on; an address other than loopback needs --token")
	fs.StringVar(&tokenFile, "token", "", "read the access token from the first line of `FILE` (or env OLTPLAB_SERVE_TOKEN); every request must carry it "+
		"(Authorization: Bearer TOKEN, or open /?token=TOKEN once in a browser). Required off loopback")
	if err := a.parseFlags(fs, serveSynopsis, args); err != nil {
		return helpOK(err)
	}
	if _, _, err := net.SplitHostPort(listen); err != nil {
		return usageErrorf("serve: --listen %q: want HOST:PORT (e.g. 127.0.0.1:8080)", listen)
	}
	token, err := readToken(tokenFile, a.env["OLTPLAB_SERVE_TOKEN"])
	if err != nil {
		return err
	}
	if token != "" {
		a.secrets = append(a.secrets, dialect.Secret(token))
	}
	if token == "" && !site.IsLoopback(listen) {
		return usageErrorf("serve: --listen %s is reachable from other machines: give --token FILE (or OLTPLAB_SERVE_TOKEN), "+
			"or listen on loopback (127.0.0.1:PORT)", listen)
	}
	st, err := a.openStoreToRead(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return usageErrorf("serve: cannot listen on %s: %v", listen, err)
	}
	s := &site.Server{Store: st, ExperimentReport: experiment.Report, Token: token, Version: version(), Log: a.log}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	access := "no token: loopback only"
	if token != "" {
		access = "token required"
	}
	fmt.Fprintf(a.errw(), "serving %s read-only at http://%s/ (%s); Ctrl-C stops\n", st.Path(), ln.Addr(), access)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// readToken returns the token of --token FILE (its first line) or, without
// the flag, of the environment; empty when neither is given.
func readToken(file, env string) (string, error) {
	token := strings.TrimSpace(env)
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return "", usageErrorf("serve: cannot read --token file: %v", errors.Unwrap(err))
		}
		defer f.Close()
		line, err := bufio.NewReader(f).ReadString('\n')
		if err != nil && line == "" {
			return "", usageErrorf("serve: --token file %s is empty", file)
		}
		token = strings.TrimSpace(line)
	}
	if token != "" && len(token) < minTokenBytes {
		return "", usageErrorf("serve: the token is %d characters long, want at least %d (e.g. openssl rand -hex 24)", len(token), minTokenBytes)
	}
	return token, nil
}
