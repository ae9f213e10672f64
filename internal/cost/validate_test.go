package cost

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// good is a valid price list that each case below breaks in one place.
func good() Prices {
	return Prices{Currency: "USD", Years: 3, Cores: 4,
		Hardware:  &Hardware{Price: 20000},
		DBLicence: &DBLicence{Edition: "Standard", PerPack: 3717, PackCores: 2, MinCoresPerServer: 4}}
}

// TestValidate: every bad price is refused with one line naming its
// field.
func TestValidate(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(p *Prices)
		want   string
	}{
		{"missing currency", func(p *Prices) { p.Currency = "" },
			"prices.currency is required: an ISO 4217 code such as USD or EUR (it is never assumed)"},
		{"currency symbol", func(p *Prices) { p.Currency = "$" },
			`prices.currency must be an ISO 4217 code of three capital letters such as USD or EUR, not "$"`},
		{"lower-case currency", func(p *Prices) { p.Currency = "usd" },
			`prices.currency must be an ISO 4217 code of three capital letters such as USD or EUR, not "usd"`},
		{"years 0", func(p *Prices) { p.Years = 0 },
			"prices.years must be at least 1 (the period the total cost covers), not 0"},
		{"years negative", func(p *Prices) { p.Years = -2 },
			"prices.years must be at least 1 (the period the total cost covers), not -2"},
		{"negative cores", func(p *Prices) { p.Cores = -1 }, "prices.cores must not be negative, not -1"},
		{"nothing priced", func(p *Prices) { p.Hardware, p.DBLicence = nil, nil },
			"prices has nothing priced: give at least one of hardware, cloud, storage, os, db_licence"},
		{"negative hardware", func(p *Prices) { p.Hardware.Price = -26641 },
			"prices.hardware.price must not be negative, not -26,641"},
		{"NaN hardware", func(p *Prices) { p.Hardware.Price = math.NaN() },
			"prices.hardware.price must be a finite number"},
		{"negative amortisation", func(p *Prices) { p.Hardware.AmortisationYears = -1 },
			"prices.hardware.amortisation_years must not be negative, not -1 (0 means the period's years)"},
		{"negative per hour", func(p *Prices) { p.Cloud = &Cloud{PerHour: -0.5} },
			"prices.cloud.per_hour must not be negative, not -0.5"},
		{"too many hours", func(p *Prices) { p.Cloud = &Cloud{PerHour: 1, HoursPerMonth: 800} },
			"prices.cloud.hours_per_month must be at most 744 (31 days of 24 hours), not 800"},
		{"storage price without GB", func(p *Prices) { p.Storage = &Storage{PerGBMonth: 0.1} },
			"prices.storage.gb is required with per_gb_month (how much is provisioned)"},
		{"negative IOPS price", func(p *Prices) { p.Storage = &Storage{PerIOPSMonth: -0.005, IOPS: 3000} },
			"prices.storage.per_iops_month must not be negative, not -0.005"},
		{"IOPS price without IOPS", func(p *Prices) { p.Storage = &Storage{PerIOPSMonth: 0.005} },
			"prices.storage.iops is required with per_iops_month (how much is provisioned)"},
		{"MB/s price without MB/s", func(p *Prices) { p.Storage = &Storage{PerMBpsMonth: 0.04} },
			"prices.storage.mbps is required with per_mbps_month (how much is provisioned)"},
		{"os bought and subscribed", func(p *Prices) { p.OS = &OS{Price: 1000, PerYear: 300} },
			"prices.os.per_year cannot be given with price: a licence is bought once (price) or subscribed to (per_year)"},
		{"os support on a subscription", func(p *Prices) { p.OS = &OS{PerYear: 300, SupportPctPerYear: 10} },
			"prices.os.support_pct_per_year needs price: support is a percentage of a perpetual licence's price"},
		{"negative pack price", func(p *Prices) { p.DBLicence.PerPack = -3717 },
			"prices.db_licence.per_pack must not be negative, not -3,717"},
		{"pack size 0", func(p *Prices) { p.DBLicence.PackCores = 0 },
			"prices.db_licence.pack_cores must be at least 1 (cores per licence pack), not 0"},
		{"pack size negative", func(p *Prices) { p.DBLicence.PackCores = -2 },
			"prices.db_licence.pack_cores must be at least 1 (cores per licence pack), not -2"},
		{"minimum below pack size", func(p *Prices) { p.DBLicence.MinCoresPerServer = 1 },
			"prices.db_licence.min_cores_per_server (1) must not be below pack_cores (2): the minimum is bought in whole packs"},
		{"minimum not whole packs", func(p *Prices) { p.DBLicence.MinCoresPerServer = 5 },
			"prices.db_licence.min_cores_per_server (5) must be a multiple of pack_cores (2): the minimum is bought in whole packs"},
		{"negative minimum", func(p *Prices) { p.DBLicence.MinCoresPerServer = -4 },
			"prices.db_licence.min_cores_per_server must not be negative, not -4"},
		{"negative licensed cores", func(p *Prices) { p.DBLicence.Cores = -8 },
			"prices.db_licence.cores must not be negative, not -8"},
		{"negative support", func(p *Prices) { p.DBLicence.SupportPctPerYear = -25 },
			"prices.db_licence.support_pct_per_year must not be negative, not -25"},
		{"support on a subscription", func(p *Prices) { p.DBLicence.PerYear, p.DBLicence.SupportPctPerYear = true, 25 },
			"prices.db_licence.support_pct_per_year cannot be given with per_year: support is a percentage of a perpetual licence's price"},
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("the good prices: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := good()
			c.break_(&p)
			err := p.Validate()
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v (%T), want a *cost.Error", err, err)
			}
			if got := err.Error(); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is more than one line: %q", err)
			}
		})
	}
}

