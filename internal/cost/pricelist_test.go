package cost

import (
	"os"
	"strings"
	"testing"
)

// TestParsePriceListCSV: the example price list parses, every type with
// its vCPUs, memory and price; the header's comment lines are skipped
// and the region column ignored.
func TestParsePriceListCSV(t *testing.T) {
	data, err := os.ReadFile("../../examples/cloud-prices.csv")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParsePriceList("cloud-prices.csv", data)
	if err != nil {
		t.Fatalf("ParsePriceList: %v", err)
	}
	if l.Currency != "USD" || len(l.Types) != 8 {
		t.Errorf("got %s, %d types; want USD, 8", l.Currency, len(l.Types))
	}
	m := l.Lookup("m6i.xlarge")
	if m == nil || m.VCPUs != 4 || m.MemoryGiB != 16 || m.PerHour != 0.192 {
		t.Errorf("m6i.xlarge: got %+v", m)
	}
}

func TestParsePriceListErrors(t *testing.T) {
	const header = "instance_type,vcpus,memory_gib,price_per_hour,currency\n"
	for _, c := range []struct{ name, data, want string }{
		{"no column", "instance_type,vcpus,memory_gib,currency\na,1,1,USD\n", "no column price_per_hour"},
		{"bad vcpus", header + "a,two,8,0.1,USD\n", "line 2: vcpus \"two\": want a whole number"},
		{"zero price", header + "# a comment\na,2,8,0,USD\n", "line 3: price_per_hour \"0\": want a positive price"},
		{"bad currency", header + "a,2,8,0.1,dollars\n", "currency \"dollars\": want an ISO 4217 code"},
		{"two currencies", header + "a,2,8,0.1,USD\nb,2,8,0.1,EUR\n", "line 3: currency EUR, but earlier rows are in USD"},
		{"listed twice", header + "a,2,8,0.1,USD\na,4,8,0.2,USD\n", "line 3: instance type a is listed twice"},
		{"empty", header, "no instance types"},
		{"not JSON", "{\"products\": [", "not an offer file"},
		{"offer duplicate", `{"products": {"A": {"attributes": {"instanceType": "x", "vcpu": "2", "memory": "8 GiB"}},
			"B": {"attributes": {"instanceType": "x", "vcpu": "2", "memory": "8 GiB"}}},
			"terms": {"OnDemand": {"A": {"T": {"priceDimensions": {"D": {"unit": "Hrs", "pricePerUnit": {"USD": "1"}}}}}}}}`, "products A and B are both instance type x"},
		{"offer without price", `{"products": {"A": {"attributes": {"instanceType": "x", "vcpu": "2", "memory": "8 GiB"}}}}`, "want one on-demand price per hour"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePriceList("p", []byte(c.data))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "price list p: ") {
				t.Errorf("got %v, want an error naming the list and containing %q", err, c.want)
			}
		})
	}
}

// TestParsePriceListOffer: a subset of AWS's offer file gives the plain
// on-demand Linux price of each type (the Windows product left out, the
// storage product ignored).
func TestParsePriceListOffer(t *testing.T) {
	data, err := os.ReadFile("testdata/offer-subset.json")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParsePriceList("offer-subset.json", data)
	if err != nil {
		t.Fatalf("ParsePriceList: %v", err)
	}
	if got := strings.Join(l.Names(), " "); got != "m6i.large m6i.xlarge" || l.Currency != "USD" {
		t.Fatalf("types %q in %s, want m6i.large m6i.xlarge in USD", got, l.Currency)
	}
	if m := l.Lookup("m6i.large"); m.PerHour != 0.096 || m.VCPUs != 2 || m.MemoryGiB != 8 {
		t.Errorf("m6i.large: got %+v, want the Linux price 0.096", m)
	}
}

// TestPriceListApply: prices naming an instance type take its price per
// hour, currency and vCPUs, and the cloud component's formula and the
// cores' footnote say where they came from; contradictions are errors.
func TestPriceListApply(t *testing.T) {
	l := PriceList{Source: "list.csv", Currency: "USD", Types: []InstanceType{{Name: "m6i.large", VCPUs: 2, MemoryGiB: 8, PerHour: 0.096}}}
	p := Prices{Years: 1, Cloud: &Cloud{InstanceType: "m6i.large"}}
	if err := l.Apply(&p); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if p.Currency != "USD" || p.Cores != 2 || p.Cloud.PerHour != 0.096 {
		t.Fatalf("got %+v, cloud %+v", p, *p.Cloud)
	}
	o, err := p.Ownership(0, "")
	if err != nil {
		t.Fatal(err)
	}
	c := o.Components[0]
	if c.Name != "cloud instance m6i.large" || !strings.Contains(c.Formula, "0.096 USD per hour (m6i.large: 2 vCPUs, 8 GiB, from list.csv) × 730 hours") {
		t.Errorf("cloud component: %s: %s", c.Name, c.Formula)
	}
	if o.Cores == nil || !strings.Contains(o.Cores.Formula, "the vCPUs of m6i.large in list.csv") {
		t.Errorf("cores: got %+v, want the price list as their source", o.Cores)
	}
	for _, c := range []struct {
		name string
		p    Prices
		want string
	}{
		{"unknown type", Prices{Years: 1, Cloud: &Cloud{InstanceType: "m6i.larg"}}, `cloud.instance_type "m6i.larg" is not in the price list list.csv`},
		{"price given too", Prices{Years: 1, Cloud: &Cloud{InstanceType: "m6i.large", PerHour: 1}}, "cloud.per_hour comes from the price list"},
		{"other currency", Prices{Years: 1, Currency: "EUR", Cloud: &Cloud{InstanceType: "m6i.large"}}, "currency EUR, but the price list list.csv is in USD"},
		{"other cores", Prices{Years: 1, Cores: 4, Cloud: &Cloud{InstanceType: "m6i.large"}}, "cores 4, but instance type m6i.large has 2 vCPUs"},
	} {
		if err := l.Apply(&c.p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	// Without a list, a named type has no price.
	q := Prices{Currency: "USD", Years: 1, Cloud: &Cloud{InstanceType: "m6i.large"}}
	if err := q.Validate(); err == nil || !strings.Contains(err.Error(), "priced from a price list") {
		t.Errorf("instance type without a list: got %v", err)
	}
}

// TestParseSheetPriced: a prices file for `oltplab cost` names instance
// types, priced from the list; a type the list lacks is an error at its
// line.
func TestParseSheetPriced(t *testing.T) {
	l := &PriceList{Source: "list.csv", Currency: "USD", Types: []InstanceType{{Name: "m6i.large", VCPUs: 2, MemoryGiB: 8, PerHour: 0.096}}}
	s, err := ParseSheetPriced([]byte("a:\n  years: 1\n  cloud: {instance_type: m6i.large}\n"), l)
	if err != nil {
		t.Fatalf("ParseSheetPriced: %v", err)
	}
	if p, _ := s.Lookup("a"); p.Cloud.PerHour != 0.096 || p.Currency != "USD" {
		t.Errorf("got %+v", p)
	}
	_, err = ParseSheetPriced([]byte("a:\n  years: 1\n  cloud:\n    instance_type: x1.huge\n"), l)
	if err == nil || !strings.Contains(err.Error(), "a.cloud.instance_type") || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("unknown type: got %v, want an error at line 4 naming a.cloud.instance_type", err)
	}
	if _, err := ParseSheet([]byte("a:\n  currency: USD\n  years: 1\n  cloud: {instance_type: m6i.large}\n")); err == nil {
		t.Errorf("a type without a list: got no error")
	}
}
