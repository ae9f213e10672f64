// Package ociimage builds oltplab's container image without a container
// daemon (`make image`): one layer over nothing, holding the static
// oltplab binary, /etc/passwd and /etc/group naming the non-root user the
// image runs as, the build host's CA certificates and a /tmp, under a
// config whose entrypoint is oltplab; written as an OCI image layout and
// as a docker-style tarball (what `docker load`, `podman load` and
// `crane push` read). Every file's time and the image's date are one
// given instant, so the same binary gives the same image digest.
//
// It is a build tool's library (internal/ociimage/mkimage): the oltplab
// binary never imports it. It imports nothing of oltplab.
package ociimage

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's user: distroless' nonroot (uid and gid 65532), the user
// `oltplab k8s manifest` runs its pods as (runAsUser 65532).
const (
	UID      = 65532
	UserName = "nonroot"
	Home     = "/home/nonroot"
)

// Paths in the image.
const (
	// BinaryPath is the entrypoint.
	BinaryPath = "/usr/local/bin/oltplab"
	// CACertsPath is where Go's crypto/x509 looks first on Linux.
	CACertsPath = "/etc/ssl/certs/ca-certificates.crt"
)

// Options are what the image is built from.
type Options struct {
	// Binary is the path of a statically linked oltplab for Arch
	// (CGO_ENABLED=0 go build).
	Binary string
	// CACerts is the path of a PEM bundle copied to CACertsPath; ""
	// leaves the image without CA certificates.
	CACerts string
	// Version and Revision are the version oltplab was built as and the
	// source's commit; Source the repository's URL: the image's labels.
	Version, Revision, Source string
	// Created is the image's date and every file's modification time
	// (SOURCE_DATE_EPOCH, the commit's time): fixed, so that the same
	// inputs give the same digest.
	Created time.Time
	// Arch is the GOARCH the binary was built for; the image's OS is linux.
	Arch string
}

// Validate checks what Build needs before it reads anything.
func (o Options) Validate() error {
	switch {
	case o.Binary == "":
		return errors.New("no binary given")
	case o.Version == "":
		return errors.New("no version given")
	case o.Arch == "":
		return errors.New("no architecture given")
	case o.Created.IsZero():
		return errors.New("no creation time given")
	}
	return nil
}

// Labels are the image's OCI labels (the annotation keys of the OCI
// image spec, as Docker labels).
func (o Options) Labels() map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":   "oltplab",
		"org.opencontainers.image.version": o.Version,
		"org.opencontainers.image.created": o.Created.UTC().Format(time.RFC3339),
	}
	if o.Revision != "" {
		l["org.opencontainers.image.revision"] = o.Revision
	}
	if o.Source != "" {
		l["org.opencontainers.image.source"] = o.Source
	}
	return l
}

// Build makes the image. It refuses a binary that is not a statically
// linked executable for o.Arch: a dynamically linked one would find no
// C library in the image.
func Build(o Options) (v1.Image, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("read the binary: %w", err)
	}
	if err := checkStatic(bin, o.Arch); err != nil {
		return nil, fmt.Errorf("%s: %w", o.Binary, err)
	}
	var certs []byte
	if o.CACerts != "" {
		if certs, err = os.ReadFile(o.CACerts); err != nil {
			return nil, fmt.Errorf("read the CA certificates: %w", err)
		}
	}
	rootfs, err := layerTar(bin, certs, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(rootfs)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("make the layer: %w", err)
	}
	created := v1.Time{Time: o.Created.UTC()}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, MediaType: types.OCILayer, History: v1.History{
		Created: created, CreatedBy: "make image", Comment: "oltplab " + o.Version + ", non-root user " + UserName}})
	if err != nil {
		return nil, fmt.Errorf("append the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created, cf.OS, cf.Architecture, cf.Author = created, "linux", o.Arch, ""
	id := strconv.Itoa(UID)
	cf.Config = v1.Config{
		User:       id + ":" + id,
		Entrypoint: []string{BinaryPath},
		Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		WorkingDir: Home,
		Labels:     o.Labels(),
	}
	return mutate.ConfigFile(img, cf)
}

// WriteLayout writes img as an OCI image layout in dir, which must not
// exist yet, its index entry named by ref's tag (REPOSITORY:TAG; as
// `skopeo copy oci:DIR:TAG` expects).
func WriteLayout(dir string, img v1.Image, ref string) error {
	t, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("%s exists: give a directory that does not", dir)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("write the image layout: %w", err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": t.TagStr(),
	})); err != nil {
		return fmt.Errorf("write the image layout: %w", err)
	}
	return nil
}

