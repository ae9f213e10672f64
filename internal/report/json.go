package report

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/oltplab/oltplab/internal/profile"
)

// jsonSchemaVersion is bumped when a field of the JSON document changes
// meaning or disappears; added fields do not bump it. 2: intervals from
// three runs on, on the log scale for positive figures; a ratio's
// "unbounded" is gone (its interval is never unbounded now).
const jsonSchemaVersion = 2

type jsonDoc struct {
	SchemaVersion int       `json:"schema_version"`
	Title         string    `json:"title"`
	Generated     time.Time `json:"generated"`
	Version       string    `json:"version"`
	Profiles      []Profile `json:"profiles"`
	Monitors      []Monitor `json:"monitors,omitempty"`
	// Experiment is an experiment's report (targets, schedule, one
	// section per step of its plan, cost); Profiles is then empty.
	Experiment *Experiment `json:"experiment,omitempty"`
	// Comparisons holds, for every profile after the first, the ratio of
	// its step means to the first profile's (steps both ran).
	Comparisons     []jsonComparison `json:"comparisons"`
	ContextDiffKeys []string         `json:"context_diff_keys"`
	RatioMethod     string           `json:"ratio_method"`
}

type jsonComparison struct {
	ProfileID  int64            `json:"profile_id"`
	BaselineID int64            `json:"baseline_id"`
	Steps      []jsonRatioAtVUs `json:"steps"`
}

type jsonRatioAtVUs struct {
	VUs  int             `json:"vus"`
	NOPM profile.RatioCI `json:"nopm"`
	TPM  profile.RatioCI `json:"tpm"`
}

// redactedExperiment is a copy of e whose targets' and sections'
// profiles' display forms are redacted, as the other renderers show them.
func redactedExperiment(e *Experiment) *Experiment {
	c := *e
	c.Targets = append([]ExperimentTarget(nil), e.Targets...)
	for i := range c.Targets {
		c.Targets[i].Display = redactTarget(c.Targets[i].Display)
	}
	c.Sections = append([]Section(nil), e.Sections...)
	for i := range c.Sections {
		ps := append([]Profile(nil), c.Sections[i].Profiles...)
		for j := range ps {
			ps[j].Target = redactTarget(ps[j].Target)
		}
		c.Sections[i].Profiles = ps
	}
	return &c
}

// ratioMethod names how a ratio's interval is computed.
const ratioMethod = "95% interval of the ratio of two independent means on the log scale (delta method, " +
	"Welch-Satterthwaite degrees of freedom), from 3 runs a side"

// JSON writes the input (targets redacted, steps sorted by virtual
// users) with the derived comparisons and differing context keys, as one
// indented JSON document.
func JSON(w io.Writer, in Input) error {
	v := newView(in)
	doc := jsonDoc{
		SchemaVersion:   jsonSchemaVersion,
		Title:           in.Title,
		Generated:       in.Generated,
		Version:         in.Version,
		Profiles:        make([]Profile, 0, len(v.profiles)),
		Monitors:        v.monitors,
		Comparisons:     []jsonComparison{},
		ContextDiffKeys: []string{},
		RatioMethod:     ratioMethod,
	}
	if e := in.Experiment; e != nil {
		doc.Experiment = redactedExperiment(e)
	}
	for _, k := range v.ctxKeys {
		if v.diff[k] {
			doc.ContextDiffKeys = append(doc.ContextDiffKeys, k)
		}
	}
	for pi, p := range v.profiles {
		doc.Profiles = append(doc.Profiles, p.Profile)
		if pi == 0 {
			continue
		}
		c := jsonComparison{ProfileID: p.ID, BaselineID: v.profiles[0].ID, Steps: []jsonRatioAtVUs{}}
		for _, s := range p.Steps {
			if rn, rt, ok := v.ratios(pi, s.VUs); ok {
				c.Steps = append(c.Steps, jsonRatioAtVUs{VUs: s.VUs, NOPM: rn, TPM: rt})
			}
		}
		doc.Comparisons = append(doc.Comparisons, c)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	return nil
}
