package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCostPriceList: `cost --price-list` prices the instance types a
// prices file names from the list, with the type and the file in the
// formula's note; a type the list lacks is one line, exit 2.
func TestCostPriceList(t *testing.T) {
	dir := t.TempDir()
	prices := filepath.Join(dir, "prices.yaml")
	if err := os.WriteFile(prices, []byte("small:\n  years: 1\n  cloud: {instance_type: m6i.large}\nbig:\n  years: 1\n  cloud: {instance_type: m6i.xlarge}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join("..", "..", "examples", "cloud-prices.csv")
	r := oltplab(t, storeEnv(t), "cost", "--prices", prices, "--price-list", list)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	for _, want := range []string{"0.096 USD per hour (m6i.large: 2 vCPUs, 8 GiB, from " + list + ")", "840.96 USD", "the vCPUs of m6i.xlarge in " + list} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q:\n%s", want, r.out)
		}
	}
	if err := os.WriteFile(prices, []byte("small:\n  years: 1\n  cloud: {instance_type: m6i.larg}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = oltplab(t, storeEnv(t), "cost", "--prices", prices, "--price-list", list)
	if r.code != exitUsage || !strings.Contains(r.err, "small.cloud.instance_type") || strings.Count(strings.TrimSpace(r.err), "\n") != 0 {
		t.Errorf("unknown type: exit %d, stderr %q", r.code, r.err)
	}
}
