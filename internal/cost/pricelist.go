package cost

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// PriceList is a list of cloud instance types with their hourly prices,
// read from a file (ParsePriceList), so that a target names its instance
// type (Cloud.InstanceType) instead of typing its price.
type PriceList struct {
	// Source names the file, for the formulas' footnotes.
	Source   string
	Currency string
	Types    []InstanceType
}

// InstanceType is one row of a PriceList.
type InstanceType struct {
	Name      string
	VCPUs     int
	MemoryGiB float64
	PerHour   float64
}

// MaxPriceListBytes bounds a price list file: a provider's list of one
// region's on-demand Linux instances is a few megabytes; its whole list
// of every region and product is gigabytes, and is to be cut down first.
const MaxPriceListBytes = 64 << 20

// csvColumns are the columns a CSV price list must have (in any order;
// other columns are ignored).
var csvColumns = []string{"instance_type", "vcpus", "memory_gib", "price_per_hour", "currency"}

// ParsePriceList reads a price list in one of two documented public
// formats, told apart by the first character:
//
//   - CSV (RFC 4180) with a header row naming at least the columns
//     instance_type, vcpus, memory_gib, price_per_hour and currency (one
//     currency for the whole list); lines starting with # are comments,
//     other columns (region, source) are ignored:
//
//     instance_type,vcpus,memory_gib,price_per_hour,currency
//     m6i.large,2,8,0.096,USD
//
//   - JSON: a subset of AWS's Price List Bulk API offer file
//     (https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/reading-an-offer.html):
//     "products" (SKU → {"attributes": {"instanceType", "vcpu",
//     "memory": "8 GiB"}}) and "terms" → "OnDemand" (SKU → term →
//     "priceDimensions" → {"unit": "Hrs", "pricePerUnit": {"USD":
//     "0.096"}}). Products of another operating system than Linux,
//     tenancy than Shared, with pre-installed software or a capacity
//     status other than Used are left out where the attributes say so;
//     what remains must name each instance type once (one region).
//
// name is the file's name, for errors and footnotes. Every mistake is
// one line naming the file and the line (CSV) or the SKU (JSON).
func ParsePriceList(name string, data []byte) (PriceList, error) {
	if len(data) > MaxPriceListBytes {
		return PriceList{}, fmt.Errorf("price list %s: %d bytes, at most %d: keep one region's instance types", name, len(data), MaxPriceListBytes)
	}
	var l PriceList
	var err error
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		l, err = parseOfferJSON(data)
	} else {
		l, err = parsePriceCSV(data)
	}
	if err != nil {
		return PriceList{}, fmt.Errorf("price list %s: %w", name, err)
	}
	if len(l.Types) == 0 {
		return PriceList{}, fmt.Errorf("price list %s: no instance types", name)
	}
	l.Source = name
	return l, nil
}

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

func parsePriceCSV(data []byte) (PriceList, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.Comment = '#'
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err != nil {
		return PriceList{}, fmt.Errorf("read the header row: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	for _, c := range csvColumns {
		if _, ok := col[c]; !ok {
			return PriceList{}, fmt.Errorf("header row: no column %s (want %s)", c, strings.Join(csvColumns, ","))
		}
	}
	var l PriceList
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return PriceList{}, err
		}
		line, _ := r.FieldPos(0)
		field := func(c string) string {
			if i := col[c]; i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		t := InstanceType{Name: field("instance_type")}
		bad := func(c, want string) error {
			return fmt.Errorf("line %d: %s %q: want %s", line, c, field(c), want)
		}
		if t.Name == "" {
			return PriceList{}, bad("instance_type", "a name")
		}
		if t.VCPUs, err = strconv.Atoi(field("vcpus")); err != nil || t.VCPUs < 1 {
			return PriceList{}, bad("vcpus", "a whole number, at least 1")
		}
		if t.MemoryGiB, err = strconv.ParseFloat(field("memory_gib"), 64); err != nil || !(t.MemoryGiB > 0) || math.IsInf(t.MemoryGiB, 0) {
			return PriceList{}, bad("memory_gib", "a positive number of GiB")
		}
		if t.PerHour, err = strconv.ParseFloat(field("price_per_hour"), 64); err != nil || !(t.PerHour > 0) || math.IsInf(t.PerHour, 0) {
			return PriceList{}, bad("price_per_hour", "a positive price")
		}
		cur := field("currency")
		if !currencyCode.MatchString(cur) {
			return PriceList{}, bad("currency", "an ISO 4217 code such as USD")
		}
		if l.Currency == "" {
			l.Currency = cur
		} else if cur != l.Currency {
			return PriceList{}, fmt.Errorf("line %d: currency %s, but earlier rows are in %s: one currency per list", line, cur, l.Currency)
		}
		if l.Lookup(t.Name) != nil {
			return PriceList{}, fmt.Errorf("line %d: instance type %s is listed twice", line, t.Name)
		}
		l.Types = append(l.Types, t)
	}
	return l, nil
}

// offerFile is the part of an AWS Price List offer file oltplab reads.
type offerFile struct {
	Products map[string]struct {
		ProductFamily string            `json:"productFamily"`
		Attributes    map[string]string `json:"attributes"`
	} `json:"products"`
	Terms struct {
		OnDemand map[string]map[string]struct {
			PriceDimensions map[string]struct {
				Unit         string            `json:"unit"`
				PricePerUnit map[string]string `json:"pricePerUnit"`
			} `json:"priceDimensions"`
		} `json:"OnDemand"`
	} `json:"terms"`
}

// offerFilter are the attributes whose other values leave a product out:
// the plain on-demand Linux instance.
var offerFilter = map[string]string{"operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used"}

