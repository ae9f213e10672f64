package fio

import "context"

// Measure prepares, runs and closes a benchmark, as the storage scenario
// does with its steps in between.
func Measure(ctx context.Context, opts Options, h Hooks) (*Result, error) {
	b, err := Prepare(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	return b.Run(ctx, h)
}
