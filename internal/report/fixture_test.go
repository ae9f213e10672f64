package report

import (
	"maps"
	"math"
	"strconv"
	"time"

	"github.com/oltplab/oltplab/internal/cost"
	"github.com/oltplab/oltplab/internal/profile"
)

// fixtureSecret is a password placed in a target: it must appear in no
// output.
const fixtureSecret = "s3cret-Pa55"

// fixture is the Input every golden and browser test renders: two
// profiles (NVMe, SATA) of 4 steps with 3 repeats each. It exercises a
// knee, a high-variation step, a partial repeat, a suspect repeat (which
// would be the SATA peak if it counted), a ratio whose CI
// contains 1 (1 VU) and ratios whose CI excludes it, differing and
// missing context keys, and strings that need escaping. The NVMe profile
// has host figures at every step and the per-second series of one run;
// the SATA profile has neither (measured without samplers).
func fixture() Input {
	type rep struct{ nopm, tpm float64 }
	type stepData struct {
		vus     int
		repeats []rep
		partial []rep
		lat     map[string]LatencyFigures
		suspect []rep
	}
	mk := func(id int64, label, target string, ctx map[string]string, firstRun int64, data []stepData) Profile {
		p := Profile{ID: id, Label: label, Target: target, Dialect: "postgres", Mode: "tproc-c (no keying or think time)", Context: ctx}
		run := firstRun
		for _, d := range data {
			var rs []Repeat
			for _, r := range d.repeats {
				rs = append(rs, Repeat{RunID: run, NOPM: r.nopm, TPM: r.tpm})
				run++
			}
			for _, r := range d.partial {
				rs = append(rs, Repeat{RunID: run, NOPM: r.nopm, TPM: r.tpm, Partial: true})
				run++
			}
			for _, r := range d.suspect {
				rs = append(rs, Repeat{RunID: run, NOPM: r.nopm, TPM: r.tpm, Suspect: true,
					Reasons: []string{"NOPM from the database (9000 new orders) is +37.0% off the driver's own count (6569)"}})
				run++
			}
			p.Steps = append(p.Steps, NewStep(d.vus, rs, d.lat))
		}
		p.Verdict = profile.Analyze(p.StepFigures("new_order"), 0)
		return p
	}
	lat := func(no95, no99, pay95, pay99 float64) map[string]LatencyFigures {
		return map[string]LatencyFigures{
			"new_order": {P95Millis: no95, P99Millis: no99},
			"payment":   {P95Millis: pay95, P99Millis: pay99},
		}
	}
	host := func(storage string) map[string]string {
		return map[string]string{
			"host.cpu":           "Intel Xeon Gold 6338 @ 2.00GHz",
			"host.cores":         "16",
			"host.memory":        "32 GiB",
			"host.storage":       storage,
			"db.version":         "PostgreSQL 15.8",
			"db.shared_buffers":  "8GB",
			"param.warehouses":   "100",
			"param.vus":          "1,2,4,8",
			"param.duration":     "5m0s",
			"param.rampup":       "2m0s",
			"param.stored_procs": "true",
		}
	}
	sataCtx := host("sda (Samsung 870 EVO) <SATA>")
	sataCtx["db.wal_compression"] = "on"

	nvme := mk(1, "nvme", "postgres://bench:"+fixtureSecret+"@127.0.0.1:5432/tpcc", host("nvme0n1 (Samsung PM9A3)"), 101, []stepData{
		{1, []rep{{9800, 22600}, {10000, 23000}, {10200, 23400}}, nil, lat(4.1, 6.0, 2.0, 3.1), nil},
		{2, []rep{{19000, 43700}, {19500, 44850}, {19900, 45770}}, nil, lat(4.3, 6.4, 2.1, 3.3), nil},
		{4, []rep{{35000, 80500}, {36000, 82800}, {35500, 81650}}, nil, lat(4.9, 7.8, 2.5, 4.0), nil},
		{8, []rep{{36500, 83950}, {36900, 84870}, {37200, 85560}}, nil, lat(9.8, 15.6, 5.1, 8.2), nil},
	})
	sata := mk(2, "sata", "host=127.0.0.1 user=bench password="+fixtureSecret+" dbname=tpcc", sataCtx, 201, []stepData{
		{1, []rep{{9700, 22300}, {10100, 23230}, {9900, 22770}}, nil, lat(4.3, 6.6, 2.2, 3.5), nil},
		{2, []rep{{15000, 34500}, {15800, 36340}, {15400, 35420}}, nil, lat(5.4, 8.8, 2.9, 4.8), nil},
		{4, []rep{{20000, 46000}, {24000, 55200}, {28000, 64400}}, nil, lat(9.9, 19.5, 5.0, 9.9), nil},
		{8, []rep{{21000, 48300}, {21500, 49450}}, []rep{{9000, 20700}}, lat(21.0, 42.0, 10.2, 20.5), []rep{{29000, 66700}}},
	})
	nvmeHost := []HostFigures{
		{CPUBusyPct: 14, CPUIdlePct: 84.5, CPUIOWaitPct: 1.5, DiskIOPS: 820, DiskMBps: 9.6, DiskLatencyMillis: 0.21, DiskLatencyP99Millis: 0.48,
			WaitSharePct:  map[string]float64{"cpu": 62, "data_io": 8, "log_io": 18, "lock": 1, "latch": 1, "client": 10},
			AvgWaitMillis: map[string]float64{"WAL sync": 0.35, "data file read": 0.12}},
		{CPUBusyPct: 27, CPUIdlePct: 70.2, CPUIOWaitPct: 2.8, DiskIOPS: 1580, DiskMBps: 18.4, DiskLatencyMillis: 0.24, DiskLatencyP99Millis: 0.61,
			WaitSharePct:  map[string]float64{"cpu": 58, "data_io": 9, "log_io": 20, "lock": 2, "latch": 2, "client": 9},
			AvgWaitMillis: map[string]float64{"WAL sync": 0.38, "data file read": 0.13}},
		{CPUBusyPct: 52, CPUIdlePct: 41.5, CPUIOWaitPct: 6.5, DiskIOPS: 2900, DiskMBps: 33.8, DiskLatencyMillis: 0.33, DiskLatencyP99Millis: 1.05,
			WaitSharePct:  map[string]float64{"cpu": 49, "data_io": 11, "log_io": 24, "lock": 6, "latch": 4, "client": 6},
			AvgWaitMillis: map[string]float64{"WAL sync": 0.51, "data file read": 0.15, "row lock wait": 1.9}},
		{CPUBusyPct: 71, CPUIdlePct: 16, CPUIOWaitPct: 13, DiskIOPS: 3120, DiskMBps: 36.5, DiskLatencyMillis: 0.92, DiskLatencyP99Millis: 3.8,
			WaitSharePct:  map[string]float64{"cpu": 31, "data_io": 14, "log_io": 29, "lock": 17, "latch": 6, "client": 3},
			AvgWaitMillis: map[string]float64{"WAL sync": 1.2, "data file read": 0.31, "row lock wait": 4.7}},
	}
	for i := range nvme.Steps {
		h := nvmeHost[i]
		h.DataDevice = "nvme0n1"
		h.DiskReadIOPS, h.DiskWriteIOPS = h.DiskIOPS*0.3, h.DiskIOPS*0.7
		h.OwnIO, h.OwnReadIOPS, h.OwnWriteIOPS = true, h.DiskReadIOPS*0.9, h.DiskWriteIOPS*0.6
		nvme.Steps[i].Host = &h
	}
	nvme.Series = fixtureSeries(8, 111)
	nvme.Limits = map[string]float64{"write_iops": 3500}
	return Input{
		Title:     "NVMe vs SATA <ssd> & co",
		Generated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Version:   "v0.1.0-test",
		Profiles:  []Profile{nvme, sata},
	}
}

