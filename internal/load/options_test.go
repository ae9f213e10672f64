package load

import (
	"fmt"
	"testing"

	"github.com/oltplab/oltplab/internal/dialect"
)

func TestOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		o       Options
		wantErr bool
	}{
		{Options{Warehouses: 1, Workers: 1}, false},
		{Options{Warehouses: 100, Workers: 8, Drop: true}, false},
		{Options{Warehouses: 0, Workers: 1}, true},
		{Options{Warehouses: -3, Workers: 1}, true},
		{Options{Warehouses: 1, Workers: 0}, true},
		{Options{Warehouses: 0, Workers: 0}, true},
	} {
		t.Run(fmt.Sprintf("w=%d,workers=%d", c.o.Warehouses, c.o.Workers), func(t *testing.T) {
			err := c.o.Validate()
			if got := err != nil; got != c.wantErr {
				t.Errorf("Validate() = %v, want error: %v", err, c.wantErr)
			}
		})
	}
}

func TestEffectiveWorkers(t *testing.T) {
	for _, c := range []struct {
		warehouses, workers, maxLoad, want int
	}{
		{10, 4, 0, 4},
		{2, 4, 0, 2},  // never more workers than warehouses
		{10, 4, 1, 1}, // SQLite: one writer
		{10, 4, 3, 3},
		{1, 1, 0, 1},
	} {
		t.Run(fmt.Sprintf("w=%d,workers=%d,max=%d", c.warehouses, c.workers, c.maxLoad), func(t *testing.T) {
			o := Options{Warehouses: c.warehouses, Workers: c.workers}
			if got := o.EffectiveWorkers(dialect.Capabilities{MaxLoadWorkers: c.maxLoad}); got != c.want {
				t.Errorf("EffectiveWorkers: got %d, want %d", got, c.want)
			}
		})
	}
}

func TestExpectedRows(t *testing.T) {
	// TPC-C 4.3.3.1: 100,000 items; per warehouse 1 + 100,000 stock + 10
	// districts + 30,000 customers, history rows and orders + 9,000
	// new-orders + about 300,000 order lines.
	const perWarehouse = 1 + 100000 + 10 + 3*30000 + 9000 + 300000
	for _, w := range []int{1, 10} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			if got, want := ExpectedRows(w), int64(100000+w*perWarehouse); got != want {
				t.Errorf("ExpectedRows(%d): got %d, want %d", w, got, want)
			}
		})
	}
}