func parseOfferJSON(data []byte) (PriceList, error) {
	var f offerFile
	if err := json.Unmarshal(data, &f); err != nil {
		return PriceList{}, fmt.Errorf("not an offer file (JSON with products and terms): %w", err)
	}
	var l PriceList
	skuOf := map[string]string{}
	for _, sku := range slices.Sorted(maps.Keys(f.Products)) {
		p := f.Products[sku]
		a := p.Attributes
		if a["instanceType"] == "" || (p.ProductFamily != "" && p.ProductFamily != "Compute Instance") {
			continue
		}
		skip := false
		for k, want := range offerFilter {
			if v, ok := a[k]; ok && v != want {
				skip = true
			}
		}
		if skip {
			continue
		}
		t := InstanceType{Name: a["instanceType"]}
		if prev, dup := skuOf[t.Name]; dup {
			return PriceList{}, fmt.Errorf("products %s and %s are both instance type %s: keep one product per instance type (one region)", prev, sku, t.Name)
		}
		skuOf[t.Name] = sku
		var err error
		if t.VCPUs, err = strconv.Atoi(strings.TrimSpace(a["vcpu"])); err != nil || t.VCPUs < 1 {
			return PriceList{}, fmt.Errorf("product %s: vcpu %q: want a whole number, at least 1", sku, a["vcpu"])
		}
		mem, _ := strings.CutSuffix(strings.TrimSpace(a["memory"]), " GiB")
		if t.MemoryGiB, err = strconv.ParseFloat(strings.ReplaceAll(mem, ",", ""), 64); err != nil || !(t.MemoryGiB > 0) {
			return PriceList{}, fmt.Errorf("product %s: memory %q: want GiB such as \"8 GiB\"", sku, a["memory"])
		}
		terms := f.Terms.OnDemand[sku]
		var prices []string
		for _, term := range terms {
			for _, d := range term.PriceDimensions {
				if d.Unit != "Hrs" {
					continue
				}
				for cur, v := range d.PricePerUnit {
					prices = append(prices, cur+" "+v)
				}
			}
		}
		if len(prices) != 1 {
			return PriceList{}, fmt.Errorf("product %s (%s): want one on-demand price per hour (terms.OnDemand), found %d", sku, t.Name, len(prices))
		}
		cur, v, _ := strings.Cut(prices[0], " ")
		if t.PerHour, err = strconv.ParseFloat(v, 64); err != nil || !(t.PerHour > 0) || math.IsInf(t.PerHour, 0) {
			return PriceList{}, fmt.Errorf("product %s (%s): price per hour %q: want a positive price", sku, t.Name, v)
		}
		if !currencyCode.MatchString(cur) {
			return PriceList{}, fmt.Errorf("product %s (%s): currency %q: want an ISO 4217 code", sku, t.Name, cur)
		}
		if l.Currency == "" {
			l.Currency = cur
		} else if cur != l.Currency {
			return PriceList{}, fmt.Errorf("product %s (%s): currency %s, but others are in %s: one currency per list", sku, t.Name, cur, l.Currency)
		}
		l.Types = append(l.Types, t)
	}
	slices.SortFunc(l.Types, func(a, b InstanceType) int { return strings.Compare(a.Name, b.Name) })
	return l, nil
}

// Lookup returns the instance type of that name, nil when the list has
// none.
func (l PriceList) Lookup(name string) *InstanceType {
	for i := range l.Types {
		if l.Types[i].Name == name {
			return &l.Types[i]
		}
	}
	return nil
}

// Names lists the instance types, in the list's order.
func (l PriceList) Names() []string {
	out := make([]string, len(l.Types))
	for i, t := range l.Types {
		out[i] = t.Name
	}
	return out
}

// Apply prices p's cloud instance from the list: p.Cloud.InstanceType
// names the type; its hourly price (and the source, for the formula's
// footnote) fill p.Cloud, its vCPUs p.Cores when p says none, and the
// list's currency p.Currency when p says none. A price per hour already
// given, another currency, or other cores are errors: one figure, one
// source. A p without an instance type is left alone.
func (l PriceList) Apply(p *Prices) error {
	if p.Cloud == nil || p.Cloud.InstanceType == "" {
		return nil
	}
	c := p.Cloud
	t := l.Lookup(c.InstanceType)
	if t == nil {
		return &Error{Path: []string{"cloud", "instance_type"}, Msg: fmt.Sprintf("%q is not in the price list %s (%d types: %s)",
			c.InstanceType, l.Source, len(l.Types), strings.Join(firstN(l.Names(), 8), ", "))}
	}
	if c.PerHour != 0 {
		return &Error{Path: []string{"cloud", "per_hour"}, Msg: fmt.Sprintf("comes from the price list %s for instance_type %s: leave it out", l.Source, t.Name)}
	}
	switch {
	case p.Currency == "":
		p.Currency = l.Currency
	case p.Currency != l.Currency:
		return &Error{Path: []string{"currency"}, Msg: fmt.Sprintf("%s, but the price list %s is in %s", p.Currency, l.Source, l.Currency)}
	}
	switch {
	case p.Cores == 0:
		p.Cores, p.CoresSource = t.VCPUs, fmt.Sprintf("the vCPUs of %s in %s", t.Name, l.Source)
	case p.Cores != t.VCPUs:
		return &Error{Path: []string{"cores"}, Msg: fmt.Sprintf("%d, but instance type %s has %d vCPUs", p.Cores, t.Name, t.VCPUs)}
	}
	c.PerHour = t.PerHour
	c.Source = fmt.Sprintf("%s: %d vCPUs, %s GiB, from %s", t.Name, t.VCPUs, plain(t.MemoryGiB), l.Source)
	return nil
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(slices.Clip(s[:n]), "...")
	}
	return s
}