// fixtureSeries is two minutes of one run, second by second, with a
// checkpoint-like dip at 71–78 s: throughput falls while iowait, disk
// IOPS and latency and transaction p99 rise. Second 30 had no disk I/O
// and no completed transaction (latencies 0: gaps in the charts).
func fixtureSeries(vus int, runID int64) *StepSeries {
	round := func(x float64) float64 { return math.Round(x*100) / 100 }
	s := &StepSeries{VUs: vus, RunID: runID}
	for t := 1; t <= 120; t++ {
		f := float64(t)
		p := SeriesPoint{
			TSeconds:          f,
			TPM:               round(85000 + 1500*math.Sin(f/7)),
			P99Millis:         round(15.6 + 1.5*math.Sin(f/5)),
			CPUBusyPct:        round(71 + 3*math.Sin(f/9)),
			CPUIOWaitPct:      round(12 + 2*math.Cos(f/6)),
			DiskIOPS:          round(3100 + 200*math.Sin(f/5)),
			DiskLatencyMillis: round(0.9 + 0.1*math.Sin(f/4)),
		}
		if t >= 71 && t <= 78 {
			p.TPM, p.P99Millis, p.CPUBusyPct, p.CPUIOWaitPct, p.DiskIOPS, p.DiskLatencyMillis = round(p.TPM*0.6), 45, 45, 30, 9500, 3.5
		}
		if t == 30 {
			p.P99Millis, p.DiskLatencyMillis = 0, 0
		}
		p.NOPM = round(p.TPM * 0.435)
		s.Points = append(s.Points, p)
	}
	return s
}

