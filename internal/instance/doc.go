// Package instance owns the database servers oltplab starts itself
// ("managed instances"): a private PostgreSQL or MariaDB server initialised
// from the installed binaries on a data directory the user chooses, on
// loopback, on a free port, with a generated password, and the
// infrastructure it is given: buffer-pool memory, the cores it may use
// (cgroup cpuset, or sched_setaffinity when no cpuset cgroup is writable),
// read/write IOPS and MB/s caps on the block device under its directories
// (cgroup v1 blkio throttle or v2 io.max), an optional memory limit, and a
// cold-cache restart. Embedded SQLite takes the same data directory and
// memory (its page cache) so that storage tiers compare without a server.
//
// A server never outlives the command that started it. It is started
// directly as a child (no pg_ctl daemonisation) from a dedicated, locked OS
// thread that asks the kernel to signal the child when that thread dies
// (Pdeathsig), so the server dies with oltplab even on SIGKILL; the thread
// joins the instance's cgroups before it forks, so the server and every
// process it forks are inside the limits from their first instruction. Stop
// shuts the server down (fast shutdown), kills whatever is left of its
// process tree or in its cgroup and removes the cgroups; it also runs when
// the context given to Start is cancelled.
//
// An instance describes itself (Describe): its spec, which control was
// applied and how (or why not), the binaries and their version, the device
// and file system under its directories, and the settings it was given:
// the context to store with every result measured on it.
//
// It also backs servers up with their engine's own tools (Backupper:
// pg_basebackup, pg_dump/pg_restore, mariadb-backup), run like a server:
// as its account, inside the source instance's cgroups (or a group of the
// backups' own with an I/O cap), never outliving oltplab; and restores
// them into new managed instances started on the restored files (Start
// reuses an initialised data directory as it finds it).
//
// oltplab runs as root, so an instance takes only what is its to take
// (dirs.go, with internal/claim): data_dir and wal_dir must be new, empty
// or marked by oltplab before, reached through no link or directory
// another user could change, and no system directory; they stay
// oltplab's user's, the server's account gets the engine's directory
// oltplab creates in them, and nothing is chowned that oltplab did not
// create. Backups and restores each write a new directory of their own,
// marked, that the caller removes with claim.Remove.
//
// The package imports internal/dialect (targets and secrets),
// internal/sysstat (devices) and internal/claim (its directories) and
// nothing else of oltplab; it must not import internal/cli,
// internal/store, internal/driver, internal/load or a dialect package.
package instance
