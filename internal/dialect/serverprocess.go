package dialect

import "context"

// ServerProcessReporter is implemented by a server that tells which of
// its host's processes serves it, so that oltplab can read the server's
// CPU time when it runs on the same host (the foreign CPU of a run is
// what neither the server nor oltplab used). What it says is only a
// claim about the server's host: the caller checks it against this host's
// processes before using it (scenario's local server CPU).
type ServerProcessReporter interface {
	// ServerProcess returns what the server says of its processes.
	ServerProcess(ctx context.Context) (ServerProcess, error)
}

// ServerProcess is a server's own account of its processes on its host.
type ServerProcess struct {
	// PID is a process of the server; 0 when the server names a PIDFile
	// instead.
	PID int
	// Parent: the server's processes are PID's parent and every process
	// below it (PostgreSQL: PID is the session's backend,
	// pg_backend_pid(), forked by the postmaster). Otherwise PID (or the
	// PIDFile's) is the server's main process, and every process below it
	// is the server's too.
	Parent bool
	// PIDFile is a file on the server's host holding its main process's
	// id (MariaDB and MySQL: @@pid_file).
	PIDFile string
	// Names are the process names (comm) the server's processes have
	// ("postgres"; "mariadbd", "mysqld"): a process of another name is
	// not the server's.
	Names []string
	// How says in words how the server named it, for the result.
	How string
}
