package ociimage

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeELF returns the smallest ELF executable debug/elf reads: a header
// and one loadable segment for machine, and a program interpreter (the
// dynamic loader, as a cgo build has) when interp is given.
func fakeELF(t *testing.T, machine elf.Machine, interp string) []byte {
	t.Helper()
	const hdrSize, progSize = 64, 56
	progs := []elf.Prog64{{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Vaddr: 0x400000, Paddr: 0x400000, Align: 0x1000}}
	if interp != "" {
		progs = append(progs, elf.Prog64{Type: uint32(elf.PT_INTERP), Flags: uint32(elf.PF_R), Align: 1})
	}
	end := uint64(hdrSize + progSize*len(progs))
	if interp != "" {
		progs[1].Off, progs[1].Filesz, progs[1].Memsz = end, uint64(len(interp)+1), uint64(len(interp)+1)
	}
	h := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: uint32(elf.EV_CURRENT), Entry: 0x401000,
		Phoff: hdrSize, Ehsize: hdrSize, Phentsize: progSize, Phnum: uint16(len(progs)), Shentsize: 64}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	var b bytes.Buffer
	for _, v := range []any{h, progs} {
		if err := binary.Write(&b, binary.LittleEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	if interp != "" {
		b.WriteString(interp + "\x00")
	}
	return b.Bytes()
}

func TestCheckStatic(t *testing.T) {
	cases := []struct {
		name    string
		bin     []byte
		arch    string
		wantErr string // "" for none
	}{
		{"static amd64", fakeELF(t, elf.EM_X86_64, ""), "amd64", ""},
		{"static arm64", fakeELF(t, elf.EM_AARCH64, ""), "arm64", ""},
		{"dynamically linked", fakeELF(t, elf.EM_X86_64, "/lib64/ld-linux-x86-64.so.2"), "amd64", "CGO_ENABLED=0"},
		{"other architecture", fakeELF(t, elf.EM_AARCH64, ""), "amd64", "built for EM_AARCH64"},
		{"unknown architecture", fakeELF(t, elf.EM_X86_64, ""), "mips", "not one of"},
		{"not ELF", []byte("#!/bin/sh\necho oltplab\n"), "amd64", "not a Linux executable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkStatic(c.bin, c.arch)
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("got %v, want no error", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("got %v, want an error containing %q", err, c.wantErr)
			}
		})
	}
}

// testOptions builds from a fake static binary and a CA bundle in dir.
func testOptions(t *testing.T, dir string) (Options, []byte, []byte) {
	t.Helper()
	bin, certs := fakeELF(t, elf.EM_X86_64, ""), []byte("-----BEGIN CERTIFICATE-----\nnot a real one\n-----END CERTIFICATE-----\n")
	o := Options{Binary: filepath.Join(dir, "oltplab"), CACerts: filepath.Join(dir, "ca.crt"), Version: "v9.8.7-test",
		Revision: "0123456789abcdef", Source: "https://github.com/oltplab/oltplab", Created: time.Unix(1_700_000_000, 0), Arch: "amd64"}
	for path, data := range map[string][]byte{o.Binary: bin, o.CACerts: certs} {
		if err := os.WriteFile(path, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return o, bin, certs
}

// TestBuild: the layout holds one image whose config runs the binary as
// the non-root user with the version's labels, and whose one layer holds
// the binary, the user in /etc/passwd, its home, /tmp and the CA
// certificates, every time the given instant.
func TestBuild(t *testing.T) {
	dir := t.TempDir()
	o, bin, certs := testOptions(t, dir)
	img, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "oci")
	if err := WriteLayout(out, img, "oltplab:v9.8.7-test"); err != nil {
		t.Fatal(err)
	}
	got := readLayout(t, out)
	if got.ref != "v9.8.7-test" {
		t.Errorf("index entry named %q, want the tag v9.8.7-test", got.ref)
	}
	c := got.config
	if c.OS != "linux" || c.Architecture != "amd64" {
		t.Errorf("platform %s/%s, want linux/amd64", c.OS, c.Architecture)
	}
	if want := "2023-11-14T22:13:20Z"; c.Created != want {
		t.Errorf("created %q, want %q", c.Created, want)
	}
	if c.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", c.Config.User)
	}
	if len(c.Config.Entrypoint) != 1 || c.Config.Entrypoint[0] != BinaryPath || len(c.Config.Cmd) != 0 {
		t.Errorf("entrypoint %q cmd %q, want [%s] and none", c.Config.Entrypoint, c.Config.Cmd, BinaryPath)
	}
	for k, want := range map[string]string{"org.opencontainers.image.version": "v9.8.7-test", "org.opencontainers.image.revision": "0123456789abcdef",
		"org.opencontainers.image.created": "2023-11-14T22:13:20Z", "org.opencontainers.image.source": o.Source} {
		if c.Config.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, c.Config.Labels[k], want)
		}
	}
	if len(got.layers) != 1 {
		t.Fatalf("%d layers, want 1", len(got.layers))
	}
	files := layerFiles(t, got.layers[0])
	want := []struct {
		name string
		mode int64
		uid  int
		data []byte // nil for a directory
	}{
		{"etc/passwd", 0o644, 0, []byte(passwd)},
		{"etc/group", 0o644, 0, []byte(group)},
		{"etc/ssl/certs/ca-certificates.crt", 0o644, 0, certs},
		{"home/nonroot", 0o700, UID, nil},
		{"tmp", 0o1777, 0, nil},
		{"usr/local/bin/oltplab", 0o755, 0, bin},
	}
	for _, w := range want {
		f, ok := files[w.name]
		if !ok {
			t.Errorf("layer has no %s", w.name)
			continue
		}
		if f.hdr.Mode != w.mode || f.hdr.Uid != w.uid || f.hdr.Gid != w.uid {
			t.Errorf("%s: mode %o owner %d:%d, want %o %d:%d", w.name, f.hdr.Mode, f.hdr.Uid, f.hdr.Gid, w.mode, w.uid, w.uid)
		}
		if w.data != nil && !bytes.Equal(f.data, w.data) {
			t.Errorf("%s: %d bytes differ from the %d given", w.name, len(f.data), len(w.data))
		}
	}
	for name, f := range files {
		if !f.hdr.ModTime.Equal(o.Created) {
			t.Errorf("%s: mtime %s, want %s", name, f.hdr.ModTime.UTC(), o.Created.UTC())
		}
		for p := name; strings.Contains(p, "/"); {
			p = p[:strings.LastIndex(p, "/")]
			if _, ok := files[p]; !ok {
				t.Errorf("%s: its directory %s is not in the layer", name, p)
			}
		}
	}
	if !strings.Contains(string(files["etc/passwd"].data), "nonroot:x:65532:65532:nonroot:/home/nonroot:") {
		t.Errorf("/etc/passwd does not name uid 65532 nonroot with home /home/nonroot:\n%s", files["etc/passwd"].data)
	}
}

