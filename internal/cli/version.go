package cli

import (
	"context"
	"fmt"
	"runtime/debug"
)

// Version is set at link time (-ldflags "-X .../cli.Version=v0.1.0").
var Version = "dev"

// version returns the tool version with the VCS revision when known.
func version() string {
	v := Version
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			v += " (" + rev + dirty + ")"
		}
	}
	return v
}

func runVersion(_ context.Context, a *app, args []string) error {
	fs := newFlagSet("version")
	if err := a.parseFlags(fs, "version", args); err != nil {
		return helpOK(err)
	}
	fmt.Fprintf(a.out(), "oltplab %s\n", version())
	return nil
}

// helpOK turns the --help outcome into success.
func helpOK(err error) error {
	if err == errHelp {
		return nil
	}
	return err
}
