package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/testenv"
)

// plantedLink is what an unprivileged user (nobody) can do in a
// world-writable directory with the sticky bit (as /var/tmp and /dev/shm
// are): a link to a directory of root's, holding a file only root may
// read. It returns the link and the directory.
func plantedLink(t *testing.T) (link, victim string) {
	t.Helper()
	base := reachableDir(t)
	victim = filepath.Join(base, "victim")
	world := filepath.Join(base, "world")
	for _, d := range []string{victim, world} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(world, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(victim, "secret"), []byte("root's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link = filepath.Join(world, "link")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	return link, victim
}

// victimUntouched fails the test when the victim directory changed: its
// owner, its mode, its entries.
func victimUntouched(t *testing.T, victim string) {
	t.Helper()
	fi, err := os.Stat(victim)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	var names []string
	es, _ := os.ReadDir(victim)
	for _, e := range es {
		names = append(names, e.Name())
	}
	if st.Uid != 0 || st.Gid != 0 || fi.Mode().Perm() != 0o700 || !slices.Equal(names, []string{"secret"}) {
		t.Errorf("%s changed: owner %d:%d, mode %v, entries %v; want root's, 0700, the secret alone", victim, st.Uid, st.Gid, fi.Mode(), names)
	}
}

// cliRun runs oltplab as a process of its own, killed after timeout (a
// server it started in the foreground must not hold the test), and
// returns its exit code and output.
func cliRun(t *testing.T, env []string, timeout time.Duration, args ...string) (int, string) {
	testenv.Require(t, testenv.Subprocess)
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), env...), asCLIEnv+"=1")
	out, _ := cmd.CombinedOutput()
	t.Logf("oltplab %s -> %d\n%s", strings.Join(args, " "), cmd.ProcessState.ExitCode(), out)
	return cmd.ProcessState.ExitCode(), string(out)
}

// TestRefusesPlantedLinks: as root, a link an unprivileged user planted in
// a world-writable directory is followed by no command that writes where
// it is told: `instance start --data-dir`, `backup --to` and `storage
// bench` refuse it with one line and exit 10, and the directory it points
// at keeps its owner, mode and files.
func TestRefusesPlantedLinks(t *testing.T) {
	testenv.Require(t, testenv.Root)
	env := append(storeEnv(t), "XDG_RUNTIME_DIR="+t.TempDir())
	source, _ := builtSQLite(t)
	cases := []struct {
		name string
		args func(link string) []string
		need testenv.Need
	}{
		{"instance start", func(link string) []string {
			return []string{"instance", "start", "--engine", "postgres", "--name", "planted", "--data-dir", link}
		}, testenv.ManagedPostgres},
		{"backup", func(link string) []string {
			return []string{"backup", source, "--to", link, "--cycles", "1"}
		}, ""},
		{"storage bench", func(link string) []string {
			return []string{"storage", "bench", link, "--profile", "oltp-4k-qd8", "--runtime", "1s", "--size", "16M"}
		}, testenv.Fio},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.need != "" {
				testenv.Require(t, c.need)
			}
			link, victim := plantedLink(t)
			code, out := cliRun(t, env, time.Minute, c.args(link)...)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if code != exitDirectory || !strings.Contains(lines[len(lines)-1], "symbolic link") {
				t.Errorf("exit %d, last line %q; want %d and a line naming the symbolic link", code, lines[len(lines)-1], exitDirectory)
			}
			victimUntouched(t, victim)
		})
	}
}

