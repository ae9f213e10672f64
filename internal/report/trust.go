package report

import (
	"fmt"
	"strings"
)

// The Method part's sentences on run statuses, foreign CPU and the
// contamination threshold.
const (
	statusMethod = "Statuses: a run is ok when its whole window was measured and nothing below holds. It failed when its server failed under it " +
		"(down when the window ended: an outage still open; stalls, 2 s or more without a completed transaction, covering more than 10% of the window " +
		"unless --max-stall; a managed server whose process exited): what it measured is kept, never counted. It is suspect when the database's " +
		"figures disagree with the driver's own counts, partial when it was cut short, failures when more transactions failed than allowed, and " +
		"contaminated when others took more of the CPU than allowed (below). Only ok runs count in means, intervals, peaks, ratios and cost, " +
		"unless --include-suspect or --include-contaminated says otherwise; an experiment restarts a managed server whose run failed and measures " +
		"the run again (retries), and measures contaminated runs again (remeasure)."
	foreignMethod = "Foreign CPU: every second, the host's used cores (busy, less steal, from /proc/stat) less the database server's " +
		"CPU (a managed instance's cgroup; a local server's processes as the server names them: PostgreSQL's pg_backend_pid() and its postmaster, " +
		"MariaDB's pid file) less oltplab's own process (driver and samplers): the CPU neither the database nor oltplab used, averaged over the " +
		"window. When the server is confined to a cpuset, the same is measured on its own CPUs (per-CPU /proc/stat), all of oltplab's CPU taken off " +
		"though some of it ran elsewhere, so it is never overstated. A server on another host uses none of this host's CPU; its own host's CPU is " +
		"measured as a whole by oltplab agent, not its server's share."
	contaminationMethod = "Contamination: a run whose foreign CPU, on the host or on a confined server's own CPUs, or whose steal passed 10% of " +
		"those cores over the window (--max-foreign-cpu, --max-steal) is contaminated: a tenth of the cores taken by others is a tenth of a " +
		"CPU-bound server's capacity gone, the size of the differences these comparisons measure (a server's throughput follows the CPU it is left). Such a run is listed with its figures and left out, so that a busy host yields a visible \"contaminated\" instead of a " +
		"silently inverted ratio."
)

// trustLines are the summary's sentences on what cannot be trusted in one
// profile step: every step of a target left without a counted run by
// contaminated or failed runs, how many runs were contaminated, and every
// run the server failed during (outages, stalls), with what happened.
func trustLines(v *view, step string, named bool) []string {
	in := ""
	if named {
		in = " (" + step + ")"
	}
	var out []string
	for _, p := range v.profiles {
		dirty, dirtyCounted, total := 0, 0, 0
		for _, s := range p.Steps {
			var reasons []string
			counted, contaminated, failed := 0, 0, 0
			for _, r := range s.Repeats {
				total++
				switch {
				case r.Contaminated:
					contaminated++
					dirty++
					if r.Counted {
						counted++
						dirtyCounted++
					}
					if len(reasons) == 0 && len(r.Interference) > 0 {
						reasons = append(reasons, r.Interference[0])
					}
				case r.ServerFailed:
					failed++
				case !r.Partial && !r.Failures && (!r.Suspect || r.Counted):
					counted++
				}
			}
			if counted == 0 && contaminated+failed > 0 {
				why := fmt.Sprintf("%d contaminated", contaminated)
				if failed > 0 {
					why += fmt.Sprintf(", %d failed", failed)
				}
				label := "FAILED"
				if contaminated > 0 {
					label = "CONTAMINATED"
				}
				line := fmt.Sprintf("%s: %s at %d VUs%s has no run that counts (%s of %d)", label, p.Name, s.VUs, in, why, len(s.Repeats))
				if len(reasons) > 0 {
					line += ": " + reasons[0]
				}
				out = append(out, line+"; no figure, peak or ratio of that step is given (--include-contaminated counts contaminated runs).")
			}
		}
		switch {
		case dirtyCounted > 0:
			out = append(out, fmt.Sprintf("%s%s: %d of %d runs contaminated, listed under Contaminated runs and counted as asked (--include-contaminated): "+
				"its figures include what others took of the CPU.", p.Name, in, dirty, total))
		case dirty > 0:
			out = append(out, fmt.Sprintf("%s%s: %d of %d runs contaminated, listed under Contaminated runs and left out.", p.Name, in, dirty, total))
		}
	}
	for _, p := range v.profiles {
		for _, s := range p.Steps {
			for _, r := range s.Repeats {
				if len(r.Faults) == 0 {
					continue
				}
				what := strings.Join(r.Faults, "; ")
				if r.ServerFailed {
					what += "; FAILED, not counted"
				}
				out = append(out, fmt.Sprintf("Run %d (%s, %d VUs%s): %s.", r.RunID, p.Name, s.VUs, in, what))
			}
		}
	}
	return out
}