// experimentFixture is an experiment of the fixture's two profiles as
// targets: a build step with a table of its own, a profile step with both
// profiles, a third target whose profile failed, and target contexts that
// differ in a few keys.
func experimentFixture() Input {
	in := fixture()
	ctx := func(dev, mem string) map[string]string {
		return map[string]string{"host.cpu": "Intel Xeon Gold 6338", "instance.memory": mem, "storage.name": dev,
			"database.settings.shared_buffers": mem, "database.version": "PostgreSQL 15.8"}
	}
	in.Title = ""
	in.Experiment = &Experiment{
		ID: 7, Name: "storage <tiers>", Status: "ok", Baseline: "nvme",
		Description: "NVMe against SATA at 4 warehouses.",
		Targets: []ExperimentTarget{
			{Name: "nvme", Display: "postgres on /mnt/nvme/nvme (managed)", Dialect: "postgres", Context: ctx("nvme0n1", "8GB")},
			{Name: "sata", Display: "postgres://bench:" + fixtureSecret + "@10.0.0.2/tpcc", Dialect: "postgres", Context: ctx("sda", "8GB")},
			{Name: "hdd", Display: "postgres on /mnt/hdd/hdd (managed)", Dialect: "postgres", Context: ctx("sdb", "2GB")},
		},
		Schedule: []ScheduleEntry{
			{Seq: 1, Target: "nvme", Step: "build", State: "done", Attempts: 1, Headline: "4 warehouse(s), 1,234,567 rows in 80.0 s"},
			{Seq: 2, Target: "nvme", Step: "profile", State: "done", Attempts: 2, Headline: "peak NOPM 36,867 at 8 VUs"},
			{Seq: 3, Target: "sata", Step: "build", State: "done", Attempts: 1},
			{Seq: 4, Target: "sata", Step: "profile", State: "done", Attempts: 1},
			{Seq: 5, Target: "hdd", Step: "build", State: "done", Attempts: 1},
			{Seq: 6, Target: "hdd", Step: "profile", State: "failed", Attempts: 1, Error: "run: connection lost"},
		},
		Sections: []Section{
			{Title: "Step 1: build", Kind: "build", Tables: []Table{{Title: "Builds", Header: []string{"Target", "Rows", "Seconds"},
				Right: []bool{false, true, true},
				Rows:  [][]string{{"nvme", "1,234,567", "80.0"}, {"sata", "1,234,567", "142.5"}, {"hdd", "1,234,567", "611.0"}}}}},
			{Title: "Step 2: profile 1,2,4,8 VUs × 3 repeats", Kind: "profile", Note: "hdd has no measured run.", Profiles: in.Profiles},
			neighboursFixture(),
		},
	}
	// sata's run of the same step, second by second, for the overlays:
	// slower, and one second it counted no new order.
	sata := fixtureSeries(8, 213)
	for i := range sata.Points {
		pt := &sata.Points[i]
		pt.TPM, pt.NOPM, pt.P99Millis, pt.DiskLatencyMillis, pt.CPUBusyPct = pt.TPM*0.58, pt.NOPM*0.58, pt.P99Millis*2.7, pt.DiskLatencyMillis*2.5, pt.CPUBusyPct*0.7
	}
	sata.Points[40].NOPM = 0
	in.Experiment.Sections[1].Profiles[1].Series = sata
	// nvme was measured with repeat: auto: every step stopped at its
	// third run, within 6%.
	nvme := &in.Experiment.Sections[1].Profiles[0]
	nvme.Stopping = &profile.Stopping{Rule: profile.StopRule{Precision: 0.06, Min: 3, Max: 8}}
	for _, s := range nvme.Steps {
		nvme.Stopping.Stops = append(nvme.Stopping.Stops, profile.Stop{Users: s.VUs, Runs: 3, Counted: 3,
			Reason: profile.StopPrecision, HalfWidth: s.NOPM.HalfWidth(), Of: "mean NOPM"})
	}
	// A storage benchmark and a backup step, as step kinds of their own
	// report them: they land in their parts of the study, in its order.
	in.Experiment.Sections = append(in.Experiment.Sections,
		Section{Title: "Step 4: backup, 3 cycles", Kind: "backup", Tables: []Table{{Title: "Backups", Header: []string{"Target", "Seconds", "MB/s"},
			Right: []bool{false, true, true}, Rows: [][]string{{"nvme", "265", "593"}, {"sata", "512", "307"}}}}},
		Section{Title: "Step 0: storage bench", Kind: "fio", Part: "storage", Tables: []Table{{Title: "fio", Header: []string{"Target", "Profile", "IOPS"},
			Right: []bool{false, false, true}, Rows: [][]string{{"nvme", "4k-random-70-30-qd32", "412,000"}}}}})
	for i := range in.Experiment.Targets {
		t := &in.Experiment.Targets[i]
		t.FullContext = maps.Clone(t.Context)
		t.FullContext["tool.version"] = "v0.1.0-test"
		t.FullContext["instance.id"] = strconv.Itoa(40 + i)
		t.FullContext["database.target"] = t.Display // sata's holds the password: the appendix must blank it
	}
	in.Experiment.Method = []string{"Scale: 4 warehouses.", "Step 1: build", "Step 2: profile 1,2,4,8 VUs × 3 repeats"}
	in.Experiment.Cost = fixtureCost()
	in.Profiles = nil
	return in
}

