package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// do sends one request to the agent and decodes its JSON answer into out
// (nil: none). An answer that is not a success is an error with the
// agent's own words.
func (c Client) do(ctx context.Context, method, path string, in, out any, timeout time.Duration) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "https://"+c.Addr+path, body)
	if err != nil {
		return fmt.Errorf("agent at %s: %w", c.Addr, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.authorize(req)
	hc, err := c.httpClient(timeout)
	if err != nil {
		return err
	}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, ErrTrust) {
			return fmt.Errorf("agent at %s: %w", c.Addr, err)
		}
		return fmt.Errorf("%w at %s: %w", ErrUnreachable, c.Addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var e apiError
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(b))
		}
		return &RemoteError{Addr: c.Addr, Status: resp.StatusCode, Msg: e.Error}
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("agent at %s: answer: %w", c.Addr, err)
	}
	return nil
}

// RemoteError is an agent's refusal or failure, in its words.
type RemoteError struct {
	Addr   string
	Status int
	Msg    string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("agent at %s: %s", e.Addr, e.Msg)
}

// Unauthorized reports whether the agent refused the client's token.
func (e *RemoteError) Unauthorized() bool { return e.Status == http.StatusUnauthorized }

// Start asks the agent for a managed instance; the answer holds its
// password and ticket (secrets: never print them).
func (c Client) Start(ctx context.Context, req StartRequest) (InstanceInfo, error) {
	var info InstanceInfo
	err := c.do(ctx, http.MethodPost, "/v1/instances", req, &info, 0)
	return info, err
}

// Describe returns one of the agent's instances.
func (c Client) Describe(ctx context.Context, id string) (InstanceInfo, error) {
	var info InstanceInfo
	err := c.do(ctx, http.MethodGet, "/v1/instances/"+id, nil, &info, dialTimeout)
	return info, err
}

// List returns the agent's instances.
func (c Client) List(ctx context.Context) ([]InstanceInfo, error) {
	var out []InstanceInfo
	err := c.do(ctx, http.MethodGet, "/v1/instances", nil, &out, dialTimeout)
	return out, err
}

// Stop stops one of the agent's instances.
func (c Client) Stop(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/instances/"+id, nil, nil, time.Minute)
}

// Renew extends an instance's lease.
func (c Client) Renew(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, "/v1/instances/"+id+"/lease", nil, nil, dialTimeout)
}

// KeepLease renews the instance's lease every lease/3 until ctx ends;
// report is called after every renewal, with its error (nil: renewed;
// otherwise the agent or the link is gone, or the agent no longer holds
// the instance).
func (c Client) KeepLease(ctx context.Context, id string, lease time.Duration, report func(error)) {
	if lease <= 0 {
		lease = DefaultLease
	}
	tick := time.NewTicker(lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			rctx, cancel := context.WithTimeout(ctx, lease/3)
			err := c.Renew(rctx, id)
			cancel()
			if ctx.Err() == nil && report != nil {
				report(err)
			}
		}
	}
}

// RTT measures the round trip to the agent: the median of n pings over
// one kept-alive TLS connection (the first, which opens it, not counted).
func (c Client) RTT(ctx context.Context, n int) (time.Duration, error) {
	hc, err := c.httpClient(dialTimeout)
	if err != nil {
		return 0, err
	}
	defer hc.CloseIdleConnections()
	var rtts []time.Duration
	for i := 0; i <= n; i++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+c.Addr+"/v1/ping", nil)
		if err != nil {
			return 0, err
		}
		c.authorize(req)
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			return 0, fmt.Errorf("%w at %s: %w", ErrUnreachable, c.Addr, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, &RemoteError{Addr: c.Addr, Status: resp.StatusCode, Msg: resp.Status}
		}
		if i > 0 {
			rtts = append(rtts, time.Since(start))
		}
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2], nil
}

// Tunnel opens a connection to the instance's server through the agent
// (its /connect endpoint): the server itself listens on the agent's
// loopback only.
func (c Client) Tunnel(ctx context.Context, id string) (net.Conn, error) {
	conn, err := c.dialTLS(ctx)
	if err != nil {
		if errors.Is(err, ErrTrust) {
			return nil, fmt.Errorf("agent at %s: %w", c.Addr, err)
		}
		return nil, fmt.Errorf("%w at %s: %w", ErrUnreachable, c.Addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	} else {
		_ = conn.SetDeadline(time.Now().Add(dialTimeout))
	}
	fmt.Fprintf(conn, "GET /v1/instances/%s/connect HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nConnection: Upgrade\r\nUpgrade: oltplab-tunnel\r\n\r\n", id, c.Addr, c.Token)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("agent at %s: tunnel: %w", c.Addr, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		conn.Close()
		var e apiError
		if json.Unmarshal(b, &e) != nil {
			e.Error = strings.TrimSpace(string(b))
		}
		return nil, &RemoteError{Addr: c.Addr, Status: resp.StatusCode, Msg: "tunnel: " + e.Error}
	}
	_ = conn.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		return &bufferedConn{Conn: conn, r: br}, nil
	}
	return conn, nil
}

type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// Forwarder listens on this machine's loopback and carries every
// connection to an instance's server through its agent: a database
// client (the driver, the samplers) connects to Addr as if the server
// were here.
type Forwarder struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	open map[net.Conn]struct{}
	// Lost is called (when set) with the error of a connection that
	// could not reach the agent.
	Lost func(error)
}

// Forward starts a forwarder to instance id of the agent.
func (c Client) Forward(id string) (*Forwarder, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &Forwarder{ln: ln, open: map[net.Conn]struct{}{}}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			local, err := ln.Accept()
			if err != nil {
				return
			}
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				remote, err := c.Tunnel(context.Background(), id)
				if err != nil {
					local.Close()
					if f.Lost != nil {
						f.Lost(err)
					}
					return
				}
				f.track(local, remote, true)
				splice(local, remote)
				f.track(local, remote, false)
			}()
		}
	}()
	return f, nil
}

func (f *Forwarder) track(a, b net.Conn, add bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if add {
		f.open[a], f.open[b] = struct{}{}, struct{}{}
	} else {
		delete(f.open, a)
		delete(f.open, b)
	}
}

// Addr is the loopback address to connect to.
func (f *Forwarder) Addr() string { return f.ln.Addr().String() }

// Close stops forwarding and closes every connection.
func (f *Forwarder) Close() error {
	err := f.ln.Close()
	f.mu.Lock()
	for c := range f.open {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
	return err
}
