package instance

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/sysstat"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestCopyDirectHoldsWriteCap: a restore's copy under a cgroup v1 write
// cap takes at least what the cap allows for its bytes (a lower bound
// from the configured cap: a cap that holds cannot be beaten), and
// copies the tree exactly. (cp -a in the same group put the 24 MiB in
// the page cache in 0.03 s; the fsync oltplab issued after it from the
// group took the 3 s the cap allows, but only for pages the kernel had
// not yet written back on its own, which it does in its flusher threads,
// in no group, past its dirty thresholds or after 30 s.)
func TestCopyDirectHoldsWriteCap(t *testing.T) {
	testenv.Require(t, testenv.Root)
	hs, err := liveHierarchies()
	if err != nil {
		t.Skip(err)
	}
	if _, ok := findV1(hs, ctlBlkio); !ok {
		t.Skip("no cgroup v1 blkio: the v2 cap holds for buffered writes anyway")
	}
	src := filepath.Join(testRoot, "copy-src")
	dst := filepath.Join(testRoot, "copy-dst")
	for _, d := range []string{src, filepath.Join(src, "sub"), dst} {
		if err := os.Mkdir(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	big := make([]byte, 24<<20+1234) // not a whole number of blocks
	rand.Read(big)
	files := map[string][]byte{"big": big, "sub/small": []byte("a few bytes\n"), "empty": nil}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(src, name), b, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("sub/small", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	dev, err := sysstat.DeviceOf(testRoot)
	if err != nil {
		t.Skip(err)
	}
	disk, err := wholeDisk(dev)
	if err != nil {
		t.Skip(err)
	}
	const capMBps = 8.0
	cg, why := newCgroup(hs, groupID("copy-test"), []string{ctlBlkio})
	defer cg.remove()
	if _, _, ok := cg.dir(ctlBlkio); !ok {
		t.Skip(why[ctlBlkio])
	}
	if err := cg.setIOLimit([]string{disk}, IOLimit{WriteMBps: capMBps}); err != nil {
		t.Fatal(err)
	}
	if err := cg.open(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := copyDirect(context.Background(), cg.placement(), nil, src, dst); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if least := time.Duration(0.8 * float64(len(big)) / (capMBps * 1e6) * float64(time.Second)); took < least {
		t.Errorf("copied %d bytes in %s under a %g MB/s write cap: the cap did not hold (at least %s)", len(big), took, capMBps, least)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: copied %d bytes, %v; want %d", name, len(got), err, len(want))
		}
		if fi, err := os.Stat(filepath.Join(dst, name)); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: mode %v, %v", name, fi.Mode(), err)
		}
	}
	if l, err := os.Readlink(filepath.Join(dst, "link")); err != nil || l != "sub/small" {
		t.Errorf("link: %q, %v", l, err)
	}
}

func TestWriteCapNote(t *testing.T) {
	v1 := &WriteCap{Limit: IOLimit{WriteMBps: 30}, Method: "cgroup v1 blkio throttle"}
	if got := v1.Note(36e6*10, 10, false); !strings.Contains(got, "36.0 MB/s achieved") || !strings.Contains(got, "write 30 MB/s") {
		t.Errorf("v1, buffered: %q", got)
	}
	if got := v1.Note(30e6, 1, true); got != "" {
		t.Errorf("v1, direct: %q", got)
	}
	v2 := &WriteCap{Limit: IOLimit{WriteMBps: 30}, Method: "cgroup v2 io.max", HoldsBuffered: true}
	if got := v2.Note(36e6, 1, false); got != "" {
		t.Errorf("v2: %q", got)
	}
	var none *WriteCap
	if got := none.Note(1, 1, false); got != "" {
		t.Errorf("no cap: %q", got)
	}
}