// TestBuildReproducible: the same inputs give the same digest; another
// time gives another (the time is really in the image).
func TestBuildReproducible(t *testing.T) {
	o, _, _ := testOptions(t, t.TempDir())
	digest := func(o Options) string {
		img, err := Build(o)
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d.String()
	}
	first := digest(o)
	if again := digest(o); again != first {
		t.Errorf("built twice: %s then %s", first, again)
	}
	later := o
	later.Created = o.Created.Add(time.Second)
	if other := digest(later); other == first {
		t.Errorf("a second later: the same digest %s", other)
	}
}

// TestWriteTarball: the docker-style tarball names the tag and holds the
// same config as the layout.
func TestWriteTarball(t *testing.T) {
	dir := t.TempDir()
	o, _, _ := testOptions(t, dir)
	img, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "out", "oltplab.tar")
	if err := WriteTarball(path, img, "registry.example:5000/bench/oltplab:v9"); err != nil {
		t.Fatal(err)
	}
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	tb, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tarFiles := layerFiles(t, tb)
	if err := json.Unmarshal(tarFiles["manifest.json"].data, &manifest); err != nil {
		t.Fatal(err)
	}
	cd, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	if len(manifest) != 1 || len(manifest[0].RepoTags) != 1 || manifest[0].RepoTags[0] != "registry.example:5000/bench/oltplab:v9" ||
		manifest[0].Config != cd.String() || len(manifest[0].Layers) != 1 {
		t.Fatalf("manifest.json %+v, want one image tagged registry.example:5000/bench/oltplab:v9 with config %s and one layer", manifest, cd)
	}
	if _, ok := tarFiles[manifest[0].Layers[0]]; !ok {
		t.Errorf("the tarball has no %s", manifest[0].Layers[0])
	}
}

func TestRefused(t *testing.T) {
	dir := t.TempDir()
	o, _, _ := testOptions(t, dir)
	img, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteLayout(dir, img, "oltplab:v1"); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a layout into an existing directory: %v, want refused", err)
	}
	if err := WriteLayout(filepath.Join(dir, "x"), img, "oltplab:bad tag"); err == nil {
		t.Error("a reference with a space: no error")
	}
	noTime := o
	noTime.Created = time.Time{}
	if _, err := Build(noTime); err == nil {
		t.Error("no creation time: no error")
	}
	dynamic := o
	dynamic.Binary = filepath.Join(dir, "dynamic")
	if err := os.WriteFile(dynamic.Binary, fakeELF(t, elf.EM_X86_64, "/lib64/ld-linux-x86-64.so.2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(dynamic); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("a dynamically linked binary: %v, want refused", err)
	}
}

// TestDockerfile: the Dockerfile (for Docker users; not built here)
// builds the image make image builds: the same user, entrypoint and
// binary path, and the Go release go.mod names.
func TestDockerfile(t *testing.T) {
	root := moduleRoot(t)
	df, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := ""
	for line := range strings.Lines(string(gomod)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
			goVersion = v
		}
	}
	id := strconv.Itoa(UID)
	for _, want := range []string{
		"ARG GO_VERSION=" + goVersion + "\n",
		"FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build\n",
		"CGO_ENABLED=0 ",
		"COPY --from=build /out/oltplab " + BinaryPath + "\n",
		"USER " + id + ":" + id + "\n",
		"WORKDIR " + Home + "\n",
		`ENTRYPOINT ["` + BinaryPath + `"]` + "\n",
	} {
		if !strings.Contains(string(df), want) {
			t.Errorf("the Dockerfile has no line %q", strings.TrimSpace(want))
		}
	}
}
