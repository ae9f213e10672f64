package scenario

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/fio"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/latency"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/tpchload"
)

// filled returns a T with every exported field, at any depth, set to a
// value of its own (slices and maps of one element), so that a field the
// stored form lacks shows in its JSON.
func filled[T any](t *testing.T) T {
	var v T
	n := 0
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		n++
		switch v.Kind() {
		case reflect.String:
			v.SetString(fmt.Sprintf("s%d", n))
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			v.SetInt(int64(n))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			v.SetUint(uint64(n))
		case reflect.Float32, reflect.Float64:
			v.SetFloat(float64(n) + 0.25)
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem())
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			fill(v.Index(0))
		case reflect.Array:
			for i := range v.Len() {
				fill(v.Index(i))
			}
		case reflect.Map:
			m := reflect.MakeMap(v.Type())
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k)
			fill(e)
			m.SetMapIndex(k, e)
			v.Set(m)
		case reflect.Struct:
			if v.Type() == reflect.TypeFor[time.Time]() {
				v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, n, time.UTC)))
				return
			}
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					fill(v.Field(i))
				}
			}
		}
	}
	fill(reflect.ValueOf(&v).Elem())
	return v
}

// sameJSON fails unless old and stored marshal to the same bytes.
func sameJSON(t *testing.T, what string, old, stored any) {
	t.Helper()
	a, err := json.Marshal(old)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	b, err := json.Marshal(stored)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if string(a) != string(b) {
		t.Errorf("%s: the stored form differs from what was stored before:\n got %s\nwant %s", what, b, a)
	}
}

// TestStoredForms: where a summary stores a measuring package's own type
// (fio's profile result, a managed instance's restart, I/O counters and
// backup tools, the build's result), the stored form declared in
// internal/summary marshals exactly as the type itself did, field for
// field: a field added to the measuring type without its stored form
// fails here.
func TestStoredForms(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	pr := filled[fio.ProfileResult](t)
	sp := storageProfile(t0, pr, nil)
	sameJSON(t, "fio profile", struct {
		fio.ProfileResult
		Window summary.Span        `json:"window"`
		Host   sampler.StepSummary `json:"host"`
	}{pr, sp.Window, sp.Host}, sp)
	pr.Options, pr.Directions = nil, nil
	sp = storageProfile(t0, pr, nil)
	sameJSON(t, "fio profile without options", struct {
		fio.ProfileResult
		Window summary.Span        `json:"window"`
		Host   sampler.StepSummary `json:"host"`
	}{pr, sp.Window, sp.Host}, sp)

	rr := filled[instance.RestartReport](t)
	sameJSON(t, "restart", rr, storedRestart(rr))

	io := filled[instance.IOCounters](t)
	sameJSON(t, "server I/O", io, sampler.IOCount{ReadIOs: io.ReadIOs, WriteIOs: io.WriteIOs, ReadBytes: io.ReadBytes, WriteBytes: io.WriteBytes})

	res := filled[load.Result](t)
	sameJSON(t, "build", res, BuildSummary(res))

	hres := filled[tpchload.Result](t)
	sameJSON(t, "TPC-H build", hres, TPCHBuildSummary(hres))

	info := BackupInfo{Method: instance.BaseBackup, Tools: new(filled[instance.BackupperInfo](t))}
	sameJSON(t, "backup tools", info, storedInfo(info))
	info.Tools.Controls = []instance.Control{}
	sameJSON(t, "backup tools without controls", info, storedInfo(info))
	sameJSON(t, "online backup", BackupInfo{Method: instance.Online}, storedInfo(BackupInfo{Method: instance.Online}))

	ls := filled[latency.Summary](t)
	for _, text := range []string{"0", "read=4ms,write=1ms,fsync=lognormal 6ms p99 30ms with 1% at 50ms,jitter=10%,on=wal"} {
		set, err := latency.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := storedLayer(set, ls)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, "latency layer "+text, struct {
			Settings latency.Settings `json:"settings"`
			latency.Summary
		}{set, ls}, stored)
	}
}
