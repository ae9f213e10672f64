package report

// NewStep is NewStepWith without the suspect and contaminated repeats,
// as profiles are summarised unless --include-suspect or
// --include-contaminated.
func NewStep(vus int, repeats []Repeat, latency map[string]LatencyFigures) Step {
	return NewStepWith(vus, repeats, latency, Include{})
}