// TestLeftoversRemovedAfterKill: oltplab killed outright (SIGKILL) during
// a backup cycle and during a storage benchmark leaves its backup, its
// restored copy and its test file behind; `oltplab clean --leftovers`
// removes them, and only them: a link put in the place of one is not
// followed, and the directories they were in stay.
func TestLeftoversRemovedAfterKill(t *testing.T) {
	testenv.Require(t, testenv.Long, testenv.Subprocess)
	base := t.TempDir()
	results := filepath.Join(base, "results.db")
	env := []string{"OLTPLAB_RESULTS=" + results, "HOME=" + base}
	source, _ := builtSQLite(t)
	to := filepath.Join(base, "backups")
	other := filepath.Join(base, "other")
	if err := os.MkdirAll(filepath.Join(other, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}

	// Killed while the restored copy is checked: the backup and the
	// restored copy are both on disk.
	bk := cliCommand(t, base, "backup", source, "--to", to, "--cycles", "1", "--results", results)
	var backup, restored string
	waitRunning(t, bk, func() bool {
		got, _ := filepath.Glob(filepath.Join(to, "oltplab-backup-*-c1-restored", "*.db"))
		if len(got) == 0 {
			return false
		}
		restored = filepath.Dir(got[0])
		backup = strings.TrimSuffix(restored, "-restored")
		return true
	})
	if err := syscall.Kill(bk.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	bk.Wait()

	// Killed while fio writes its test file.
	bench := filepath.Join(base, "bench")
	if err := os.Mkdir(bench, 0o755); err != nil {
		t.Fatal(err)
	}
	var testFile string
	if _, err := exec.LookPath("fio"); err == nil {
		sb := cliCommand(t, base, "storage", "bench", bench, "--profile", "oltp-4k-qd8", "--runtime", "30s", "--size", "64M", "--results", results)
		waitRunning(t, sb, func() bool {
			got, _ := filepath.Glob(filepath.Join(bench, "oltplab-fio-*.dat"))
			if len(got) == 0 {
				return false
			}
			fi, err := os.Stat(got[0])
			testFile = got[0]
			return err == nil && fi.Size() > 0
		})
		if err := syscall.Kill(sb.Process.Pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		sb.Wait()
	} else if testenv.Required() {
		t.Fatal("fio is not installed and CI requires the storage tests")
	}

	left := []string{backup, restored}
	if testFile != "" {
		left = append(left, testFile)
	}
	for _, p := range left {
		if _, err := os.Lstat(p); err != nil {
			t.Fatalf("%s is not left behind after the kill: %v", p, err)
		}
	}
	// Something else in the restored copy's place: a link to a directory
	// of the user's.
	if err := os.Rename(restored, restored+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, restored); err != nil {
		t.Fatal(err)
	}

	r := oltplab(t, env, "clean", "--leftovers")
	if r.code != 0 {
		t.Fatalf("clean --leftovers: exit %d", r.code)
	}
	for _, p := range []string{backup, testFile} {
		if _, err := os.Lstat(p); p != "" && err == nil {
			t.Errorf("%s is still there after clean --leftovers", p)
		}
	}
	if !strings.Contains(r.out, backup+": removed") || !strings.Contains(r.out, restored+": left alone") {
		t.Errorf("clean --leftovers said %q, want the backup removed and the link left alone", r.out)
	}
	for _, p := range []string{restored, filepath.Join(other, "inside"), to, bench} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s is gone: %v", p, err)
		}
	}
	// Once done, nothing is left to do.
	if r := oltplab(t, env, "clean", "--leftovers"); r.code != 0 || !strings.Contains(r.out, "nothing to remove") {
		t.Errorf("clean --leftovers again: exit %d, %q; want nothing to remove", r.code, r.out)
	}
}

// TestResumeRemovesLeftovers: `experiment resume` of an experiment whose
// process was killed during its storage step removes the test file that
// process left, before it runs the step again.
func TestResumeRemovesLeftovers(t *testing.T) {
	testenv.Require(t, testenv.Fio)
	dir := t.TempDir()
	plan := writePlan(t, dir, `name: leftovers
warehouses: 1
storage: {profile: oltp-4k-qd8, runtime: 30s, size: 64M}
targets:
  - name: file
    url: sqlite:tpcc.db
steps: [storage]
`)
	results := filepath.Join(dir, "results.db")
	cmd := cliCommand(t, dir, "experiment", "run", plan, "--results", results)
	var testFile string
	waitRunning(t, cmd, func() bool {
		got, _ := filepath.Glob(filepath.Join(dir, "oltplab-fio-*.dat"))
		if len(got) == 0 {
			return false
		}
		testFile = got[0]
		fi, err := os.Stat(testFile)
		return err == nil && fi.Size() > 0
	})
	if err := syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	resume := cliCommand(t, dir, "experiment", "resume", "1", "--results", results)
	// The killed process's file goes, and resume says so, before the
	// step's new one appears: wait for the new one, so that the line is
	// written before the interrupt.
	waitRunning(t, resume, func() bool {
		if _, err := os.Lstat(testFile); err == nil {
			return false
		}
		got, _ := filepath.Glob(filepath.Join(dir, "oltplab-fio-*.dat"))
		return len(got) > 0 && got[0] != testFile
	})
	syscall.Kill(resume.Process.Pid, syscall.SIGINT)
	resume.Wait()
	t.Logf("resume:\n%s", resume.Stdout)
	if !strings.Contains(resume.Stdout.(*strings.Builder).String(), testFile) {
		t.Errorf("resume did not say it removed %s:\n%s", testFile, resume.Stdout)
	}
}

// TestDryRunRefusesDirectories: `experiment run --dry-run` refuses, at the
// target's line and with exit 10, what a run would refuse: / as a managed
// instance's data_dir, a data_dir holding someone's files, a backup step
// writing into /etc.
func TestDryRunRefusesDirectories(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	if err := os.Mkdir(users, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(users, "notes.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := "name: t\nwarehouses: 1\nsteps: [build]\ntargets:\n  - name: a\n"
	for _, c := range []struct{ name, plan, line, want string }{
		{"data_dir /", base + "    engine: sqlite\n    data_dir: /\n", "plan.yaml:5:", "system directory"},
		{"data_dir with files", base + "    engine: sqlite\n    data_dir: " + users + "\n", "plan.yaml:5:", "oltplab did not create"},
		{"backup into /etc", strings.Replace(base, "steps: [build]", "steps: [build, backup]\nbackup: {to: /etc/oltplab-backups}", 1) +
			"    url: sqlite:a.db\n", "plan.yaml:6:", "system directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := writePlan(t, dir, c.plan)
			r := oltplab(t, storeEnv(t), "experiment", "run", plan, "--dry-run")
			if r.code != exitDirectory || !strings.Contains(r.err, c.line) || !strings.Contains(r.err, c.want) {
				t.Errorf("exit %d, %q; want %d at the target's line saying %q", r.code, r.err, exitDirectory, c.want)
			}
		})
	}
	if entries, _ := os.ReadDir(users); len(entries) != 1 {
		t.Errorf("%s holds %d entries, want the user's file alone", users, len(entries))
	}
}
