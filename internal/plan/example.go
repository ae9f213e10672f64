package plan

// Example is a commented plan: `oltplab experiment --help` prints it and
// a test decodes it, so it stays true.
const Example = `# oltplab experiment plan: one file compares whole infrastructures.
name: storage-tiers          # required: names the experiment (letters, digits, . _ -)
description: tmpfs against local disk, and the disk capped to HDD-like IOPS
question: How much throughput does each storage tier give, and at what cost?
                             # optional: what the experiment asks, in one sentence
                             # (at most 300 characters); the report's first page
                             # states it and answers it for each target
results: ./results.db        # optional: the results store (default: --results,
                             # OLTPLAB_RESULTS, then ~/.local/share/oltplab/results.db)
warehouses: 2                # the TPC-C scale every target is built at (required
                             # unless every step is tpch)

build:                       # options of every build step
  workers: 2                 # parallel load connections (SQLite uses 1)
  drop: true                 # rebuild over an existing schema (else it is an error)

profile:                     # options of every profile step (as oltplab run)
  vus: [1, 2, 4]             # or fib:13, pow2:8, geo:256:1024:1.41, "1,2,4"
  rampup: 10s                # executed, not measured
  duration: 30s              # the measured window of each run
  repeat: 2                  # runs per virtual-user count (mean, spread; a CI from 3 on), or auto:
                             # until the 95% CI is within precision (or the ratio's, against
                             # the baseline), min_repeats to max_repeats runs
  # precision: 5%            # with repeat: auto (and min_repeats: 3, max_repeats: 10)
  interleave: true           # the whole sweep once per repeat, alternating direction; or targets:
                             # runs alternate between the targets too (A B, B A, ...), analysed
                             # as pairs beside the unpaired ratio
  # aa_check: true           # with interleave: targets, the baseline again at the end (host drift)
  checkpoint_before: true    # write dirty pages before each run
  reset_between: false       # return to the post-build state before each run
  client_sql: false          # statements from the client instead of procedures

backup:                      # options of every backup step (as oltplab backup)
  to: /var/tmp/oltplab-example/backups   # where the backups go (another device is the point)
  cycles: 3                  # backup, restore into a new instance, check it; 3 times
  method: basebackup         # PostgreSQL: basebackup or dump; MariaDB: mariadb-backup
  interval: 0s               # pause between cycles
                             # a managed instance's io_limit holds for its backups too

parallel:                    # every target at once, one synchronised window (a step over all targets)
  vus: 4                     # on each target
  rampup: 10s
  duration: 60s              # the same wall-clock interval on every target
  repeat: 3                  # windows, one after the other
  skew_tolerance: 1s         # targets' windows further apart than this are marked

neighbours:                  # noisy neighbours (a step over all targets, sharing storage)
  noisy: [disk]              # they back up in the noisy phase; the others run the load
  vus: 4
  rampup: 10s                # before each phase's measured window
  baseline: 5m               # every target loaded (default: cycles × interval)
  cycles: 10                 # backups per noisy target, one every interval,
  interval: 100s             # over a victims' window of cycles × interval
  backup: {method: basebackup}   # to: DIR (default: NAME-backups beside data_dir)

rebuild:                     # options of every rebuild step (as oltplab rebuild)
  cold: true                 # before each warm rebuild, one after a cold restart
  repeat: 2                  # cold and warm pairs (a URL target: warm only)

cpu:                         # options of every cpu step (as oltplab cpu)
  repeat: 3                  # runs of the server's and the client's loop

tpch:                        # the analytic workload (as oltplab tpch build, then tpch run):
  scale: 0.1                 # TPC-H scale factor, built when the target does not hold it
  test: both                 # power, throughput or both (QphH@Size)
  streams: 2                 # query streams of the throughput test
  repeat: 1                  # runs of the tests
  query_timeout: 10m         # a query cut off is recorded as such, never as a time
  seed: 0                    # qgen seed, the same on every target (0: from the plan's name)

baseline: disk               # every ratio is taken against it (default: the first target)

# price_list: examples/cloud-prices.csv  # optional: cloud instance prices (a CSV of instance_type,
                             # vcpus, memory_gib, price_per_hour, currency, or a subset of AWS's
                             # offer file JSON) for targets that name their instance_type

cost:                        # optional: what the report's cost table also shows
  objective_p90_ms: 50       # cost at the best step whose New-Order p90 is at most 50 ms
  target_nopm: 20000         # the cores 20,000 NOPM would need at each target's NOPM per core

targets:                     # written one by one...
  - name: tmpfs              # a managed instance: oltplab starts and stops it
    engine: postgres         # postgres, mariadb or sqlite (embedded)
    data_dir: /dev/shm/oltplab-example/tmpfs
    memory: 256MB            # the buffer pool (SQLite: its page cache)
    # port: 15432            # a loopback port of your choosing (default: a free one);
    #                        # refused when taken, one per target
  - name: disk
    engine: postgres
    data_dir: /var/tmp/oltplab-example/disk
    memory: 256MB
    # latency: {read: 4ms, write: 1ms, fsync: 6ms}  # a per-I/O delay layer under the
    #                        # directories (FUSE, as root; see instance start --help);
    #                        # 0: the same layer with zero delays, a fair baseline
    prices:                  # optional: what the target costs (see oltplab cost --help)
      currency: USD
      years: 3
      hardware: {price: 12000}
    # instance_type: m6i.large  # with price_list: the price per hour, currency and cores
    #                        # (its vCPUs, which cpus must match) come from the list;
    #                        # prices then needs only years (and storage, licences)
  - name: remote             # an external database: oltplab only connects
    url: postgres://bench@db.example.com:5432/tpcc
    password_file: ./bench.password

matrix:                      # ...or as a matrix: one target per combination
  engine: postgres           # the fields every target of the matrix shares
  data_dir: /var/tmp/oltplab-example   # each target gets DATA_DIR/TARGET
  memory: 256MB
  settings: {synchronous_commit: "on"} # further server settings
  axes:                      # instance fields with a list of values each
    cpus: ["0", "0-1"]       # the cores the server may use (cgroup cpuset)
    io_limit:                # blkio caps on the device under data_dir
      - {}                   # no cap (label "none")
      - {name: hdd, value: {read_iops: 200, write_iops: 200}}
    dram:                    # or an axis of your naming whose values each set
      - {name: 1GB, set: {memory_limit: 1GB, memory: 256MB}}   # several fields
      - {name: 2GB, set: {memory_limit: 2GB, memory: 512MB}}   # (name: optional)
  name: "cpu{cpus}-{io_limit}-{dram}"   # target names (default: the labels joined by -)

steps:                       # what runs on every target, in order
  - build
  - profile
  - profile: {vus: [8], repeat: 1}   # a step's own options override the section's
  - backup
  - rebuild                  # the largest index of ORDER-LINE, cold then warm
  - cpu                      # the single-threaded CPU calibration
  - check                    # the TPC-C consistency conditions (and TPC-H's checks on a
                             # TPC-H database): a condition that fails fails the step
  # - tpch                     # TPROC-H: in a database of its own (not beside TPC-C's tables)
  # - parallel                 # steps over all targets run with every target started
  # - neighbours
`