// fixtureCost prices nvme and sata (hdd has none) with SQL Server
// Standard's licence terms, over what the fixture's profiles measured.
func fixtureCost() *CostSection {
	licence := &cost.DBLicence{Edition: "Standard", PerPack: 3717, PackCores: 2, MinCoresPerServer: 4}
	in := fixture()
	var targets []cost.Target
	for i, name := range []string{"nvme", "sata"} {
		t := cost.Target{Name: name, Prices: cost.Prices{Currency: "USD", Years: 3, Cores: 4 * (i + 1),
			Hardware: &cost.Hardware{Price: 26641 - 1000*float64(i)}, DBLicence: licence}}
		for _, s := range in.Profiles[i].Steps {
			if s.NOPM.N > 0 {
				t.Steps = append(t.Steps, cost.Step{VUs: s.VUs, NOPM: s.NOPM.Mean, TPM: s.TPM.Mean, NewOrderP90Millis: s.Latency["new_order"].P99Millis * 0.8})
			}
		}
		targets = append(targets, t)
	}
	tab, err := cost.Compute(targets, cost.Options{Baseline: "nvme", ObjectiveP90Millis: 10, TargetNOPM: 100000})
	if err != nil {
		panic(err) // fixed inputs
	}
	return &CostSection{Table: tab, Step: "Step 2: profile 1,2,4,8 VUs × 3 repeats", Unpriced: []string{"hdd"}}
}

// neighboursFixture is a step that draws its own time series: a shared
// device's IOPS and latency over two phases, with two backups marked.
func neighboursFixture() Section {
	var x []float64
	var iops, lat []*float64
	for i := range 120 {
		x = append(x, float64(i+1))
		v, l := 800+40*math.Sin(float64(i)/5), 1.2
		if (i >= 70 && i < 82) || (i >= 95 && i < 108) {
			v, l = 2400, 6.5 // a backup reads and writes the device
		}
		iops, lat = append(iops, &v), append(lat, &l)
	}
	return Section{Title: "Step 3: neighbours", Kind: "neighbours",
		Tables: []Table{{Title: "Instances", Header: []string{"Instance", "Phase", "NOPM"}, Right: []bool{false, false, true},
			Rows: [][]string{{"n1", "baseline", "1,200"}, {"n1", "noisy", "950"}}}},
		Charts: []TimeChart{{Title: "Shared device sda", XLabel: "seconds since the step started", YLabel: "IOPS", Y2Label: "latency ms",
			X: x, Series: []TimeSeries{{Label: "IOPS", Values: iops}, {Label: "latency (ms)", Values: lat, Right: true, Dash: true}},
			Spans: []Span{{Label: "baseline", From: 5, To: 60, Kind: SpanPhase}, {Label: "noisy", From: 65, To: 118, Kind: SpanPhase},
				{Label: "backup 1 (n3)", From: 70, To: 82, Kind: SpanEvent}, {Label: "backup 2 (n3)", From: 95, To: 108, Kind: SpanEvent}}}}}
}
