package instance

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/sysstat"
)

// committer runs one durable single-row transaction.
type committer func(ctx context.Context) error

// startBench starts an instance for a benchmark and returns it with a
// committer on one connection.
func startBench(b *testing.B, s Spec) (*Instance, committer, func()) {
	b.Helper()
	ctx := context.Background()
	inst, err := Start(ctx, s, nil)
	if err != nil {
		b.Fatal(err)
	}
	tg := inst.Target()
	switch s.Engine {
	case Postgres:
		conn, err := pgx.Connect(ctx, rawURL(tg, ""))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS io_probe (id bigserial PRIMARY KEY, pad text)"); err != nil {
			b.Fatal(err)
		}
		return inst, func(ctx context.Context) error {
				_, err := conn.Exec(ctx, "INSERT INTO io_probe (pad) VALUES (repeat('x', 100))")
				return err
			}, func() {
				conn.Close(ctx)
				inst.Stop(ctx)
			}
	default:
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = UserName, tg.Password.Reveal(), "tcp", tg.URL.Host, DatabaseName
		connector, err := mysql.NewConnector(cfg)
		if err != nil {
			b.Fatal(err)
		}
		db := sql.OpenDB(connector)
		db.SetMaxOpenConns(1)
		if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS io_probe (id BIGINT AUTO_INCREMENT PRIMARY KEY, pad TEXT) ENGINE=InnoDB"); err != nil {
			b.Fatal(err)
		}
		return inst, func(ctx context.Context) error {
				_, err := db.ExecContext(ctx, "INSERT INTO io_probe (pad) VALUES (REPEAT('x', 100))")
				return err
			}, func() {
				db.Close()
				inst.Stop(ctx)
			}
	}
}

