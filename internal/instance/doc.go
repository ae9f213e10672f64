// Package instance owns the database servers oltplab starts itself
// ("managed instances"): a private PostgreSQL or MariaDB server from the
// installed binaries on a data directory the user chooses, on loopback,
// with the infrastructure it is given (buffer-pool memory, cores, I/O caps,
// a memory limit, a cold-cache restart) and its description; embedded
// SQLite on the same data directory and memory; backups with the engines'
// own tools and restores into new instances. A server never outlives the
// command that started it, and an instance takes only what is its to take.
//
// It imports only dialect (targets and secrets), sysstat (devices) and
// claim (its directories).
package instance

// The controls: the cores it may use (cgroup cpuset, or sched_setaffinity
// when no cpuset cgroup is writable), read/write IOPS and MB/s caps on the
// block device under its directories (cgroup v1 blkio throttle or v2
// io.max), an optional memory limit, and a cold-cache restart.
//
// A server is started directly as a child (no pg_ctl daemonisation) from a
// dedicated, locked OS thread that asks the kernel to signal the child when
// that thread dies (Pdeathsig), so the server dies with oltplab even on
// SIGKILL; the thread joins the instance's cgroups before it forks, so the
// server and every process it forks are inside the limits from their first
// instruction. Stop shuts the server down (fast shutdown), kills whatever
// is left of its process tree or in its cgroup and removes the cgroups; it
// also runs when the context given to Start is cancelled.
//
// An instance describes itself (Describe): its spec, which control was
// applied and how (or why not), the binaries and their version, the device
// and file system under its directories, and the settings it was given:
// the context to store with every result measured on it.
//
// Backups (Backupper: pg_basebackup, pg_dump/pg_restore, mariadb-backup)
// run like a server: as its account, inside the source instance's cgroups
// (or a group of the backups' own with an I/O cap), never outliving
// oltplab; restores start new managed instances on the restored files
// (Start reuses an initialised data directory as it finds it).
//
// oltplab runs as root, so an instance takes only what is its to take
// (dirs.go, with internal/claim): data_dir and wal_dir must be new, empty
// or marked by oltplab before, reached through no link or directory
// another user could change, and no system directory; they stay
// oltplab's user's, the server's account gets the engine's directory
// oltplab creates in them, and nothing is chowned that oltplab did not
// create. Backups and restores each write a new directory of their own,
// marked, that the caller removes with claim.Remove.
