package cost

import (
	"fmt"
	"math"
	"strings"
)

// Error is bad prices, or prices that cannot be compared: one line that
// names the field and says what is wrong with it
// ("prices.db_licence.pack_cores must be at least 1"). Callers show it
// as a usage error.
type Error struct {
	// Path is the field's path from the root of the document: "prices"
	// or a target name first, then the YAML keys. Empty when the error
	// is about no single field.
	Path []string
	// Msg says what is wrong, starting with a verb ("must be at least 1").
	Msg string
	// Line is the line of the field in the YAML document, or of its
	// nearest enclosing key when the field is missing; 0 when unknown.
	// ParseSheet and Locate fill it.
	Line int
}

// Field is the dotted path of the field ("prices.db_licence.pack_cores").
func (e *Error) Field() string { return strings.Join(e.Path, ".") }

// Message is the error without its line: the field and what is wrong.
func (e *Error) Message() string {
	if len(e.Path) == 0 {
		return e.Msg
	}
	return e.Field() + " " + e.Msg
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message())
	}
	return e.Message()
}

func fieldErr(path []string, key, format string, args ...any) *Error {
	p := append(append([]string(nil), path...), key)
	return &Error{Path: p, Msg: fmt.Sprintf(format, args...)}
}

// Validate checks p as the `prices` section of a plan's target; errors
// name fields as prices.SECTION.KEY.
func (p Prices) Validate() error { return p.validate([]string{"prices"}) }

// validate checks p and returns the first problem as an *Error whose
// path starts with root.
func (p Prices) validate(root []string) error {
	if p.Currency == "" {
		return fieldErr(root, "currency", "is required: an ISO 4217 code such as USD or EUR (it is never assumed)")
	}
	if !isCurrencyCode(p.Currency) {
		return fieldErr(root, "currency", "must be an ISO 4217 code of three capital letters such as USD or EUR, not %q", p.Currency)
	}
	if p.Years < 1 {
		return fieldErr(root, "years", "must be at least 1 (the period the total cost covers), not %d", p.Years)
	}
	if p.Cores < 0 {
		return fieldErr(root, "cores", "must not be negative, not %d", p.Cores)
	}
	if p.Hardware == nil && p.Cloud == nil && p.Storage == nil && p.OS == nil && p.DBLicence == nil {
		return &Error{Path: root, Msg: "has nothing priced: give at least one of hardware, cloud, storage, os, db_licence"}
	}
	checks := []func() error{
		func() error { return p.Hardware.validate(sub(root, "hardware")) },
		func() error { return p.Cloud.validate(sub(root, "cloud")) },
		func() error { return p.Storage.validate(sub(root, "storage")) },
		func() error { return p.OS.validate(sub(root, "os")) },
		func() error { return p.DBLicence.validate(sub(root, "db_licence")) },
	}
	for _, c := range checks {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

func sub(path []string, key string) []string { return append(append([]string(nil), path...), key) }

func isCurrencyCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, c := range s {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// amount checks a price or quantity: finite and not negative.
func amount(path []string, key string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fieldErr(path, key, "must be a finite number")
	}
	if v < 0 {
		return fieldErr(path, key, "must not be negative, not %s", plain(v))
	}
	return nil
}

// amounts checks several key/value pairs in order.
func amounts(path []string, kv ...any) error {
	for i := 0; i+1 < len(kv); i += 2 {
		if err := amount(path, kv[i].(string), kv[i+1].(float64)); err != nil {
			return err
		}
	}
	return nil
}

func (h *Hardware) validate(path []string) error {
	if h == nil {
		return nil
	}
	if err := amounts(path, "price", h.Price, "support_pct_per_year", h.SupportPctPerYear); err != nil {
		return err
	}
	if h.AmortisationYears < 0 {
		return fieldErr(path, "amortisation_years", "must not be negative, not %d (0 means the period's years)", h.AmortisationYears)
	}
	return nil
}

func (c *Cloud) validate(path []string) error {
	if c == nil {
		return nil
	}
	if err := amounts(path, "per_hour", c.PerHour, "hours_per_month", c.HoursPerMonth); err != nil {
		return err
	}
	if c.InstanceType != "" && c.PerHour == 0 {
		return fieldErr(path, "instance_type", "%s is priced from a price list: give one (price_list: in a plan, --price-list for oltplab cost), or per_hour", c.InstanceType)
	}
	if c.HoursPerMonth > 744 {
		return fieldErr(path, "hours_per_month", "must be at most 744 (31 days of 24 hours), not %s", plain(c.HoursPerMonth))
	}
	return nil
}

func (s *Storage) validate(path []string) error {
	if s == nil {
		return nil
	}
	if err := amounts(path, "per_gb_month", s.PerGBMonth, "gb", s.GB, "per_iops_month", s.PerIOPSMonth,
		"iops", s.IOPS, "per_mbps_month", s.PerMBpsMonth, "mbps", s.MBps); err != nil {
		return err
	}
	// A unit price without its quantity is almost certainly a quantity
	// forgotten, which would silently cost nothing.
	for _, q := range []struct {
		price    float64
		qty      float64
		priceKey string
		qtyKey   string
	}{
		{s.PerGBMonth, s.GB, "per_gb_month", "gb"},
		{s.PerIOPSMonth, s.IOPS, "per_iops_month", "iops"},
		{s.PerMBpsMonth, s.MBps, "per_mbps_month", "mbps"},
	} {
		if q.price > 0 && q.qty == 0 {
			return fieldErr(path, q.qtyKey, "is required with %s (how much is provisioned)", q.priceKey)
		}
	}
	return nil
}

func (o *OS) validate(path []string) error {
	if o == nil {
		return nil
	}
	if err := amounts(path, "price", o.Price, "per_year", o.PerYear, "support_pct_per_year", o.SupportPctPerYear); err != nil {
		return err
	}
	if o.Price > 0 && o.PerYear > 0 {
		return fieldErr(path, "per_year", "cannot be given with price: a licence is bought once (price) or subscribed to (per_year)")
	}
	if o.SupportPctPerYear > 0 && o.Price == 0 {
		return fieldErr(path, "support_pct_per_year", "needs price: support is a percentage of a perpetual licence's price")
	}
	return nil
}

func (l *DBLicence) validate(path []string) error {
	if l == nil {
		return nil
	}
	if err := amounts(path, "per_pack", l.PerPack, "support_pct_per_year", l.SupportPctPerYear); err != nil {
		return err
	}
	if l.PackCores < 1 {
		return fieldErr(path, "pack_cores", "must be at least 1 (cores per licence pack), not %d", l.PackCores)
	}
	switch {
	case l.MinCoresPerServer < 0:
		return fieldErr(path, "min_cores_per_server", "must not be negative, not %d", l.MinCoresPerServer)
	case l.MinCoresPerServer > 0 && l.MinCoresPerServer < l.PackCores:
		return fieldErr(path, "min_cores_per_server", "(%d) must not be below pack_cores (%d): the minimum is bought in whole packs",
			l.MinCoresPerServer, l.PackCores)
	case l.MinCoresPerServer%l.PackCores != 0:
		return fieldErr(path, "min_cores_per_server", "(%d) must be a multiple of pack_cores (%d): the minimum is bought in whole packs",
			l.MinCoresPerServer, l.PackCores)
	}
	if l.Cores < 0 {
		return fieldErr(path, "cores", "must not be negative, not %d", l.Cores)
	}
	if l.PerYear && l.SupportPctPerYear > 0 {
		return fieldErr(path, "support_pct_per_year", "cannot be given with per_year: support is a percentage of a perpetual licence's price")
	}
	return nil
}
