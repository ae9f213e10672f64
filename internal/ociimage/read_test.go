package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tests read what Build writes with the standard library alone, by
// the OCI image layout and image specs, not with the library that wrote
// it: a layout only go-containerregistry could read would fail here.

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
}

type imageConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Created      string `json:"created"`
	Config       struct {
		User       string            `json:"User"`
		Entrypoint []string          `json:"Entrypoint"`
		Cmd        []string          `json:"Cmd"`
		Env        []string          `json:"Env"`
		WorkingDir string            `json:"WorkingDir"`
		Labels     map[string]string `json:"Labels"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// ociImage is the one image of a layout.
type ociImage struct {
	ref            string // the index entry's org.opencontainers.image.ref.name
	manifestDigest string
	configDigest   string
	config         imageConfig
	layers         [][]byte // uncompressed tars, in order
}

// readLayout reads the OCI image layout in dir, checking every blob's
// digest and size, the media types, and each layer's diff ID.
func readLayout(t *testing.T, dir string) ociImage {
	t.Helper()
	var marker struct {
		Version string `json:"imageLayoutVersion"`
	}
	readJSON(t, filepath.Join(dir, "oci-layout"), &marker)
	if marker.Version != "1.0.0" {
		t.Fatalf("oci-layout: imageLayoutVersion %q, want 1.0.0", marker.Version)
	}
	var index struct {
		SchemaVersion int          `json:"schemaVersion"`
		Manifests     []descriptor `json:"manifests"`
	}
	readJSON(t, filepath.Join(dir, "index.json"), &index)
	if index.SchemaVersion != 2 || len(index.Manifests) != 1 {
		t.Fatalf("index.json: schemaVersion %d with %d manifests, want 2 with one", index.SchemaVersion, len(index.Manifests))
	}
	md := index.Manifests[0]
	var img ociImage
	img.ref, img.manifestDigest = md.Annotations["org.opencontainers.image.ref.name"], md.Digest
	var manifest struct {
		SchemaVersion int          `json:"schemaVersion"`
		MediaType     string       `json:"mediaType"`
		Config        descriptor   `json:"config"`
		Layers        []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(blob(t, dir, md, "application/vnd.oci.image.manifest.v1+json"), &manifest); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	if manifest.SchemaVersion != 2 {
		t.Fatalf("manifest: schemaVersion %d, want 2", manifest.SchemaVersion)
	}
	img.configDigest = manifest.Config.Digest
	if err := json.Unmarshal(blob(t, dir, manifest.Config, "application/vnd.oci.image.config.v1+json"), &img.config); err != nil {
		t.Fatalf("config: %v", err)
	}
	if img.config.RootFS.Type != "layers" || len(img.config.RootFS.DiffIDs) != len(manifest.Layers) {
		t.Fatalf("config: rootfs %q with %d diff IDs for %d layers", img.config.RootFS.Type, len(img.config.RootFS.DiffIDs), len(manifest.Layers))
	}
	for i, ld := range manifest.Layers {
		zr, err := gzip.NewReader(bytes.NewReader(blob(t, dir, ld, "application/vnd.oci.image.layer.v1.tar+gzip")))
		if err != nil {
			t.Fatalf("layer %d: %v", i, err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("layer %d: %v", i, err)
		}
		if got, want := sha256Digest(raw), img.config.RootFS.DiffIDs[i]; got != want {
			t.Fatalf("layer %d: uncompressed digest %s, config's diff ID %s", i, got, want)
		}
		img.layers = append(img.layers, raw)
	}
	return img
}

// blob returns the blob d names in the layout, after checking its media
// type, size and digest.
func blob(t *testing.T, dir string, d descriptor, mediaType string) []byte {
	t.Helper()
	if d.MediaType != mediaType {
		t.Fatalf("%s: media type %q, want %q", d.Digest, d.MediaType, mediaType)
	}
	algo, hexDigest, ok := strings.Cut(d.Digest, ":")
	if !ok || algo != "sha256" {
		t.Fatalf("digest %q: want sha256:HEX", d.Digest)
	}
	b, err := os.ReadFile(filepath.Join(dir, "blobs", "sha256", hexDigest))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != d.Size {
		t.Fatalf("%s: %d bytes, descriptor says %d", d.Digest, len(b), d.Size)
	}
	if got := sha256Digest(b); got != d.Digest {
		t.Fatalf("blob %s has digest %s", d.Digest, got)
	}
	return b
}

func sha256Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// file is one entry of a layer.
type file struct {
	hdr  tar.Header
	data []byte
}

// layerFiles returns a layer's entries by name (without a trailing slash).
func layerFiles(t *testing.T, layer []byte) map[string]file {
	t.Helper()
	out := map[string]file{}
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(h.Name, "/")
		if _, dup := out[name]; dup {
			t.Errorf("layer holds %s twice", name)
		}
		out[name] = file{hdr: *h, data: data}
	}
}

// extract unpacks layers into root as a container runtime would: only
// directories and regular files (the image has nothing else), names
// inside root, owners kept when running as root.
func extract(t *testing.T, root string, layers [][]byte) {
	t.Helper()
	for _, layer := range layers {
		tr := tar.NewReader(bytes.NewReader(layer))
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Clean(h.Name)
			if !filepath.IsLocal(name) {
				t.Fatalf("layer entry %q is outside the root", h.Name)
			}
			p := filepath.Join(root, name)
			mode := os.FileMode(h.Mode).Perm()
			switch h.Typeflag {
			case tar.TypeDir:
				if err := os.MkdirAll(p, 0o755); err != nil {
					t.Fatal(err)
				}
			case tar.TypeReg:
				data, err := io.ReadAll(tr)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, data, 0o600); err != nil {
					t.Fatal(err)
				}
			default:
				t.Fatalf("layer entry %q has type %q: the image holds only directories and files", h.Name, h.Typeflag)
			}
			if h.Mode&0o1000 != 0 {
				mode |= os.ModeSticky
			}
			if os.Geteuid() == 0 {
				if err := os.Lchown(p, h.Uid, h.Gid); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(p, mode); err != nil {
				t.Fatal(err)
			}
		}
	}
}
