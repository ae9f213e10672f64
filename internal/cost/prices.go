package cost

// Prices are what one target (one database server or VM, with its
// storage and licences) costs. Every amount is in Currency. Sections
// that do not apply are left out: a bought server has Hardware, a cloud
// instance has Cloud, and either may have Storage, OS and DBLicence.
//
// Amounts are float64 in whole currency units (3717 means 3,717 USD),
// not integer cents: unit prices are often fractions of a cent (0.0416
// USD per hour, 0.005 USD per IOPS-month), every figure is a handful of
// products and sums of such inputs, and float64 carries 15 significant
// digits, so results are exact to the cent far beyond any server's
// price. Results are rounded to the cent only when they are shown.
//
// Prices is a self-contained YAML document (snake_case keys): a prices
// file maps target names to it, and a plan file carries one per target
// under `prices`.
type Prices struct {
	// Currency is the ISO 4217 code of every amount below (USD, EUR,
	// GBP, ...). Required: oltplab never assumes one.
	Currency string `yaml:"currency" json:"currency"`
	// Years is the period, in whole years, that the total cost of
	// ownership covers: yearly costs are counted Years times, hardware
	// for Years of its amortisation. Required, at least 1.
	Years int `yaml:"years" json:"years"`
	// Cores is the number of cores the database server (or VM) had when
	// it was measured: the per-core licence and NOPM per core are taken
	// from it. 0 means the caller knows it (a plan's target, or the
	// recorded host of a local database).
	Cores int `yaml:"cores,omitempty" json:"cores,omitempty"`
	// CoresSource says where Cores came from when the prices file did
	// not give them (a price list's vCPUs); set by PriceList.Apply.
	CoresSource string `yaml:"-" json:"cores_source,omitempty"`

	Hardware  *Hardware  `yaml:"hardware,omitempty" json:"hardware,omitempty"`
	Cloud     *Cloud     `yaml:"cloud,omitempty" json:"cloud,omitempty"`
	Storage   *Storage   `yaml:"storage,omitempty" json:"storage,omitempty"`
	OS        *OS        `yaml:"os,omitempty" json:"os,omitempty"`
	DBLicence *DBLicence `yaml:"db_licence,omitempty" json:"db_licence,omitempty"`
}

// Hardware is a server bought outright.
//
// Amortisation is straight-line: over a period of Years the hardware
// costs Price × Years / AmortisationYears. When the period is longer
// than the amortisation the server is taken to be replaced at the same
// price, so it keeps costing Price / AmortisationYears a year.
type Hardware struct {
	// Price is the purchase price of the server and whatever was bought
	// with it (disks, controllers), in Currency.
	Price float64 `yaml:"price" json:"price"`
	// AmortisationYears is the number of years the price is written off
	// over; 0 means Prices.Years (the whole price falls in the period).
	AmortisationYears int `yaml:"amortisation_years,omitempty" json:"amortisation_years,omitempty"`
	// SupportPctPerYear is a yearly hardware support contract as a
	// percentage of Price (12 means 12% of Price each year).
	SupportPctPerYear float64 `yaml:"support_pct_per_year,omitempty" json:"support_pct_per_year,omitempty"`
}

// DefaultHoursPerMonth is 24 × 365 / 12, the month cloud price lists use.
const DefaultHoursPerMonth = 730

// Cloud is an instance paid by the hour.
type Cloud struct {
	// PerHour is the price of the instance for one hour, in Currency.
	PerHour float64 `yaml:"per_hour" json:"per_hour"`
	// HoursPerMonth is how many hours a month the instance runs; 0 means
	// DefaultHoursPerMonth (always on).
	HoursPerMonth float64 `yaml:"hours_per_month,omitempty" json:"hours_per_month,omitempty"`
	// InstanceType names the instance in a price list (PriceList.Apply
	// fills PerHour from it); without a list it is only shown.
	InstanceType string `yaml:"instance_type,omitempty" json:"instance_type,omitempty"`
	// Source is where PerHour came from (the instance type and the price
	// list), for the formula's footnote; set by PriceList.Apply.
	Source string `yaml:"-" json:"source,omitempty"`
}

