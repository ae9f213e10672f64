package instance

import "strings"

// Settings a spec must not give.
//
// A managed server is isolated: it listens on 127.0.0.1 only, on a port
// oltplab chose, with its socket in oltplab's private run directory; it
// admits only oltplab's user with a password generated for this start; it
// keeps its files in data_dir (and wal_dir) and the run directory; it runs
// as its engine's unprivileged account and loads no code but its own.
// oltplab starts it as root, and plans may come from other machines, so no
// setting may undo any of that: Spec.Validate refuses, in plans and on the
// command line alike, every setting that controls listening, the port, the
// socket, authentication, the files and directories the server reads or
// writes, the account it runs as, code it loads or shell commands it runs,
// and connections it makes to other hosts, as well as the settings oltplab
// derives from the spec's own fields.
//
// Each engine has one table of refusals (postgresRefused,
// mariadbRefused), in its own file, and says how its server reads a name
// (refusedSetting): the same setting is refused in every spelling the
// server accepts.

// refusal is one setting a spec must not give, and why.
type refusal struct {
	// name is the server's own spelling of the setting; with prefix, every
	// name that begins with it (a family: ssl_*, wsrep*).
	name   string
	prefix bool
	// why completes "setting NAME ...": what it controls and what oltplab
	// keeps instead.
	why string
	// allow, when set, lets the values through that undo nothing (a
	// library named from the server's own directory, a binary log named
	// inside the data directory).
	allow func(value string) bool
}

// The reasons, one per kind of isolation.
const (
	whyListening = "controls listening: oltplab's managed servers listen on 127.0.0.1 only"
	whyPort      = "sets the port: oltplab gives each managed server a free port of its own on 127.0.0.1"
	whySocket    = "sets the socket: oltplab keeps a managed server's socket in its private run directory"
	whyAuth      = "controls authentication: a managed server admits only oltplab's own user with its generated password"
	whyFiles     = "names a file or directory: a managed server keeps its files in data_dir, wal_dir and oltplab's run directory"
	whyCode      = "loads code into the server: a managed server runs its own code only"
	whyLibrary   = "loads code into the server: name libraries of the server's own library directory, without a path"
	whyCommand   = "runs a shell command as the server's account: a managed server runs none"
	whyHosts     = "connects the server to other hosts: oltplab's managed servers talk to 127.0.0.1 only"
	whyAccount   = "sets the OS account the server runs as: oltplab runs it as its engine's unprivileged account"
	whyMemory    = "is set by oltplab from the spec's memory"
	whyMaxConns  = "is set by oltplab from the spec's max_connections"
	whyWALDir    = "is set by oltplab from the spec's wal_dir"
)

// plainName allows a value naming things without a path: no '/' can
// leave the directory the server looks in.
func plainName(v string) bool { return !strings.Contains(v, "/") }

// findRefusal is the refusal of name (spelled as the server spells it).
func findRefusal(table []refusal, name string) (refusal, bool) {
	for _, r := range table {
		if name == r.name || (r.prefix && strings.HasPrefix(name, r.name)) {
			return r, true
		}
	}
	return refusal{}, false
}
