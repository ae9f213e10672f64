package site

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// TokenCookie carries the token once a browser has presented it.
const TokenCookie = "oltplab_token"

// IsLoopback reports whether a listen address (HOST:PORT) binds this
// machine only. An empty host (all interfaces) is not loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return loopbackHost(host)
}

func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// access wraps h with the checks of every request: a token when one is
// set, a loopback Host otherwise; read-only methods; headers that keep the
// pages out of frames and their URLs out of Referer.
type access struct {
	h     http.Handler
	token [sha256.Size]byte // digest of the token; zero when none
	has   bool
}

func newAccess(h http.Handler, token string) *access {
	a := &access{h: h}
	if token != "" {
		a.token, a.has = sha256.Sum256([]byte(token)), true
	}
	return a
}

// tokenOK compares digests, so neither the content nor the length of the
// token leaks through timing.
func (a *access) tokenOK(given string) bool {
	d := sha256.Sum256([]byte(given))
	return subtle.ConstantTimeCompare(d[:], a.token[:]) == 1
}

func (a *access) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "read-only: GET and HEAD only", http.StatusMethodNotAllowed)
		return
	}
	if !a.has {
		host := r.Host
		if hh, _, err := net.SplitHostPort(host); err == nil {
			host = hh
		}
		if !loopbackHost(host) {
			http.Error(w, "this server answers loopback addresses only (start it with --token FILE to serve others)", http.StatusForbidden)
			return
		}
		a.h.ServeHTTP(w, r)
		return
	}
	// ?token=... once: checked, kept in a cookie, and dropped from the URL.
	if q := r.URL.Query(); q.Has("token") {
		if !a.tokenOK(q.Get("token")) {
			http.Error(w, "wrong token", http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: q.Get("token"), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q.Del("token")
		u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		http.Redirect(w, r, u.String(), http.StatusSeeOther)
		return
	}
	given := ""
	if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		given = b
	} else if c, err := r.Cookie(TokenCookie); err == nil {
		given = c.Value
	}
	if !a.tokenOK(given) {
		h.Set("WWW-Authenticate", `Bearer realm="oltplab"`)
		http.Error(w, "a token is required: Authorization: Bearer TOKEN, or open /?token=TOKEN once", http.StatusUnauthorized)
		return
	}
	a.h.ServeHTTP(w, r)
}
