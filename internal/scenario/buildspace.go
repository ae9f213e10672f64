package scenario

import "fmt"

// BuildBytesPerWarehouse is what one built warehouse takes on disk per
// dialect (tables, indexes and their slack), measured on builds of a few
// warehouses and rounded up: the free-space check before a build (Env.Build
// and experiment plans) and the plans' estimates read it. A dialect not
// listed is taken as PostgreSQL.
var BuildBytesPerWarehouse = map[string]int64{
	"sqlite":   90 << 20,
	"postgres": 125 << 20, // 118 MB with fillfactor 90 on the updated tables (2 warehouses)
	"mysql":    140 << 20,
}

// BuildBytes estimates the disk space a build of warehouses takes on a
// dialect.
func BuildBytes(dialectName string, warehouses int) int64 {
	b, ok := BuildBytesPerWarehouse[dialectName]
	if !ok {
		b = BuildBytesPerWarehouse["postgres"]
	}
	return b * int64(warehouses)
}

// BuildSpaceError is a build whose data would not fit on the file system
// under the target's data; nothing was built.
type BuildSpaceError struct {
	Dir                  string
	NeedBytes, FreeBytes int64
}

func (e *BuildSpaceError) Error() string {
	return fmt.Sprintf("%s has %d MiB free, the build needs about %d MiB", e.Dir, e.FreeBytes>>20, e.NeedBytes>>20)
}

// CheckBuildSpace refuses a build of warehouses that would not fit in the
// free space of dir (free reads it). An empty dir (a server on another
// machine: its disk is not ours to see) passes.
func CheckBuildSpace(dir, dialectName string, warehouses int, free func(string) (int64, error)) error {
	if dir == "" {
		return nil
	}
	need := BuildBytes(dialectName, warehouses)
	have, err := free(dir)
	if err != nil {
		return fmt.Errorf("free space under %s: %w", dir, err)
	}
	if have < need {
		return &BuildSpaceError{Dir: dir, NeedBytes: need, FreeBytes: have}
	}
	return nil
}
