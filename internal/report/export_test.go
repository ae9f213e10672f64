package report

// NewStep is NewStepWith without the suspect repeats, as profiles are
// summarised unless --include-suspect.
func NewStep(vus int, repeats []Repeat, latency map[string]LatencyFigures) Step {
	return NewStepWith(vus, repeats, latency, false)
}