// TestLicensedCores: whole packs, never below the minimum per server.
func TestLicensedCores(t *testing.T) {
	cases := []struct {
		pack, min int
		cores     []int
		want      []int
	}{
		{2, 4, []int{1, 2, 3, 4, 5, 6, 16}, []int{4, 4, 4, 4, 6, 6, 16}},
		{2, 0, []int{1, 2, 3}, []int{2, 2, 4}}, // no minimum: one pack
		{1, 0, []int{1, 3, 7}, []int{1, 3, 7}},
		{4, 8, []int{1, 8, 9, 13}, []int{8, 8, 12, 16}},
	}
	for _, c := range cases {
		l := DBLicence{PackCores: c.pack, MinCoresPerServer: c.min}
		for i, cores := range c.cores {
			if got := l.LicensedCores(cores); got != c.want[i] {
				t.Errorf("pack %d, minimum %d, %d cores: got %d licensed, want %d", c.pack, c.min, cores, got, c.want[i])
			}
		}
	}
}

// TestLicenceCost: the licence of 1 to 5 cores in 2-core packs with a
// 4-core minimum is bought in whole packs.
func TestLicenceCost(t *testing.T) {
	for cores, packs := range map[int]float64{1: 2, 2: 2, 3: 2, 4: 2, 5: 3} {
		p := Prices{Currency: "EUR", Years: 1, Cores: cores,
			DBLicence: &DBLicence{PerPack: 1000, PackCores: 2, MinCoresPerServer: 4}}
		o, err := p.Ownership(0, "")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := o.Total.Value, packs*1000; got != want {
			t.Errorf("%d cores: got %v, want %v (%v packs)", cores, got, want, packs)
		}
	}
}

// TestLicenceNeedsCores: a per-core licence without the target's cores
// is an error that names the field to set; the caller's cores are used
// when the prices have none.
func TestLicenceNeedsCores(t *testing.T) {
	p := good()
	p.Cores = 0
	_, err := p.Ownership(0, "")
	want := "prices.cores is required: the per-core db_licence needs the target's cores (or set db_licence.cores)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	o, err := p.Ownership(6, "logical CPUs of the recorded host")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.LicensedCores.Formula, "max(4 cores minimum per server, ceil(6 cores / 2 cores per pack) × 2) = 6 cores"; got != want {
		t.Errorf("licensed cores formula:\n got %q\nwant %q", got, want)
	}
	if got, want := o.Cores.Formula, "6 cores, logical CPUs of the recorded host"; got != want {
		t.Errorf("cores formula: got %q, want %q", got, want)
	}
	// db_licence.cores overrides the target's cores (every core of the
	// host under a VM).
	p.DBLicence.Cores = 24
	o, err = p.Ownership(6, "logical CPUs of the recorded host")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.LicensedCores.Value, 24.0; got != want {
		t.Errorf("licensed cores with db_licence.cores 24: got %v, want %v", got, want)
	}
}

