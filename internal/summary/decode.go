package summary

import (
	"encoding/json"
	"fmt"

	"github.com/oltplab/oltplab/internal/store"
)

// Summary is a stored summary of any kind, as Decode returns it.
type Summary interface {
	// Headline is the one line that best describes the result: `results
	// list`, `results show` and an experiment's schedule show it.
	Headline() string
	// Sampling is what the samplers saw while the result was measured;
	// nil for a kind that samples nothing.
	Sampling() *Monitor
}

var (
	_ Summary = Run{}
	_ Summary = MonitorRun{}
	_ Summary = Build{}
	_ Summary = Check{}
	_ Summary = Storage{}
	_ Summary = Backup{}
	_ Summary = Rebuild{}
	_ Summary = CPU{}
	_ Summary = ParallelWindow{}
	_ Summary = Neighbours{}
	_ Summary = TPCHBuild{}
	_ Summary = TPCHCheck{}
	_ Summary = TPCH{}
)

// versions are the summary format each kind writes today. A kind not
// named here writes version 0: its summary carries no summary_version.
var versions = map[store.Kind]int{store.KindRun: RunVersion}

// Decode reads a stored summary of kind k, of any version up to the one
// this oltplab writes; a newer one is refused rather than misread. On an
// error the Summary is nil.
func Decode(k store.Kind, raw []byte) (Summary, error) {
	switch k {
	case store.KindRun:
		return orNil(DecodeRun(raw))
	case store.KindMonitor:
		return orNil(DecodeMonitorRun(raw))
	case store.KindBuild:
		return orNil(DecodeBuild(raw))
	case store.KindCheck:
		return orNil(DecodeCheck(raw))
	case store.KindStorage:
		return orNil(DecodeStorage(raw))
	case store.KindBackup:
		return orNil(DecodeBackup(raw))
	case store.KindRebuild:
		return orNil(DecodeRebuild(raw))
	case store.KindCPU:
		return orNil(DecodeCPU(raw))
	case store.KindParallel:
		return orNil(DecodeParallel(raw))
	case store.KindNeighbours:
		return orNil(DecodeNeighbours(raw))
	case store.KindTPCHBuild:
		return orNil(DecodeTPCHBuild(raw))
	case store.KindTPCHCheck:
		return orNil(DecodeTPCHCheck(raw))
	case store.KindTPCH:
		return orNil(DecodeTPCH(raw))
	}
	return nil, fmt.Errorf("no summary of kind %q", k)
}

// orNil is s as a Summary, nil when err is not.
func orNil[T Summary](s T, err error) (Summary, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}

// DecodeMonitorRun reads a monitor's stored summary.
func DecodeMonitorRun(raw []byte) (MonitorRun, error) {
	return decode[MonitorRun](store.KindMonitor, raw)
}

// DecodeBuild reads a build's stored summary.
func DecodeBuild(raw []byte) (Build, error) { return decode[Build](store.KindBuild, raw) }

// DecodeCheck reads a consistency check's stored summary.
func DecodeCheck(raw []byte) (Check, error) { return decode[Check](store.KindCheck, raw) }

// DecodeStorage reads a storage benchmark's stored summary.
func DecodeStorage(raw []byte) (Storage, error) { return decode[Storage](store.KindStorage, raw) }

// DecodeBackup reads a backup scenario's stored summary.
func DecodeBackup(raw []byte) (Backup, error) { return decode[Backup](store.KindBackup, raw) }

// DecodeRebuild reads an index rebuild's stored summary.
func DecodeRebuild(raw []byte) (Rebuild, error) { return decode[Rebuild](store.KindRebuild, raw) }

// DecodeCPU reads a CPU calibration's stored summary.
func DecodeCPU(raw []byte) (CPU, error) { return decode[CPU](store.KindCPU, raw) }

// DecodeParallel reads a synchronised window's stored summary.
func DecodeParallel(raw []byte) (ParallelWindow, error) {
	return decode[ParallelWindow](store.KindParallel, raw)
}

// DecodeNeighbours reads a noisy-neighbour scenario's stored summary.
func DecodeNeighbours(raw []byte) (Neighbours, error) {
	return decode[Neighbours](store.KindNeighbours, raw)
}

// DecodeTPCHBuild reads a TPC-H build's stored summary.
func DecodeTPCHBuild(raw []byte) (TPCHBuild, error) {
	return decode[TPCHBuild](store.KindTPCHBuild, raw)
}

// DecodeTPCHCheck reads a TPC-H check's stored summary.
func DecodeTPCHCheck(raw []byte) (TPCHCheck, error) {
	return decode[TPCHCheck](store.KindTPCHCheck, raw)
}

// DecodeTPCH reads the stored summary of a run of TPC-H's tests.
func DecodeTPCH(raw []byte) (TPCH, error) { return decode[TPCH](store.KindTPCH, raw) }

// decode reads a summary of kind k into T after checking its version.
func decode[T any](k store.Kind, raw []byte) (T, error) {
	var v T
	var head struct {
		Version int `json:"summary_version"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return v, err
	}
	if err := checkVersion(k, head.Version); err != nil {
		return v, err
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, err
	}
	return v, nil
}

// checkVersion refuses a summary of kind k written in a format newer than
// this oltplab's.
func checkVersion(k store.Kind, version int) error {
	if known := versions[k]; version > known {
		return fmt.Errorf("%s summary of format %d, written by a newer oltplab (this one reads up to %d)", k, version, known)
	}
	return nil
}