// Storage is provisioned storage paid by the month: by capacity, and
// where the offer charges for them, by provisioned IOPS and bandwidth.
type Storage struct {
	// PerGBMonth is the price of one GB for one month, in Currency; GB
	// is the provisioned capacity in GB.
	PerGBMonth float64 `yaml:"per_gb_month,omitempty" json:"per_gb_month,omitempty"`
	GB         float64 `yaml:"gb,omitempty" json:"gb,omitempty"`
	// PerIOPSMonth is the price of one provisioned IOPS for one month,
	// in Currency; IOPS is the number provisioned.
	PerIOPSMonth float64 `yaml:"per_iops_month,omitempty" json:"per_iops_month,omitempty"`
	IOPS         float64 `yaml:"iops,omitempty" json:"iops,omitempty"`
	// PerMBpsMonth is the price of one provisioned MB/s of throughput
	// for one month, in Currency; MBps is the number provisioned.
	PerMBpsMonth float64 `yaml:"per_mbps_month,omitempty" json:"per_mbps_month,omitempty"`
	MBps         float64 `yaml:"mbps,omitempty" json:"mbps,omitempty"`
}

// OS is the operating system licence: bought once (Price) or as a yearly
// subscription (PerYear), not both.
type OS struct {
	// Price is a perpetual licence, counted once in the period, in
	// Currency.
	Price float64 `yaml:"price,omitempty" json:"price,omitempty"`
	// PerYear is a subscription, counted once per year of the period,
	// in Currency.
	PerYear float64 `yaml:"per_year,omitempty" json:"per_year,omitempty"`
	// SupportPctPerYear is yearly support on a perpetual licence as a
	// percentage of Price.
	SupportPctPerYear float64 `yaml:"support_pct_per_year,omitempty" json:"support_pct_per_year,omitempty"`
}

// DBLicence is a database licence sold per core, in packs of PackCores
// cores, with at least MinCoresPerServer cores licensed per server or
// VM. Licensed cores are max(MinCoresPerServer, ceil(cores / PackCores)
// × PackCores).
type DBLicence struct {
	// Edition names what is bought ("Standard", "Enterprise"); it is
	// shown beside the licence, and PerPack is that edition's price.
	Edition string `yaml:"edition,omitempty" json:"edition,omitempty"`
	// PerPack is the price of one pack of PackCores cores, in Currency:
	// a perpetual licence, or with PerYear the yearly subscription.
	PerPack float64 `yaml:"per_pack" json:"per_pack"`
	// PackCores is the number of cores in one pack (2 for SQL Server).
	// Required, at least 1.
	PackCores int `yaml:"pack_cores" json:"pack_cores"`
	// MinCoresPerServer is the fewest cores that can be licensed for one
	// server or VM (4 for SQL Server): a multiple of PackCores; 0 means
	// one pack.
	MinCoresPerServer int `yaml:"min_cores_per_server,omitempty" json:"min_cores_per_server,omitempty"`
	// Cores overrides the cores to license when they differ from the
	// target's (licensing every core of the host under a VM); 0 means
	// the target's cores.
	Cores int `yaml:"cores,omitempty" json:"cores,omitempty"`
	// PerYear makes PerPack a yearly subscription, counted once per year
	// of the period; otherwise the licence is perpetual and counted once.
	PerYear bool `yaml:"per_year,omitempty" json:"per_year,omitempty"`
	// SupportPctPerYear is yearly support on a perpetual licence
	// (Software Assurance, for instance) as a percentage of its price.
	SupportPctPerYear float64 `yaml:"support_pct_per_year,omitempty" json:"support_pct_per_year,omitempty"`
}

// hoursPerMonth is HoursPerMonth with its default.
func (c Cloud) hoursPerMonth() float64 {
	if c.HoursPerMonth == 0 {
		return DefaultHoursPerMonth
	}
	return c.HoursPerMonth
}

// minCores is MinCoresPerServer with its default of one pack.
func (l DBLicence) minCores() int {
	if l.MinCoresPerServer == 0 {
		return l.PackCores
	}
	return l.MinCoresPerServer
}

// LicensedCores is the number of cores to license for a server of cores
// cores: whole packs, and never fewer than the minimum per server. l
// must be valid (PackCores at least 1; see Prices.Validate).
func (l DBLicence) LicensedCores(cores int) int {
	if l.PackCores < 1 {
		return max(l.MinCoresPerServer, cores)
	}
	packs := (cores + l.PackCores - 1) / l.PackCores
	return max(l.minCores(), packs*l.PackCores)
}
