package cost

import (
	"fmt"
	"strings"
)

// Figure is one derived number with what a reader needs to redo it:
// its value, the value as shown (rounded, with its unit or currency),
// and the formula with the inputs substituted
// ("2 packs × 3,717 USD = 7,434 USD").
type Figure struct {
	// Name says what the figure is ("db licence (Standard)", "total
	// cost of ownership").
	Name string `json:"name"`
	// Value is the unrounded value, in Unit.
	Value float64 `json:"value"`
	// Unit is the unit of Value: a currency code, "cores", "%",
	// "USD per 1,000 NOPM", "NOPM per core".
	Unit string `json:"unit"`
	// Text is Value as shown, with its unit.
	Text string `json:"text"`
	// Formula is how Value was computed, inputs substituted.
	Formula string `json:"formula"`
}

// Ownership is the total cost of ownership of one target over its
// period, by component.
type Ownership struct {
	Currency string `json:"currency"`
	Years    int    `json:"years"`
	// Cores is the target's cores as priced and where they came from:
	// the prices' cores, else the measured ones; nil when unknown
	// (nothing priced per core needs them then).
	Cores *Figure `json:"cores,omitempty"`
	// MeasuredCores is the cores the target was measured on, as the
	// caller knows them (the CPUs a managed instance was confined to,
	// the recorded host's): what per-core throughput divides by. Nil
	// when unknown. It differs from Cores when the prices give the
	// cores of the machine priced (16) and the measurement ran on fewer
	// (a 2-core instance).
	MeasuredCores *Figure `json:"measured_cores,omitempty"`
	// LicensedCores is the cores the database licence is bought for;
	// nil without a db_licence.
	LicensedCores *Figure `json:"licensed_cores,omitempty"`
	// Components are the costs over the period that make up Total, in a
	// fixed order: hardware, hardware support, cloud, storage, os, os
	// support, db licence, db licence support; absent ones are left out.
	Components []Figure `json:"components"`
	// Total is the sum of Components: the total cost of ownership over
	// Years.
	Total Figure `json:"total"`
}

// Ownership computes the total cost of ownership of prices p over p.Years
// years. cores is the target's cores as the caller knows them, used when
// p.Cores is 0, and source says where they came from ("recorded host");
// 0 when unknown. Errors name fields as in Validate (prices.KEY).
//
// The rules, each shown in its component's formula: hardware is
// amortised straight-line (see Hardware); perpetual licences (os.price,
// a db_licence without per_year) are counted once; subscriptions, cloud
// hours, storage months and support are counted for every year of the
// period.
func (p Prices) Ownership(cores int, source string) (Ownership, error) {
	return p.ownership([]string{"prices"}, cores, source)
}

