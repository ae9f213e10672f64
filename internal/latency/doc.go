// Package latency is the latency layer: a small file system oltplab
// mounts itself over a managed instance's data_dir and wal_dir that
// passes every operation through to the directory below it and delays
// reads, writes, fsyncs and metadata changes by what the user names
// (Settings: fixed, normal or log-normal with a p99, a tail such as "1%
// at 50ms", jitter), so that storage tiers can be compared by their
// latency per I/O and not only by IOPS caps. It measures every operation
// as the server experienced it, per kind, in HDR histograms (Snapshot,
// Window), and records the CPU time it costs.
//
// # How it is built
//
// The layer is a FUSE file system served by github.com/hanwen/go-fuse/v2
// (its fs node API), in a process of its own (daemon.go: oltplab's
// executable started again, the daemon), with a pass-through of ours
// (passthrough.go, file.go) and the delays as a wrapper around the FUSE
// requests (delay.go). go-fuse was chosen over bazil.org/fuse and
// github.com/jacobsa/fuse:
//
//   - it is maintained (v2.12 in 2026) and is what most Go loopback and
//     overlay file systems use; bazil.org/fuse has had no release since
//     January 2023 and mounts only through fusermount3, which this kind
//     of host does not have; jacobsa/fuse (gcsfuse's) is maintained but
//     has no pass-through to start from and mounts only by path;
//   - it accepts a FUSE connection mounted by someone else ("/dev/fd/N"),
//     which the private namespace below needs: oltplab mounts, the
//     daemon serves;
//   - it negotiates what a database needs of the kernel: the writeback
//     cache (the server's writes are cached in its page cache and
//     written back through the layer, as on a local file system, and
//     fsync writes them and then asks the layer to sync), asynchronous
//     direct I/O (libaio and io_uring reach the layer as concurrent
//     requests), parallel direct writes to one file, and requests
//     handled on many goroutines at once, so that a delayed request
//     holds up no other;
//   - its own loopback node resolves paths from strings as root, which a
//     server's account could redirect with a link; the pass-through here
//     resolves every name below the backing directory's descriptor
//     (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) and acts with the
//     caller's file-system ids.
//
// What works through the layer, tested on a real mount: O_DIRECT reads
// and writes (aligned and not), fsync and fdatasync passed through as
// asked, fallocate, truncate, rename, hard and symbolic links, shared
// writable mmap (SQLite's WAL index). Extended attributes are refused
// (no database here uses them); POSIX locks are kept by the kernel.
// The layer reads the backing files with O_DIRECT wherever it can, and
// writes them as the server does (file.go): no page cache below it
// answers a read (the server's page cache is the mount's, in its own
// cgroup, and what misses it costs the real device plus the delay), and
// the server's buffered writes reach the device at fsync or in the
// background, as below a bare directory. The delay is added to what the
// device below takes, as dm-delay does; a tier with zero delays is the
// fair baseline, the layer's own cost included.
//
// # Safety
//
// The mounts exist only in a private mount namespace (namespace.go) that
// the instance's processes enter (internal/instance starts them there);
// everywhere else, the host included, the directory is what it always
// was, and the daemon reads and writes it there. So nothing is ever
// mounted where anyone else looks, and nothing can stay mounted there,
// whatever ends oltplab: the namespace goes with its last process, the
// servers die with oltplab (parent-death signal), and so does the daemon,
// whose end aborts the FUSE connections so that nothing hangs on them. A
// process that outlived all that keeps the mount in its namespace, with
// every I/O failing; RemoveLeftovers finds such mounts by the dead
// oltplab process their source names and unmounts them (`oltplab clean
// --leftovers`). The layer mounts only over a directory that carries
// oltplab's mark (internal/claim: one it created, or an empty one it
// took) and never removes anything of it.
//
// It imports internal/claim and nothing else of oltplab.
package latency
