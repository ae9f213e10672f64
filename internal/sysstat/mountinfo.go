package sysstat

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Mount is one line of /proc/self/mountinfo (proc(5)).
type Mount struct {
	ID, ParentID int
	Major, Minor uint32 // st_dev of files on this mount
	Root         string // the directory of the file system mounted here
	MountPoint   string
	Options      string // per-mount options
	FSType       string
	Source       string // e.g. /dev/nvme0n1p2, overlay, tmpfs
	SuperOptions string // per-superblock options
}

// ParseMountInfo parses /proc/[pid]/mountinfo.
func ParseMountInfo(r io.Reader) ([]Mount, error) {
	var out []Mount
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		m, err := parseMountLine(line)
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// parseMountLine reads
// "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue":
// six fields, optional fields up to "-", then type, source, super options.
func parseMountLine(line string) (Mount, error) {
	var m Mount
	f := strings.Fields(line)
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if len(f) < 6 || sep < 0 || len(f) < sep+3 {
		return m, fmt.Errorf("mountinfo line %q: want 6 fields, optional fields, -, type, source", line)
	}
	var err error
	if m.ID, err = strconv.Atoi(f[0]); err != nil {
		return m, fmt.Errorf("mountinfo line %q: mount id: %w", line, err)
	}
	if m.ParentID, err = strconv.Atoi(f[1]); err != nil {
		return m, fmt.Errorf("mountinfo line %q: parent id: %w", line, err)
	}
	maj, min, ok := strings.Cut(f[2], ":")
	ma, err1 := strconv.ParseUint(maj, 10, 32)
	mi, err2 := strconv.ParseUint(min, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return m, fmt.Errorf("mountinfo line %q: bad device number %q", line, f[2])
	}
	m.Major, m.Minor = uint32(ma), uint32(mi)
	m.Root, m.MountPoint, m.Options = unescapeOctal(f[3]), unescapeOctal(f[4]), f[5]
	m.FSType, m.Source = f[sep+1], unescapeOctal(f[sep+2])
	if len(f) > sep+3 {
		m.SuperOptions = f[sep+3]
	}
	return m, nil
}
