// Command mkimage builds oltplab's container image from a static oltplab
// binary without a container daemon (`make image` runs it): an OCI image
// layout and a docker-style tarball. See internal/ociimage.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/oltplab/oltplab/internal/ociimage"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mkimage", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o ociimage.Options
	var epoch, ociDir, tarPath, ref string
	fs.StringVar(&o.Binary, "binary", "", "the static oltplab binary (CGO_ENABLED=0 go build)")
	fs.StringVar(&o.Version, "version", "", "the version oltplab was built as (its `oltplab version`)")
	fs.StringVar(&o.Revision, "revision", "", "the source's commit, for the image's labels")
	fs.StringVar(&o.Source, "source", "", "the source repository's URL, for the image's labels")
	fs.StringVar(&o.Arch, "arch", runtime.GOARCH, "the GOARCH the binary was built for")
	fs.StringVar(&o.CACerts, "ca-certs", ociimage.CACertsPath, "the CA bundle to copy into the image; \"\" for none")
	fs.StringVar(&epoch, "created", os.Getenv("SOURCE_DATE_EPOCH"), "the image's date and its files' times, in seconds since 1970 (default $SOURCE_DATE_EPOCH)")
	fs.StringVar(&ociDir, "oci", "", "write an OCI image layout into this directory (must not exist)")
	fs.StringVar(&tarPath, "tarball", "", "write a docker-style tarball (docker load, podman load, crane push) here")
	fs.StringVar(&ref, "tag", "", "the image's name, REPOSITORY:TAG (default oltplab:VERSION)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if ociDir == "" && tarPath == "" {
		return errors.New("give --oci DIR, --tarball FILE or both")
	}
	if epoch == "" {
		return errors.New("no --created (or SOURCE_DATE_EPOCH): the image's time must be given, for a reproducible digest")
	}
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil || secs < 0 {
		return fmt.Errorf("--created %q: want seconds since 1970", epoch)
	}
	o.Created = time.Unix(secs, 0).UTC()
	if ref == "" {
		ref = "oltplab:" + o.Version
	}
	if o.CACerts != "" {
		if _, err := os.Stat(o.CACerts); errors.Is(err, os.ErrNotExist) && !isSet(fs, "ca-certs") {
			fmt.Fprintf(stderr, "mkimage: no CA certificates at %s on this host: the image has none (TLS connections from it cannot verify servers)\n", o.CACerts)
			o.CACerts = ""
		}
	}
	img, err := ociimage.Build(o)
	if err != nil {
		return err
	}
	if ociDir != "" {
		if err := ociimage.WriteLayout(ociDir, img, ref); err != nil {
			return err
		}
	}
	if tarPath != "" {
		if err := ociimage.WriteTarball(tarPath, img, ref); err != nil {
			return err
		}
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	size, err := ociimage.CompressedSize(img)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "image %s %s (linux/%s, %.1f MB compressed)\n", ref, digest, o.Arch, float64(size)/1e6)
	if ociDir != "" {
		fmt.Fprintf(stdout, "  OCI layout  %s\n", ociDir)
	}
	if tarPath != "" {
		fmt.Fprintf(stdout, "  tarball     %s\n", tarPath)
	}
	return nil
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
