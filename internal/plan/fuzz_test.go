package plan_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/yamldoc"
)

// FuzzDecode: whatever a plan file holds, Decode returns a plan or a
// *yamldoc.Error whose message is one line (the CLI prints it as the whole
// error), and never panics. The seeds are the plans in examples/.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte("name: x\nwarehouses: 1\ntargets: [{name: a, url: 'sqlite:a.db'}]\nsteps: [build, profile]\n"))
	f.Add([]byte("&a [*a]"))
	f.Add([]byte("name: x\nwarehouses: -1\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := plan.Decode("plan.yaml", src)
		if err == nil {
			if p == nil {
				t.Fatal("no plan and no error")
			}
			return
		}
		var pe *yamldoc.Error
		if !errors.As(err, &pe) {
			t.Fatalf("error %T %q is not a *yamldoc.Error", err, err)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Fatalf("error is not one line: %q", err)
		}
	})
}