// BenchmarkIOLimit measures durable single-row commits (one connection,
// INSERT in autocommit) on one managed instance per engine, without a cap
// and with a write-IOPS cap set on its cgroup: ns/op is the commit
// latency, write-IOPS and writes/commit what the instance's cgroup counted.
//
//	go test -run '^$' -bench IOLimit -benchtime 10s ./internal/instance
func BenchmarkIOLimit(b *testing.B) {
	ctx := context.Background()
	for _, e := range []Engine{Postgres, MariaDB} {
		needEngine(b, e)
		dir := filepath.Join(testRoot, "bench-"+string(e))
		inst, commit, stop := startBench(b, Spec{Name: "bench", Engine: e, DataDir: dir, Memory: 128 << 20})
		disk, err := wholeDisk(inst.devices["data"])
		if err != nil {
			b.Fatal(err)
		}
		// Capped first: a v1 throttle counts I/O only once some limit was
		// set on the device.
		for _, capIOPS := range []int64{200, 0} {
			b.Run(fmt.Sprintf("%s/write_iops_cap=%d", e, capIOPS), func(b *testing.B) {
				if err := inst.cg.setIOLimit([]string{disk}, IOLimit{WriteIOPS: capIOPS}); err != nil && capIOPS > 0 {
					b.Fatal(err)
				}
				if capIOPS == 0 {
					d, _, _ := inst.cg.dir(ctlBlkio)
					if err := writeFile(filepath.Join(d, "blkio.throttle.write_iops_device"), disk+" 0"); err != nil {
						b.Fatal(err)
					}
				}
				before, _ := inst.IOCounters()
				start := time.Now()
				b.ResetTimer()
				for n := 0; n < b.N; n++ {
					if err := commit(ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				after, _ := inst.IOCounters()
				writes := float64(after[disk].WriteIOs - before[disk].WriteIOs)
				b.ReportMetric(writes/time.Since(start).Seconds(), "write-IOPS")
				b.ReportMetric(writes/float64(b.N), "writes/commit")
			})
		}
		stop()
	}
}

// BenchmarkPostgresWriteAttribution measures how much of what PostgreSQL
// writes a cgroup v1 throttle sees: inserts into a table larger than
// shared_buffers for OLTPLAB_BENCH_DURATION (90 s), with no checkpoint
// until the end (dirty pages age past the kernel's 30 s writeback
// expiry), then a checkpoint; with oltplab's I/O settings and with
// PostgreSQL's default backend_flush_after=0. attributed is the instance
// cgroup's write bytes over the bytes PostgreSQL says it wrote (WAL bytes
// plus 8 kB per buffer written by checkpointer, background writer and
// backends); below 1, the kernel's own writeback wrote the rest,
// unthrottled.
//
//	go test -run '^$' -bench WriteAttribution -benchtime 1x ./internal/instance
func BenchmarkPostgresWriteAttribution(b *testing.B) {
	needEngine(b, Postgres)
	ctx := context.Background()
	d := 90 * time.Second
	if v := os.Getenv("OLTPLAB_BENCH_DURATION"); v != "" {
		d, _ = time.ParseDuration(v)
	}
	noCheckpoint := map[string]string{"checkpoint_timeout": "1h", "max_wal_size": "50GB"}
	for _, cfg := range []struct {
		name     string
		settings map[string]string
	}{
		{"oltplab", noCheckpoint},
		{"backend_flush_after=0", map[string]string{"checkpoint_timeout": "1h", "max_wal_size": "50GB", "backend_flush_after": "0"}},
	} {
		b.Run(cfg.name, func(b *testing.B) {
			dir := fromTemplate(b, Postgres, "attr-"+cfg.name+randomString(4))
			inst, _, stop := startBench(b, Spec{Name: "attr", Engine: Postgres, DataDir: dir, Memory: 16 << 20,
				IOLimit: IOLimit{WriteIOPS: 1 << 30}, Settings: cfg.settings}) // a cap that never binds: counters on
			defer stop()
			disk, _ := wholeDisk(inst.devices["data"])
			conn, err := pgx.Connect(ctx, rawURL(inst.Target(), ""))
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close(ctx)
			pgWritten := func() (buffers, wal float64) {
				if err := conn.QueryRow(ctx, `SELECT buffers_checkpoint + buffers_clean + buffers_backend,
					(SELECT wal_bytes FROM pg_stat_wal) FROM pg_stat_bgwriter`).Scan(&buffers, &wal); err != nil {
					b.Fatal(err)
				}
				return buffers * 8192, wal
			}
			diskWritten := func() float64 {
				f, err := os.Open("/proc/diskstats")
				if err != nil {
					return 0
				}
				defer f.Close()
				stats, _ := sysstat.ParseDiskstats(f, func(string) bool { return true })
				for _, s := range stats {
					if fmt.Sprintf("%d:%d", s.Major, s.Minor) == disk {
						return float64(s.WriteSectors) * sysstat.SectorBytes
					}
				}
				return 0
			}
			if _, err := conn.Exec(ctx, "CREATE TABLE attr (id bigserial PRIMARY KEY, pad text); CHECKPOINT"); err != nil {
				b.Fatal(err)
			}
			before, _ := inst.IOCounters()
			bufBefore, walBefore := pgWritten()
			diskBefore := diskWritten()
			for start := time.Now(); time.Since(start) < d; {
				if _, err := conn.Exec(ctx, "INSERT INTO attr (pad) SELECT repeat('x', 200) FROM generate_series(1, 2000)"); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
				b.Fatal(err)
			}
			after, _ := inst.IOCounters()
			cg := float64(after[disk].WriteBytes - before[disk].WriteBytes)
			bufAfter, walAfter := pgWritten()
			pg := bufAfter - bufBefore + walAfter - walBefore
			b.ReportMetric((bufAfter-bufBefore)/1e6, "pg-data-MB")
			b.ReportMetric((walAfter-walBefore)/1e6, "pg-wal-MB")
			b.ReportMetric(cg/1e6, "cgroup-MB")
			b.ReportMetric((diskWritten()-diskBefore)/1e6, "device-MB")
			b.ReportMetric(cg/pg, "attributed")
			b.Logf("%s: PostgreSQL wrote %.1f MB, its cgroup %.1f MB (%s)", cfg.name, pg/1e6, cg/1e6,
				strings.Join([]string{fmt.Sprintf("%.0f%%", 100*cg/pg), "attributed"}, " "))
		})
	}
}