// WriteTarball writes img as a docker-style tarball at path, tagged ref
// (REPOSITORY:TAG).
func WriteTarball(path string, img v1.Image, ref string) error {
	t, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := tarball.WriteToFile(path, t, img); err != nil {
		return fmt.Errorf("write the image tarball: %w", err)
	}
	return nil
}

// CompressedSize is the image's size in a registry: its layers as pushed.
func CompressedSize(img v1.Image) (int64, error) {
	layers, err := img.Layers()
	if err != nil {
		return 0, err
	}
	var n int64
	for _, l := range layers {
		s, err := l.Size()
		if err != nil {
			return 0, err
		}
		n += s
	}
	return n, nil
}

// entry is one file of the layer.
type entry struct {
	name     string
	mode     int64
	uid      int
	data     []byte
	dir      bool
	username string
}

// passwd and group are distroless' (root, nobody, nonroot), with no login
// shell: the image has none.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group = "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"
)

// layerTar returns the layer's uncompressed tar: directories before what
// they hold, every time mtime.
func layerTar(bin, certs []byte, mtime time.Time) ([]byte, error) {
	entries := []entry{
		{name: "etc/", dir: true, mode: 0o755},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
	}
	if certs != nil {
		entries = append(entries,
			entry{name: "etc/ssl/", dir: true, mode: 0o755},
			entry{name: "etc/ssl/certs/", dir: true, mode: 0o755},
			entry{name: CACertsPath[1:], mode: 0o644, data: certs})
	}
	entries = append(entries,
		entry{name: "home/", dir: true, mode: 0o755},
		entry{name: Home[1:] + "/", dir: true, mode: 0o700, uid: UID, username: UserName},
		entry{name: "tmp/", dir: true, mode: 0o1777},
		entry{name: "usr/", dir: true, mode: 0o755},
		entry{name: "usr/local/", dir: true, mode: 0o755},
		entry{name: "usr/local/bin/", dir: true, mode: 0o755},
		entry{name: BinaryPath[1:], mode: 0o755, data: bin})
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, Uname: "root", Gname: "root",
			ModTime: mtime.UTC().Truncate(time.Second), Typeflag: tar.TypeReg, Size: int64(len(e.data)), Format: tar.FormatPAX}
		if e.username != "" {
			h.Uname, h.Gname = e.username, e.username
		}
		if e.dir {
			h.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer: %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("layer: %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// machines are the ELF machines of the architectures an image is built for.
var machines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "386": elf.EM_386, "arm": elf.EM_ARM,
	"ppc64le": elf.EM_PPC64, "s390x": elf.EM_S390, "riscv64": elf.EM_RISCV,
}

// checkStatic returns an error unless bin is a Linux executable for arch
// with no program interpreter (no dynamic loader: statically linked).
func checkStatic(bin []byte, arch string) error {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("not a Linux executable: %w", err)
	}
	defer f.Close()
	if want, ok := machines[arch]; !ok {
		return fmt.Errorf("architecture %q: not one of oltplab's image architectures", arch)
	} else if f.Machine != want {
		return fmt.Errorf("built for %s, not %s (GOARCH=%s)", f.Machine, want, arch)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("not an executable (%s)", f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("dynamically linked: build it with CGO_ENABLED=0, the image has no C library")
		}
	}
	return nil
}