// ownership is Ownership with errors rooted at root (a target name).
func (p Prices) ownership(root []string, cores int, source string) (Ownership, error) {
	if err := p.validate(root); err != nil {
		return Ownership{}, err
	}
	cur, years := p.Currency, p.Years
	yf := float64(years)
	o := Ownership{Currency: cur, Years: years}
	if cores > 0 {
		o.MeasuredCores = coresFigure("measured cores", cores, source)
	}
	switch {
	case p.Cores > 0:
		src := "from the prices (cores)"
		if p.CoresSource != "" {
			src = p.CoresSource
		}
		o.Cores = coresFigure("cores", p.Cores, src)
	case cores > 0:
		o.Cores = coresFigure("cores", cores, source)
	}
	add := func(name string, v float64, formula string) {
		o.Components = append(o.Components, Figure{Name: name, Value: v, Unit: cur, Text: money(v, cur), Formula: formula})
	}
	period := fmt.Sprintf("%d years", years)
	if years == 1 {
		period = "1 year"
	}

	if h := p.Hardware; h != nil {
		am := h.AmortisationYears
		if am == 0 {
			am = years
		}
		v := h.Price * yf / float64(am)
		add("hardware", v, fmt.Sprintf("%s × %s of the period / %s of amortisation = %s",
			price(h.Price, cur), plural(years, "year", "years"), plural(am, "year", "years"), money(v, cur)))
		if h.SupportPctPerYear > 0 {
			v := h.SupportPctPerYear / 100 * h.Price * yf
			add("hardware support", v, fmt.Sprintf("%s%% × %s × %s = %s",
				plain(h.SupportPctPerYear), price(h.Price, cur), period, money(v, cur)))
		}
	}
	if c := p.Cloud; c != nil {
		hours := c.hoursPerMonth()
		v := c.PerHour * hours * 12 * yf
		name, from := "cloud instance", ""
		if c.InstanceType != "" {
			name = "cloud instance " + c.InstanceType
		}
		if c.Source != "" {
			from = " (" + c.Source + ")"
		}
		add(name, v, fmt.Sprintf("%s per hour%s × %s hours per month × 12 months × %s = %s",
			price(c.PerHour, cur), from, plain(hours), period, money(v, cur)))
	}
	if s := p.Storage; s != nil {
		var terms []string
		var month float64
		for _, t := range []struct {
			qty, unitPrice float64
			unit           string
		}{
			{s.GB, s.PerGBMonth, "GB"},
			{s.IOPS, s.PerIOPSMonth, "IOPS"},
			{s.MBps, s.PerMBpsMonth, "MB/s"},
		} {
			if t.unitPrice == 0 {
				continue
			}
			month += t.qty * t.unitPrice
			terms = append(terms, fmt.Sprintf("%s %s × %s", plain(t.qty), t.unit, price(t.unitPrice, cur)))
		}
		v := month * 12 * yf
		add("storage", v, fmt.Sprintf("(%s) per month × 12 months × %s = %s",
			strings.Join(orNone(terms), " + "), period, money(v, cur)))
	}
	if s := p.OS; s != nil {
		if s.PerYear > 0 {
			v := s.PerYear * yf
			add("os", v, fmt.Sprintf("%s per year × %s = %s", price(s.PerYear, cur), period, money(v, cur)))
		} else {
			add("os", s.Price, fmt.Sprintf("%s, perpetual licence counted once", price(s.Price, cur)))
		}
		if s.SupportPctPerYear > 0 {
			v := s.SupportPctPerYear / 100 * s.Price * yf
			add("os support", v, fmt.Sprintf("%s%% × %s × %s = %s",
				plain(s.SupportPctPerYear), price(s.Price, cur), period, money(v, cur)))
		}
	}
	if l := p.DBLicence; l != nil {
		base, baseText := 0, ""
		switch {
		case l.Cores > 0:
			base, baseText = l.Cores, plural(l.Cores, "core", "cores")+" (db_licence.cores)"
		case o.Cores != nil:
			base, baseText = int(o.Cores.Value), o.Cores.Text
		default:
			return Ownership{}, fieldErr(root, "cores",
				"is required: the per-core db_licence needs the target's cores (or set db_licence.cores)")
		}
		lc := l.LicensedCores(base)
		o.LicensedCores = coresFigure("licensed cores", lc, "")
		o.LicensedCores.Formula = fmt.Sprintf("max(%s minimum per server, ceil(%s / %s per pack) × %d) = %s",
			plural(l.minCores(), "core", "cores"), baseText, plural(l.PackCores, "core", "cores"), l.PackCores, o.LicensedCores.Text)
		packs := lc / l.PackCores
		name := "db licence"
		if l.Edition != "" {
			name += " (" + l.Edition + ")"
		}
		perPack := fmt.Sprintf("%s / %s per pack = %s × %s", plural(lc, "licensed core", "licensed cores"),
			plural(l.PackCores, "core", "cores"), plural(packs, "pack", "packs"), price(l.PerPack, cur))
		if l.PerYear {
			v := float64(packs) * l.PerPack * yf
			add(name, v, fmt.Sprintf("%s per year × %s = %s", perPack, period, money(v, cur)))
		} else {
			v := float64(packs) * l.PerPack
			add(name, v, fmt.Sprintf("%s = %s", perPack, money(v, cur)))
			if l.SupportPctPerYear > 0 {
				sv := l.SupportPctPerYear / 100 * v * yf
				add(name+" support", sv, fmt.Sprintf("%s%% × %s × %s = %s",
					plain(l.SupportPctPerYear), money(v, cur), period, money(sv, cur)))
			}
		}
	}

	var total float64
	var terms []string
	for _, c := range o.Components {
		total += c.Value
		terms = append(terms, c.Text+" "+c.Name)
	}
	o.Total = Figure{Name: "total cost of ownership over " + period, Value: total, Unit: cur, Text: money(total, cur),
		Formula: fmt.Sprintf("%s = %s", strings.Join(terms, " + "), money(total, cur))}
	return o, nil
}

func coresFigure(name string, n int, source string) *Figure {
	f := &Figure{Name: name, Value: float64(n), Unit: "cores", Text: plural(n, "core", "cores")}
	if source != "" {
		f.Formula = f.Text + ", " + source
	}
	return f
}

func orNone(terms []string) []string {
	if len(terms) == 0 {
		return []string{"nothing priced"}
	}
	return terms
}
