package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/oltplab/oltplab/internal/profile"
)

// Repeat is how many times a profile measures each step: a count, or
// auto: until the 95% interval of the step's mean NOPM (or of its ratio
// to the baseline's) is within a precision, or its budget of runs ends
// (profile.StopRule). A plan writes `repeat: 3` or `repeat: auto`; `run`
// takes `--repeat 3` or `--repeat auto`.
type Repeat struct {
	N    int  // the count; 0 with Auto
	Auto bool // measure until the stopping rule ends the step
}

// UnmarshalText reads "auto" or a count of at least 1.
func (r *Repeat) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if strings.EqualFold(s, "auto") {
		*r = Repeat{Auto: true}
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want a number of runs or auto, got %q", s)
	}
	if n < 1 {
		return fmt.Errorf("must be at least 1 (or auto), got %d", n)
	}
	*r = Repeat{N: n}
	return nil
}

// MarshalText writes the repeat as UnmarshalText reads it.
func (r Repeat) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

func (r Repeat) String() string {
	if r.Auto {
		return "auto"
	}
	return strconv.Itoa(r.N)
}

// Set and Type make a Repeat a command-line flag (pflag.Value).
func (r *Repeat) Set(s string) error { return r.UnmarshalText([]byte(s)) }

// Type names the flag's value in help.
func (r *Repeat) Type() string { return "N|auto" }

// Precision is the relative half-width an adaptive step aims at,
// written as a percentage: 5%.
type Precision float64

// UnmarshalText reads a percentage such as 5% or 2.5%.
func (p *Precision) UnmarshalText(b []byte) error {
	v, err := profile.ParsePrecision(string(b))
	if err != nil {
		return err
	}
	*p = Precision(v)
	return nil
}

// MarshalText writes the precision as UnmarshalText reads it.
func (p Precision) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

func (p Precision) String() string { return profile.FormatPrecision(float64(p)) }

// Set and Type make a Precision a command-line flag (pflag.Value).
func (p *Precision) Set(s string) error { return p.UnmarshalText([]byte(s)) }

// Type names the flag's value in help.
func (p *Precision) Type() string { return "PERCENT" }

// Adaptive is the stopping rule of a profile whose repeat is auto, as a
// plan's profile step and `run` give it:
//
//	repeat: auto
//	precision: 5%      # the 95% interval within 5% of the estimate
//	min_repeats: 3     # never stop before (at least 3)
//	max_repeats: 10    # the budget of runs per step
type Adaptive struct {
	Precision  Precision `yaml:"precision"`
	MinRepeats int       `yaml:"min_repeats"`
	MaxRepeats int       `yaml:"max_repeats"`
}

// DefaultAdaptive is the rule when a plan gives none of its fields.
func DefaultAdaptive() Adaptive {
	return Adaptive{Precision: Precision(profile.DefaultPrecision), MinRepeats: profile.MinRepeats, MaxRepeats: profile.DefaultMaxRepeats}
}

// Rule is the stopping rule.
func (a Adaptive) Rule() profile.StopRule {
	return profile.StopRule{Precision: float64(a.Precision), Min: a.MinRepeats, Max: a.MaxRepeats}
}

// Validate checks the rule for a repeat r: with a count, only the
// defaults may be given (they would not be used).
func (a Adaptive) Validate(r Repeat) error {
	if !r.Auto {
		if a != DefaultAdaptive() {
			return fmt.Errorf("precision, min_repeats and max_repeats go with repeat: auto (repeat is %d)", r.N)
		}
		return nil
	}
	return a.Rule().Validate()
}

// Runs is the most runs a step takes: the count, or the budget.
func (a Adaptive) Runs(r Repeat) int {
	if r.Auto {
		return a.MaxRepeats
	}
	return r.N
}