// TestComponents: every kind of cost, with its formula.
func TestComponents(t *testing.T) {
	p := Prices{Currency: "EUR", Years: 3,
		Hardware:  &Hardware{Price: 10000, AmortisationYears: 5, SupportPctPerYear: 10},
		Cloud:     &Cloud{PerHour: 0.5},
		Storage:   &Storage{PerGBMonth: 0.1, GB: 500, PerIOPSMonth: 0.005, IOPS: 3000, PerMBpsMonth: 0.04, MBps: 125},
		OS:        &OS{Price: 1000, SupportPctPerYear: 20},
		DBLicence: &DBLicence{Edition: "Enterprise", PerPack: 1500, PackCores: 2, PerYear: true, Cores: 3},
	}
	o, err := p.Ownership(0, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name    string
		value   float64
		formula string
	}{
		{"hardware", 10000.0 * 3 / 5,
			"10,000 EUR × 3 years of the period / 5 years of amortisation = 6,000 EUR"},
		{"hardware support", 0.10 * 10000 * 3,
			"10% × 10,000 EUR × 3 years = 3,000 EUR"},
		{"cloud instance", 0.5 * 730 * 12 * 3,
			"0.5 EUR per hour × 730 hours per month × 12 months × 3 years = 13,140 EUR"},
		{"storage", (500*0.1 + 3000*0.005 + 125*0.04) * 12 * 3,
			"(500 GB × 0.1 EUR + 3,000 IOPS × 0.005 EUR + 125 MB/s × 0.04 EUR) per month × 12 months × 3 years = 2,520 EUR"},
		{"os", 1000,
			"1,000 EUR, perpetual licence counted once"},
		{"os support", 0.20 * 1000 * 3,
			"20% × 1,000 EUR × 3 years = 600 EUR"},
		{"db licence (Enterprise)", 2 * 1500 * 3,
			"4 licensed cores / 2 cores per pack = 2 packs × 1,500 EUR per year × 3 years = 9,000 EUR"},
	}
	if len(o.Components) != len(want) {
		t.Fatalf("components: got %d %+v, want %d", len(o.Components), o.Components, len(want))
	}
	var total float64
	for i, w := range want {
		c := o.Components[i]
		total += w.value
		if c.Name != w.name || !near(c.Value, w.value) || c.Formula != w.formula {
			t.Errorf("component %d:\n got %s = %v: %q\nwant %s = %v: %q", i, c.Name, c.Value, c.Formula, w.name, w.value, w.formula)
		}
	}
	if !near(o.Total.Value, total) {
		t.Errorf("total: got %v, want %v", o.Total.Value, total)
	}
	if got, want := o.Total.Text, "35,260 EUR"; got != want {
		t.Errorf("total text: got %q, want %q", got, want)
	}
	if o.Cores != nil {
		t.Errorf("cores: got %+v, want unknown", o.Cores)
	}
}

// TestDefaultsAndPeriods: the default hours per month and one-year
// wording; hardware over a period longer than its amortisation keeps
// costing its yearly share.
func TestDefaultsAndPeriods(t *testing.T) {
	p := Prices{Currency: "GBP", Years: 1, Cloud: &Cloud{PerHour: 0.0416, HoursPerMonth: 200}}
	o, err := p.Ownership(0, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.Components[0].Formula,
		"0.0416 GBP per hour × 200 hours per month × 12 months × 1 year = 99.84 GBP"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	p = Prices{Currency: "USD", Years: 6, Hardware: &Hardware{Price: 9000, AmortisationYears: 3}}
	o, err = p.Ownership(0, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.Total.Value, 18000.0; got != want {
		t.Errorf("6 years of hardware amortised over 3: got %v, want %v", got, want)
	}
}
